"""``truth.csv``: the simulated models' answer key, one row per (run, attempt, rubric item or check).

The file is rewritten whole, sorted by (run_id, attempt, rubric rows then check rows, item_index), each time
rows are recorded, so the same seed and run ids give a byte-identical file whatever the order or concurrency
of runs. A repeated answer request (a retry) replaces its rows instead of adding more. The last column,
``check_id``, came with checks: a file written before it (no such column) still loads, its rows read as
rubric rows, so a resumed run key keeps them. The endpoint keeps its rows itself
(:class:`TruthSink`); ``generate`` fetches its runs' rows over ``GET /skillbench/truth`` and writes
``RUN_DIR/truth.csv`` with :class:`TruthWriter`.
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

from skillbench.ledgers import columns
from skillbench.sim.agent import TruthRow

# The columns are declared once, beside every other ledger's (skillbench.ledgers.columns); the row type must match.
TRUTH_COLUMNS = list(columns.TRUTH_COLUMNS)
LEGACY_TRUTH_COLUMNS = list(columns.LEGACY_TRUTH_COLUMNS)  # truth.csv before checks: no check_id column
if [f.name for f in dataclasses.fields(TruthRow)] != TRUTH_COLUMNS:  # a new TruthRow field must be declared there
    raise ImportError("skillbench.sim.agent.TruthRow's fields differ from skillbench.ledgers.columns.TRUTH_COLUMNS")
TRUTH_ROUTE = "/skillbench/truth"  # GET ?run_id=…&run_id=…: those runs' rows as CSV
RowKey = tuple[str, int, bool, int, str]


def row_key(row: TruthRow) -> RowKey:
    """Where a row sorts and what it replaces: (run, attempt, is a check, position, check id)."""
    return (row.run_id, row.attempt, bool(row.check_id), row.item_index, row.check_id)


def _row(rec: dict[str, str]) -> TruthRow:
    return TruthRow(rec["run_id"], int(rec["attempt"]), rec["model"], rec["prompt"], rec["activation_route"],
                    int(rec["skill_in_context"]), int(rec["item_index"]), rec["item_type"], rec["decided"],
                    rec.get("check_id") or "")


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
            if reader.fieldnames not in (TRUTH_COLUMNS, LEGACY_TRUTH_COLUMNS):
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


def truth_csv(rows: Iterable[TruthRow]) -> str:
    """Truth rows as CSV text, header first (the format of ``truth.csv``)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(TRUTH_COLUMNS)
    writer.writerows(dataclasses.astuple(r) for r in rows)
    return buf.getvalue()


def parse_truth_csv(text: str) -> list[TruthRow]:
    """The rows of a ``truth.csv`` text (as served by ``GET /skillbench/truth``)."""
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames not in (TRUTH_COLUMNS, LEGACY_TRUTH_COLUMNS):
        raise ValueError(f"truth CSV: columns {reader.fieldnames} are not {TRUTH_COLUMNS}")
    return [_row(r) for r in reader]


class TruthSink:
    """The endpoint's own truth: every row in memory, and the operator's ``--truth`` file when one was given.

    No client chooses a file the server writes (a run container shares the host's loopback): a harness reads
    its runs' rows back over ``GET /skillbench/truth?run_id=…`` (:meth:`rows_for`) and writes its own file.
    """

    def __init__(self, default: str | Path | None = None):
        self.default = Path(default).resolve() if default else None
        self._file = TruthWriter(self.default) if self.default else None
        self._rows: dict[RowKey, TruthRow] = {}
        self._lock = threading.Lock()

    def record(self, rows: Iterable[TruthRow]) -> None:
        rows = list(rows)
        with self._lock:
            for row in rows:
                self._rows[row_key(row)] = row
        if self._file is not None:
            self._file.record(rows)

    def rows_for(self, run_ids: Iterable[str]) -> list[TruthRow]:
        """The rows of these runs, sorted by (run_id, attempt, rubric then checks, item_index)."""
        wanted = set(run_ids)
        with self._lock:
            return [self._rows[k] for k in sorted(self._rows) if k[0] in wanted]
