"""``truth.csv``: the simulation's answer key — its row, its text, its writer, and its reader as a typed frame.

The simulated endpoint decides, for every run and attempt, which rubric items the answer covers or violates and
whether each check passes (:class:`TruthRow`, columns :data:`~skillbench.ledgers._columns.TRUTH_COLUMNS`). It keeps
its rows and serves them as CSV text (:func:`truth_csv`) on the read-only truth route
(:data:`skillbench.wire.TRUTH_ROUTE`); generate reads them back (:func:`parse_truth_csv`) and writes
``RUN_DIR/truth.csv`` with :class:`TruthWriter`. The file is rewritten whole, sorted by (run_id, attempt, rubric
rows then check rows, item_index), each time rows are recorded, so the same seed and run ids give a byte-identical
file whatever the order or concurrency of runs; a repeated answer (a retry) replaces its rows instead of adding more.

A retried run keeps the rows of every attempt, and only the last one is the answer the ledgers hold:
:func:`final_truth` keeps those. A file written before checks (no ``check_id`` column) reads with an empty
``check_id``, so a resumed run key keeps its rows.

The row, its text and the writer need no pandas (the simulated endpoint imports them and starts fast); the frame
readers import it when called.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from skillbench.ledgers._columns import LEGACY_TRUTH_COLUMNS, TRUTH_COLUMNS
from skillbench.ledgers._files import TRUTH_FILE

if TYPE_CHECKING:
    import pandas as pd


@dataclasses.dataclass(frozen=True)
class TruthRow:
    """One row of ``truth.csv``: what the simulated model decided for one rubric item or check of one run.

    A check's row has ``item_type`` ``check`` (:data:`skillbench.vocab.CHECK_ITEM`), ``item_index`` its position
    (for sorting only), ``decided`` ``passed``/``failed`` and ``check_id`` its stable id; a rubric row has an empty
    ``check_id``.
    """

    run_id: str
    attempt: int
    model: str
    prompt: str
    activation_route: str  # skill_tool | file_read | web_fetch | none
    skill_in_context: int
    item_index: int
    item_type: str
    decided: str  # covered | violated | omitted; a check: passed | failed
    check_id: str = ""


if tuple(f.name for f in dataclasses.fields(TruthRow)) != TRUTH_COLUMNS:  # a new field must be declared there too
    raise ImportError("skillbench.ledgers._truth.TruthRow's fields differ from "
                      "skillbench.ledgers._columns.TRUTH_COLUMNS")
RowKey = tuple[str, int, bool, int, str]


def row_key(row: TruthRow) -> RowKey:
    """Where a row sorts and what it replaces: (run, attempt, is a check, position, check id)."""
    return (row.run_id, row.attempt, bool(row.check_id), row.item_index, row.check_id)


def _row(rec: dict[str, str]) -> TruthRow:
    return TruthRow(rec["run_id"], int(rec["attempt"]), rec["model"], rec["prompt"], rec["activation_route"],
                    int(rec["skill_in_context"]), int(rec["item_index"]), rec["item_type"], rec["decided"],
                    rec.get("check_id") or "")


def truth_csv(rows: Iterable[TruthRow]) -> str:
    """Truth rows as CSV text, header first (the format of ``truth.csv`` and of the truth route)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(TRUTH_COLUMNS)
    writer.writerows(dataclasses.astuple(r) for r in rows)
    return buf.getvalue()


def parse_truth_csv(text: str) -> list[TruthRow]:
    """The rows of a ``truth.csv`` text (as the truth route serves it).

    Raises:
        ValueError: the header is neither the columns nor the columns before checks.
    """
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames not in (list(TRUTH_COLUMNS), list(LEGACY_TRUTH_COLUMNS)):
        raise ValueError(f"truth CSV: columns {reader.fieldnames} are not {list(TRUTH_COLUMNS)}")
    return [_row(r) for r in reader]


class TruthWriter:
    """Keeps the rows of one truth file and rewrites it atomically."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._rows: dict[RowKey, TruthRow] = {}
        self._lock = threading.Lock()
        self._load()

    def _load(self) -> None:
        """Keep the rows of an existing file (a resumed run key answers only its missing runs)."""
        if not self.path.is_file():
            return
        with self.path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames not in (list(TRUTH_COLUMNS), list(LEGACY_TRUTH_COLUMNS)):
                return
            for rec in reader:
                row = _row(rec)
                self._rows[row_key(row)] = row

    def record(self, rows: Iterable[TruthRow]) -> None:
        rows = list(rows)
        if not rows:
            return
        with self._lock:
            for row in rows:
                self._rows[row_key(row)] = row
            self._write()

    def rows(self) -> list[TruthRow]:
        with self._lock:
            return [self._rows[k] for k in sorted(self._rows)]

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".truth-", suffix=".csv", dir=self.path.parent)
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(TRUTH_COLUMNS)
            for key in sorted(self._rows):
                writer.writerow(dataclasses.astuple(self._rows[key]))
        os.replace(tmp, self.path)


_TRUTH_INT = ("attempt", "skill_in_context", "item_index")


def empty_truth() -> pd.DataFrame:
    """A ``truth.csv`` frame with no rows."""
    import pandas as pd

    frame = pd.DataFrame({c: pd.Series(dtype=object) for c in TRUTH_COLUMNS})
    return frame.astype(dict.fromkeys(_TRUTH_INT, "int64"))


def read_truth(path: str | Path) -> pd.DataFrame | None:
    """Read ``truth.csv`` (a file, or a run directory holding one); ``None`` when there is none (not a sim week).

    Raises:
        LedgerError: a missing column or a non-integer ``attempt``/``skill_in_context``/``item_index``.
    """
    from skillbench.ledgers._readers import _read_csv, _require, _to_int

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
    import pandas as pd

    attempts = pd.to_numeric(manifest["attempts"], errors="coerce").fillna(1).astype(int)
    last = pd.Series(attempts.to_numpy(), index=manifest["run_id"].astype(str)).groupby(level=0).max()
    keep = truth["attempt"].eq(truth["run_id"].map(last))
    return truth[keep].reset_index(drop=True)
