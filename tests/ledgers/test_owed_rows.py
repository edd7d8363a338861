"""The rows a run owes the answer key, and what a leg wrote: the rules consolidate and the scorecard share.

``owed_truth_rows``/``truth_findings`` (truth.csv held to the runs' final attempts), ``is_cut`` (a ledger cut
mid-row), ``leg_files``/``leg_file_problems`` (a leg's record of its files), and ``load_week`` holding a sim week's
truth.csv to that rule.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from skillbench.ledgers import (
    GENERATE_LEG_FILES,
    SUMMARY_FILES_KEY,
    LedgerError,
    TruthRow,
    is_cut,
    leg_file_problems,
    leg_files,
    load_week,
    owed_truth_rows,
    read_truth,
    truth_csv,
    truth_findings,
)
from skillbench.ledgers._shards import csv_rows
from tests.helpers.shared import TINY_WEEK

RUN = "p-haiku-with-skill-r1-t1"


def run_folder(root: Path, run_id: str = RUN, *, items: int = 3, attempts: int = 2,
               checks: tuple[str, ...] = ("exit",)) -> Path:
    folder = root / run_id
    folder.mkdir(parents=True)
    meta = {"run_id": run_id, "attempts": [{"attempt": a} for a in range(1, attempts + 1)],
            "checks": [{"id": c, "type": "exit_success"} for c in checks]}
    (folder / "metadata.json").write_text(json.dumps(meta))
    spec = {"name": "p", "rubric": [{"type": "must", "text": f"item {i}"} for i in range(items)]}
    (folder / "test-prompt.json").write_text(json.dumps(spec))
    return folder


def rows(run_id: str = RUN, attempt: int = 2, items: int = 3, checks: tuple[str, ...] = ("exit",)) -> list[TruthRow]:
    out = [TruthRow(run_id, attempt, "m", "p", "none", 0, i, "must", "covered") for i in range(items)]
    return out + [TruthRow(run_id, attempt, "m", "p", "none", 0, i, "check", "passed", c) for i, c in enumerate(checks)]


def frame(tmp_path: Path, truth: list[TruthRow]) -> pd.DataFrame:
    path = tmp_path / "truth.csv"
    path.write_text(truth_csv(truth))
    result = read_truth(path)
    assert result is not None
    return result


def test_a_run_owes_its_final_attempts_rubric_and_check_rows(tmp_path):
    run_folder(tmp_path)
    assert owed_truth_rows(tmp_path, [RUN]) == {(RUN, 2, "rubric 0"), (RUN, 2, "rubric 1"), (RUN, 2, "rubric 2"),
                                                (RUN, 2, "check exit")}
    # every row owed, and an earlier attempt's rows are kept (a retried run): nothing wrong
    truth = frame(tmp_path, rows(attempt=1) + rows())
    assert truth_findings(truth, owed_truth_rows(tmp_path, [RUN]), allowed={RUN}) == []


@pytest.mark.parametrize(("damage", "phrase"), [
    (lambda r: r[:2], "lacks 2 owed row(s) of 1 complete run(s) (first: p-haiku-with-skill-r1-t1 attempt 2 check "
                      "exit)"),
    (lambda r: [*r, r[0]], "1 row(s) listed twice (first: p-haiku-with-skill-r1-t1 attempt 2 rubric 0)"),
    (lambda r: [*r, *rows("stranger")], "holds rows of 1 run id(s) outside the runs it may hold (stranger)"),
    (lambda r: [*r, TruthRow(RUN, 2, "m", "p", "none", 0, 7, "must", "covered")], "1 row(s) no complete run owes"),
    (lambda r: [dataclasses.replace(r[0], decided="cov"), *r[1:]], "unknown decided value"),
], ids=["cut", "duplicated", "foreign", "padded", "torn-value"])
def test_a_damaged_answer_key_is_named(tmp_path, damage, phrase):
    run_folder(tmp_path)
    truth = frame(tmp_path, damage(rows()))
    found = truth_findings(truth, owed_truth_rows(tmp_path, [RUN]), allowed={RUN})
    assert len(found) == 1 and phrase in found[0], found


def test_a_run_whose_rows_cannot_be_told_is_one_line(tmp_path):
    folder = run_folder(tmp_path)
    (folder / "test-prompt.json").write_text("{")
    with pytest.raises(LedgerError, match="test-prompt.json"):
        owed_truth_rows(tmp_path, [RUN])


def test_a_ledger_cut_mid_row_is_told_from_a_whole_one(tmp_path):
    path = tmp_path / "x.csv"
    assert not is_cut(path)
    path.write_text("")
    assert not is_cut(path)
    path.write_text("a,b\n1,2\n")
    assert not is_cut(path)
    path.write_text("a,b\n1,")
    assert is_cut(path)


def test_a_legs_record_of_its_files_names_each_change(tmp_path):
    (tmp_path / "truth.csv").write_text('run_id,note\nr1,"two\nlines"\nr2,x\n')
    (tmp_path / "retries.json").write_text("{}")
    assert csv_rows(tmp_path / "truth.csv") == 2  # a quoted line break does not split a row
    record = leg_files(tmp_path, GENERATE_LEG_FILES)
    assert set(record) == {"truth.csv", "retries.json"} and record["truth.csv"]["rows"] == 2
    assert leg_file_problems(tmp_path, record, GENERATE_LEG_FILES) == {}
    (tmp_path / "truth.csv").write_text("run_id,note\nr2,x\n")
    (tmp_path / "retries.json").unlink()
    (tmp_path / "manifest.csv").write_text("run_id\n")
    found = leg_file_problems(tmp_path, record, GENERATE_LEG_FILES)
    assert "(1 rows, the summary says 2)" in found["truth.csv"]
    assert found["retries.json"].startswith("is missing") and found["manifest.csv"].startswith("is there but")
    assert set(leg_file_problems(tmp_path, None, GENERATE_LEG_FILES)) == {SUMMARY_FILES_KEY}


def test_a_sim_week_with_a_cut_answer_key_is_not_complete(tmp_path):
    week = Path(shutil.copytree(TINY_WEEK / "20261130", tmp_path / "20261130"))
    clean = load_week(week).reconciliation
    assert clean is not None and not any("truth.csv" in f for f in clean.findings)
    lines = (week / "truth.csv").read_text().splitlines(keepends=True)
    (week / "truth.csv").write_text("".join(lines[: len(lines) // 2]))
    damaged = load_week(week).reconciliation
    assert damaged is not None and not damaged.is_complete
    assert any(f.startswith("truth.csv lacks ") for f in damaged.findings), damaged.findings
