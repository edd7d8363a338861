"""``truth.csv``: the simulated models' answer key, one row per (run, attempt, rubric item).

The file is rewritten whole, sorted by (run_id, attempt, item_index), each time a run answers, so the
same seed and run ids give a byte-identical file whatever the order or concurrency of runs. A repeated
answer request (a retry) replaces its rows instead of adding more.
"""

from __future__ import annotations

import csv
import dataclasses
import os
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

from skillbench.sim.agent import TruthRow

TRUTH_COLUMNS = [f.name for f in dataclasses.fields(TruthRow)]
TRUTH_HEADER = "X-Skillbench-Truth"


class TruthWriter:
    """Keeps the rows of one truth file and rewrites it atomically."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._rows: dict[tuple[str, int, int], TruthRow] = {}
        self._lock = threading.Lock()
        self._load()

    def _load(self) -> None:
        """Keep the rows of an existing file (a resumed run key answers only its missing runs)."""
        if not self.path.is_file():
            return
        with self.path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames != TRUTH_COLUMNS:
                return
            for rec in reader:
                row = TruthRow(rec["run_id"], int(rec["attempt"]), rec["model"], rec["prompt"],
                               rec["activation_route"], int(rec["skill_in_context"]), int(rec["item_index"]),
                               rec["item_type"], rec["decided"])
                self._rows[(row.run_id, row.attempt, row.item_index)] = row

    def record(self, rows: Iterable[TruthRow]) -> None:
        rows = list(rows)
        if not rows:
            return
        with self._lock:
            for row in rows:
                self._rows[(row.run_id, row.attempt, row.item_index)] = row
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


class TruthSink:
    """Routes truth rows to the endpoint's file or to the file a request names in ``X-Skillbench-Truth``."""

    def __init__(self, default: str | Path | None = None):
        self._writers: dict[Path, TruthWriter] = {}
        self._lock = threading.Lock()
        self.default = Path(default).resolve() if default else None

    def writer(self, header_path: str | None = None) -> TruthWriter | None:
        """The writer for a request: its header's path when valid (absolute ``*.csv`` in an existing
        folder), else the endpoint's default, else None (no truth kept)."""
        path = self.default
        if header_path:
            candidate = Path(header_path)
            if candidate.is_absolute() and candidate.suffix == ".csv" and candidate.parent.is_dir():
                path = candidate.resolve()
        if path is None:
            return None
        with self._lock:
            if path not in self._writers:
                self._writers[path] = TruthWriter(path)
            return self._writers[path]
