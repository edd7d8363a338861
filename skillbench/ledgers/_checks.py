"""``checks.csv``: one row per run × deterministic check, and the rows a week owes.

Generation commits each run's check results with the run (``<run_id>/checks.json``) and rebuilds
``checks.csv`` from the committed runs (:func:`skillbench.checks.write_checks_ledger`), so a kill at any
point leaves every row exactly once. The rows a week owes are the check ids each complete run's
``metadata.json`` recorded; the reconciliation cross-check counts a missing one as an incomplete week.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from skillbench.ledgers._columns import CHECKS_COLUMNS
from skillbench.ledgers._files import METADATA_FILE
from skillbench.ledgers._readers import LedgerError, _bad, _read_csv, _require, _to_int
from skillbench.vocab import CHECK_STATUSES

CHECK_KEYS = ("run_id", "check_id")


def empty_checks() -> pd.DataFrame:
    """A ``checks.csv`` frame with no rows."""
    frame = pd.DataFrame({c: pd.Series(dtype=str) for c in CHECKS_COLUMNS})
    frame["rep"] = frame["rep"].astype(int)
    return frame


def read_checks(path: str | Path) -> pd.DataFrame:
    """Read ``checks.csv``; an absent file is an empty frame.

    Raises:
        LedgerError: a missing column, a ``status`` outside passed/failed/error, a non-integer ``rep``, or a
            (run_id, check_id) listed twice — the message names the file, column and row.
    """
    path = Path(path)
    if not path.is_file():
        return empty_checks()
    df = _read_csv(path)
    _require(df, path, CHECKS_COLUMNS)
    df = df[list(CHECKS_COLUMNS)].copy()
    bad = ~df["status"].isin(CHECK_STATUSES)
    if bad.any():
        raise _bad(path, df, "status", bad, "one of " + "/".join(CHECK_STATUSES))
    df["rep"] = _to_int(df, "rep", path, allow_empty=False).astype(int)
    dup = df.duplicated(list(CHECK_KEYS), keep="first")
    if dup.any():
        raise _bad(path, df, "check_id", dup, "unique for its run (a check row is listed twice)")
    return df


def recorded_checks(run_folder: Path) -> list[dict[str, str]]:
    """The checks a run's ``metadata.json`` recorded (``[{"id", "type"}]``; [] for a run without checks)."""
    try:
        meta = json.loads((run_folder / METADATA_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return []
    checks = meta.get("checks") if isinstance(meta, dict) else None
    return [c for c in checks or [] if isinstance(c, dict) and c.get("id")]


def expected_check_rows(run_dir: str | Path, run_ids: Iterable[str]) -> set[tuple[str, str]]:
    """(run_id, check_id) of every check the given (complete) runs owe ``checks.csv``."""
    run_dir = Path(run_dir)
    # one listing of the week instead of a failed open per run without a folder (qdrant's layout, a synthetic week)
    folders = {entry.name for entry in os.scandir(run_dir) if entry.is_dir()} if run_dir.is_dir() else set()
    return {(rid, str(c["id"])) for rid in run_ids if rid in folders for c in recorded_checks(run_dir / rid)}


def missing_check_rows(checks: pd.DataFrame, expected: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The expected (run_id, check_id) pairs ``checks`` lacks, sorted."""
    have = set(zip(checks["run_id"].astype(str), checks["check_id"].astype(str), strict=True))
    return sorted(expected - have)


__all__ = ["CHECK_KEYS", "LedgerError", "empty_checks", "expected_check_rows", "missing_check_rows",
           "read_checks", "recorded_checks"]
