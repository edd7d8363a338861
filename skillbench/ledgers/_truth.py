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
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from skillbench.ledgers._columns import LEGACY_TRUTH_COLUMNS, TRUTH_COLUMNS
from skillbench.ledgers._files import METADATA_FILE, TEST_PROMPT_FILE, TRUTH_FILE

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


# -- the rows a run owes ------------------------------------------------------------------------------------
# A truth row's place in the answer key: (run_id, attempt, item) with item ``rubric <index>`` or ``check <id>``.
TruthKey = tuple[str, int, str]
RUBRIC_OUTCOMES = ("covered", "violated", "omitted")  # a rubric row's ``decided`` (TruthRow)
SHOWN_KEYS = 3  # rows named in a finding (the count says how many there are)


def truth_item(item_type: str, item_index: object, check_id: str) -> str:
    """``rubric 3`` or ``check marker``: what one truth row answers for (the key without run and attempt)."""
    from skillbench.vocab import CHECK_ITEM

    return f"check {check_id}" if item_type == CHECK_ITEM else f"rubric {item_index}"


def owed_truth_rows(run_dir: str | Path, run_ids: Iterable[str]) -> set[TruthKey]:
    """The rows the given runs owe ``truth.csv``: for each run's final attempt, one per rubric item of the prompt as
    run (``test-prompt.json``) and one per check its ``metadata.json`` recorded.

    The given runs are the complete runs the simulated endpoint answered
    (:func:`skillbench.ledgers._week.answered_run_ids`): the simulated agent writes exactly these rows for every
    answer it gives (:mod:`skillbench.sim._agent`). The final attempt is the number of attempts the metadata
    records (the manifest's ``attempts``, which :func:`final_truth` keeps).

    Raises:
        LedgerError: a run whose ``metadata.json`` or ``test-prompt.json`` cannot be read (its rows cannot be told).
    """
    from skillbench.ledgers._checks import recorded_checks
    from skillbench.ledgers._readers import LedgerError, read_json_object

    run_dir = Path(run_dir)
    owed: set[TruthKey] = set()
    for run_id in run_ids:
        folder = run_dir / run_id
        meta = read_json_object(folder / METADATA_FILE, "rerun the run")
        spec = read_json_object(folder / TEST_PROMPT_FILE, "rerun the run")
        if meta is None or spec is None or not isinstance(spec.get("rubric", []), list):
            raise LedgerError(f"{folder}: no readable {METADATA_FILE} and {TEST_PROMPT_FILE} with a rubric — the "
                              "truth rows the run owes cannot be told; rerun the run")
        attempts = meta.get("attempts")
        final = len(attempts) if isinstance(attempts, list) and attempts else 1
        owed |= {(run_id, final, f"rubric {i}") for i in range(len(spec.get("rubric", [])))}
        owed |= {(run_id, final, f"check {c['id']}") for c in recorded_checks(folder)}
    return owed


def truth_findings(truth: pd.DataFrame, owed: set[TruthKey], *, allowed: set[str] | None = None) -> list[str]:
    """What is wrong with a ``truth.csv`` (:func:`read_truth` output) held against the rows its runs owe.

    Args:
        truth: the file's rows.
        owed: :func:`owed_truth_rows` of the answered complete runs.
        allowed: the run ids the file may hold rows of (a leg's slice of the plan); None: any.

    Returns:
        One phrase per kind of damage (empty when the file holds exactly what it owes): a row listed twice, a row
        of a run id it may not hold, an owed row it lacks (a cut file, a lost run), a row of a complete run's final
        attempt that the run does not owe, a rubric row whose ``decided`` is no rubric outcome.
    """
    from skillbench.vocab import CHECK_ITEM, CHECK_STATUSES

    found: list[str] = []
    runs = truth["run_id"].astype(str)
    items = [truth_item(t, i, c) for t, i, c in zip(truth["item_type"], truth["item_index"], truth["check_id"],
                                                      strict=True)]
    keys = list(zip(runs, truth["attempt"].astype(int), items, strict=True))
    twice = sorted(k for k, n in Counter(keys).items() if n > 1)
    if twice:
        found.append(f"{len(twice)} row(s) listed twice (first: {_key(twice[0])})")
    if allowed is not None:
        foreign = sorted(set(runs) - allowed)
        if foreign:
            found.append(f"holds rows of {len(foreign)} run id(s) outside the runs it may hold "
                         f"({', '.join(foreign[:SHOWN_KEYS])})")
    have = set(keys)
    lacking = sorted(owed - have)
    if lacking:
        runs_lacking = sorted({k[0] for k in lacking})
        found.append(f"lacks {len(lacking)} owed row(s) of {len(runs_lacking)} complete run(s) (first: "
                     f"{_key(lacking[0])})")
    finals = {(r, a) for r, a, _ in owed}
    extra = sorted(k for k in have - owed if (k[0], k[1]) in finals)
    if extra:
        found.append(f"{len(extra)} row(s) no complete run owes (first: {_key(extra[0])})")
    is_check = truth["item_type"].eq(CHECK_ITEM)
    bad = (is_check & ~truth["decided"].isin(CHECK_STATUSES)) | \
          (~is_check & ~truth["decided"].isin(RUBRIC_OUTCOMES))
    if bad.any():
        row = truth[bad].iloc[0]
        found.append(f"{int(bad.sum())} row(s) with an unknown decided value (first: {row['run_id']} "
                     f"{row['decided']!r})")
    return found


def _key(key: TruthKey) -> str:
    return f"{key[0]} attempt {key[1]} {key[2]}"
