"""An append-only CSV ledger: one group of rows per write, durable, repaired on open.

``scores.csv`` and ``pairs.csv`` are appended this way: each group (a run's items, a pair) is one write,
flushed and fsynced, so a kill leaves at most a torn last line, which :meth:`AppendLedger.read` leaves out.
Rows are written by the csv module's default dialect (qdrant's ledgers: CRLF rows, minimal quoting).
"""

from __future__ import annotations

import csv
import io
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from skillbench.ledgers._atomic import atomic_write_text


def csv_text(rows: Iterable[Sequence[str]]) -> str:
    """Rows as CSV text in the csv module's default dialect."""
    buf = io.StringIO()
    writer = csv.writer(buf)  # qdrant's ledger is the csv module's default dialect (CRLF rows)
    writer.writerows(rows)
    return buf.getvalue()


class LedgerConflict(RuntimeError):
    """An existing ledger that cannot be resumed; the message says what to do."""


class AppendLedger:
    """A CSV ledger appended one group of rows at a time, durably, and repaired on open.

    Args:
        path: the CSV file.
        columns: its header.
        key: the column that names a group (a run, a pair).
    """

    def __init__(self, path: Path, columns: Sequence[str], key: str):
        self.path, self.columns, self.key = path, list(columns), key
        self._lock = threading.Lock()

    def read(self) -> list[dict[str, str]]:
        """The rows, without a torn last line (a cut write).

        Raises:
            LedgerConflict: another header, or a row before the last line with the wrong number of cells (only
                the last line can be torn by a kill; anything else is damage that must not be skipped silently).
        """
        if not self.path.is_file():
            return []
        with open(self.path, encoding="utf-8", errors="replace", newline="") as fh:
            text = fh.read()
        # Every append ends with a newline, so anything after the last one is a cut write. Parse with the csv
        # module, not by lines: a quoted cell may hold a line break or U+2028 and must not tear its row.
        text = text[: text.rfind("\n") + 1]
        reader = csv.reader(io.StringIO(text, newline=""))
        records: list[tuple[int, list[str]]] = []
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                break
            except csv.Error:  # an unterminated quote at the cut: drop the torn record
                break
            records.append((reader.line_num, cells))
        if not records:
            return []
        if records[0][1] != self.columns:
            raise LedgerConflict(f"{self.path}: its columns are not {self.columns[:3]}…; move it away or pass --fresh")
        for line, cells in records[1:]:
            if len(cells) != len(self.columns):
                raise LedgerConflict(f"{self.path}: line {line}: {len(cells)} cells, expected {len(self.columns)} — "
                                     "the ledger is damaged; move it away or pass --fresh")
        return [dict(zip(self.columns, cells, strict=True)) for _, cells in records[1:]]

    def rewrite(self, rows: Iterable[Mapping[str, str]]) -> None:
        """Replace the file with ``rows`` (atomic)."""
        atomic_write_text(self.path, csv_text([self.columns, *([r.get(c, "") for c in self.columns] for r in rows)]))

    def append(self, rows: Sequence[Mapping[str, str]]) -> None:
        """Append one group in one write; flushed and fsynced before returning."""
        text = csv_text([r.get(c, "") for c in self.columns] for r in rows)
        with self._lock:
            new = not self.path.is_file() or self.path.stat().st_size == 0
            with open(self.path, "a", encoding="utf-8", newline="") as fh:
                if new:
                    fh.write(csv_text([self.columns]))
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
