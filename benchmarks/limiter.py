"""Benchmark: generation and the judge under the simulated endpoint's rate limit — paced, AIMD alone, fixed pools.

The same matrix (the tiny suite, haiku, no-skill and with-skill, one turn per run) runs once per pass against an
endpoint whose ``rate_limit`` profile admits ``--rpm`` requests a minute from a bucket of ``--burst`` seconds'
refill; each pass gets a fresh endpoint (a full bucket) and its own rate budget:

* ``paced``: ``--jobs`` as the adaptive limiter's ceiling, and every run's relay waiting for its turn in the
  endpoint's :class:`skillbench.limiter.RateBudget` (the default);
* ``aimd``: the same ceiling, relays forwarding at once (``GenerateOptions(paced=False)``): the limiter alone,
  reacting to the 429s the CLIs saw (the design before the budget);
* ``fixed-N``: a fixed pool of N (``adaptive=False``, unpaced) for each N of ``--pools``; the best of them is the
  one with the least wall time.

Printed per pass, from the runs' relay records (every request a CLI sent, and its status): requests, 429s and their
share, wall time, runs, finished runs, rate-limited runs (the manifest's), the seconds relays waited for their turn.
Then the paced pass's wall time over the best fixed pool's and its 429 share, against the targets (≤ 1.1×, ≤ 2 %).
Then the judge path: the rubric judge over the paced pass's week, against a fresh limited endpoint (``--judge-rpm``,
same burst): requests and 429s as the endpoint counted them, and the budget's waits.

    .venv/bin/python benchmarks/limiter.py [--jobs 8] [--reps 8] [--rpm 40] [--burst 6] [--pools 1,2,4,8]
        [--judge-rpm 40] [--sandbox docker|local]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillbench.generation import Endpoint, GenerateOptions, docker_available, generate  # noqa: E402
from skillbench.ledgers import read_manifest  # noqa: E402
from skillbench.limiter import endpoint_budget  # noqa: E402
from skillbench.runtime import PassContext  # noqa: E402
from skillbench.sim import Serving, SimServer  # noqa: E402
from skillbench.suite import load_suite  # noqa: E402
from skillbench.weekly import model_endpoint  # noqa: E402

SUITE = ROOT / "tests" / "data" / "tiny-suite"
ONE_TURN = {"trigger": 0.0, "file_read": 0.0, "follow_link": 0.0, "self_serve": 0.0, "web_search": 0.0,
            "deny_rate": 0.0, "budget_cross": 0.0}
CLI_RETRIES = "6"  # the CLI's own backoff then spans about 30 s, so a run outlasts a short wait for the bucket
TARGET_WALL = 1.1  # the paced pass's wall time over the best fixed pool's
TARGET_429_SHARE = 0.02


def relay_counts(week: Path) -> dict[str, float]:
    """Messages requests the week's CLIs sent (every attempt's relay record), 429s among them, and relay waits."""
    requests = limited = 0
    waited = 0.0
    for path in week.glob("*/*relay.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            ex = json.loads(line) if line.strip() else {}
            if ex.get("route") != "messages":
                continue
            requests += 1
            limited += ex.get("status") == 429
            waited += float(ex.get("paced_s") or 0.0)
    return {"requests": requests, "429s": limited, "waited_s": waited}


def one_pass(root: Path, name: str, *, adaptive: bool, paced: bool, jobs: int, args: argparse.Namespace,
             sandbox: str) -> dict[str, Any]:
    profiles = root / f"profiles-{name}.yaml"
    limit = {"requests_per_minute": args.rpm, "burst_s": args.burst}
    profiles.write_text(yaml.safe_dump({"models": {"default": ONE_TURN}, "rate_limit": limit}), encoding="utf-8")
    suite = load_suite(SUITE)
    out = root / name
    opts = GenerateOptions(run_key="bench", out_dir=out, models=["haiku"], conditions=["no-skill", "with-skill"],
                           reps=args.reps, jobs=jobs, seed=11, timeout_s=240, sandbox=sandbox, adaptive=adaptive,
                           paced=paced, extra_env={"CLAUDE_CODE_MAX_RETRIES": CLI_RETRIES})
    t0 = time.perf_counter()
    report = generate(suite, opts, PassContext(endpoint=lambda: model_endpoint("sim", suite_dir=suite, seed=11,
                                                                           profiles=profiles), log=lambda m: None))
    wall = time.perf_counter() - t0
    manifest = read_manifest(out / "manifest.csv")
    limited = manifest["rate_limited"].astype(str).isin({"1", "True"})
    return {"wall_s": wall, "runs": len(manifest), "finished": int(manifest["run_state"].eq("finished").sum()),
            "complete": bool(report.get("complete")), "rate_limited": int(limited.sum()), **relay_counts(out)}


def judge_pass(week: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The rubric judge over ``week`` against a fresh limited endpoint: its requests and 429s, as it counted them."""
    from skillbench.judge import JudgeOptions, judge_run_dir

    key = "sk-bench-judge"
    spec = {"rate_limit": {"requests_per_minute": args.judge_rpm, "burst_s": args.burst}}
    with SimServer(None, seed=11, profiles=spec, serving=Serving(api_key=key)) as server:
        endpoint = Endpoint(base_url=server.base_url, api_key=key, kind="simulated")
        t0 = time.perf_counter()
        report = judge_run_dir(week, JudgeOptions(jobs=args.jobs, fresh=True),
                               PassContext(endpoint=endpoint, log=lambda m: None))
        wall = time.perf_counter() - t0
        requests = len(server.received)  # every POST /v1/messages it was sent, answered or 429
        rejected = server.rate_limits.rejected if server.rate_limits is not None else 0
    budget = endpoint_budget(endpoint.base_url, key).summary()
    return {"wall_s": wall, "graded": report.graded, "requests": requests, "429s": rejected,
            "waited_s": budget["waited_s"], "capped": budget["capped"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=8, help="the paced and AIMD passes' ceiling")
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--rpm", type=float, default=40.0, help="the sim's requests_per_minute")
    parser.add_argument("--burst", type=float, default=6.0, help="the sim's burst_s (bucket size in seconds)")
    parser.add_argument("--pools", default="1,2,4,8", help="the fixed pools' sizes")
    parser.add_argument("--judge-rpm", type=float, default=40.0, help="the judge endpoint's requests_per_minute")
    parser.add_argument("--sandbox", choices=["docker", "local"], default=None)
    args = parser.parse_args()
    sandbox = args.sandbox or ("docker" if docker_available() else "local")
    pools = [int(n) for n in args.pools.split(",") if n.strip()]
    load = os.getloadavg()[0]
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="skillbench-limiter-") as tmp:
        root = Path(tmp)
        results["paced"] = one_pass(root, "paced", adaptive=True, paced=True, jobs=args.jobs, args=args,
                                    sandbox=sandbox)
        results["aimd"] = one_pass(root, "aimd", adaptive=True, paced=False, jobs=args.jobs, args=args,
                                   sandbox=sandbox)
        for n in pools:
            results[f"fixed-{n}"] = one_pass(root, f"fixed-{n}", adaptive=False, paced=False, jobs=n, args=args,
                                             sandbox=sandbox)
        judged = judge_pass(root / "paced", args)
    print(f"generation under a sim rate limit of {args.rpm:g} requests/min (burst {args.burst:g} s), {sandbox} "
          f"sandbox, CLAUDE_CODE_MAX_RETRIES={CLI_RETRIES}, load {load:.2f} at the start")
    print(f"{'pass':<9} {'jobs':>4} {'requests':>8} {'429s':>5} {'share':>6} {'wall s':>7} {'runs':>5} "
          f"{'finished':>8} {'rate-limited':>12} {'relay wait s':>12}")
    for name, r in results.items():
        jobs = args.jobs if name in ("paced", "aimd") else int(name.split("-")[1])
        share = r["429s"] / r["requests"] if r["requests"] else 0.0
        print(f"{name:<9} {jobs:4d} {r['requests']:8d} {r['429s']:5d} {share:6.1%} {r['wall_s']:7.1f} "
              f"{r['runs']:5d} {r['finished']:8d} {r['rate_limited']:12d} {r['waited_s']:12.1f}")
    paced = results["paced"]
    best_name = min((n for n in results if n.startswith("fixed-")), key=lambda n: results[n]["wall_s"])
    best = results[best_name]
    wall_ratio = paced["wall_s"] / best["wall_s"]
    share = paced["429s"] / paced["requests"] if paced["requests"] else 0.0
    print(f"paced / best fixed pool ({best_name}): wall time {wall_ratio:.2f} (target ≤ {TARGET_WALL:g}: "
          f"{'met' if wall_ratio <= TARGET_WALL else 'NOT met'}); paced 429s {paced['429s']} of {paced['requests']} "
          f"requests = {share:.1%} (target ≤ {TARGET_429_SHARE:.0%}: "
          f"{'met' if share <= TARGET_429_SHARE else 'NOT met'}); paced / aimd wall "
          f"{paced['wall_s'] / results['aimd']['wall_s']:.2f}")
    jshare = judged["429s"] / judged["requests"] if judged["requests"] else 0.0
    print(f"judge: {judged['graded']} runs graded at --jobs {args.jobs} against {args.judge_rpm:g} requests/min "
          f"(burst {args.burst:g} s): {judged['requests']} requests, {judged['429s']} 429s ({jshare:.1%}), "
          f"wall {judged['wall_s']:.1f} s, budget waits {judged['waited_s']:.1f} s ({judged['capped']} capped)")


if __name__ == "__main__":
    main()
