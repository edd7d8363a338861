"""One stage of the chain: its notebook, the parameters it declares, and executing it into the report.

A stage notebook is executed by papermill on the ``skillbench`` kernel with only the parameters its ``parameters``
cell declares; its executed copy and an HTML page land in ``reports/<run_key>/``. A failing cell never raises here:
the :class:`StageResult` says ``failed`` and why.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillbench.ledgers import PROGRESS_FILE
from skillbench.report import execute_notebook, export_notebook_html
from skillbench.weekly._progress import ProgressRelay, _stage_environment

if TYPE_CHECKING:
    from skillbench.weekly._chain import WeeklyOptions


class WeeklyError(RuntimeError):
    """The chain cannot start (bad options, no kernel, no API key); the message says what to do."""


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


def execute_stage(stage: Stage, params: Mapping[str, Any], opts: WeeklyOptions, report_dir: Path,
                  progress: Callable[[str], None] | None = None) -> StageResult:
    """Execute one stage notebook with papermill and render its HTML page; never raises for a failing cell.

    Args:
        progress: called with the stage's progress lines while it runs (None: not relayed).
    """
    import papermill as pm

    from skillbench.weekly._notebook import PROGRESS_ENV

    result = StageResult(stage.number, stage.name, stage.title, status="running")
    source = Path(opts.notebooks_dir) / stage.notebook
    out = report_dir / stage.notebook
    # Only the parameters a notebook declares: the notebook's parameters cell is its interface.
    values = {k: v for k, v in params.items() if k in notebook_parameters(source)}
    progress_file = report_dir / PROGRESS_FILE
    relay = (ProgressRelay(progress_file, progress, f"weekly {params.get('run_key', opts.run_key)}: {stage.id}: ")
             if progress else contextlib.nullcontext())
    t0 = time.perf_counter()
    try:
        with _stage_environment(**{PROGRESS_ENV: str(progress_file)}), relay:
            execute_notebook(source, out, parameters=values, kernel_name=opts.kernel_name,
                             cwd=opts.notebooks_dir, stdout_file=opts.stream, stderr_file=None,
                             start_timeout=opts.start_timeout)
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
            html = export_notebook_html(out, out.with_suffix(".html"), show_code=result.status == "failed")
            result.html = html.name
        except Exception as exc:  # noqa: BLE001 - the stage's page is part of its output: no page, no success
            result.status = "failed"
            result.error = result.error or f"HTML export failed: {type(exc).__name__}: {exc}"
        result.export_seconds = time.perf_counter() - t1
    return result
