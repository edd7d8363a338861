"""``skillbench compare``: is the head's version of the changed skills better than the base's?"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from skillbench.commands import (
    add_backend_args,
    add_suite_args,
    add_wait_arg,
    listed,
    model_names,
    positive_int,
)
from skillbench.commands._generate import run_timeout


def register(sub: argparse._SubParsersAction) -> None:
    from skillbench.compare import FAIL_ON

    p = sub.add_parser(
        "compare", help="compare the changed skills at --head with the same skills at --base (a merge report)",
        description="Find the skill families (and prompts) that differ between two git refs of the suite's "
        "repository, run them in no-skill, with-skill@BASE and with-skill@HEAD, judge head against base, and write "
        "RUN_DIR/compare.md (decision first, fit for a pull-request comment) and RUN_DIR/results.json. Prints the "
        "report's path. Rerunning the same refs resumes. Exit 0 written (or what --fail-on says), 1 --fail-on "
        "matched or the comparison cannot run, 2 usage error or another pass holds the run directory.")
    p.add_argument("suite_dir", metavar="SUITE_DIR", nargs="?", default=".",
                   help="the suite's folder inside a git repository (default: the current folder)")
    p.add_argument("--base", metavar="REF",
                   help="the version to compare against, e.g. main or HEAD~1 (default: the head's first parent, "
                        "REF^1 — for a merge commit, the branch its pull request was merged into)")
    p.add_argument("--head", default="HEAD", metavar="REF",
                   help="the version under review (default HEAD: the working tree, which must be clean)")
    p.add_argument("--allow-dirty", action="store_true",
                   help="with --head HEAD, run the working tree even when it differs from HEAD (its diff hash is "
                        "recorded)")
    p.add_argument("--fail-on", choices=FAIL_ON, metavar="WHAT",
                   help="exit 1 on a regression (or an invalid record), or on anything but an improvement")
    p.add_argument("--generalization", action="store_true",
                   help="also run the changed families' held-out prompts in the same arms (a week of their own, "
                        "never scored) and report the lift on scored prompts, on held-out ones and their gap, "
                        "flagging an edit that may be tuned to the test; each use is recorded in "
                        "SUITE_DIR/heldout-uses.csv")
    p.add_argument("--report", action="store_true",
                   help="also execute notebooks/compare_versions.ipynb into RUN_DIR (notebook and HTML)")
    add_backend_args(p)
    p.add_argument("--models", nargs="+", type=model_names, metavar="M", help="default: the suite config")
    p.add_argument("--reps", type=positive_int, metavar="k", help="repetitions per cell (default: the suite config)")
    p.add_argument("--jobs", type=positive_int, default=2, metavar="N", help="runs and judge calls at once")
    p.add_argument("--sandbox", choices=["docker", "local"], help="default docker when the engine answers")
    p.add_argument("--timeout", type=run_timeout, default=900.0, metavar="S",
                   help="external timeout per run (seconds, at most a day)")
    p.add_argument("--judge-model", metavar="M", help="judge model (default: the judge's default)")
    p.add_argument("--out-dir", metavar="DIR", help="default SUITE_DIR/compare/compare-<base>-<head>/")
    add_suite_args(p)
    add_wait_arg(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from skillbench.commands import UsageError, suite_overrides
    from skillbench.compare import CompareError, CompareOptions, compare
    from skillbench.generation import (
        BackendError,
        ImageBuildError,
        PlanError,
        SandboxFailure,
        SelectionError,
        ToolMissing,
    )
    from skillbench.ledgers import LedgerError
    from skillbench.signals import SignalsError
    from skillbench.suite import SuiteError
    from skillbench.weekly import StageRuntime

    if not Path(args.suite_dir).is_dir():
        raise UsageError(f"{args.suite_dir}: not a folder (SUITE_DIR is the suite's folder in a git repository)")
    base = args.base or f"{args.head}^1"  # a merge compares with its first parent: what its pull request changed
    try:
        opts = CompareOptions(base=base, head=args.head, models=listed(args.models) or (), reps=args.reps or 0,
                              jobs=args.jobs, out_dir=args.out_dir, seed=args.seed, sandbox=args.sandbox or "",
                              timeout_s=args.timeout, allow_dirty=args.allow_dirty, fail_on=args.fail_on,
                              judge_model=args.judge_model or "", suite=suite_overrides(args),
                              generalization=args.generalization)
        runtime = StageRuntime(backend=args.backend, endpoint=args.endpoint or "", wait=args.wait,
                               log=lambda message: print(message, file=sys.stderr, flush=True))
        outcome = compare(args.suite_dir, opts, runtime)
    except SelectionError as exc:
        raise UsageError(str(exc)) from exc
    except SuiteError as exc:
        print(f"skillbench compare: suite has errors: {exc}", file=sys.stderr)
        return 1
    except (CompareError, PlanError, BackendError, ImageBuildError, ToolMissing, SignalsError, SandboxFailure,
            LedgerError) as exc:
        print(f"skillbench compare: {exc}", file=sys.stderr)
        return 1
    if args.report:
        from skillbench.compare import execute_compare_notebook

        try:
            html = execute_compare_notebook(outcome, suite_dir=args.suite_dir, base=base, head=args.head)
        except RuntimeError as exc:
            print(f"skillbench compare: the report notebook failed: {exc}", file=sys.stderr)
            return 1
        print(html, file=sys.stderr)
    print(outcome.report_path)
    return outcome.exit_code
