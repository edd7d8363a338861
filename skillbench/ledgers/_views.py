"""DuckDB views over every week of a suite: the week's ledgers as SQL relations, one definition with the CSVs.

Each view is one ledger of every week under a ``weekly/`` folder, with the file contract's columns
(:mod:`skillbench.ledgers._columns`) in their order, after two keys: ``suite`` and ``run_key`` (the week's run key,
:func:`~skillbench.ledgers._week.week_run_key`). :data:`VIEW_COLUMNS` names them:

* ``runs``: ``manifest.csv``, ``MANIFEST_COLUMNS`` (``timestamp`` typed: the reader's parsed UTC start);
* ``scores``: ``scores.csv``, ``SCORES_COLUMNS``; ``pairs``: ``pairs.csv``, ``PAIRS_COLUMNS``;
  ``checks``: ``checks.csv``, ``CHECKS_COLUMNS``; ``trigger``: ``trigger-f1.csv``, ``TRIGGER_F1_COLUMNS``;
  ``identifiers``: ``identifiers.csv``, ``IDENTIFIERS_COLUMNS`` (a ``run`` row per checked answer, then its
  ``identifier`` rows; no rows for a week the identifiers pass never ran on);
* ``history``: ``scorecard-history.csv`` with its endpoints sidecar, ``HISTORY_COLUMNS`` (read by a reader handed
  in: the strict one is the scorecard's, a layer above); ``history_prompts`` and ``history_controls``: its
  ``.prompts.csv`` and ``.controls.csv`` sidecars, ``HISTORY_PROMPT_COLUMNS`` and ``HISTORY_CONTROL_COLUMNS``;
* ``weeks``: one row per week read, ``window_start, window_end, runs, complete``; ``skipped``: a week (or the
  history, ``run_key`` empty) left out, ``reason``.

**Why per-week reads, not DuckDB's ``read_csv`` over a glob.** Each week is read by the contract's own typed readers
(:func:`~skillbench.ledgers._week.load_week`: ``read_manifest``, ``read_scores``, ``read_pairs``, ``read_checks``,
and the reconciliation cross-check) and the frames are copied into an in-memory DuckDB database (a table per view in
the ``_rows`` schema, under a view that names the contract's columns). So the views have the types, the defaults of
an older week's absent columns (``MANIFEST_DEFAULTS``; a scores ledger of qdrant's reads our columns empty) and the
refusals the scorecard has — one definition, not a second type map in SQL — and a week the scorecard would refuse (a
torn row, a rubric item twice, a credit its verdict does not give) is never read as clean here: it is left out, and
``skipped`` names its file and why in one line (the same line is logged as a warning, so it is never silent).
``read_csv(union_by_name=true)`` would read such a file without complaint, and would fill an older week's absent
column with NULL rather than its default. The price is one read of every week at connect (one to two seconds for a
448-run week on 2 shared cores); the CSVs stay the source of truth and nothing is written into a week.

A week's ``complete`` is the reconciliation's verdict after the cross-check (NULL for a week without
``reconciliation.json`` or ``plan.csv``, qdrant's layout): a query over complete weeks only says so with
``WHERE complete``.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from pathlib import Path

import duckdb
import pandas as pd

from skillbench.ledgers._checks import empty_checks
from skillbench.ledgers._columns import (
    CHECKS_COLUMNS,
    HISTORY_COLUMNS,
    HISTORY_CONTROL_COLUMNS,
    HISTORY_PROMPT_COLUMNS,
    IDENTIFIER_ROW,
    IDENTIFIER_RUN_ROW,
    IDENTIFIERS_COLUMNS,
    MANIFEST_COLUMNS,
    PAIRS_COLUMNS,
    SCORES_COLUMNS,
    TRIGGER_F1_COLUMNS,
)
from skillbench.ledgers._files import (
    HISTORY_CONTROLS_SUFFIX,
    HISTORY_FILE,
    HISTORY_PROMPTS_SUFFIX,
    MANIFEST_FILE,
    TRIGGER_F1_FILE,
)
from skillbench.ledgers._history_sidecars import history_sidecar, read_history_controls, read_history_prompts
from skillbench.ledgers._identifiers import read_identifiers
from skillbench.ledgers._readers import LedgerError, empty_scores, parse_timestamps, read_manifest, read_numbers
from skillbench.ledgers._week import load_week

KEY_COLUMNS: tuple[str, ...] = ("suite", "run_key")
# view → the contract's column list it carries after KEY_COLUMNS (a key the ledger already has keeps its place first)
VIEW_COLUMNS: dict[str, tuple[str, ...]] = {
    "runs": MANIFEST_COLUMNS,
    "scores": SCORES_COLUMNS,
    "pairs": PAIRS_COLUMNS,
    "checks": CHECKS_COLUMNS,
    "trigger": TRIGGER_F1_COLUMNS,
    "identifiers": IDENTIFIERS_COLUMNS,
    "history": HISTORY_COLUMNS,
    "history_prompts": HISTORY_PROMPT_COLUMNS,
    "history_controls": HISTORY_CONTROL_COLUMNS,
}
WEEKS_VIEW_COLUMNS: tuple[str, ...] = (*KEY_COLUMNS, "window_start", "window_end", "runs", "complete")
SKIPPED_VIEW_COLUMNS: tuple[str, ...] = (*KEY_COLUMNS, "reason")
ROWS_SCHEMA = "_rows"  # where the views' rows are kept (one table per view); queries name the views
# trigger-f1.csv's counts are integers (the file is a statistics table, read with its numbers parsed)
_TRIGGER_COUNTS = ("should_n", "should_not_n", "tp", "fn", "fp", "tn", "unread_plugin_runs")

log = logging.getLogger("skillbench.weeks")


def view_columns(view: str) -> list[str]:
    """The columns of ``view`` in order: :data:`KEY_COLUMNS`, then its ledger's (the keys not repeated)."""
    if view == "weeks":
        return list(WEEKS_VIEW_COLUMNS)
    if view == "skipped":
        return list(SKIPPED_VIEW_COLUMNS)
    return [*KEY_COLUMNS, *(c for c in VIEW_COLUMNS[view] if c not in KEY_COLUMNS)]


def week_folders(weekly_dir: Path) -> list[Path]:
    """The week folders under ``weekly_dir``: every sub-folder but generation's own (``_versions``, ``.tmp-…``)."""
    return sorted(p for p in weekly_dir.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


def _trigger(run_dir: Path) -> pd.DataFrame:
    """``trigger-f1.csv`` in the contract's columns; absent (a week before it): no rows. An older file without the
    intervals reads them NULL — unknown, never a default."""
    path = run_dir / TRIGGER_F1_FILE
    frame = read_numbers(path) if path.is_file() else pd.DataFrame(columns=list(TRIGGER_F1_COLUMNS))
    missing = [c for c in TRIGGER_F1_COLUMNS[: TRIGGER_F1_COLUMNS.index("unread_plugin_runs")] if c not in frame]
    if missing:
        raise LedgerError(f"{path}: missing column(s) {', '.join(missing)} (have: {', '.join(frame.columns)})")
    frame = frame.reindex(columns=list(TRIGGER_F1_COLUMNS))
    text = ("family", "rate_method", "f1_method")
    for column in TRIGGER_F1_COLUMNS:
        if column in text:
            frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
        else:
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
            frame[column] = frame[column].astype("Int64" if column in _TRIGGER_COUNTS else float)
    return frame


def _identifiers(run_dir: Path) -> pd.DataFrame:
    """``identifiers.csv`` as written (its reader's checks applied): each checked answer's ``run`` row, then its
    ``identifier`` rows; no rows for a week the identifiers pass never ran on (a week before it)."""
    week = read_identifiers(run_dir)
    if week is None:
        return pd.DataFrame({c: pd.Series(dtype=str) for c in IDENTIFIERS_COLUMNS}).astype({"rep": "int64"})
    runs = week.runs.assign(row=IDENTIFIER_RUN_ROW)
    ids = week.identifiers.assign(row=IDENTIFIER_ROW)
    both = pd.concat([runs, ids], ignore_index=True).reindex(columns=list(IDENTIFIERS_COLUMNS)).fillna("")
    return both.astype({"rep": "int64"})


def _empty_pairs() -> pd.DataFrame:
    return pd.DataFrame(columns=list(PAIRS_COLUMNS)).astype({"rep": int})


def _templates() -> dict[str, pd.DataFrame]:
    """Each week view's frame with no rows, typed by its reader: the view keeps its types when no week has a row
    (no week read at all, or none judged yet), so a query still binds (``avg(credit)`` needs a number)."""
    with tempfile.TemporaryDirectory() as tmp:  # the manifest reader reads a file: a header alone, outside the weeks
        header = Path(tmp) / MANIFEST_FILE
        header.write_text(",".join(MANIFEST_COLUMNS) + "\n", encoding="utf-8")
        manifest = read_manifest(header)
        trigger = _trigger(Path(tmp))  # a fresh folder has no trigger-f1.csv: the typed empty frame
        identifiers = _identifiers(Path(tmp))  # nor identifiers.csv
    return {"runs": manifest.assign(timestamp=manifest["started_at"]), "scores": empty_scores(),
            "pairs": _empty_pairs(), "checks": empty_checks(), "trigger": trigger,
            "identifiers": identifiers}


def read_week_frames(run_dir: Path) -> tuple[dict[str, pd.DataFrame], dict[str, object]]:
    """One week's ledgers as the views' frames (without the keys), and its ``weeks`` row.

    Raises:
        LedgerError: a ledger the contract's readers refuse (the message names the file and why).
    """
    led = load_week(run_dir)
    manifest = led.manifest.copy()
    # the typed start of each run, under the contract's name (the reader keeps the text in ``timestamp``)
    manifest["timestamp"] = manifest["started_at"]
    frames = {
        "runs": manifest,
        "scores": led.scores,
        "pairs": led.pairs if led.pairs is not None else _empty_pairs(),
        "checks": led.checks,
        "trigger": _trigger(Path(run_dir)),
        "identifiers": _identifiers(Path(run_dir)),
    }
    rec = led.reconciliation
    week = {"run_key": led.run_key, "window_start": manifest["started_at"].min(),
            "window_end": manifest["started_at"].max(), "runs": len(manifest),
            "complete": None if rec is None else bool(rec.complete)}
    return frames, week


def history_frames(history_path: Path) -> dict[str, pd.DataFrame]:
    """The history's tidy sidecars as the ``history_prompts`` and ``history_controls`` frames.

    Raises:
        LedgerError: a sidecar its reader refuses.
    """
    controls = read_history_controls(history_sidecar(history_path, HISTORY_CONTROLS_SUFFIX))
    return {"history_prompts": read_history_prompts(history_sidecar(history_path, HISTORY_PROMPTS_SUFFIX)),
            # a UTC timestamp, as every window_end and timestamp of the views
            "history_controls": controls.assign(window_end=parse_timestamps(controls["window_end"]))}


def _sql_type(series: pd.Series) -> str:
    """The DuckDB type of a typed reader's column (text when it has no rows to tell by: an empty ledger)."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "BOOLEAN"
    if pd.api.types.is_integer_dtype(dtype):
        return "BIGINT"
    if pd.api.types.is_float_dtype(dtype):
        return "DOUBLE"
    if isinstance(dtype, pd.DatetimeTZDtype):
        return "TIMESTAMPTZ"
    if pd.api.types.is_object_dtype(dtype) and len(series.dropna()) and series.dropna().map(type).eq(bool).all():
        return "BOOLEAN"
    return "VARCHAR"


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _load(con: duckdb.DuckDBPyConnection, view: str, frames: list[pd.DataFrame]) -> None:
    """Copy ``frames`` (each already with its keys) into ``view``, in :func:`view_columns`' order.

    A column's type is its reader's dtype in the first frame that types it — an empty ledger's frame counts, so a
    view with no rows still has its types; text when no frame does (no week read at all).
    """
    columns = view_columns(view)
    types = {}
    for column in columns:
        kinds = [_sql_type(f[column]) for f in frames if column in f]
        types[column] = next((k for k in kinds if k != "VARCHAR"), "VARCHAR")
    present = [f.reindex(columns=columns) for f in frames if len(f)]
    frame = pd.concat(present, ignore_index=True) if present else pd.DataFrame(
        {c: pd.Series(dtype=object) for c in columns})
    for column in columns:  # NaN of a text column (an old week's absent column) is SQL NULL, not the text 'nan'
        if frame[column].dtype == object:
            frame[column] = frame[column].where(frame[column].notna(), None)
    casts = ", ".join(f"CAST({_quoted(c)} AS {types[c]}) AS {_quoted(c)}" for c in columns)
    con.register("_frame", frame)
    try:
        # the rows are copied into a table of the _rows schema (DuckDB then scans its own columns per query, not the
        # frame's Python objects); the view names the contract's columns over it, read-only
        con.execute(f"CREATE OR REPLACE TABLE {ROWS_SCHEMA}.{_quoted(view)} AS SELECT {casts} FROM _frame")
    finally:
        con.unregister("_frame")
    listed = ", ".join(_quoted(c) for c in columns)
    con.execute(f"CREATE OR REPLACE VIEW {_quoted(view)} AS SELECT {listed} FROM {ROWS_SCHEMA}.{_quoted(view)}")


def open_week_views(weekly_dir: str | Path, suite: str,
                    read_history: Callable[[Path], pd.DataFrame] | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the views of every week under ``weekly_dir`` (module docstring).

    Args:
        weekly_dir: a suite's ``weekly/`` folder: one sub-folder per week, the history beside them.
        suite: the value of every row's ``suite`` column.
        read_history: reads ``scorecard-history.csv`` (its strict reader is the scorecard's, a layer above this
            one) into ``HISTORY_COLUMNS`` with the numbers parsed; None: the ``history`` view has no rows.

    A week without ``manifest.csv`` (not yet through signals) or with a ledger its reader refuses is left out and
    named in ``skipped`` with one line, which is also logged as a warning (logger ``skillbench.weeks``); so is a
    history file or sidecar its reader refuses (``run_key`` empty: the history is no one week's).
    """
    weekly_dir = Path(weekly_dir)
    con = duckdb.connect()  # in memory: nothing is written beside the weeks
    con.execute(f"CREATE SCHEMA {ROWS_SCHEMA}")
    con.execute("SET TimeZone = 'UTC'")  # run timestamps are UTC in the ledgers; show them so
    tables: dict[str, list[pd.DataFrame]] = {view: [] for view in VIEW_COLUMNS}
    for view, frame in _templates().items():
        tables[view].append(frame)
    weeks: list[dict[str, object]] = []
    skipped: list[dict[str, object]] = []
    read: dict[str, Path] = {}  # run key → the folder it was read from

    def skip(run_key: str, reason: str) -> None:
        skipped.append({"suite": suite, "run_key": run_key, "reason": reason})
        log.warning("left out of the SQL views: %s", reason)  # the reason names the file

    for folder in week_folders(weekly_dir):
        if not (folder / MANIFEST_FILE).is_file():
            skip(folder.name, f"{folder / MANIFEST_FILE}: not found (a week not yet through signals; run "
                              f"`skillbench signals {folder}`)")
            continue
        try:
            frames, week = read_week_frames(folder)
        except (LedgerError, OSError, ValueError) as exc:  # ValueError: a reader's pydantic or pandas complaint
            skip(folder.name, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            continue
        run_key = str(week["run_key"])
        if run_key in read:  # a copy of a week (its run.json names the key): its rows would count twice
            skip(folder.name, f"{folder}: run key {run_key} is {read[run_key]}'s too (run.json) — a copy of that "
                              f"week; move it out of {weekly_dir}")
            continue
        read[run_key] = folder
        weeks.append({"suite": suite, **week})
        for view, frame in frames.items():
            # every row keyed by the week it was read from (pairs.csv's own run_key column is the same key)
            tables[view].append(frame.assign(suite=suite, run_key=run_key))
    history_path = weekly_dir / HISTORY_FILE
    try:
        if read_history is not None:
            tables["history"].append(read_history(history_path).assign(suite=suite))
        for view, frame in history_frames(history_path).items():
            tables[view].append(frame.assign(suite=suite))
    except ValueError as exc:  # LedgerError, the scorecard's HistoryError: one line naming the file and line
        for view in ("history", "history_prompts", "history_controls"):  # the history is read whole or not at all
            tables[view] = [frame.iloc[:0] for frame in tables[view]]  # no rows; the types of those read
        skip("", str(exc).splitlines()[0])
    for view, frames in tables.items():
        _load(con, view, frames)
    _load(con, "weeks", [pd.DataFrame(weeks, columns=list(WEEKS_VIEW_COLUMNS)).astype(
        {"window_start": "datetime64[ns, UTC]", "window_end": "datetime64[ns, UTC]", "runs": "Int64",
         "complete": "boolean"})])
    _load(con, "skipped", [pd.DataFrame(skipped)] if skipped else [])
    return con


__all__ = ["KEY_COLUMNS", "SKIPPED_VIEW_COLUMNS", "VIEW_COLUMNS", "WEEKS_VIEW_COLUMNS", "open_week_views",
           "read_week_frames", "view_columns", "week_folders"]
