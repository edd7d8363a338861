"""The history's tidy sidecars: each week's per-prompt lifts and its control verdicts, beside ``scorecard-history.csv``.

The history itself keeps qdrant's 8 columns (one row per week × model), so what the week-over-week rule and the
accumulated controls need at a finer grain lives in two files of ours beside it, named from the history's stem:

* ``<stem>.prompts.csv`` (columns ``HISTORY_PROMPT_COLUMNS``): one row per
  week × model × prompt, the prompt's lift ``d`` (treatment − control, must coverage averaged over reps) — what
  the paired week-over-week Δ of a later week differences prompt by prompt;
* ``<stem>.controls.csv`` (columns ``HISTORY_CONTROL_COLUMNS``): one row per
  week × model × skill family × control comparison, the rubric gate's state and reason — what the accumulated
  A/A false-pass rate counts. Each row carries its week's window end and endpoint kind, so a rate is read among
  weeks of one kind, in the order they ran.

A history without them (a week scored before they existed, qdrant's file) reads as having no such rows; the next
week written adds its own. Both are written whole, atomically, in the history's CSV dialect (numbers with 6
decimals, CRLF); a week's rows are replaced as a set (:func:`replace_week`), so a re-scored week never keeps a
prompt or record it no longer has. A torn or hand-damaged row is refused with one line naming the file and line.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from skillbench.ledgers._atomic import atomic_write_text
from skillbench.ledgers._columns import HISTORY_CONTROL_COLUMNS, HISTORY_PROMPT_COLUMNS
from skillbench.ledgers._readers import LedgerError

_PROMPT_KEY = ("run_key", "model", "prompt")
_CONTROL_KEY = ("run_key", "model", "skill_family", "control")
_RESTORE = "restore the file from a good copy or delete that line (the week's next scorecard writes it again)"


def history_sidecar(history_path: str | Path, suffix: str) -> Path:
    """A sidecar of a history: (``scorecard-history.csv``, ``.prompts.csv``) → ``scorecard-history.prompts.csv``."""
    path = Path(history_path)
    return path.with_name(path.stem + suffix)


def read_history_prompts(path: str | Path) -> pd.DataFrame:
    """``<stem>.prompts.csv``: :data:`HISTORY_PROMPT_COLUMNS`, ``d`` as float; empty when the file is absent.

    Raises:
        LedgerError: one line naming the file and line (wrong columns or cells, an empty key, a ``d`` that is not a
            number, a key twice).
    """
    frame = _read(Path(path), HISTORY_PROMPT_COLUMNS, _PROMPT_KEY, _PROMPT_KEY, numeric=("d",))
    frame["d"] = pd.to_numeric(frame["d"]).astype(float)
    return frame


def read_history_controls(path: str | Path) -> pd.DataFrame:
    """``<stem>.controls.csv``: :data:`HISTORY_CONTROL_COLUMNS` as text; empty when the file is absent.

    Raises:
        LedgerError: one line naming the file and line (wrong columns or cells, an empty key or state, a key twice).
    """
    return _read(Path(path), HISTORY_CONTROL_COLUMNS, (*_CONTROL_KEY, "endpoint", "state"), _CONTROL_KEY)


def write_history_prompts(path: str | Path, frame: pd.DataFrame) -> None:
    """Write ``<stem>.prompts.csv`` whole (``d`` with 6 decimals, empty when unknown)."""
    out = frame.reindex(columns=list(HISTORY_PROMPT_COLUMNS)).copy()
    out["d"] = ["" if pd.isna(v) else f"{float(v):.6f}" for v in out["d"]]
    _write(Path(path), HISTORY_PROMPT_COLUMNS, out)


def write_history_controls(path: str | Path, frame: pd.DataFrame) -> None:
    """Write ``<stem>.controls.csv`` whole."""
    _write(Path(path), HISTORY_CONTROL_COLUMNS, frame.reindex(columns=list(HISTORY_CONTROL_COLUMNS)).fillna(""))


def replace_week(frame: pd.DataFrame, run_key: str, rows: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every row of ``run_key`` replaced by ``rows``: where the week's first old row was, else at the
    end (a rewrite of an unchanged week leaves the file as it was)."""
    rows = rows.assign(run_key=run_key).reindex(columns=list(frame.columns))
    at = frame["run_key"].astype(str).eq(run_key).to_numpy()
    first = int(at.argmax()) if at.any() else len(frame)
    parts = [frame.iloc[:first][~at[:first]], rows, frame.iloc[first:][~at[first:]]]
    parts = [p for p in parts if not p.empty]
    return pd.concat(parts, ignore_index=True) if parts else frame.iloc[0:0].copy()


def csv_records(path: Path, restore: str) -> list[tuple[int, list[str]]]:
    """Every non-blank record of a CSV file of ours with its line number (the history and its sidecars).

    Raises:
        LedgerError: one line naming the file (and line) when it is not UTF-8 or not readable CSV; ``restore``
            says what to do.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise LedgerError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}) — {restore}") from exc
    reader = csv.reader(io.StringIO(text, newline=""))
    records: list[tuple[int, list[str]]] = []
    try:
        for cells in reader:
            if cells:  # a blank line holds no row
                records.append((reader.line_num, cells))
    except csv.Error as exc:
        raise LedgerError(f"{path}: line {reader.line_num}: not a readable CSV row ({exc}) — {restore}") from exc
    return records


def _read(path: Path, columns: tuple[str, ...], required: tuple[str, ...], unique: tuple[str, ...],
          numeric: tuple[str, ...] = ()) -> pd.DataFrame:
    if path.exists() and not path.is_file():
        raise LedgerError(f"{path}: is a folder, not a history sidecar — move it away")
    if not path.is_file():
        return pd.DataFrame({c: pd.Series(dtype=str) for c in columns})
    records = csv_records(path, _RESTORE)
    if not records or records[0][1] != list(columns):
        found = ", ".join(records[0][1]) if records else "nothing"
        raise LedgerError(f"{path}: columns are {found}, expected {', '.join(columns)} — {_RESTORE}")
    # Every check runs on whole columns (a week of 100k runs adds 25k prompt rows); the error is the one the first
    # bad line gives, in the order a reader of the line would find it: its cell count, an empty key, a number, a key
    # seen on an earlier line.
    body = records[1:]
    lines = np.array([line for line, _ in body], dtype=int)
    torn = np.array([len(cells) != len(columns) for _, cells in body], dtype=bool)
    frame = pd.DataFrame([[""] * len(columns) if bad else cells for bad, (_, cells) in zip(torn, body, strict=True)],
                         columns=list(columns), dtype=object) if body else pd.DataFrame(columns=list(columns))
    problems: list[tuple[np.ndarray, Callable[[int], str]]] = [(torn, lambda i: (
        f"{len(body[i][1])} cells, expected {len(columns)} — a torn or hand-edited row; {_RESTORE}"))]
    empty = {c: frame[c].str.strip().eq("").to_numpy(dtype=bool) & ~torn for c in required}
    problems.append((np.logical_or.reduce([*empty.values(), np.zeros(len(frame), dtype=bool)]), lambda i: (
        f"column {next(c for c in required if empty[c][i])!r} is empty — {_RESTORE}")))
    for column in numeric:
        cells = frame[column]
        bad = (cells.str.strip().ne("") & pd.to_numeric(cells, errors="coerce").isna()).to_numpy(dtype=bool) & ~torn
        problems.append((bad, lambda i, column=column: (
            f"column {column!r}: {frame[column].iat[i]!r} is not a number — {_RESTORE}")))
    again = frame.duplicated(list(unique), keep="first").to_numpy(dtype=bool) & ~torn

    def repeated(i: int) -> str:
        key = tuple(frame[c].iat[i] for c in unique)
        first = int(np.flatnonzero((frame[list(unique)] == pd.Series(key, index=list(unique))).all(axis=1))[0])
        return f"{' × '.join(key)} again (first on line {lines[first]}) — {_RESTORE}"

    problems.append((again, repeated))
    flagged = [int(np.argmax(mask)) if mask.any() else len(frame) for mask, _ in problems]
    row = min(flagged)
    if row < len(frame):
        _, message = problems[flagged.index(row)]  # the first check that fails on that line
        raise LedgerError(f"{path}: line {lines[row]}: {message(row)}")
    return frame.astype(str)


def _write(path: Path, columns: tuple[str, ...], frame: pd.DataFrame) -> None:
    if path.exists() and not path.is_file():
        raise LedgerError(f"{path}: is a folder, not a history sidecar — move it away")
    buf = io.StringIO()
    writer = csv.writer(buf)  # the history's dialect: minimal quoting, CRLF
    writer.writerow(columns)
    writer.writerows(frame[list(columns)].astype(str).to_numpy(dtype=object).tolist())  # rows as Python lists
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, buf.getvalue())
