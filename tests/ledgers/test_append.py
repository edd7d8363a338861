"""The append-only ledger: a torn last line is a cut write and is left out; a short row before it is damage."""

from __future__ import annotations

import pytest

from skillbench.ledgers import AppendLedger, LedgerConflict

COLUMNS = ["run_id", "item_index", "verdict"]


def test_a_torn_last_line_is_left_out(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("run_id,item_index,verdict\r\nr1,0,met\r\nr1,1,mis", encoding="utf-8")
    assert AppendLedger(path, COLUMNS, "run_id").read() == [{"run_id": "r1", "item_index": "0", "verdict": "met"}]


def test_a_short_row_before_the_last_line_is_refused_with_its_line(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("run_id,item_index,verdict\r\nr1,0\r\nr1,1,met\r\n", encoding="utf-8")
    with pytest.raises(LedgerConflict, match=r"scores\.csv: line 2: 2 cells, expected 3"):
        AppendLedger(path, COLUMNS, "run_id").read()


def test_appended_groups_read_back_in_order(tmp_path):
    ledger = AppendLedger(tmp_path / "pairs.csv", COLUMNS, "run_id")
    ledger.append([{"run_id": "r1", "item_index": "0", "verdict": "met"}])
    ledger.append([{"run_id": "r2", "item_index": "0", "verdict": 'say "hi",\nthen'}])
    assert [r["run_id"] for r in ledger.read()] == ["r1", "r2"]
    assert ledger.read()[1]["verdict"] == 'say "hi",\nthen'
