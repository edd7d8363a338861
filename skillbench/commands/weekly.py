"""``skillbench weekly``: the papermill notebook chain, from preflight to scorecard, into ``reports/<run_key>/``."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from skillbench.commands import add_backend_args, listed, positive_int


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "weekly",
        help="run the weekly notebook chain (preflight → scorecard) and write the HTML report",
        description="Execute notebooks/00_preflight … 05_scorecard with papermill on the 'skillbench' kernel, "
        "writing the week's ledgers to SUITE/weekly/<run_key>/ and the executed notebooks, their HTML and an "
        "index to reports/<run_key>/. With --backend sim the simulated endpoint runs on 127.0.0.1 for the whole "
        "chain. Rerunning a run key resumes. Prints the report's index.html. Exit 0 complete, 1 a stage failed "
        "(named), 2 usage error.",
    )
    add_backend_args(p, endpoint=False)  # the chain starts (and stops) its own simulated endpoint
    p.add_argument("--run-key", metavar="K", help="names the week (default: today's UTC date, YYYYMMDD)")
    p.add_argument("--models", nargs="+", metavar="M", help="model aliases, e.g. sonnet haiku (default: the suite "
                   "config)")
    p.add_argument("--reps", type=positive_int, metavar="k", help="repetitions per cell (default: the suite config)")
    p.add_argument("--jobs", type=positive_int, default=None, metavar="N",
                   help="runs and judge calls at once (default 3)")
    p.add_argument("--suite", default=None, metavar="DIR", help="suite folder (default: the bundled evals/)")
    p.add_argument("--reports", default=None, metavar="DIR", help="reports folder (default: reports/)")
    p.add_argument("--sandbox", choices=["docker", "local"], help="default docker when the engine answers")
    p.add_argument("--quiet", action="store_true", help="do not relay the notebooks' output to the terminal")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from skillbench.cli import UsageError
    from skillbench.weekly.chain import (
        DEFAULT_JOBS,
        DEFAULT_SUITE,
        REPORTS_DIR,
        WeeklyError,
        WeeklyOptions,
        run_weekly,
        utc_run_key,
    )

    opts = WeeklyOptions(
        suite_dir=Path(args.suite) if args.suite else DEFAULT_SUITE, run_key=args.run_key or utc_run_key(),
        backend=args.backend, models=listed(args.models), reps=args.reps,
        jobs=args.jobs or DEFAULT_JOBS, seed=args.seed, sandbox=args.sandbox,
        reports_dir=Path(args.reports) if args.reports else REPORTS_DIR,
        stream=None if args.quiet else sys.stderr,
    )
    # SIGTERM unwinds like Ctrl-C: the simulated endpoint, the kernel and the report's state are cleaned up.
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        result = run_weekly(opts, log=lambda line: print(line, file=sys.stderr, flush=True))
    except WeeklyError as exc:
        raise UsageError(str(exc)) from exc
    finally:
        signal.signal(signal.SIGTERM, previous)
    if not result.ok:
        stage = result.failed_stage or "?"
        print(f"skillbench weekly: stage {stage} failed: {result.state.get('error')}\n"
              f"  executed notebook (failing cell marked): {result.report_dir / (stage + '.ipynb')}\n"
              f"  rerun the same command (run key {result.run_key}) to resume", file=sys.stderr)
    print(result.index)
    return 0 if result.ok else 1
