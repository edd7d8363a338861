"""``skillbench generate`` and ``skillbench signals``: run the matrix, then derive the manifest."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from skillbench.commands import (
    add_allow_dirty_arg,
    add_backend_args,
    add_executor_args,
    add_selection_args,
    add_shard_arg,
    add_suite_args,
    add_wait_arg,
    condition_names,
    listed,
    model_names,
    positive_float,
    positive_int,
    run_key,
)
from skillbench.ledgers import MANIFEST_FILE, PLAN_FILE, RECONCILIATION_FILE


def run_timeout(text: str) -> float:
    """An argparse type: a run's external timeout, by the rule a spec's ``timeout`` follows
    (:func:`skillbench.checktypes.timeout_problem`: finite, above 0, at most a day)."""
    from skillbench.checktypes import timeout_problem  # on use: building the parser stays import-free

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if problem := timeout_problem(value):
        raise argparse.ArgumentTypeError(problem)
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("generate", help="run models × conditions × reps with the real Claude Code CLI",
                       description="Run the plan in fresh sandboxes, then write manifest.csv and reconciliation.json "
                       "and print one summary line and the reconciliation's path. Rerunning the same run key "
                       "resumes. Exit 0 every planned run accounted for, 1 a run unaccounted for (or the sandbox "
                       "failed), 2 usage error or another pass holds the week.")
    p.add_argument("suite_dir", metavar="SUITE_DIR", help="folder that contains test-prompts/")
    p.add_argument("--run-key", required=True, type=run_key, metavar="K",
                   help="names the week, e.g. 20261130 (letters, digits, '.', '_', '-')")
    add_backend_args(p)
    p.add_argument("--models", nargs="+", type=model_names, metavar="M",
                   help="model aliases or claude-… ids (default: the suite config); an unknown model exits 2")
    p.add_argument("--reps", type=positive_int, metavar="k", help="repetitions per cell (default: the suite config)")
    p.add_argument("--conditions", nargs="+", type=condition_names, metavar="C",
                   help="no-skill,with-skill,plugin, or with-skill@REF for the skills at a git ref of the suite "
                        "(default: config); opt-in: placebo (the family's name and description over a same-length "
                        "neutral body, generated into OUT_DIR/_placebo/) and aa (a second no-skill arm: the "
                        "harness's noise floor)")
    add_allow_dirty_arg(p)
    add_selection_args(p, what="run")
    p.add_argument("--jobs", type=positive_int, metavar="N",
                   help="runs at once, at most: the ceiling of the adaptive limiter, which lowers it on the CLI's "
                        "rate-limit retries and raises it back slowly, and never above what the endpoint's advertised "
                        "request limit sustains (default: one per core the runs get — the Docker engine's NCPU, or "
                        "this process's CPUs and cgroup quota with --sandbox local — growing while runs wait on the "
                        "endpoint, within the memory their containers' limits need; --executor dask: the cluster's "
                        "worker threads)")
    p.add_argument("--no-adaptive", action="store_true",
                   help="a fixed pool of --jobs runs (no lowering on rate limits; 4 or more risk them)")
    p.add_argument("--limit", type=positive_int, metavar="N", help="run at most N of the pending runs")
    p.add_argument("--dry-run", action="store_true", help="write plan.csv and show the commands; run nothing")
    p.add_argument("--sandbox", choices=["docker", "local"], help="default docker when the engine answers")
    p.add_argument("--out-dir", metavar="DIR", help="default SUITE_DIR/weekly/<run_key>/")
    p.add_argument("--max-total-usd", type=positive_float, metavar="X",
                   help="stop starting runs once finished runs cost X")
    p.add_argument("--timeout", type=run_timeout, default=900.0, metavar="S",
                   help="external timeout per run attempt, in seconds, at most a day (a task prompt's own `timeout` "
                        "wins)")
    add_suite_args(p)
    add_shard_arg(p, what="run")
    add_executor_args(p)
    add_wait_arg(p)
    p.set_defaults(func=run_generate)

    s = sub.add_parser("signals", help="(re)write manifest.csv from a week's run folders",
                       description="Rewrite RUN_DIR/manifest.csv from its run folders, under the run directory's "
                       "lock. Exit 1 when a run folder's metadata cannot be read, 2 usage error or another pass "
                       "holds the week.")
    s.add_argument("run_dir", metavar="RUN_DIR", help="a week's output folder")
    add_wait_arg(s)
    s.set_defaults(func=run_signals)


def run_generate(args: argparse.Namespace) -> int:
    from skillbench.cluster import ExecutorError, check_executor_args
    from skillbench.commands import UsageError, suite_overrides
    from skillbench.generation import (
        BackendError,
        GenerateOptions,
        ImageBuildError,
        PlanError,
        SandboxFailure,
        SelectionError,
        ToolMissing,
        default_out_dir,
        summary_line,
    )
    from skillbench.signals import SignalsError
    from skillbench.suite import SuiteError, load_families
    from skillbench.weekly import StageRuntime, run_generation

    if not Path(args.suite_dir).is_dir():
        raise UsageError(f"{args.suite_dir}: not a folder (SUITE_DIR is the folder that contains test-prompts/, "
                         "or a dotnet tree's tests/ and plugins/)")
    try:
        check_executor_args(args.executor, args.scheduler, args.sandbox)
    except ExecutorError as exc:
        raise UsageError(str(exc)) from exc
    try:
        suite = load_families(args.suite_dir, suite_overrides(args))  # a broken family runs no run
    except SuiteError as exc:
        print(f"skillbench generate: suite has errors: {exc}", file=sys.stderr)
        return 1
    out_dir = Path(args.out_dir) if args.out_dir else default_out_dir(suite, args.run_key)
    try:
        opts = GenerateOptions(
            run_key=args.run_key, out_dir=out_dir, models=listed(args.models) or [], reps=args.reps or 0,
            conditions=listed(args.conditions) or [], jobs=args.jobs or 0, sandbox=args.sandbox or None,
            seed=args.seed, timeout_s=args.timeout, limit=args.limit, dry_run=args.dry_run,
            max_total_usd=args.max_total_usd, prompts=listed(args.prompts) or [],
            families=listed(args.families) or [], allow_dirty=args.allow_dirty, adaptive=not args.no_adaptive,
            shard=args.shard)
        runtime = StageRuntime(backend=args.backend, endpoint=args.endpoint or "", executor=args.executor,
                               scheduler=args.scheduler or "", wait=args.wait)
        report = run_generation(suite, opts, runtime.context(seed=args.seed, suite=suite))
    except SelectionError as exc:
        raise UsageError(str(exc)) from exc
    except SandboxFailure as exc:
        # The bar is closed and the ledgers written (failed closed) before the error gets here: its own line.
        print(f"skillbench generate: {exc} — the manifest and an incomplete reconciliation are written "
              f"({out_dir / RECONCILIATION_FILE}); rerun the same command to resume", file=sys.stderr)
        return 1
    except (PlanError, BackendError, ExecutorError, ImageBuildError, ToolMissing, SignalsError) as exc:
        print(f"skillbench generate: {exc}", file=sys.stderr)
        return 1
    if report.get("dry_run"):
        print(out_dir / PLAN_FILE)
        return 0
    print(f"generate {args.run_key}: {summary_line(report)}")
    print(out_dir / RECONCILIATION_FILE)
    return 0 if report["accounted"] else 1


def run_signals(args: argparse.Namespace) -> int:
    from skillbench.commands import UsageError
    from skillbench.signals import SignalsError
    from skillbench.weekly import write_signals

    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: not a folder")
    try:
        frame = write_signals(run_dir, wait=args.wait)
    except SignalsError as exc:
        print(f"skillbench signals: {exc}", file=sys.stderr)
        return 1
    print(f"{run_dir / MANIFEST_FILE}: {len(frame)} runs, {int((frame.signals_ok == 0).sum())} with unreliable "
          "signals")
    return 0
