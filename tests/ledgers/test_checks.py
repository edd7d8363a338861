"""checks.csv: the reader refuses a damaged file, and a week owes one row per check of every complete run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillbench.ledgers import CHECKS_COLUMNS, CHECKS_FILE, METADATA_FILE, LedgerError, cross_check, reconcile_runs
from skillbench.ledgers._checks import expected_check_rows, missing_check_rows, read_checks
from tests.helpers.shared import write_csv_rows

ROW = {"prompt": "p", "model": "haiku", "condition": "with-skill", "rep": "1", "run_id": "r1", "check_id": "c1",
       "check_type": "output_contains", "status": "passed", "detail": ""}


def _write(path: Path, rows: list[dict]) -> Path:
    write_csv_rows(path, list(CHECKS_COLUMNS), [[r[c] for c in CHECKS_COLUMNS] for r in rows])
    return path


def test_an_absent_file_is_an_empty_frame(tmp_path):
    frame = read_checks(tmp_path / CHECKS_FILE)
    assert frame.empty and list(frame.columns) == list(CHECKS_COLUMNS)


@pytest.mark.parametrize(("rows", "words"), [
    ([{**ROW, "status": "skipped"}], "column 'status', row 2"),
    ([{**ROW, "rep": "one"}], "column 'rep', row 2"),
    ([ROW, {**ROW, "status": "failed"}], "column 'check_id', row 3"),
])
def test_a_damaged_file_names_file_column_and_row(tmp_path, rows, words):
    path = _write(tmp_path / CHECKS_FILE, rows)
    with pytest.raises(LedgerError, match=words) as err:
        read_checks(path)
    assert str(path) in str(err.value)


def test_a_missing_column_is_named(tmp_path):
    path = tmp_path / CHECKS_FILE
    path.write_text("run_id,check_id\nr1,c1\n")
    with pytest.raises(LedgerError, match="missing column"):
        read_checks(path)


def _run_folder(run_dir: Path, run_id: str, checks: list[str]) -> None:
    folder = run_dir / run_id
    folder.mkdir(parents=True)
    (folder / METADATA_FILE).write_text(json.dumps({"run_id": run_id, "checks": [{"id": c, "type": "exit_success"}
                                                                                  for c in checks]}))


def test_every_complete_run_owes_one_row_per_recorded_check(tmp_path):
    _run_folder(tmp_path, "r1", ["c1", "c2"])
    _run_folder(tmp_path, "r2", [])
    owed = expected_check_rows(tmp_path, ["r1", "r2", "gone"])
    assert owed == {("r1", "c1"), ("r1", "c2")}
    frame = read_checks(_write(tmp_path / CHECKS_FILE, [ROW]))
    assert missing_check_rows(frame, owed) == [("r1", "c2")]


def test_a_missing_check_row_makes_the_week_incomplete():
    owed = {("r1", "c1"), ("r1", "c2")}
    rec = reconcile_runs(["r1"], observed=["r1"], written=["r1"], checks_expected=owed, checks_written=[("r1", "c1")])
    assert rec.checks_missing == ["r1/c2"] and rec.checks_expected == 2
    assert not rec.accounted and not rec.is_complete
    full = reconcile_runs(["r1"], observed=["r1"], written=["r1"], checks_expected=owed, checks_written=owed)
    assert full.is_complete and full.to_json()["checks_missing"] == []
    plain = reconcile_runs(["r1"], observed=["r1"], written=["r1"])
    assert "checks_missing" not in plain.to_json() and "checks_expected" not in plain.to_json()
    later = cross_check(full, written=["r1"], checks_missing=[("r1", "c2")])
    assert not later.is_complete and "checks.csv lacks 1 check row" in later.findings[0]
