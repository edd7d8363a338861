"""The identifiers pass's two files: ``identifiers.csv`` (its ledger) and ``identifiers.json`` (its record).

``identifiers.csv`` is appended one group per checked answer (:class:`~skillbench.ledgers._append.AppendLedger`):
a ``run`` row naming the answer, then an ``identifier`` row per identifier it uses. The ``run`` row is what tells an
answer with no identifier from an answer never checked. ``identifiers.json`` records what the answers were checked
against: the declared API surfaces (``name==version``, whether the surface was cached, the detector's measured
precision), whether the suite declared any, and whether the suite asks for the fabrication gate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from skillbench.ledgers._columns import IDENTIFIER_ROW, IDENTIFIER_RUN_ROW, IDENTIFIERS_COLUMNS
from skillbench.ledgers._files import IDENTIFIERS_FILE, IDENTIFIERS_PASS_FILE
from skillbench.ledgers._readers import LedgerError, _read_csv, _require, _to_int, is_cut, read_json_object

RERUN = "rerun `skillbench identifiers RUN_DIR --fresh` to check the week's answers again"


@dataclass(frozen=True)
class WeekIdentifiers:
    """A week's identifiers pass as written: its record, the answers it checked and the identifiers they use."""

    record: dict[str, Any]  # identifiers.json ({} when only the ledger is there: a pass killed before its record)
    runs: pd.DataFrame  # one row per checked answer: run_id, prompt, skill_family, model, condition, rep
    identifiers: pd.DataFrame  # one row per identifier: the run's identity, then text … quote
    problems: list[str] = field(default_factory=list)

    @property
    def declared(self) -> bool:
        """The suite declared at least one API surface (``[[api]]`` in skillbench.toml)."""
        return bool(self.record.get("surfaces"))


def read_identifiers(run_dir: str | Path) -> WeekIdentifiers | None:
    """A week's ``identifiers.json`` and ``identifiers.csv``; ``None`` when the pass never ran on it (a week written
    before the pass, or one whose answers nobody checked yet).

    Raises:
        LedgerError: one line naming the file and the fix: a record that is not a JSON object, a ledger cut
            mid-row, a missing column, an unknown row kind, an answer checked twice, or an identifier row whose
            answer has no ``run`` row.
    """
    run_dir = Path(run_dir)
    record_path, path = run_dir / IDENTIFIERS_PASS_FILE, run_dir / IDENTIFIERS_FILE
    record = read_json_object(record_path, RERUN)
    if record is None and not path.is_file():
        return None
    if not path.is_file():
        empty = pd.DataFrame({c: pd.Series(dtype=str) for c in IDENTIFIERS_COLUMNS}).astype({"rep": "int64"})
        return WeekIdentifiers(record or {}, empty[list(IDENTIFIERS_COLUMNS[:6])], empty)
    if is_cut(path):  # a kill mid-append: the pass repairs it, a reader must not count a torn answer
        raise LedgerError(f"{path}: its last row is cut (a write was interrupted) — rerun `skillbench identifiers "
                          "RUN_DIR` to repair and finish it")
    frame = _read_csv(path)
    _require(frame, path, IDENTIFIERS_COLUMNS)
    frame = frame[list(IDENTIFIERS_COLUMNS)].copy()
    frame["rep"] = _to_int(frame, "rep", path, allow_empty=False)
    kinds = frame["row"].isin((IDENTIFIER_RUN_ROW, IDENTIFIER_ROW))
    if not kinds.all():
        pos = int(np.flatnonzero(~kinds.to_numpy())[0])
        raise LedgerError(f"{path}: column 'row', row {pos + 2}: {frame['row'].iloc[pos]!r} is not "
                          f"{IDENTIFIER_RUN_ROW!r} or {IDENTIFIER_ROW!r} — {RERUN}")
    runs = frame[frame["row"].eq(IDENTIFIER_RUN_ROW)]
    again = runs["run_id"].duplicated()
    if again.any():
        raise LedgerError(f"{path}: run {runs['run_id'][again].iloc[0]} is checked twice — its identifiers would "
                          f"count twice; {RERUN}")
    ids = frame[frame["row"].eq(IDENTIFIER_ROW)]
    orphan = ~ids["run_id"].isin(runs["run_id"])
    if orphan.any():
        raise LedgerError(f"{path}: identifier rows of run {ids['run_id'][orphan].iloc[0]} without its 'run' row — "
                          f"{RERUN}")
    return WeekIdentifiers(record or {}, runs[list(IDENTIFIERS_COLUMNS[:6])].reset_index(drop=True),
                           ids.drop(columns="row").reset_index(drop=True))
