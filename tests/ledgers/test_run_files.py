"""Every file of the run directory has a reader in ``ledgers/``: each reads back what its writer writes, and a
damaged file is one line naming the file and the fix.

The weeks are copies of the committed tiny week (``tests/data/tiny-week``), written by the real passes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from skillbench.generation import write_plan
from skillbench.generation._retries import LegState, RetryLog
from skillbench.judge import record_judge_cost
from skillbench.judge._run import record_pairs_pass
from skillbench.ledgers import (
    CALIBRATION_KEY_COLUMNS,
    PLAN_COLUMNS,
    LedgerError,
    json_object_or_none,
    metadata_or_none,
    read_calibration,
    read_calibration_grades,
    read_cells,
    read_cost_parts,
    read_judge_cost,
    read_manifest_ids,
    read_metadata,
    read_pass_record,
    read_plan,
    read_retries,
    read_run_json,
    read_run_judge,
    read_sentinel,
)
from tests.helpers.shared import TINY_WEEK

WEEK = "20261130"


@pytest.fixture
def week(tmp_path: Path) -> Path:
    return Path(shutil.copytree(TINY_WEEK / WEEK, tmp_path / WEEK))


def _one_line(exc: pytest.ExceptionInfo[LedgerError], *needles: str) -> str:
    message = str(exc.value)
    assert len(message.splitlines()) == 1, message
    for needle in needles:
        assert needle in message, message
    return message


def _a_run(week: Path) -> Path:
    return next(p.parent for p in sorted(week.glob("*/metadata.json")))


# -- round trips ------------------------------------------------------------------------------------------


def test_the_plan_reads_back_as_written(tmp_path: Path) -> None:
    plan = pd.DataFrame([{"run_id": f"p-{i}", "prompt": "01", "skill_family": "fam", "skill_leaf": "fam/leaf",
                          "model": "haiku", "condition": "with-skill", "rep": i, "dormancy": 0, "order": 2 - i}
                         for i in (1, 2)], columns=list(PLAN_COLUMNS))
    write_plan(plan, tmp_path)
    back = read_plan(tmp_path)
    assert back is not None and list(back.columns) == list(PLAN_COLUMNS)
    assert back["prompt"].tolist() == ["01", "01"], "a prompt named 01 stays text"
    pd.testing.assert_frame_equal(back, plan.astype({"rep": "int64", "dormancy": "int64", "order": "int64"}))
    write_plan(plan, tmp_path)  # the same plan again (resume) is accepted
    assert read_plan(tmp_path / "nowhere") is None


def test_the_committed_weeks_files_read(week: Path) -> None:
    plan = read_plan(week)
    assert plan is not None and len(plan) == len(read_manifest_ids(week / "manifest.csv"))
    assert read_run_json(week)["run_key"] == WEEK
    calibration = read_calibration(week)
    assert calibration is not None and set(CALIBRATION_KEY_COLUMNS) <= set(calibration.columns)
    assert calibration["rater_b"].notna().all()
    grades = read_calibration_grades(week)
    assert grades is not None and not grades.empty
    assert read_pass_record(week)["judge_model"]
    run = _a_run(week)
    assert read_metadata(run, ("run_id", "prompt"))["run_id"] == run.name
    assert read_judge_cost(run) == pytest.approx(sum(read_cost_parts(run).values()))
    assert read_run_judge(run) is not None
    assert read_sentinel(week) is None, "no sentinel ran on the tiny week"


def test_the_retry_log_reads_back(tmp_path: Path) -> None:
    log = RetryLog(tmp_path / "retries.json")
    log.record({"run_id": "r1", "model": "haiku", "condition": "no-skill", "reason": "timeout"},
               {("haiku", "no-skill"): LegState(retried=1)})
    data = read_retries(tmp_path)
    assert data["retried_runs"][0]["run_id"] == "r1" and data["legs"]["haiku|no-skill"]["retried"] == 1
    assert RetryLog(tmp_path / "retries.json").old == data["retried_runs"], "the next pass keeps them"
    assert read_retries(tmp_path / "nowhere") == {}


def test_judge_costs_and_pass_records_read_back(tmp_path: Path) -> None:
    record_judge_cost(tmp_path, "rubric", 0.25)
    record_judge_cost(tmp_path, "pairs", 0.125)
    assert read_cost_parts(tmp_path) == {"rubric": 0.25, "pairs": 0.125}
    assert read_judge_cost(tmp_path) == pytest.approx(0.375)
    record_pairs_pass(tmp_path, {"judge_model": "m", "judge_snapshot": "m-1"})
    assert read_pass_record(tmp_path)["pairs_passes"] == [{"judge_model": "m", "judge_snapshot": "m-1"}]


# -- a damaged file is one line naming the file and the fix ------------------------------------------------


@pytest.mark.parametrize(("content", "needle"), [
    ('{"run_id": "r1"', "cannot be read as JSON"),
    ("[1, 2]", "not a JSON object"),
    ('{"run_id": "r1"}', "prompt: missing field"),
])
def test_damaged_metadata_is_one_line(tmp_path: Path, content: str, needle: str) -> None:
    (tmp_path / "metadata.json").write_text(content)
    with pytest.raises(LedgerError) as exc:
        read_metadata(tmp_path, ("run_id", "prompt"))
    _one_line(exc, "metadata.json", needle, "rerun the run")
    assert metadata_or_none(tmp_path) is None or needle == "prompt: missing field"


@pytest.mark.parametrize(("name", "read", "fix"), [
    ("retries.json", lambda d: read_retries(d), "move it aside"),
    ("judge.json", lambda d: read_pass_record(d), "skillbench judge RUN_DIR --fresh"),
    ("run.json", lambda d: read_run_json(d), "generate"),
    ("judge_cost.json", lambda d: read_cost_parts(d), "skillbench judge RUN_DIR --fresh"),
])
def test_damaged_json_records_are_one_line(tmp_path: Path, name: str, read, fix: str) -> None:
    (tmp_path / name).write_text("{not json")
    with pytest.raises(LedgerError) as exc:
        read(tmp_path)
    _one_line(exc, name, fix)
    assert json_object_or_none(tmp_path / name) is None


def test_a_judge_cost_that_is_not_a_number_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "judge_cost.txt").write_text("twelve\n")
    with pytest.raises(LedgerError) as exc:
        read_judge_cost(tmp_path)
    _one_line(exc, "judge_cost.txt", "'twelve'", "not a number of USD")
    (tmp_path / "judge_cost.json").write_text(json.dumps({"rubric": "a lot"}))
    with pytest.raises(LedgerError) as exc:
        read_cost_parts(tmp_path)
    _one_line(exc, "judge_cost.json", "rubric")


def test_a_damaged_plan_is_one_line(week: Path) -> None:
    plan = (week / "plan.csv").read_text().splitlines()
    (week / "plan.csv").write_text("\n".join([plan[0].replace("rep", "repeat"), *plan[1:]]) + "\n")
    with pytest.raises(LedgerError) as exc:
        read_plan(week)
    _one_line(exc, "plan.csv", "missing column(s) rep")
    cells = plan[1].split(",")
    cells[PLAN_COLUMNS.index("rep")] = "one"
    (week / "plan.csv").write_text("\n".join([plan[0], ",".join(cells), *plan[2:]]) + "\n")
    with pytest.raises(LedgerError) as exc:
        read_plan(week)
    _one_line(exc, "plan.csv", "'rep', row 2: 'one' is not a number")


def test_a_damaged_calibration_table_is_one_line(week: Path) -> None:
    (week / "calibration.csv").write_text("rater_a,item_type\nx,must\n")
    with pytest.raises(LedgerError) as exc:
        read_calibration(week)
    _one_line(exc, "calibration.csv", "comparison")


def test_cells_read_as_written_and_refuse_a_missing_column(week: Path) -> None:
    cells = read_cells(week / "scores.csv")
    assert all(isinstance(v, str) for v in cells.to_numpy().ravel()), "every cell as written"
    with pytest.raises(LedgerError) as exc:
        read_cells(week / "pairs.csv", ("no_such_column",))
    _one_line(exc, "pairs.csv", "no_such_column")
    (week / "truth.csv").write_text("")
    with pytest.raises(LedgerError) as exc:
        read_cells(week / "truth.csv")
    _one_line(exc, "truth.csv", "empty file")
