"""Helpers the stage notebooks call for display: theme, collapsed progress bars, small tables of a week.

Nothing here computes a result of the pipeline; the stage functions are in :mod:`skillbench.weekly._stages`.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.ledgers import MANIFEST_FILE, RECONCILIATION_FILE, WEEKLY_DIR, read_json_object
from skillbench.markdown import (
    RATE_DIGITS,
    markdown_sections,  # noqa: F401 - the notebooks read sections through here
)


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

            # skillbench.report.figures builds Figures without pyplot: register their PNG display explicitly.
            set_matplotlib_formats("png")
            # an empty table says so (the report's pages print "none", never headers over nothing)
            get_ipython().display_formatter.formatters["text/html"].for_type(pd.DataFrame, _frame_html)
    pd.set_option("display.max_columns", 40)
    pd.set_option("display.width", 180)
    pd.set_option("display.max_colwidth", 90)
    # every float at the report's rate decimals (skillbench.markdown.RATE_DIGITS): 0.500 beside 0.875, not 0.5
    pd.set_option("display.float_format", f"{{:.{RATE_DIGITS}f}}".format)


def _frame_html(frame: pd.DataFrame) -> str:
    """A DataFrame as a notebook page shows it: pandas' own table, or "none" when it has no rows."""
    if frame.empty:
        return f"<p><em>none</em> <small>({len(frame.columns)} columns, no rows)</small></p>"
    return str(frame._repr_html_())


PROGRESS_ENV = "SKILLBENCH_PROGRESS_FILE"  # set by the weekly chain for each stage's kernel
_BAR = re.compile(r"\|\s*\d+/\d+ \[")  # a tqdm redraw: "desc:  50%|█████     | 4/8 [00:10<00:10, 2.5s/run]"
_DESC = re.compile(r"^(.*?):\s+\d+%\|")
PROGRESS_WRITE_S = 0.5  # rewrite the progress file at most this often (its last state is always written)


def progress_key(line: str) -> str:
    """Which bar a redraw belongs to: its description (``generate 20261130``, ``judge``, ``judge-pairs``)."""
    match = _DESC.match(line)
    return match.group(1) if match else ""


class _StageStderr(io.StringIO):
    """A stage's stderr: kept for the notebook, and each progress-bar redraw copied to the chain's progress file.

    The file holds the latest redraw of every bar of the stage, one line per bar in the order they started; the
    chain (another process) reads it and relays the lines to the terminal, so a long stage shows runs done /
    total, rate and ETA while the notebook keeps only each bar's final state.
    """

    def __init__(self, progress_file: Path | None):
        super().__init__()
        self.progress_file = progress_file
        self._guard = threading.Lock()
        self._bars: dict[str, str] = {}
        self._written: dict[str, str] = {}
        self._at = 0.0

    def write(self, text: str) -> int:
        count = super().write(text)
        if self.progress_file is not None:
            bars = [seg.strip() for seg in re.split(r"[\r\n]", text) if _BAR.search(seg)]
            if bars:
                with self._guard:
                    for line in bars:
                        self._bars[progress_key(line)] = line
                self.publish(final=False)
        return count

    def publish(self, *, final: bool) -> None:
        """Write the bars' latest state to the progress file (throttled unless ``final``)."""
        with self._guard:
            bars, now = dict(self._bars), time.monotonic()
            if self.progress_file is None or not bars or bars == self._written:
                return
            # a new bar always goes out at once: the previous bar's final state must not wait for the throttle
            if not final and now - self._at < PROGRESS_WRITE_S and bars.keys() == self._written.keys():
                return
            self._written, self._at = bars, now
        with contextlib.suppress(OSError):  # the relay is a convenience: a full disk must not fail the stage
            tmp = self.progress_file.with_name(self.progress_file.name + ".tmp")
            tmp.write_text("".join(line + "\n" for line in bars.values()), encoding="utf-8")
            os.replace(tmp, self.progress_file)


@contextlib.contextmanager
def collapsed_progress() -> Iterator[None]:
    """Keep only the final state of progress bars written to stderr during the block.

    tqdm redraws a line with carriage returns; in an executed notebook that would store every redraw. The
    block's stderr is buffered and re-emitted with each line reduced to its last redraw. Under the weekly chain
    (``$SKILLBENCH_PROGRESS_FILE`` set) every redraw is also copied to that file as it happens, which the chain
    relays to the terminal.
    """
    target = os.environ.get(PROGRESS_ENV)
    buffer = _StageStderr(Path(target) if target else None)
    try:
        with contextlib.redirect_stderr(buffer):
            yield
    finally:
        buffer.publish(final=True)
        lines = [segment.split("\r")[-1].rstrip() for segment in buffer.getvalue().split("\n")]
        text = "\n".join(line for line in lines if line)
        if text:
            print(text, file=sys.stderr)


def _path(text: str | Path) -> Path:
    return Path(text).expanduser().resolve()


def require_sound(report: Any, *, strict: bool = False) -> str:
    """Stop the chain on a suite it cannot run (or on warnings when ``strict``); returns a one-line verdict.

    An error that belongs to one skill family makes that family invalid and the rest of the suite runs
    (:func:`skillbench.suite.split_families`); the verdict names every invalid family.

    Raises:
        StageError: the suite failed preflight as a whole; the message is the summary and the first defects.
    """
    from skillbench.suite import SuiteError, split_families

    if report.ok(strict=strict):
        warned = f" ({len(report.warnings)} warning(s) above)" if report.warnings else ""
        return f"The suite is sound{warned}: the chain continues."
    if report.errors and not (strict and report.warnings):
        try:
            invalid = split_families(report).invalid_families
        except SuiteError:
            invalid = {}
        if invalid:
            return (f"{len(invalid)} skill famil{'y' if len(invalid) == 1 else 'ies'} with an invalid spec will not "
                    f"run and are INVALID_INCONCLUSIVE (invalid_spec): {', '.join(invalid)} (their lines are above); "
                    "the chain continues with the others.")
    bad = report.errors + (report.warnings if strict else [])
    lines = "; ".join(str(d) for d in bad[:3]) + (f"; … {len(bad) - 3} more" if len(bad) > 3 else "")
    raise StageError(f"{report.summary()} — fix the suite before any model call: {lines}")


def manifest_if_any(run_dir: str | Path) -> pd.DataFrame:
    """The week's typed manifest, or an empty frame before the first run finished."""
    from skillbench.ledgers import read_manifest

    path = _path(run_dir) / MANIFEST_FILE
    return read_manifest(path) if path.is_file() else pd.DataFrame()


def resolve_run_dir(suite_dir: str | Path, run_key: str, run_dir: str | Path = "") -> Path:
    """``run_dir`` when given, else ``SUITE_DIR/weekly/<run_key>/``."""
    return _path(run_dir) if str(run_dir) else _path(suite_dir) / WEEKLY_DIR / run_key


def reconciliation_table(report: Mapping[str, Any] | str | Path) -> pd.DataFrame:
    """A reconciliation (dict, or a run directory holding ``reconciliation.json``) as ``check, value`` rows."""
    if not isinstance(report, Mapping):
        report = read_json_object(Path(report) / RECONCILIATION_FILE, "generate the week again (or run "
                                  "`skillbench generate` with the same run key to resume)") or {}
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
