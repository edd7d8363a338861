"""The weekly chain: parametrized notebooks executed by papermill into a browsable report.

``skillbench weekly`` (and :func:`run_weekly`) executes ``notebooks/00_preflight`` … ``05_scorecard`` in order
with papermill's Python API on the ``skillbench`` kernel, with ``cwd`` = ``notebooks/`` (so the notebooks'
relative default paths mean the same in JupyterLab, nbval and the chain; the chain itself passes absolute
paths). Each stage's executed notebook lands in ``reports/<run_key>/NN_<stage>.ipynb`` beside an HTML copy
without code; the week's ``index.html`` links them and the rendered scorecard, and ``reports/index.html``
lists every week (see :mod:`skillbench.report._indexes`).

Contract of the chain:

* Data moves between notebooks only as files whose paths are parameters: the run directory
  ``SUITE_DIR/weekly/<run_key>/`` (plan, runs, manifest, scores, pairs, calibration, scorecard) and the history
  ``SUITE_DIR/weekly/scorecard-history.csv``.
* A failing stage stops the chain. Its executed notebook is kept (papermill marks the failing cell), its HTML
  page shows the code, and :class:`WeeklyResult` names the stage; the CLI exits 1.
* Rerunning a run key resumes: generation and judging skip finished work, calibration is reused while the
  scores it measured are unchanged, and every notebook is executed again on the ledgers.
* With the sim backend the chain starts one simulated endpoint on 127.0.0.1 for all stages (in this
  process) and stops it at the end; stages get its URL as the ``endpoint`` parameter.
* Each stage takes the run directory's lock in its own kernel; the chain never holds it across stages (it
  holds the lock of the week's report folder instead, so two chains of one run key never share a report).
* While a stage runs, its progress bars (runs done / total, rate, ETA) are relayed live to ``progress`` (or
  ``log``): the stage's kernel copies each redraw to a file the chain watches (:data:`PROGRESS_FILE`).

What the notebooks call is in :mod:`skillbench.weekly._stages` (one function per stage, also what the CLI's
commands call), :mod:`skillbench.weekly._notebook` (display helpers) and :mod:`skillbench.weekly._across`
(``explore_weeks``), so cells hold no logic of their own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillbench.ledgers import (
    CALIBRATION_HTML,
    HISTORY_FILE,
    INDEX_FILE,
    SCORECARD_HTML,
    WEEKLY_DIR,
    RunKeyError,
    check_run_key,
    utc_run_key,
)
from skillbench.paths import DEFAULT_SUITE, NOTEBOOKS_DIR, REPORTS_DIR
from skillbench.report import format_seconds, write_reports_index, write_state, write_week_index
from skillbench.suite import SuiteOverrides
from skillbench.weekly._stage_run import STAGES, StageResult, WeeklyError, execute_stage
from skillbench.weekly._week_pages import finish_pages, report_notes

KERNEL_NAME = "skillbench"
DEFAULT_JOBS = 3  # the generator's recommended range is 2–3 (≥ 4 warns about rate limits)


JUDGE_PENDING = "judge pending (batch ids"  # how skillbench.judge._batch.JudgePending begins


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


# --- the chain ----------------------------------------------------------------------------------------------


@dataclass
class WeeklyOptions:
    """What ``skillbench weekly`` was asked to do.

    Attributes:
        suite_dir: the suite (the folder with ``test-prompts/``); outputs go to its ``weekly/<run_key>/``.
        run_key: names the week (default: the UTC date).
        backend: ``sim`` or ``anthropic`` (None: ``anthropic`` with a key in the environment, else ``sim``).
        models, reps, conditions: the matrix (None: the suite config).
        prompts, families: run and grade only these prompts / skill families (the rest of the plan is
            ``limited``: a subset of the week, whose complete families get their verdicts; a later pass of the run
            key without a selection completes it).
        jobs: runs (and judge calls) at once.
        jobs_grow: generation's runs at once start at ``jobs`` and may grow while runs wait on the endpoint
            (:mod:`skillbench.generation._jobs`): ``weekly`` without ``--jobs`` on this machine's threads.
        seed: plan order and simulated endpoint seed.
        sandbox: ``docker`` or ``local`` (None: docker when the engine answers).
        executor, scheduler: where generation, judging and calibration run: ``local`` (the kernels' threads) or
            ``dask`` (the workers of ``scheduler``'s cluster, "": a local cluster per stage; :mod:`skillbench.cluster`).
        calibration_repeat: gradings of each answer for judge self-agreement.
        calibration_sample: calibrate on exactly that many runs, drawn stratified (0: the size rule — a stratified
            sample of at least 150 musts, grown while the must bar is undecided; every run of a smaller week).
        reports_dir: where ``<run_key>/`` and ``index.html`` go.
        suite_overrides: the command line's suite flags (``--skip-missing``, ``--site-base``, ``--config``, …:
            :class:`skillbench.suite.SuiteOverrides`), for every stage that reads the suite.
        sim_profiles: the simulated endpoint's profile file (None: the shipped one); ``skillbench demo-history``
            scripts a week's behaviour with it.
        weeks_dir: where ``<run_key>/`` (the ledgers) and the history go (None: ``SUITE_DIR/weekly/``; set it for
            a suite in a read-only tree such as ``../shared``).
        notebooks_dir: the stage notebooks (also the kernels' working folder).
        kernel_name: the Jupyter kernel (``make setup`` registers ``skillbench``).
        stream: a file to relay the notebooks' printed output to as it happens (None: quiet).
        start_timeout: seconds to wait for a kernel to start.
        wait: a stage finding another pass on the week's folder waits for it to end (False: it refuses at once).
        allow_dirty: a ``with-skill@HEAD`` arm may run a working tree that differs from HEAD (its diff hash is
            recorded with every run).
        generalization: also run the week's families' held-out prompts, before the scorecard, in a week of their own
            (``RUN_DIR/_heldout/``, :mod:`skillbench.weekly._heldout_stage`); each use recorded in the suite's
            ``heldout-uses.csv``.
    """

    suite_dir: Path = DEFAULT_SUITE
    run_key: str = field(default_factory=utc_run_key)
    backend: str | None = None
    models: list[str] | None = None
    reps: int | None = None
    conditions: list[str] | None = None
    prompts: list[str] | None = None
    families: list[str] | None = None
    jobs: int = DEFAULT_JOBS
    jobs_grow: bool = False
    seed: int = 0
    sandbox: str | None = None
    executor: str = "local"
    scheduler: str = ""
    calibration_repeat: int = 3
    calibration_sample: int = 0
    reports_dir: Path = REPORTS_DIR
    weeks_dir: Path | None = None
    suite_overrides: SuiteOverrides = field(default_factory=SuiteOverrides)
    sim_profiles: Path | None = None
    notebooks_dir: Path = NOTEBOOKS_DIR
    kernel_name: str = KERNEL_NAME
    stream: Any = None
    start_timeout: float = 120.0
    wait: bool = False
    allow_dirty: bool = False
    generalization: bool = False


@dataclass
class WeeklyResult:
    """The outcome of :func:`run_weekly`."""

    run_key: str
    report_dir: Path
    index: Path
    state: dict[str, Any]
    stages: list[StageResult]

    @property
    def ok(self) -> bool:
        return self.state["status"] == "complete"

    @property
    def failed_stage(self) -> str | None:
        return self.state.get("failed_stage")


def check_kernel(kernel_name: str) -> None:
    """Raise :class:`WeeklyError` when the Jupyter kernel is not registered."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(kernel_name)
    except NoSuchKernel as exc:
        raise WeeklyError(f"Jupyter kernel {kernel_name!r} is not registered — run `make setup` (it runs "
                          f"`python -m ipykernel install --sys-prefix --name {kernel_name}`)") from exc


@contextlib.contextmanager
def chain_endpoint(backend: str, suite_dir: Path, seed: int, profiles: Path | None = None,
                   overrides: SuiteOverrides | None = None) -> Iterator[str]:
    """The endpoint URL the stages share: one simulated endpoint on loopback for the sim (answering for the suite as
    the suite flags ``overrides`` read it), else ``""``.

    With ``anthropic`` each stage opens Anthropic's endpoint itself from ``ANTHROPIC_API_KEY`` in its
    environment; the key is never a notebook parameter (papermill writes parameters into the notebook).
    """
    if backend != "sim":
        yield ""
        return
    from skillbench.generation import sim_api_key
    from skillbench.sim import Serving, SimServer
    from skillbench.suite import load_families

    # Read as the stages read it (the chain starts this after 00_preflight passed: its sound families), lenient on
    # missing workspace files as the server is.
    suite = load_families(suite_dir, dataclasses.replace(overrides or SuiteOverrides(), skip_missing=True))
    server = SimServer(suite, seed=seed, profiles=profiles, serving=Serving(api_key=sim_api_key()))  # on loopback
    with server:
        yield server.base_url


def stage_parameters(opts: WeeklyOptions, *, suite_dir: Path, run_dir: Path, history: Path, backend: str,
                     endpoint: str, sandbox: str) -> dict[str, Any]:
    """Every parameter a stage may declare, as JSON-typed values (each notebook takes the ones it names)."""
    return {
        "run_key": opts.run_key, "suite_dir": str(suite_dir), "run_dir": str(run_dir),
        "history_path": str(history), "backend": backend, "endpoint": endpoint, "sandbox": sandbox,
        "models": list(opts.models or []), "reps": int(opts.reps or 0), "conditions": list(opts.conditions or []),
        "prompts": list(opts.prompts or []), "families": list(opts.families or []),
        "jobs": int(opts.jobs), "jobs_grow": bool(opts.jobs_grow), "seed": int(opts.seed), "dry_run": False,
        "write": True, "strict": False,
        "repeat": int(opts.calibration_repeat), "sample": int(opts.calibration_sample),
        "suite_overrides": opts.suite_overrides.as_params(), "executor": opts.executor,
        "scheduler": opts.scheduler or "", "wait": opts.wait, "allow_dirty": opts.allow_dirty,
    }


def run_weekly(opts: WeeklyOptions, *, log: Callable[[str], None] | None = None,
               progress: Callable[[str], None] | None = None) -> WeeklyResult:
    """Run the chain for one week and write its report.

    Args:
        opts: the week's options.
        log: called with one line per stage (None: silent).
        progress: called with the running stage's progress lines (runs done / total, rate, ETA), at most every
            :data:`~skillbench.weekly._progress.PROGRESS_EVERY_S` seconds and once more at the stage's end
            (None: ``log``).

    Returns:
        The result; ``result.ok`` is False when a stage failed (``result.failed_stage`` names it).

    Raises:
        WeeklyError: the chain cannot start (bad run key, an unknown ``prompts``/``families`` name, missing suite
            or notebooks, no kernel, no API key, another chain of the same run key running).
    """
    from skillbench.generation import BackendError, resolve_backend

    try:
        check_run_key(opts.run_key)
    except RunKeyError as exc:
        raise WeeklyError(str(exc)) from exc
    suite_dir = Path(opts.suite_dir).resolve()
    from skillbench.suite import is_suite

    if not is_suite(suite_dir):
        raise WeeklyError(f"{suite_dir}: not a suite (SUITE_DIR is the folder that contains test-prompts/, a "
                          "dotnet tree with tests/<plugin>/<skill>/eval.yaml, or a skill folder with "
                          "evals/evals.json)")
    missing = [s.notebook for s in STAGES if not (Path(opts.notebooks_dir) / s.notebook).is_file()]
    if missing:
        raise WeeklyError(f"{opts.notebooks_dir}: missing notebook(s) {', '.join(missing)}")
    try:
        backend = resolve_backend(opts.backend)
    except BackendError as exc:
        raise WeeklyError(str(exc)) from exc
    if backend == "anthropic" and not os.environ.get("ANTHROPIC_API_KEY"):
        raise WeeklyError("--backend anthropic needs ANTHROPIC_API_KEY in the environment")
    _check_selection(suite_dir, opts)
    if opts.generalization:
        from skillbench.ledgers import LedgerError
        from skillbench.weekly._heldout_stage import check_heldout_record

        try:  # a damaged use record refuses before any run: it is never reset, and never read as fresh
            check_heldout_record(suite_dir)
        except LedgerError as exc:
            raise WeeklyError(f"--generalization: {exc}") from exc
    check_kernel(opts.kernel_name)
    opts = dataclasses.replace(opts, notebooks_dir=Path(opts.notebooks_dir).resolve())

    weekly_dir = Path(opts.weeks_dir).resolve() if opts.weeks_dir else suite_dir / WEEKLY_DIR
    run_dir, history = weekly_dir / opts.run_key, weekly_dir / HISTORY_FILE
    reports_dir = Path(opts.reports_dir).resolve()
    report_dir = reports_dir / opts.run_key
    from skillbench.ledgers import RunDirBusy, run_dir_lock

    with contextlib.ExitStack() as stack:
        # The report folder's lock, for the whole chain: the run directory's lock is taken by each stage's kernel.
        try:
            stack.enter_context(run_dir_lock(report_dir))
        except RunDirBusy as exc:
            raise WeeklyError(f"another chain is writing this week's report: {exc}") from exc
        run_dir.mkdir(parents=True, exist_ok=True)  # papermill writes into existing folders only
        return _run_chain(opts, suite_dir=suite_dir, backend=backend, run_dir=run_dir, history=history,
                          reports_dir=reports_dir, log=log, progress=progress)


def _heldout(opts: WeeklyOptions, *, suite_dir: Path, run_dir: Path, endpoint: str, sandbox: str, backend: str,
             log: Callable[[str], None]) -> str:
    """Run ``--generalization``'s held-out week in this process; a failure is one line ("" when it ran)."""
    from skillbench.generation import BackendError, PlanError, SandboxFailure
    from skillbench.ledgers import LedgerError, RunDirBusy
    from skillbench.weekly._heldout_stage import run_heldout_week

    try:
        run_heldout_week(opts, suite_dir=suite_dir, run_dir=run_dir, endpoint=endpoint, sandbox=sandbox,
                         backend=backend, log=log)
    except (LedgerError, RunDirBusy, PlanError, BackendError, SandboxFailure) as exc:
        return f"--generalization: the held-out week failed: {exc}"
    return ""


def _check_selection(suite_dir: Path, opts: WeeklyOptions) -> None:
    """An unknown ``prompts``/``families`` name stops the chain before it starts (one line naming it)."""
    if not (opts.prompts or opts.families):
        return
    from skillbench.generation import SelectionError, make_plan, selected
    from skillbench.suite import SuiteError, load_families

    try:
        suite = load_families(suite_dir, opts.suite_overrides)
    except SuiteError:
        return  # 00_preflight reports a broken suite with all its defects
    run = suite.config.run
    plan = make_plan(suite, opts.run_key, models=opts.models or run.models, reps=opts.reps or run.reps,
                     conditions=opts.conditions or run.conditions, seed=opts.seed)
    try:
        selected(plan, suite, prompts=opts.prompts or [], families=opts.families or [])
    except SelectionError as exc:
        raise WeeklyError(str(exc)) from exc


def _run_chain(opts: WeeklyOptions, *, suite_dir: Path, backend: str, run_dir: Path, history: Path,
               reports_dir: Path, log: Callable[[str], None] | None,
               progress: Callable[[str], None] | None) -> WeeklyResult:
    report_dir = reports_dir / opts.run_key  # the week's pages (locked by the caller)
    for stale in (SCORECARD_HTML, CALIBRATION_HTML):  # a rerun must not show last run's pages as current
        (report_dir / stale).unlink(missing_ok=True)
    from skillbench.generation import docker_available

    sandbox = opts.sandbox or ("docker" if docker_available() else "local")

    stages = [StageResult(s.number, s.name, s.title) for s in STAGES]
    state: dict[str, Any] = {
        "run_key": opts.run_key, "suite_dir": str(suite_dir), "run_dir": str(run_dir), "history_path": str(history),
        "backend": backend, "endpoint_kind": "simulated" if backend == "sim" else "real", "sandbox": sandbox,
        "sandbox_requested": opts.sandbox,
        "sandboxes_used": [], "models": list(opts.models or []), "reps": opts.reps, "jobs": opts.jobs,
        "prompts": list(opts.prompts or []), "families": list(opts.families or []),
        "kernel_name": opts.kernel_name, "status": "running", "failed_stage": None, "error": None,
        "started": _now(), "finished": None, "seconds": None, "overhead_seconds": None, "scorecard_title": None,
        "week_incomplete": False, "stages": [],
    }
    t0 = time.perf_counter()

    def sync() -> None:
        state["stages"] = [{**s.__dict__, "id": f"{s.number}_{s.name}"} for s in stages]
        state["seconds"] = time.perf_counter() - t0
        state["overhead_seconds"] = sum(s.overhead_seconds for s in stages)

    def save() -> None:
        sync()
        write_state(report_dir, state)
        write_week_index(report_dir, state, notes=report_notes(state))
        write_reports_index(reports_dir)

    save()
    say = log or (lambda _text: None)
    say(f"weekly {opts.run_key}: suite {suite_dir}, backend {backend}, sandbox {sandbox}; "
        f"report {report_dir / INDEX_FILE}")
    try:
        with contextlib.ExitStack() as stack:
            endpoint: str | None = None
            for i, stage in enumerate(STAGES):
                if endpoint is None and stage.name != "preflight":
                    # Started after preflight: a broken suite fails in 00 with its defects, not here.
                    endpoint = stack.enter_context(chain_endpoint(backend, suite_dir, opts.seed, opts.sim_profiles,
                                                                    opts.suite_overrides))
                params = stage_parameters(opts, suite_dir=suite_dir, run_dir=run_dir, history=history,
                                          backend=backend, endpoint=endpoint or "", sandbox=sandbox)
                if stage.name == "scorecard" and opts.generalization:  # the scorecard then reads _heldout/ too
                    problem = _heldout(opts, suite_dir=suite_dir, run_dir=run_dir, endpoint=endpoint or "",
                                       sandbox=sandbox, backend=backend, log=say)
                    if problem:
                        state.update(status="failed", failed_stage="heldout", error=problem)
                        break
                stages[i].status = "running"
                save()
                say(f"weekly {opts.run_key}: {stage.id} …")
                stages[i] = execute_stage(stage, params, opts, report_dir, progress=progress or say)
                say(f"weekly {opts.run_key}: {stage.id} {stages[i].status} "
                    f"({format_seconds(stages[i].seconds)})")
                if stages[i].status == "failed":
                    state.update(status="failed", failed_stage=stage.id, error=stages[i].error)
                    # A batched judge that stopped waiting is not broken: a rerun of the run key continues.
                    if JUDGE_PENDING in (stages[i].error or ""):
                        state["judge_pending"] = True
                    break
            else:
                state["status"] = "complete"
    except BaseException as exc:  # Ctrl-C, SIGTERM (SystemExit) or a bug: the report still says what happened
        running = next((f"{s.number}_{s.name}" for s in stages if s.status == "running"), None)
        for s in stages:
            if s.status == "running":
                s.status = "failed"
        state.update(status="failed", failed_stage=running,
                     error="interrupted" if isinstance(exc, KeyboardInterrupt | SystemExit) else repr(exc))
        raise
    finally:
        state["finished"] = _now()
        sync()
        finish_pages(state, run_dir, report_dir)
        save()
    return WeeklyResult(opts.run_key, report_dir, report_dir / INDEX_FILE, state, stages)


