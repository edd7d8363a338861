"""The weekly chain: parametrized notebooks executed by papermill into a browsable report.

``skillbench weekly`` (and :func:`run_weekly`) executes ``notebooks/00_preflight`` … ``05_scorecard`` in order
with papermill's Python API on the ``skillbench`` kernel, with ``cwd`` = ``notebooks/`` (so the notebooks'
relative default paths mean the same in JupyterLab, nbval and the chain; the chain itself passes absolute
paths). Each stage's executed notebook lands in ``reports/<run_key>/NN_<stage>.ipynb`` beside an HTML copy
without code; the week's ``index.html`` links them and the rendered scorecard, and ``reports/index.html``
lists every week (see :mod:`skillbench.report`).

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

The second half of the module is what the notebooks call (``plan_week``, ``generate_week``, ``judge_week``,
…, and the across-weeks tables of ``explore_weeks``), so cells hold no logic of their own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from skillbench import report as rpt

PROJECT_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"
REPORTS_DIR = PROJECT_ROOT / "reports"
DEFAULT_SUITE = PROJECT_ROOT / "evals"
KERNEL_NAME = "skillbench"
HISTORY_FILE = "scorecard-history.csv"
RUN_KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
DEFAULT_JOBS = 3  # the generator's recommended range is 2–3 (≥ 4 warns about rate limits)


@dataclass(frozen=True)
class Stage:
    """One notebook of the chain."""

    number: str
    name: str
    title: str

    @property
    def id(self) -> str:
        return f"{self.number}_{self.name}"

    @property
    def notebook(self) -> str:
        return f"{self.id}.ipynb"


STAGES: tuple[Stage, ...] = (
    Stage("00", "preflight", "Preflight: is the suite sound?"),
    Stage("01", "generate", "Generation: models × conditions × reps"),
    Stage("02", "signals", "Run signals: activation, health, reconciliation"),
    Stage("03", "judge", "Judging: rubric and pairwise"),
    Stage("04", "calibration", "Judge calibration"),
    Stage("05", "scorecard", "Scorecard"),
)


class WeeklyError(RuntimeError):
    """The chain cannot start (bad options, no kernel, no API key); the message says what to do."""


class StageError(RuntimeError):
    """Raised inside a notebook when its stage must stop the chain (an unaccounted run, an ungraded item)."""


def utc_run_key(now: datetime | None = None) -> str:
    """Today's run key: the UTC date ``YYYYMMDD``."""
    return (now or datetime.now(UTC)).strftime("%Y%m%d")


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
        jobs: runs (and judge calls) at once.
        seed: plan order and simulated endpoint seed.
        sandbox: ``docker`` or ``local`` (None: docker when the engine answers).
        calibration_repeat: gradings of each answer for judge self-agreement.
        calibration_sample: calibrate on that many runs (0: all gradeable runs).
        reports_dir: where ``<run_key>/`` and ``index.html`` go.
        notebooks_dir: the stage notebooks (also the kernels' working folder).
        kernel_name: the Jupyter kernel (``make setup`` registers ``skillbench``).
        stream: a file to relay the notebooks' printed output to as it happens (None: quiet).
        start_timeout: seconds to wait for a kernel to start.
    """

    suite_dir: Path = DEFAULT_SUITE
    run_key: str = field(default_factory=utc_run_key)
    backend: str | None = None
    models: list[str] | None = None
    reps: int | None = None
    conditions: list[str] | None = None
    jobs: int = DEFAULT_JOBS
    seed: int = 0
    sandbox: str | None = None
    calibration_repeat: int = 3
    calibration_sample: int = 0
    reports_dir: Path = REPORTS_DIR
    notebooks_dir: Path = NOTEBOOKS_DIR
    kernel_name: str = KERNEL_NAME
    stream: Any = None
    start_timeout: float = 120.0


@dataclass
class StageResult:
    """What one stage did; serialized into ``weekly.json``."""

    number: str
    name: str
    title: str
    status: str = "not run"  # not run | running | ok | failed
    seconds: float | None = None  # execute_notebook wall time (kernel start to shutdown)
    cell_seconds: float | None = None  # sum of the cells' own execution times
    export_seconds: float | None = None  # the HTML rendering
    notebook: str | None = None
    html: str | None = None
    error: str | None = None

    @property
    def overhead_seconds(self) -> float:
        """Chain overhead of the stage: kernel start/stop and papermill bookkeeping, plus the HTML export."""
        kernel = (self.seconds or 0.0) - (self.cell_seconds or 0.0)
        return max(kernel, 0.0) + (self.export_seconds or 0.0)


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
def chain_endpoint(backend: str, suite_dir: Path, seed: int) -> Iterator[str]:
    """The endpoint URL the stages share: one simulated endpoint on loopback for the sim, else ``""``.

    With ``anthropic`` each stage opens Anthropic's endpoint itself from ``ANTHROPIC_API_KEY`` in its
    environment; the key is never a notebook parameter (papermill writes parameters into the notebook).
    """
    if backend != "sim":
        yield ""
        return
    from skillbench.sim.server import SimServer

    server = SimServer(suite_dir, host="127.0.0.1", seed=seed)
    with server:
        yield server.base_url


def notebook_parameters(notebook: str | Path) -> dict[str, Any]:
    """The names and default values assigned in a notebook's ``parameters`` cell (read with ``ast``).

    papermill's own inspection skips a line it cannot parse (e.g. a help comment with ``=``); a parameter it
    missed would silently keep its default — here, a path into ``tests/data`` — so the chain reads the cell
    itself.

    Raises:
        WeeklyError: the notebook has no ``parameters`` cell, or more than one.
    """
    import ast

    import nbformat

    nb = nbformat.read(str(notebook), as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise WeeklyError(f"{notebook}: {len(cells)} cells tagged 'parameters' (papermill needs exactly one)")
    out: dict[str, Any] = {}
    for node in ast.parse(cells[0].source).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out[node.target.id] = ast.literal_eval(node.value)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = ast.literal_eval(node.value)
    return out


def _cell_seconds(notebook: Path) -> float | None:
    import nbformat

    try:
        nb = nbformat.read(str(notebook), as_version=4)
    except (OSError, ValueError):
        return None
    return float(sum((c.metadata.get("papermill", {}).get("duration") or 0.0) for c in nb.cells))


def execute_stage(stage: Stage, params: Mapping[str, Any], opts: WeeklyOptions, report_dir: Path) -> StageResult:
    """Execute one stage notebook with papermill and render its HTML page; never raises for a failing cell."""
    import papermill as pm

    result = StageResult(stage.number, stage.name, stage.title, status="running")
    source = Path(opts.notebooks_dir) / stage.notebook
    out = report_dir / stage.notebook
    # Only the parameters a notebook declares: the notebook's parameters cell is its interface.
    values = {k: v for k, v in params.items() if k in notebook_parameters(source)}
    t0 = time.perf_counter()
    try:
        pm.execute_notebook(str(source), str(out), parameters=values, kernel_name=opts.kernel_name,
                            cwd=str(opts.notebooks_dir), progress_bar=False, log_output=False,
                            stdout_file=opts.stream, stderr_file=None, start_timeout=opts.start_timeout,
                            extra_arguments=["--IPKernelApp.log_level=ERROR"])  # no start-up chatter
        result.status = "ok"
    except pm.PapermillExecutionError as exc:
        result.status = "failed"
        result.error = f"{exc.ename}: {exc.evalue}".strip()
    except Exception as exc:  # noqa: BLE001 - a dead kernel or a broken notebook fails the stage, named
        result.status = "failed"
        result.error = f"{type(exc).__name__}: {exc}".strip()
    result.seconds = time.perf_counter() - t0
    if out.is_file():
        result.notebook = out.name
        result.cell_seconds = _cell_seconds(out)
        t1 = time.perf_counter()
        try:
            html = rpt.export_notebook_html(out, out.with_suffix(".html"), show_code=result.status == "failed")
            result.html = html.name
        except Exception as exc:  # noqa: BLE001 - the stage's page is part of its output: no page, no success
            result.status = "failed"
            result.error = result.error or f"HTML export failed: {type(exc).__name__}: {exc}"
        result.export_seconds = time.perf_counter() - t1
    return result


def stage_parameters(opts: WeeklyOptions, *, suite_dir: Path, run_dir: Path, history: Path, backend: str,
                     endpoint: str, sandbox: str) -> dict[str, Any]:
    """Every parameter a stage may declare, as JSON-typed values (each notebook takes the ones it names)."""
    return {
        "run_key": opts.run_key, "suite_dir": str(suite_dir), "run_dir": str(run_dir),
        "history_path": str(history), "backend": backend, "endpoint": endpoint, "sandbox": sandbox,
        "models": list(opts.models or []), "reps": int(opts.reps or 0), "conditions": list(opts.conditions or []),
        "jobs": int(opts.jobs), "seed": int(opts.seed), "dry_run": False, "write": True, "strict": False,
        "repeat": int(opts.calibration_repeat), "sample": int(opts.calibration_sample),
    }


def run_weekly(opts: WeeklyOptions, *, log: Callable[[str], None] | None = None) -> WeeklyResult:
    """Run the chain for one week and write its report.

    Args:
        opts: the week's options.
        log: called with one line per stage (None: silent).

    Returns:
        The result; ``result.ok`` is False when a stage failed (``result.failed_stage`` names it).

    Raises:
        WeeklyError: the chain cannot start (bad run key, missing suite or notebooks, no kernel, no API key).
    """
    from skillbench.backend import BackendError, resolve_backend
    from skillbench.tools import docker_available

    if not RUN_KEY_RE.match(opts.run_key):
        raise WeeklyError(f"run key {opts.run_key!r}: use letters, digits, '.', '_' or '-' (e.g. 20261130)")
    suite_dir = Path(opts.suite_dir).resolve()
    if not (suite_dir / "test-prompts").is_dir():
        raise WeeklyError(f"{suite_dir}: not a suite (SUITE_DIR is the folder that contains test-prompts/)")
    missing = [s.notebook for s in STAGES if not (Path(opts.notebooks_dir) / s.notebook).is_file()]
    if missing:
        raise WeeklyError(f"{opts.notebooks_dir}: missing notebook(s) {', '.join(missing)}")
    try:
        backend = resolve_backend(opts.backend)
    except BackendError as exc:
        raise WeeklyError(str(exc)) from exc
    if backend == "anthropic" and not os.environ.get("ANTHROPIC_API_KEY"):
        raise WeeklyError("--backend anthropic needs ANTHROPIC_API_KEY in the environment")
    check_kernel(opts.kernel_name)
    opts = dataclasses.replace(opts, notebooks_dir=Path(opts.notebooks_dir).resolve())

    weekly_dir = suite_dir / "weekly"
    run_dir, history = weekly_dir / opts.run_key, weekly_dir / HISTORY_FILE
    reports_dir = Path(opts.reports_dir).resolve()
    report_dir = reports_dir / opts.run_key
    for folder in (run_dir, report_dir):  # papermill writes into existing folders only
        folder.mkdir(parents=True, exist_ok=True)
    for stale in ("scorecard.html", "calibration.html"):  # a rerun must not show last run's pages as current
        (report_dir / stale).unlink(missing_ok=True)
    sandbox = opts.sandbox or ("docker" if docker_available() else "local")

    stages = [StageResult(s.number, s.name, s.title) for s in STAGES]
    state: dict[str, Any] = {
        "run_key": opts.run_key, "suite_dir": str(suite_dir), "run_dir": str(run_dir), "history_path": str(history),
        "backend": backend, "endpoint_kind": "simulated" if backend == "sim" else "real", "sandbox": sandbox,
        "sandbox_requested": opts.sandbox,
        "sandboxes_used": [], "models": list(opts.models or []), "reps": opts.reps, "jobs": opts.jobs,
        "kernel_name": opts.kernel_name, "status": "running", "failed_stage": None, "error": None,
        "started": _now(), "finished": None, "seconds": None, "overhead_seconds": None, "scorecard_title": None,
        "week_incomplete": False, "stages": [],
    }
    t0 = time.perf_counter()

    def sync() -> None:
        state["stages"] = [{**s.__dict__, "id": f"{s.number}_{s.name}"} for s in stages]
        state["seconds"] = time.perf_counter() - t0
        state["overhead_seconds"] = sum(s.overhead_seconds for s in stages)

    def save(final: bool = False) -> None:
        sync()
        rpt.write_state(report_dir, state)
        rpt.write_week_index(report_dir, state, headline=_headline(history, opts.run_key) if final else (),
                             notes=_notes(state))
        rpt.write_reports_index(reports_dir)

    save()
    say = log or (lambda _text: None)
    say(f"weekly {opts.run_key}: suite {suite_dir}, backend {backend}, sandbox {sandbox}; "
        f"report {report_dir / rpt.INDEX_FILE}")
    try:
        with contextlib.ExitStack() as stack:
            endpoint: str | None = None
            for i, stage in enumerate(STAGES):
                if endpoint is None and stage.name != "preflight":
                    # Started after preflight: a broken suite fails in 00 with its defects, not here.
                    endpoint = stack.enter_context(chain_endpoint(backend, suite_dir, opts.seed))
                params = stage_parameters(opts, suite_dir=suite_dir, run_dir=run_dir, history=history,
                                          backend=backend, endpoint=endpoint or "", sandbox=sandbox)
                stages[i].status = "running"
                save()
                say(f"weekly {opts.run_key}: {stage.id} …")
                stages[i] = execute_stage(stage, params, opts, report_dir)
                say(f"weekly {opts.run_key}: {stage.id} {stages[i].status} "
                    f"({rpt.format_seconds(stages[i].seconds)})")
                if stages[i].status == "failed":
                    state.update(status="failed", failed_stage=stage.id, error=stages[i].error)
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
        _finish_pages(state, run_dir, report_dir)
        save(final=True)
    return WeeklyResult(opts.run_key, report_dir, report_dir / rpt.INDEX_FILE, state, stages)


def _finish_pages(state: dict[str, Any], run_dir: Path, report_dir: Path) -> None:
    """Scorecard and calibration pages for stages that succeeded now; sandboxes the runs actually used."""
    done = {s["id"] for s in state["stages"] if s["status"] == "ok"} if state["stages"] else set()
    if "05_scorecard" in done and (run_dir / "scorecard.md").is_file():
        title = (run_dir / "scorecard.md").read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
        state["scorecard_title"] = title
        state["week_incomplete"] = "INCOMPLETE" in title
        rpt.write_markdown_page(run_dir / "scorecard.md", report_dir / "scorecard.html", title=title)
    if "04_calibration" in done and (run_dir / "calibration.md").is_file():
        rpt.write_markdown_page(run_dir / "calibration.md", report_dir / "calibration.html",
                                title=f"Judge calibration — {state['run_key']}")
    manifest = run_dir / "manifest.csv"
    if manifest.is_file():
        with contextlib.suppress(Exception):
            used = pd.read_csv(manifest, usecols=["sandbox"], dtype=str)["sandbox"].dropna().unique()
            state["sandboxes_used"] = sorted(str(s) for s in used)


def _headline(history: Path, run_key: str) -> list[dict[str, Any]]:
    from skillbench.history import numeric_history, read_history

    try:
        rows = numeric_history(read_history(history))
    except Exception:  # noqa: BLE001 - the headline is a convenience; the scorecard page has the numbers
        return []
    rows = rows[rows["run_key"] == run_key]
    return [{"model": r.model, "must_lift": _num(r.must_lift), "must_lift_se": _num(r.must_lift_se)}
            for r in rows.itertuples(index=False)]


def _num(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and not np.isfinite(x)) else float(x)


def _notes(state: Mapping[str, Any]) -> list[str]:
    notes = []
    if state.get("week_incomplete"):
        notes.append("INCOMPLETE week: the reconciliation does not account for every planned run — read no number "
                     "as a clean week (see the scorecard's Coverage section).")
    if state.get("endpoint_kind") == "simulated":
        notes.append("Simulated endpoint: every answer and grade came from skillbench's simulated Messages endpoint "
                     "on 127.0.0.1. These numbers test the harness, not a model.")
    used = state.get("sandboxes_used") or [state.get("sandbox")]
    if "local" in used:
        why = ("as requested (--sandbox local)" if state.get("sandbox_requested") == "local" else
               "because no Docker engine answered; run `make setup` as root to start one")
        notes.append("No container isolation: runs used the local sandbox (a fresh HOME, config folder, TMPDIR and "
                     f"working folder per run) {why}.")
    if len(used) > 1:
        notes.append(f"Runs of this week used several sandboxes ({', '.join(used)}); it was resumed on another "
                     "machine set-up.")
    return notes


# --- what the notebooks call --------------------------------------------------------------------------------


def notebook_setup() -> None:
    """Display defaults for the stage notebooks: seaborn theme, compact tables, no progress-bar widgets."""
    import warnings

    import matplotlib
    import seaborn as sns

    # Without ipywidgets tqdm.auto falls back to text bars (collapsed by collapsed_progress) and warns once.
    warnings.filterwarnings("ignore", message="IProgress not found")
    sns.set_theme(style="whitegrid", context="notebook")
    matplotlib.rcParams.update({"figure.dpi": 96, "savefig.dpi": 96})
    with contextlib.suppress(ImportError):
        from IPython import get_ipython

        if get_ipython() is not None:
            from matplotlib_inline.backend_inline import set_matplotlib_formats

            # skillbench.figures builds Figures without pyplot: register their PNG display explicitly.
            set_matplotlib_formats("png")
    pd.set_option("display.max_columns", 40)
    pd.set_option("display.width", 180)
    pd.set_option("display.max_colwidth", 90)
    pd.set_option("display.precision", 3)


@contextlib.contextmanager
def collapsed_progress() -> Iterator[None]:
    """Keep only the final state of progress bars written to stderr during the block.

    tqdm redraws a line with carriage returns; in an executed notebook that would store every redraw. The
    block's stderr is buffered and re-emitted with each line reduced to its last redraw.
    """
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stderr(buffer):
            yield
    finally:
        lines = [segment.split("\r")[-1].rstrip() for segment in buffer.getvalue().split("\n")]
        text = "\n".join(line for line in lines if line)
        if text:
            print(text, file=sys.stderr)


def _path(text: str | Path) -> Path:
    return Path(text).expanduser().resolve()


def require_sound(report: Any, *, strict: bool = False) -> str:
    """Stop the chain on a suite with errors (or warnings when ``strict``); returns a one-line verdict.

    Raises:
        StageError: the suite failed preflight; the message is the summary and the first defects.
    """
    if report.ok(strict=strict):
        warned = f" ({len(report.warnings)} warning(s) above)" if report.warnings else ""
        return f"The suite is sound{warned}: the chain continues."
    bad = report.errors + (report.warnings if strict else [])
    lines = "; ".join(str(d) for d in bad[:3]) + (f"; … {len(bad) - 3} more" if len(bad) > 3 else "")
    raise StageError(f"{report.summary()} — fix the suite before any model call: {lines}")


def manifest_if_any(run_dir: str | Path) -> pd.DataFrame:
    """The week's typed manifest, or an empty frame before the first run finished."""
    from skillbench.ledgers import read_manifest

    path = _path(run_dir) / "manifest.csv"
    return read_manifest(path) if path.is_file() else pd.DataFrame()


def resolve_run_dir(suite_dir: str | Path, run_key: str, run_dir: str | Path = "") -> Path:
    """``run_dir`` when given, else ``SUITE_DIR/weekly/<run_key>/``."""
    return _path(run_dir) if str(run_dir) else _path(suite_dir) / "weekly" / run_key


def _matrix(suite: Any, models: Sequence[str], reps: int, conditions: Sequence[str]) -> tuple[list[str], int,
                                                                                                list[str]]:
    run = suite.config.run
    return list(models or run.models), int(reps or run.reps), list(conditions or run.conditions)


def plan_week(suite_dir: str | Path, run_key: str, run_dir: str | Path = "", *, models: Sequence[str] = (),
              reps: int = 0, conditions: Sequence[str] = (), seed: int = 0) -> pd.DataFrame:
    """The week's plan (what ``generate`` would run) with each run's status, writing nothing.

    Returns:
        ``plan.csv``'s columns plus ``status``: ``finished`` when the run folder holds a complete transcript,
        else ``pending``.
    """
    from skillbench.generation import finished_runs
    from skillbench.plan import make_plan
    from skillbench.validation import load_suite

    suite = load_suite(_path(suite_dir))
    models, reps, conditions = _matrix(suite, models, reps, conditions)
    plan = make_plan(suite, run_key, models=models, conditions=conditions, reps=reps, seed=seed)
    folder = resolve_run_dir(suite_dir, run_key, run_dir)
    done = finished_runs(folder) if folder.is_dir() else set()
    return plan.assign(status=np.where(plan["run_id"].isin(done), "finished", "pending"))


def plan_matrix(plan: pd.DataFrame) -> pd.DataFrame:
    """Runs per model × condition, split by status (a compact view of a plan)."""
    return (plan.pivot_table(index=["model", "condition"], columns="status", values="run_id", aggfunc="count",
                             fill_value=0).reindex(columns=["finished", "pending"], fill_value=0)
            .assign(total=lambda f: f.sum(axis=1)).reset_index())


def cli_preview(suite_dir: str | Path, plan: pd.DataFrame, n: int = 3) -> str:
    """The first ``n`` pending runs' Claude Code command lines (the prompt elided), as generate would run them."""
    from skillbench.claude_cli import CliCall, cli_args
    from skillbench.validation import load_suite

    suite = load_suite(_path(suite_dir))
    lines = []
    for row in plan[plan["status"].eq("pending")].head(n).itertuples(index=False):
        call = CliCall(prompt=suite.prompt(row.prompt).test.prompt, model=row.model, run_id=row.run_id)
        lines.append(" ".join(cli_args(call, suite.config.run)[:-1]) + " PROMPT  # " + row.run_id)
    return "\n".join(lines) if lines else "(nothing pending: every planned run is finished)"


def generate_week(suite_dir: str | Path, run_key: str, run_dir: str | Path = "", *, backend: str = "sim",
                  endpoint: str = "", models: Sequence[str] = (), reps: int = 0, conditions: Sequence[str] = (),
                  jobs: int = 2, sandbox: str = "", seed: int = 0, timeout_s: float = 900.0) -> dict[str, Any]:
    """Run (or resume) the week's generation; what ``skillbench generate`` does.

    Returns:
        The reconciliation report (also in ``reconciliation.json``).

    Raises:
        StageError: a planned run is unaccounted for (the week must not read as complete).
    """
    from skillbench.backend import model_endpoint
    from skillbench.generation import GenerateOptions, generate
    from skillbench.validation import load_suite

    suite = load_suite(_path(suite_dir))
    models, reps, conditions = _matrix(suite, models, reps, conditions)
    opts = GenerateOptions(run_key=run_key, out_dir=resolve_run_dir(suite_dir, run_key, run_dir), models=models,
                           conditions=conditions, reps=reps, jobs=jobs, sandbox=sandbox or None, seed=seed,
                           timeout_s=timeout_s)

    def endpoint_factory(truth: Path):
        return model_endpoint(backend, endpoint=endpoint or None, suite_dir=suite.suite_dir, seed=seed, truth=truth)

    with collapsed_progress():
        report = generate(suite, opts, endpoint_factory=endpoint_factory, log=print)
    if not report.get("accounted", False):
        lists = {k: v for k, v in report.items() if isinstance(v, list) and v}
        raise StageError(f"generation left planned runs unaccounted for: {lists} — rerun the same run key to resume")
    return report


def reconciliation_table(report: Mapping[str, Any] | str | Path) -> pd.DataFrame:
    """A reconciliation (dict, or a run directory holding ``reconciliation.json``) as ``check, value`` rows."""
    import json

    if not isinstance(report, Mapping):
        path = Path(report) / "reconciliation.json"
        report = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    rows = [(k, v if not isinstance(v, list) else (len(v) if not v else f"{len(v)}: {', '.join(map(str, v[:5]))}"
                                                   + (" …" if len(v) > 5 else "")))
            for k, v in report.items()]
    return pd.DataFrame(rows, columns=["check", "value"])


def signals_week(run_dir: str | Path, *, write: bool = False):
    """The week's ledgers (:class:`skillbench.ledgers.RunLedgers`), after rewriting the manifest when ``write``."""
    from skillbench.ledgers import load_run
    from skillbench.signals import write_manifest

    folder = _path(run_dir)
    if write:
        write_manifest(folder)
    return load_run(folder)


def run_health(manifest: pd.DataFrame) -> pd.DataFrame:
    """Per model × condition: runs, exit ≠ 0, API errors, budget hits, unparsed signals, denials, retries."""
    if manifest.empty:
        return pd.DataFrame(columns=["model", "condition", "runs"])
    m = manifest.assign(
        exit_nonzero=~manifest["exit_code"].eq(0).fillna(False), api_error=manifest["is_error"].astype(bool),
        budget_hit_=manifest["budget_hit"].eq(1).fillna(False), unreliable=~manifest["signals_ok"].eq(1).fillna(False),
        denied=manifest["denials"].gt(0).fillna(False), retried=manifest["attempts"].gt(1).fillna(False))
    return (m.groupby(["model", "condition"]).agg(
        runs=("run_id", "count"), exit_nonzero=("exit_nonzero", "sum"), api_errors=("api_error", "sum"),
        budget_hits=("budget_hit_", "sum"), unreliable_signals=("unreliable", "sum"), with_denials=("denied", "sum"),
        retried=("retried", "sum"), mean_cost_usd=("total_cost_usd", "mean"),
        median_seconds=("duration_ms", lambda s: s.median() / 1000)).reset_index())


@dataclass
class JudgeOutcome:
    """What the judging stage did (None parts when ``write`` was off)."""

    rubric: Any = None
    pairs: Any = None


def judge_week(run_dir: str | Path, *, backend: str = "sim", endpoint: str = "", judge_model: str = "",
               samples: int = 1, jobs: int = 2, seed: int = 0, retry_ungraded: bool = True) -> JudgeOutcome:
    """Grade the week (rubric judge, then pairwise judge); both resume and skip what is already graded.

    Raises:
        StageError: items stay ungraded or pairs errored after retries (a judge failure must never read as a
            skill loss); rerunning the run key grades them again.
    """
    from skillbench.backend import model_endpoint
    from skillbench.judge import DEFAULT_JUDGE_MODEL, JudgeOptions, judge_run_dir
    from skillbench.pairs import judge_pairs

    folder = _path(run_dir)
    model = judge_model or DEFAULT_JUDGE_MODEL
    opts = JudgeOptions(judge_model=model, samples=samples, jobs=jobs, seed=seed, retry_ungraded=retry_ungraded)
    with collapsed_progress(), model_endpoint(backend, endpoint=endpoint or None, seed=seed) as ep:
        rubric = judge_run_dir(folder, opts, base_url=ep.base_url, api_key=ep.api_key, endpoint_kind=ep.kind,
                               log=print)
        pairs = judge_pairs(folder, base_url=ep.base_url, api_key=ep.api_key, judge_model=model, jobs=jobs,
                            seed=seed, log=print)
    if not rubric.ok:
        raise StageError(f"{rubric.ungraded_items} rubric item(s) could not be graded (reasons in each run's "
                         "judge.json) — rerun the same run key to grade them again")
    if pairs.errors:
        raise StageError(f"{pairs.errors} pair(s) could not be judged — rerun the same run key to judge them again")
    return JudgeOutcome(rubric, pairs)


def judge_tables(run_dir: str | Path) -> dict[str, pd.DataFrame]:
    """The judging ledgers as tables: ``scores``, ``verdicts`` (counts), ``evidence``, ``skips``, ``pairs``,
    ``pair_outcomes`` and ``position`` (the position-swap check)."""
    from skillbench.judge import evidence_summary
    from skillbench.ledgers import empty_scores, read_judge_skips, read_scores
    from skillbench.pairs import pairs_frame, position_agreement

    folder = _path(run_dir)
    scores = read_scores(folder / "scores.csv") if (folder / "scores.csv").is_file() else empty_scores()
    verdicts = (scores.groupby(["item_type", "verdict", "condition"]).size().unstack("condition", fill_value=0)
                .reset_index() if not scores.empty else pd.DataFrame())
    pairs = pairs_frame(folder)
    outcomes = (pairs[pairs["error"].eq("")].groupby(["skill_family", "model", "outcome"]).size()
                .unstack("outcome", fill_value=0).reindex(columns=["W", "T", "L"], fill_value=0).reset_index()
                if not pairs.empty else pd.DataFrame(columns=["skill_family", "model", "W", "T", "L"]))
    return {"scores": scores, "verdicts": verdicts, "evidence": evidence_summary(folder),
            "skips": read_judge_skips(folder / "judge-skips.csv"), "pairs": pairs, "pair_outcomes": outcomes,
            "position": pd.DataFrame([position_agreement(pairs)]) if not pairs.empty else pd.DataFrame()}


def calibration_current(run_dir: str | Path) -> bool:
    """True when ``calibration.csv`` was written after the scores it measured last changed."""
    folder = _path(run_dir)
    cal, scores = folder / "calibration.csv", folder / "scores.csv"
    return cal.is_file() and scores.is_file() and cal.stat().st_mtime >= scores.stat().st_mtime


def calibrate_week(run_dir: str | Path, *, backend: str = "sim", endpoint: str = "", repeat: int = 3,
                   sample: int = 0, other_judge: str = "", human_labels: str = "", jobs: int = 2, seed: int = 0,
                   fresh: bool = False) -> bool:
    """Calibrate the judge on the week's answers unless the calibration on disk is current (resume).

    Returns:
        True when it graded again, False when it reused ``calibration.csv``.
    """
    from skillbench.backend import model_endpoint
    from skillbench.calibration import CalibrationOptions, calibrate
    from skillbench.judge import select_runs

    folder = _path(run_dir)
    if calibration_current(folder) and not fresh and not human_labels:
        print("calibration.csv is newer than scores.csv: reusing it (pass fresh=True to grade again)")
        return False
    opts = CalibrationOptions(repeat=repeat, sample=sample or None, other_judge=other_judge or None,
                              human=_path(human_labels) if human_labels else None, seed=seed, jobs=jobs)
    calls = repeat >= 2 or bool(other_judge)
    if calls and not human_labels and not select_runs(folder)[0]:
        print("no gradeable run with an answer this week: nothing to calibrate (see 03_judge's skips)")
        return False
    with collapsed_progress(), (model_endpoint(backend, endpoint=endpoint or None, seed=seed) if calls
                                else contextlib.nullcontext()) as ep:
        calibrate(folder, opts, base_url=ep.base_url if ep else None, api_key=ep.api_key if ep else None, log=print)
    return True


def calibration_tables(run_dir: str | Path) -> dict[str, Any]:
    """``calibration.csv`` as ``agreement`` and ``self_agreement`` tables, ``grades``, and ``markdown``."""
    folder = _path(run_dir)
    table = pd.read_csv(folder / "calibration.csv", keep_default_na=True) if (folder / "calibration.csv").is_file() \
        else pd.DataFrame(columns=["comparison", "rater_a", "rater_b", "item_type"])
    table["rater_b"] = table["rater_b"].fillna("")
    grades_path = folder / "calibration-grades.csv"
    md = folder / "calibration.md"
    return {
        "agreement": table[table["comparison"] != "self-agreement"].reset_index(drop=True),
        "self_agreement": table[table["comparison"] == "self-agreement"].reset_index(drop=True),
        "grades": pd.read_csv(grades_path) if grades_path.is_file() else pd.DataFrame(),
        "markdown": md.read_text(encoding="utf-8") if md.is_file() else "",
    }


@dataclass
class WeekScorecard:
    """The scorecard's data (tables for figures) and its markdown."""

    data: Any
    markdown: str
    path: Path | None

    @property
    def frames(self) -> dict[str, pd.DataFrame]:
        return self.data.frames()


def scorecard_week(run_dir: str | Path, history_path: str | Path = "", *, write: bool = False,
                   n_resamples: int | None = None) -> WeekScorecard:
    """Write ``scorecard.md`` and upsert the history (``write``), or compute it without writing.

    Without ``write`` the history is read as it is (this week already in it, or added in memory only).
    """
    from skillbench import history as hist
    from skillbench.ledgers import load_run
    from skillbench.scorecard import compute_scorecard, default_history_path, render_markdown, write_scorecard
    from skillbench.stats import DEFAULT_RESAMPLES

    folder = _path(run_dir)
    hpath = _path(history_path) if str(history_path) else default_history_path(folder)
    n = n_resamples or DEFAULT_RESAMPLES
    if write:
        result = write_scorecard(folder, history_path=hpath, n_resamples=n)
        return WeekScorecard(result.data, result.markdown, result.path)
    data = compute_scorecard(load_run(folder), history=hist.read_history(hpath), n_resamples=n)
    return WeekScorecard(data, render_markdown(data), None)


def markdown_sections(markdown: str, *titles: str, level: int = 4) -> str:
    """The named ``## `` sections of a markdown document, their headings moved to ``level``.

    For showing parts of ``scorecard.md`` or ``calibration.md`` under a notebook's own headings.
    """
    parts = re.split(r"(?m)^(?=## )", markdown)
    keep = [p for p in parts if any(p.startswith(f"## {t}") for t in titles)]
    text = "\n".join(keep)
    return re.sub(r"(?m)^(#{2,})(?= )", lambda m: "#" * min(level + len(m.group(1)) - 2, 6), text)


# --- across weeks (explore_weeks) ---------------------------------------------------------------------------


@dataclass
class Weeks:
    """Every week of a ``weekly/`` folder as one table surface.

    Attributes:
        keys: run keys in time order (by their latest run start).
        runs: one row per run of every week: the manifest with ``run_key`` and the run's rubric metrics
            (``must_coverage``, ``bonus_rate``, ``avoid_violations``, ``composite``; empty when not graded).
        prompts: per week × model × condition × prompt, metrics averaged over reps (``n_reps`` kept).
        paired: per week × model × prompt, the lift ``d`` (with-skill − no-skill) and its rep-noise ``se``.
        history: ``scorecard-history.csv`` (numeric).
        skipped: weeks whose ledgers could not be read, with the reason.
    """

    keys: list[str]
    runs: pd.DataFrame
    prompts: pd.DataFrame
    paired: pd.DataFrame
    history: pd.DataFrame
    skipped: dict[str, str] = field(default_factory=dict)


def _rep_noise(prompt_reps: pd.DataFrame) -> pd.DataFrame:
    """Pooled within-prompt SD of ``must_coverage`` across reps, per model × condition, and its degrees of freedom.

    Pooling over the week's prompts gives a usable noise estimate with only two reps per prompt.
    """
    g = prompt_reps.dropna(subset=["must_coverage"]).groupby(["model", "condition", "prompt"])["must_coverage"]
    parts = pd.DataFrame({"ss": g.apply(lambda s: float(((s - s.mean()) ** 2).sum())), "df": g.count() - 1})
    pooled = parts.groupby(["model", "condition"]).sum()
    pooled["sd"] = np.sqrt(pooled["ss"] / pooled["df"].where(pooled["df"] > 0))
    return pooled[["sd", "df"]].reset_index()


def _week_pairs(reps: pd.DataFrame, per_prompt: pd.DataFrame) -> pd.DataFrame:
    """Per model × prompt of one week: the lift ``d`` and its ``se`` from the arms' pooled rep noise."""
    from skillbench.scoring import LIFT_ARMS

    no, wi = LIFT_ARMS
    arms = per_prompt[per_prompt["condition"].isin(LIFT_ARMS)].merge(_rep_noise(reps), on=["model", "condition"],
                                                                      how="left")
    if arms.empty:
        return pd.DataFrame()
    wide = arms.pivot(index=["model", "prompt", "skill"], columns="condition",
                      values=["must_coverage", "n_reps", "sd", "df"])

    def col(metric: str, arm: str) -> pd.Series:
        return wide[(metric, arm)] if (metric, arm) in wide.columns else pd.Series(np.nan, index=wide.index)

    pair = pd.DataFrame({"no_skill": col("must_coverage", no), "with_skill": col("must_coverage", wi)})
    pair["d"] = pair["with_skill"] - pair["no_skill"]
    pair["se"] = np.sqrt(col("sd", no) ** 2 / col("n_reps", no) + col("sd", wi) ** 2 / col("n_reps", wi))
    pair["df"] = np.fmin(col("df", no), col("df", wi))
    return pair.dropna(subset=["d"]).reset_index()


def load_weeks(weekly_dir: str | Path, history_path: str | Path = "") -> Weeks:
    """Read every week under ``weekly_dir`` (each sub-folder with a ``manifest.csv``) into :class:`Weeks`."""
    from skillbench.history import numeric_history, read_history
    from skillbench.ledgers import LedgerError, load_run
    from skillbench.scoring import prompt_rep_scores, prompt_scores

    root = _path(weekly_dir)
    runs, prompts, paired, skipped, starts = [], [], [], {}, {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and (p / "manifest.csv").is_file()):
        try:
            led = load_run(folder)
        except LedgerError as exc:
            skipped[folder.name] = str(exc)
            continue
        key = led.run_key
        manifest, scores = led.manifest, led.scores
        starts[key] = manifest["started_at"].max()
        dormant = set(manifest.loc[manifest["dormancy"], "prompt"])
        reps = prompt_rep_scores(scores[~scores["prompt"].isin(dormant)])
        metrics = reps[["model", "condition", "prompt", "rep", "must_coverage", "bonus_rate", "avoid_violations",
                        "composite"]]
        runs.append(manifest.merge(metrics, on=["model", "condition", "prompt", "rep"], how="left")
                    .assign(run_key=key))
        per_prompt = prompt_scores(reps)
        prompts.append(per_prompt.assign(run_key=key))
        pair = _week_pairs(reps, per_prompt)
        if not pair.empty:
            paired.append(pair.assign(run_key=key))
    keys = sorted(starts, key=lambda k: (starts[k], k))
    hpath = _path(history_path) if str(history_path) else root / HISTORY_FILE

    def cat(frames: list[pd.DataFrame]) -> pd.DataFrame:
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    return Weeks(keys=keys, runs=cat(runs), prompts=cat(prompts), paired=cat(paired),
                 history=numeric_history(read_history(hpath)), skipped=skipped)


def prompt_movers(weeks: Weeks, run_key: str = "", previous: str = "", *, confidence: float = 0.95) -> pd.DataFrame:
    """Which prompts' lift moved most between two weeks, and was the move beyond noise?

    The rule is the week-over-week rule of the history, applied per prompt: ``Δ = d_now − d_prev``; the
    within-week noise is ``t·√(se_now² + se_prev²)`` with each ``se`` from the pooled rep-to-rep SD of that
    week's arms; the between-week noise is the population SD of the prompt's lift over the weeks before
    ``run_key`` (needs two); the threshold is the larger, and a move beyond it is ``moved = yes``.

    Args:
        weeks: :func:`load_weeks` output.
        run_key: the week to look at (default: the latest).
        previous: the week to compare with (default: the one before ``run_key``).
    """
    from scipy import stats

    columns = ["model", "prompt", "skill", "prev_lift", "now_lift", "delta", "within", "between", "threshold",
               "moved"]
    if len(weeks.keys) < 2 or weeks.paired.empty:
        return pd.DataFrame(columns=columns)
    now = run_key or weeks.keys[-1]
    prev = previous or weeks.keys[weeks.keys.index(now) - 1]
    p = weeks.paired
    both = p[p["run_key"] == now].merge(p[p["run_key"] == prev][["model", "prompt", "d", "se", "df"]],
                                         on=["model", "prompt"], suffixes=("", "_prev")).set_index(["model", "prompt"])
    prior_keys = weeks.keys[: weeks.keys.index(now)]
    prior = p[p["run_key"].isin(prior_keys)].groupby(["model", "prompt"])["d"]
    between = prior.agg(lambda s: float(np.std(s, ddof=0)) if len(s) >= 2 else np.nan)
    dof = np.minimum(both["df"], both["df_prev"]).astype(float)
    t = pd.Series(np.where(dof >= 1, stats.t.ppf(0.5 + confidence / 2, dof.clip(lower=1)), np.nan), index=both.index)
    out = pd.DataFrame({"skill": both["skill"], "prev_lift": both["d_prev"], "now_lift": both["d"]})
    out["delta"] = out["now_lift"] - out["prev_lift"]
    out["within"] = t * np.hypot(both["se"], both["se_prev"])
    out["between"] = between.reindex(out.index)
    out["threshold"] = out[["within", "between"]].max(axis=1, skipna=True)
    moved = np.where(out["threshold"].isna(), "n/a", np.where(out["delta"].abs() > out["threshold"], "yes",
                                                               "no (within noise)"))
    out["moved"] = moved
    out = out.reset_index()
    return out.reindex(out["delta"].abs().sort_values(ascending=False).index)[columns].reset_index(drop=True)


def activation_by_week(weeks: Weeks) -> pd.DataFrame:
    """Per week × skill family: the scorecard's trigger health (:func:`skillbench.trigger.trigger_health`),
    as ``run_key, skill_family, runs, activations, rate, dormancy_runs, false_triggers``."""
    from skillbench.trigger import trigger_health

    columns = ["run_key", "skill_family", "runs", "activations", "rate", "dormancy_runs", "false_triggers"]
    if weeks.runs.empty:
        return pd.DataFrame(columns=columns)
    health = trigger_health(weeks.runs, by=("run_key", "skill_family"))
    out = health.rename(columns={"scored_runs": "runs", "recall": "rate"})[columns]
    order = {k: i for i, k in enumerate(weeks.keys)}
    return out.sort_values(["skill_family", "run_key"], key=lambda s: s.map(order) if s.name == "run_key" else s,
                           kind="stable").reset_index(drop=True)


def never_triggered(weeks: Weeks) -> pd.DataFrame:
    """Skill families and prompts that never activated in the with-skill arm in any week.

    Returns:
        ``level`` (``family``/``prompt``), ``name``, ``skill_family``, ``weeks``, ``runs`` — only the never-triggered.
    """
    r = weeks.runs
    columns = ["level", "name", "skill_family", "weeks", "runs"]
    if r.empty:
        return pd.DataFrame(columns=columns)
    act = r["skill_activation"].fillna("").str.strip()
    own = r.assign(active=act.ne("") & act.ne("none"))
    own = own[own["condition"].eq("with-skill") & ~own["dormancy"] & own["signals_ok"].eq(1).fillna(False)]
    rows = []
    for level, key in (("family", "skill_family"), ("prompt", "prompt")):
        g = own.groupby(key).agg(skill_family=("skill_family", "first"), weeks=("run_key", "nunique"),
                                 runs=("run_id", "count"), activations=("active", "sum"))
        for name, row in g[g["activations"] == 0].iterrows():
            rows.append({"level": level, "name": name, "skill_family": row["skill_family"], "weeks": row["weeks"],
                         "runs": row["runs"]})
    return pd.DataFrame(rows, columns=columns)
