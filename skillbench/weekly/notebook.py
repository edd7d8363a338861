"""Helpers the stage notebooks call for display: theme, collapsed progress bars, small tables of a week.

Nothing here computes a result of the pipeline; the stage functions are in :mod:`skillbench.weekly.stages`.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.ledgers.files import MANIFEST_FILE, RECONCILIATION_FILE, WEEKLY_DIR
from skillbench.report.markdown import markdown_sections  # noqa: F401 - the notebooks read sections through here


class StageError(RuntimeError):
    """Raised inside a notebook when its stage must stop the chain (an unaccounted run, an ungraded item)."""


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
    from skillbench.ledgers.readers import read_manifest

    path = _path(run_dir) / MANIFEST_FILE
    return read_manifest(path) if path.is_file() else pd.DataFrame()


def resolve_run_dir(suite_dir: str | Path, run_key: str, run_dir: str | Path = "") -> Path:
    """``run_dir`` when given, else ``SUITE_DIR/weekly/<run_key>/``."""
    return _path(run_dir) if str(run_dir) else _path(suite_dir) / WEEKLY_DIR / run_key


def reconciliation_table(report: Mapping[str, Any] | str | Path) -> pd.DataFrame:
    """A reconciliation (dict, or a run directory holding ``reconciliation.json``) as ``check, value`` rows."""
    if not isinstance(report, Mapping):
        path = Path(report) / RECONCILIATION_FILE
        report = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    rows = [(k, v if not isinstance(v, list) else (len(v) if not v else f"{len(v)}: {', '.join(map(str, v[:5]))}"
                                                   + (" …" if len(v) > 5 else "")))
            for k, v in report.items()]
    return pd.DataFrame(rows, columns=["check", "value"])


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
