"""``skillbench sim serve``: run the simulated Messages endpoint in the foreground."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from skillbench.commands import add_suite_args


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sim",
        help="the simulated Anthropic Messages endpoint (offline backend)",
        description="The simulated Messages endpoint that the real Claude Code CLI and the anthropic SDK "
        "talk to when there is no API key.",
    )
    actions = p.add_subparsers(dest="sim_command", metavar="ACTION", required=True)
    s = actions.add_parser(
        "serve",
        help="serve the endpoint until Ctrl-C",
        description="Serve the simulated endpoint on loopback until Ctrl-C. Point the CLI at it with "
        "ANTHROPIC_BASE_URL=<printed URL> ANTHROPIC_API_KEY=<its key> (sk-skillbench-sim unless --api-key "
        "or SKILLBENCH_SIM_KEY says otherwise; skillbench's own commands read SKILLBENCH_SIM_KEY).",
    )
    s.add_argument("--suite", metavar="SUITE_DIR", help="suite whose prompts, rubrics and skills it simulates "
                   "(default: ./evals when it exists; without a suite it answers generically)")
    s.add_argument("--host", default="127.0.0.1", help="address to bind (keep it on loopback; default 127.0.0.1)")
    s.add_argument("--port", type=int, default=0, help="port (default 0: a free port)")
    s.add_argument("--seed", type=int, default=0, help="seed of every simulated draw (default 0)")
    s.add_argument("--profiles", metavar="FILE", help="behaviour profiles (default: the shipped sim_profiles.yaml)")
    s.add_argument("--truth", metavar="FILE", help="write the answer key (truth.csv) here")
    s.add_argument("--fault", action="append", default=[], metavar="KIND[=RATE]",
                   help="inject a fault on every request at RATE (default 1); repeatable. Kinds: rate_limit, "
                   "server_error, overloaded, slow_first_byte, stall, truncated, malformed, stream_error")
    s.add_argument("--api-key", metavar="KEY", default=None,
                   help="the key every Messages request must carry (default: $SKILLBENCH_SIM_KEY, else "
                   "sk-skillbench-sim)")
    s.add_argument("--verbose", action="store_true", help="print one line per request")
    add_suite_args(s)
    s.set_defaults(func=serve)


def serve(args: argparse.Namespace) -> int:
    from skillbench.commands import UsageError, suite_overrides
    from skillbench.sim import ProfileError, Serving, SimServer, parse_fault_option, serve_forever
    from skillbench.suite import SuiteError, load_suite

    suite = args.suite
    if suite is None and Path("evals", "test-prompts").is_dir():
        suite = "evals"
    if suite is not None and not Path(suite).is_dir():
        raise UsageError(f"--suite {suite}: not a folder")
    overrides = suite_overrides(args)
    if args.truth and not Path(args.truth).resolve().parent.is_dir():
        raise UsageError(f"--truth {args.truth}: its folder does not exist")
    from skillbench.generation import is_loopback_host, sim_api_key

    if not is_loopback_host(args.host):  # a sim run must never be reachable from, or reach, another host
        raise UsageError(f"--host {args.host}: the simulated endpoint listens on loopback only (127.0.0.1 or ::1)")
    key = args.api_key or sim_api_key()
    try:
        faults = [parse_fault_option(f) for f in args.fault]
        serving = Serving(address=(args.host, args.port), api_key=key,
                          log=(lambda line: print(line, flush=True)) if args.verbose else None)
        # Lenient on missing workspace files, as the server is (what a run skipped is answered as run).
        loaded = load_suite(suite, dataclasses.replace(overrides, skip_missing=True)) if suite is not None else None
        server = SimServer(loaded, seed=args.seed, profiles=args.profiles, truth=args.truth, faults=faults,
                           serving=serving)
    except (ProfileError, SuiteError) as exc:
        raise UsageError(str(exc)) from exc
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host}:{args.port} ({exc.strerror})") from exc
    print(f"Simulated Messages endpoint: {server.base_url}")
    print(f"Published site:              {server.site_base}")
    print(f"Suite:                       {server.suite.suite_dir if server.suite else '(none: generic answers)'}")
    if server.truth.default:
        print(f"Truth:                       {server.truth.default}")
    print(f"Try: ANTHROPIC_BASE_URL={server.base_url} ANTHROPIC_API_KEY={key} claude -p 'your prompt'")
    print("Ctrl-C stops it.", flush=True)
    serve_forever(server)
    return 0
