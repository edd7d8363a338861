"""``connect(SUITE_DIR)``: the ledgers of every week of a suite as DuckDB views, in memory.

The argument may be a suite folder (its weeks are ``SUITE_DIR/weekly/<run_key>/``) or a ``weekly/`` folder itself
(what ``explore_weeks`` and ``skillbench.weekly.load_weeks`` take, and what a copied history such as
``tests/data/tiny-week`` is): both name the same weeks, so a notebook's ``weekly_dir`` parameter works unchanged.
The ``suite`` column is the suite folder's name — the parent of a folder named ``weekly``, else the folder given —
unless ``suite=`` names it.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd

from skillbench.ledgers import WEEKLY_DIR, open_week_views, parse_timestamps
from skillbench.scorecard import numeric_history, read_history


class WeeksError(ValueError):
    """A path that names no suite and no ``weekly/`` folder; the message says which path and what it needs."""


def weekly_folder(path: str | Path) -> tuple[Path, str]:
    """``(the weekly/ folder, the suite's name)`` of a suite folder or a ``weekly/`` folder (module docstring).

    Raises:
        WeeksError: ``path`` is not a folder.
    """
    given = Path(path).expanduser().resolve()
    if (given / WEEKLY_DIR).is_dir():
        return given / WEEKLY_DIR, given.name
    if given.is_dir():
        return given, given.parent.name if given.name == WEEKLY_DIR else given.name
    raise WeeksError(f"{path}: not a folder — give a suite folder (with {WEEKLY_DIR}/ inside) or its {WEEKLY_DIR}/ "
                     "folder")


def _history(path: Path) -> pd.DataFrame:
    """The history with its numbers parsed, and ``window_end`` a UTC timestamp as in the ``weeks`` view."""
    history = numeric_history(read_history(path))
    return history.assign(window_end=parse_timestamps(history["window_end"]))


def connect(path: str | Path, *, suite: str = "") -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection over every week of a suite.

    Views (columns: ``suite, run_key``, then the file contract's list): ``runs`` (manifest.csv), ``scores``,
    ``pairs``, ``checks``, ``trigger`` (trigger-f1.csv), ``history`` (scorecard-history.csv with its endpoint
    sidecar), ``history_prompts``, ``history_controls``; ``weeks`` (one row per week read: its window and whether
    it is complete) and ``skipped`` (a week or history file left out, and why — also logged as a warning).
    See :mod:`skillbench.ledgers._views`. Nothing is written beside the weeks.

    Args:
        path: a suite folder, or its ``weekly/`` folder.
        suite: the ``suite`` column's value (default: the suite folder's name).

    Raises:
        WeeksError: ``path`` is not a folder.
    """
    weekly, name = weekly_folder(path)
    return open_week_views(weekly, suite or name, read_history=_history)


__all__ = ["WeeksError", "connect", "weekly_folder"]
