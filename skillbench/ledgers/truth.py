"""``truth.csv``: the simulation's answer key, read as a typed frame, and the rows of each run's last attempt.

The simulated endpoint decides, for every run and attempt, which rubric items the answer covers or violates and
whether each check passes; generate writes those rows to ``RUN_DIR/truth.csv`` (:mod:`skillbench.sim.truth`,
columns :data:`~skillbench.ledgers.columns.TRUTH_COLUMNS`). A retried run keeps the rows of every attempt, and
only the last one is the answer the ledgers hold: :func:`final_truth` keeps those. A file written before checks
(no ``check_id`` column) reads with an empty ``check_id``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from skillbench.ledgers.columns import LEGACY_TRUTH_COLUMNS, TRUTH_COLUMNS
from skillbench.ledgers.files import TRUTH_FILE
from skillbench.ledgers.readers import _read_csv, _require, _to_int

_TRUTH_INT = ("attempt", "skill_in_context", "item_index")


def empty_truth() -> pd.DataFrame:
    """A ``truth.csv`` frame with no rows."""
    frame = pd.DataFrame({c: pd.Series(dtype=object) for c in TRUTH_COLUMNS})
    return frame.astype(dict.fromkeys(_TRUTH_INT, "int64"))


def read_truth(path: str | Path) -> pd.DataFrame | None:
    """Read ``truth.csv`` (a file, or a run directory holding one); ``None`` when there is none (not a sim week).

    Raises:
        LedgerError: a missing column or a non-integer ``attempt``/``skill_in_context``/``item_index``.
    """
    path = Path(path)
    path = path / TRUTH_FILE if path.is_dir() else path
    if not path.is_file():
        return None
    raw = _read_csv(path)
    _require(raw, path, LEGACY_TRUTH_COLUMNS)
    if "check_id" not in raw:
        raw["check_id"] = ""
    out = raw[list(TRUTH_COLUMNS)].copy()
    for column in _TRUTH_INT:
        out[column] = _to_int(raw, column, path, allow_empty=False)
    return out.reset_index(drop=True)


def final_truth(truth: pd.DataFrame, manifest: pd.DataFrame) -> pd.DataFrame:
    """The truth rows of each manifest run's last attempt.

    The last attempt is the manifest's ``attempts`` (generate numbers a run's attempts from 1, and a run rerun
    after being moved aside starts again at 1, so the highest attempt in the file may belong to an older pass).
    Runs the manifest does not list are left out.

    Args:
        truth: :func:`read_truth` output.
        manifest: :func:`skillbench.ledgers.read_manifest` output.
    """
    attempts = pd.to_numeric(manifest["attempts"], errors="coerce").fillna(1).astype(int)
    last = pd.Series(attempts.to_numpy(), index=manifest["run_id"].astype(str)).groupby(level=0).max()
    keep = truth["attempt"].eq(truth["run_id"].map(last))
    return truth[keep].reset_index(drop=True)
