"""``skillbench worker check``: is every worker of a Dask cluster ready to run this client's runs?"""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("worker", help="the workers of a Dask cluster (--executor dask)")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check", help="check that every worker has Docker and this client's runner image",
        description="On every worker of --scheduler's cluster: the Docker engine answers, the runner image with "
                    "the tag this client expects (the hash of its inputs: `skillbench image show`) is present, and, "
                    "for --backend sim, socat is in it and the worker is on this machine (the simulated endpoint "
                    "is loopback-only). One line per worker. Exit 0 every worker ready, 1 one is not (named, with "
                    "the fix: usually `skillbench image build` on it), 2 usage error or no scheduler answers.")
    check.add_argument("--scheduler", required=True, metavar="ADDRESS",
                       help="the scheduler's address, e.g. tcp://127.0.0.1:8786")
    check.add_argument("--backend", choices=["sim", "anthropic"], default="sim",
                       help="what the runs will talk to: sim (default) needs socat and workers on this machine; "
                            "anthropic needs neither")
    check.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    from skillbench.cluster import ExecutorError, check_workers, open_executor, remote_workers
    from skillbench.commands import UsageError
    from skillbench.generation import image_tag

    tag = image_tag()
    if not tag:
        print("skillbench worker check: the Claude Code CLI is not installed here, so the expected image tag is "
              "unknown — run `make setup`", file=sys.stderr)
        return 1
    sim = args.backend == "sim"
    try:
        with open_executor("dask", args.scheduler, log=lambda line: print(line, file=sys.stderr)) as executor:
            statuses = check_workers(executor.client, tag, socat=sim)
            far = set(remote_workers(executor.workers())) if sim else set()
    except ExecutorError as exc:
        raise UsageError(str(exc)) from exc
    ready = 0
    for status in statuses:
        if status.address in far:
            print(f"{status.address}: NOT READY — on another host, but the simulated endpoint is loopback-only "
                  "(with --backend sim the cluster must be on this machine; use --backend anthropic)")
            continue
        print(status.line())
        ready += status.ready
    print(f"{ready} of {len(statuses)} worker(s) ready for {tag}", file=sys.stderr)
    return 0 if statuses and ready == len(statuses) else 1
