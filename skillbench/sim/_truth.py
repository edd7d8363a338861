"""The endpoint's own truth: what each simulated run decided, kept in memory and served read-only.

Rows are :class:`~skillbench.ledgers._truth.TruthRow` (the format of ``truth.csv``, declared with the run
directory's other files). No client chooses a file the server writes (a run container shares the host's
loopback): a harness reads its runs' rows back over the truth route (:data:`skillbench.wire.TRUTH_ROUTE`) and
writes its own file; only the operator's ``--truth`` names one here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from skillbench.ledgers import RowKey, TruthRow, TruthWriter, row_key


class TruthSink:
    """Every row in memory, and the operator's ``--truth`` file when one was given."""

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
