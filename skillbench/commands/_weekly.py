"""``skillbench weekly``: the papermill notebook chain, from preflight to scorecard, into ``reports/<run_key>/``."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from skillbench.commands import (
    add_allow_dirty_arg,
    add_backend_args,
    add_executor_args,
    add_selection_args,
    add_suite_args,
    add_wait_arg,
    listed,
    model_names,
    positive_int,
    run_key,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "weekly",
        help="run the weekly notebook chain (preflight → scorecard) and write the HTML report",
        description="Execute notebooks/00_preflight … 05_scorecard with papermill on the 'skillbench' kernel, "
        "writing the week's ledgers to SUITE/weekly/<run_key>/ and the executed notebooks, their HTML and an "
        "index to reports/<run_key>/. With --backend sim the simulated endpoint runs on 127.0.0.1 for the whole "
        "chain. Rerunning a run key resumes. The running stage's progress (runs done / total, rate, ETA) is shown "
        "on stderr. Prints the report's index.html. Exit 0 complete, 1 a stage failed (named), 2 usage error "
        "or another chain of the run key is running.",
    )
    add_backend_args(p, endpoint=False)  # the chain starts (and stops) its own simulated endpoint
    p.add_argument("--run-key", type=run_key, metavar="K", help="names the week (default: today's UTC date, YYYYMMDD)")
    p.add_argument("--models", nargs="+", type=model_names, metavar="M",
                   help="model aliases, e.g. sonnet haiku (default: the suite config); an unknown model exits 2")
    p.add_argument("--reps", type=positive_int, metavar="k", help="repetitions per cell (default: the suite config)")
    add_selection_args(p, what="run and grade")
    p.add_argument("--jobs", type=positive_int, default=None, metavar="N",
                   help="runs and judge calls at once (default: one per core the runs get — the Docker engine's "
                        "NCPU, or this process's CPUs and cgroup quota with --sandbox local — and generation runs more "
                        "while runs wait on the endpoint; --executor dask: 3); generation also keeps to what the "
                        "endpoint's advertised request limit sustains")
    p.add_argument("--suite", default=None, metavar="DIR", help="suite folder (default: the bundled evals/)")
    p.add_argument("--reports", default=None, metavar="DIR", help="reports folder (default: reports/)")
    add_suite_args(p)
    p.add_argument("--out-dir", default=None, metavar="DIR",
                   help="where the weeks' ledgers and history go (default: SUITE/weekly/; for a read-only suite)")
    p.add_argument("--sandbox", choices=["docker", "local"], help="default docker when the engine answers")
    add_executor_args(p)
    add_wait_arg(p)
    add_allow_dirty_arg(p)
    p.add_argument("--generalization", action="store_true",
                   help="also run the held-out prompts of the week's families (with-skill and no-skill, a week of "
                        "their own in RUN_DIR/_heldout/, never in the lift, gate or history) before the scorecard, "
                        "which then shows the lift on scored prompts, on held-out ones and their gap; each use is "
                        "recorded in SUITE_DIR/heldout-uses.csv")
    p.add_argument("--quiet", action="store_true",
                   help="do not relay the notebooks' output to the terminal (stage and progress lines still show)")
    p.set_defaults(func=run)


class TerminalLines:
    """The chain's stage lines and progress lines on stderr.

    On a terminal the progress line is redrawn in place (and ended before the next stage line); elsewhere (a CI
    log, a pipe) a progress line is printed at most every ``every`` seconds, the last one of a stage always.
    """

    def __init__(self, stream=None, every: float = 15.0):
        import time

        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every, self._clock = every, time.monotonic
        self._open = False  # a progress line is on screen without its newline
        self._at: float | None = None

    def line(self, text: str) -> None:
        self._end_progress()
        print(text, file=self.stream, flush=True)
        self._at = None

    def progress(self, text: str) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K" + text)
            self.stream.flush()
            self._open = True
            return
        now = self._clock()
        if self._at is None or now - self._at >= self.every or "100%" in text:
            print(text, file=self.stream, flush=True)
            self._at = now

    def write(self, text: str) -> int:
        """The notebooks' relayed output (a file for papermill): ends an open progress line first."""
        if text:
            self._end_progress()
            self.stream.write(text)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def close(self) -> None:
        """End an open progress line (the chain is over)."""
        self._end_progress()

    def _end_progress(self) -> None:
        if self._open:
            self.stream.write("\n")
            self._open = False


def run(args: argparse.Namespace) -> int:
    from skillbench.cluster import ExecutorError, check_executor_args
    from skillbench.commands import UsageError, suite_overrides
    from skillbench.ledgers import utc_run_key
    from skillbench.paths import DEFAULT_SUITE, REPORTS_DIR
    from skillbench.weekly import DEFAULT_JOBS, WeeklyError, WeeklyOptions, run_weekly

    try:
        check_executor_args(args.executor, args.scheduler, args.sandbox)
    except ExecutorError as exc:
        raise UsageError(str(exc)) from exc
    terminal = TerminalLines()
    jobs, why = weekly_jobs(args.jobs, args.executor, args.sandbox, DEFAULT_JOBS)
    first = [f"weekly: {jobs} run{'s' if jobs != 1 else ''} and judge calls at once ({why})"]

    def log(text: str) -> None:
        """The chain's lines, after the jobs line (said once the chain runs: a refusal stays one line)."""
        while first:
            terminal.line(first.pop())
        terminal.line(text)
    opts = WeeklyOptions(
        suite_dir=Path(args.suite) if args.suite else DEFAULT_SUITE, run_key=args.run_key or utc_run_key(),
        backend=args.backend, models=listed(args.models), reps=args.reps, prompts=listed(args.prompts),
        families=listed(args.families), jobs=jobs, jobs_grow=not args.jobs and args.executor == "local",
        seed=args.seed, sandbox=args.sandbox,
        reports_dir=Path(args.reports) if args.reports else REPORTS_DIR,
        weeks_dir=Path(args.out_dir) if args.out_dir else None, suite_overrides=suite_overrides(args),
        executor=args.executor, scheduler=args.scheduler or "", wait=args.wait, allow_dirty=args.allow_dirty,
        generalization=args.generalization,
    )
    opts.stream = None if args.quiet else terminal
    # SIGTERM unwinds like Ctrl-C: the simulated endpoint, the kernel and the report's state are cleaned up.
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        result = run_weekly(opts, log=log, progress=terminal.progress)
    except WeeklyError as exc:
        raise UsageError(str(exc)) from exc
    finally:
        terminal.close()
        signal.signal(signal.SIGTERM, previous)
    if not result.ok:
        stage = result.failed_stage or "?"
        # the held-out week (--generalization) runs in this process: it has no notebook to point at
        where = ("" if stage == "heldout" else
                 f"  executed notebook (failing cell marked): {result.report_dir / (stage + '.ipynb')}\n")
        print(f"skillbench weekly: stage {stage} failed: {result.state.get('error')}\n{where}"
              f"  rerun the same command (run key {result.run_key}) to resume", file=sys.stderr)
    print(result.index)
    return 0 if result.ok else 1


def weekly_jobs(given: int | None, executor: str, sandbox: str | None, fallback: int) -> tuple[int, str]:
    """The chain's runs at once and why: ``--jobs``, else one per core the runs get (``fallback`` on a cluster,
    whose width this machine's cores do not say)."""
    if given:
        return given, f"--jobs {given}"
    if executor == "dask":
        return fallback, "the default for --executor dask; --jobs N to choose"
    import dataclasses

    from skillbench.generation import default_jobs, docker_available, machine_facts

    # the start only (no memory, no ceiling): how far generation grows is its own line, from its containers' limits
    facts = dataclasses.replace(machine_facts(sandbox or ("docker" if docker_available() else "local")), memory=None)
    choice = default_jobs(facts)
    return choice.jobs, f"{choice.why}; generation runs more while runs wait on the endpoint; --jobs N to choose"
