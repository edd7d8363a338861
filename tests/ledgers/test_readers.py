"""The ledger readers refuse a damaged week: duplicated or ill-typed score rows, and a manifest that disagrees
with its reconciliation, its plan or its run folders.

Every case starts from a copy of a committed tiny week (``tests/data/tiny-week``) and damages one file the way
a cut copy, a bad merge or a hand edit would.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillbench.ledgers import LedgerError, load_week, read_scores
from tests.helpers.shared import QDRANT, TINY_WEEK, read_csv_rows, require, write_csv_rows

WEEK = "20261130"


@pytest.fixture
def week(tmp_path: Path) -> Path:
    """A private copy of a complete, reconciled tiny week."""
    return Path(shutil.copytree(TINY_WEEK / WEEK, tmp_path / WEEK))


def _edit_score(week: Path, index: int, **cells: str) -> None:
    header, rows = read_csv_rows(week / "scores.csv")
    for column, value in cells.items():
        rows[index][header.index(column)] = value
    write_csv_rows(week / "scores.csv", header, rows)


def test_the_committed_week_reads_clean(week: Path) -> None:
    ledgers = load_week(week)
    assert ledgers.reconciliation is not None and ledgers.reconciliation.is_complete
    assert len(ledgers.scores) == 80


# -- scores.csv -------------------------------------------------------------------------------------------


def test_a_duplicated_score_row_is_refused_with_file_row_and_key(week: Path) -> None:
    header, rows = read_csv_rows(week / "scores.csv")
    rows.insert(10, list(rows[3]))  # the 4th row (line 5) again, as line 12
    write_csv_rows(week / "scores.csv", header, rows)
    with pytest.raises(LedgerError) as exc:
        read_scores(week / "scores.csv")
    message = str(exc.value)
    assert "scores.csv" in message and "row 12" in message and "row 5" in message
    assert f"run_id={rows[3][header.index('run_id')]}" in message and "item_index=3" in message
    assert len(message.splitlines()) == 1


def test_a_duplicated_row_of_qdrants_ledger_is_refused_by_its_own_key(tmp_path: Path) -> None:
    source = require(QDRANT / "evals" / "weekly" / "20260808" / "scores.csv")
    assert len(read_scores(source)) == 1512  # their ledger has no duplicate
    header, rows = read_csv_rows(source)
    rows.append(list(rows[7]))
    path = tmp_path / "scores.csv"
    write_csv_rows(path, header, rows)
    with pytest.raises(LedgerError, match=r"row 1514: duplicate of row 9 .*prompt=qdrant-clients-sdk.*item_text="):
        read_scores(path)


@pytest.mark.parametrize(("cells", "expected"), [
    ({"verdict": "banana"}, r"column 'verdict', row 2: 'banana' is not one of"),
    ({"verdict": "absent"}, r"column 'verdict', row 2: 'absent' is not a verdict of a 'must' item \(met/missing\)"),
    ({"credit": "2.0"}, r"column 'credit', row 2: '2.0' is not 0 or 1"),
    ({"verdict": "met", "credit": "0.0"}, r"column 'credit', row 2: '0.0' is not 1 \(a 'met' verdict"),
    ({"contribution": "-1.0"}, r"column 'contribution', row 2: '-1.0' is not 0 \(a 'must' item"),
])
def test_an_ill_typed_score_row_is_refused(week: Path, cells: dict[str, str], expected: str) -> None:
    _edit_score(week, 0, **cells)  # row 2 is a must item, verdict missing, credit 0
    with pytest.raises(LedgerError, match=expected):
        read_scores(week / "scores.csv")


def test_an_avoid_item_counts_against_its_credit(week: Path) -> None:
    header, rows = read_csv_rows(week / "scores.csv")
    avoid = next(i for i, r in enumerate(rows) if r[header.index("item_type")] == "avoid")
    _edit_score(week, avoid, verdict="violated", credit="1.0", contribution="-1.0")
    assert read_scores(week / "scores.csv").loc[avoid, "contribution"] == -1.0
    _edit_score(week, avoid, contribution="1.0")
    with pytest.raises(LedgerError, match=rf"'contribution', row {avoid + 2}: '1.0' is not -1 \(an 'avoid' item"):
        read_scores(week / "scores.csv")


# -- manifest.csv against reconciliation.json, plan.csv and the run folders ------------------------------


def _cut_manifest(week: Path, keep: int) -> list[str]:
    header, rows = read_csv_rows(week / "manifest.csv")
    write_csv_rows(week / "manifest.csv", header, rows[:keep])
    return [r[header.index("run_id")] for r in rows[keep:]]


def test_a_manifest_cut_in_half_reads_incomplete(week: Path) -> None:
    lost = _cut_manifest(week, 16)
    recon = load_week(week).reconciliation
    assert recon is not None and not recon.is_complete
    assert any("manifest.csv lists 16 runs, reconciliation.json says 32 were written" in f for f in recon.findings)
    assert set(lost) <= set(recon.unwritten), "every run folder the manifest lost is named"


def test_a_manifest_run_that_is_not_in_the_plan_reads_incomplete(week: Path) -> None:
    header, rows = read_csv_rows(week / "manifest.csv")
    stranger = list(rows[0])
    stranger[header.index("run_id")] = "someone-else-r1-20261130"
    rows[0] = stranger
    write_csv_rows(week / "manifest.csv", header, rows)
    recon = load_week(week).reconciliation
    assert not recon.is_complete and recon.unexpected == ["someone-else-r1-20261130"]


def test_a_planned_run_folder_missing_from_the_manifest_reads_incomplete_without_reconciliation(week: Path) -> None:
    (week / "reconciliation.json").unlink()
    lost = _cut_manifest(week, 31)
    recon = load_week(week).reconciliation
    assert recon is not None and not recon.is_complete and recon.unwritten == lost


def test_a_reconciliation_that_says_more_was_written_than_the_manifest_holds(week: Path) -> None:
    data = json.loads((week / "reconciliation.json").read_text())
    (week / "reconciliation.json").write_text(json.dumps({**data, "written": 40, "expected": 40, "observed": 40}))
    recon = load_week(week).reconciliation
    assert not recon.is_complete
    assert recon.findings == ["manifest.csv lists 32 runs, reconciliation.json says 40 were written"]


def test_qdrants_layout_is_not_reconciled(tmp_path: Path) -> None:
    source = require(QDRANT / "evals" / "weekly" / "20260808")
    week = tmp_path / "20260808"
    week.mkdir()
    for name in ("manifest.csv", "scores.csv"):
        shutil.copyfile(source / name, week / name)
    assert load_week(week).reconciliation is None
