"""``skillbench calibrate --executor dask`` (every grading request of both judges one Dask task, through the SDK's
real client) writes the same gradings and agreement statistics as the local pass on copies of one judged week;
``--scheduler`` without ``--executor dask`` is a usage error before anything is graded."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from skillbench.cli import main
from skillbench.ledgers import CALIBRATION_FILE

GRADES_FILE = "calibration-grades.csv"
GRADE_KEY = ["rater", "run_id", "item_index"]
# one draw nonce for both passes: calibration.csv records the sample's key, compared below
FLAGS = ["--backend", "sim", "--repeat", "2", "--other-judge", "claude-haiku-5-5", "--sample-nonce", "5eed"]


def _grades(week: Path) -> pd.DataFrame:
    frame = pd.read_csv(week / GRADES_FILE, dtype=str, keep_default_na=False)
    return frame.sort_values(GRADE_KEY).reset_index(drop=True)


def _requests_sent(cluster) -> int:
    """The HTTP requests the cluster's workers have answered so far (its ``skillbench-http`` tasks done)."""
    prefixes = cluster.scheduler.task_prefixes
    return sum(p.state_counts["memory"] for name, p in prefixes.items() if name.startswith("skillbench-http"))


def _statistics(week: Path) -> pd.DataFrame:
    frame = pd.read_csv(week / CALIBRATION_FILE, dtype=str, keep_default_na=False)
    return frame.sort_values(list(frame.columns)).reset_index(drop=True)


@pytest.fixture(scope="module")
def judged_week(dask_week: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cluster's generated matrix, judged once locally (the week both calibrations start from)."""
    week = Path(shutil.copytree(dask_week, tmp_path_factory.mktemp("judged") / dask_week.name))
    assert main(["judge", str(week), "--backend", "sim"]) == 0
    return week


def test_dask_calibration_grades_what_the_local_calibration_grades(dask_cluster, judged_week: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]):
    weeks = {kind: Path(shutil.copytree(judged_week, tmp_path / kind)) for kind in ("local", "dask")}
    # Exit 0 or 1: the must bar may fail on the sim's draws; what matters is that both passes agree.
    before = _requests_sent(dask_cluster)
    assert main(["calibrate", str(weeks["local"]), *FLAGS]) in (0, 1)
    assert _requests_sent(dask_cluster) == before, "the local pass sent nothing through the cluster"
    capsys.readouterr()
    assert main(["calibrate", str(weeks["dask"]), *FLAGS, "--executor", "dask", "--scheduler",
                 dask_cluster.scheduler_address]) in (0, 1)
    assert f"executor dask: {dask_cluster.scheduler_address}, 2 worker(s)" in capsys.readouterr().err
    local, dask = _grades(weeks["local"]), _grades(weeks["dask"])
    # 8 runs × 5 items, graded by 2 samples of the ledger's judge and 1 of the other judge.
    assert len(local) == 120 and local.rater.nunique() == 3
    # Every grading (2 samples of the ledger's judge, 1 of the other judge, 8 runs) went through the workers.
    assert _requests_sent(dask_cluster) - before >= 8 * 3
    assert local.verdict.ne("ungraded").all()
    pd.testing.assert_frame_equal(dask, local)
    pd.testing.assert_frame_equal(_statistics(weeks["dask"]), _statistics(weeks["local"]))
    assert set(_statistics(weeks["local"]).comparison) >= {"samples", "judges"}


def test_a_scheduler_without_the_dask_executor_is_a_usage_error(judged_week: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]):
    week = Path(shutil.copytree(judged_week, tmp_path / "week"))
    assert main(["calibrate", str(week), *FLAGS, "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "--scheduler needs --executor dask" in capsys.readouterr().err
    assert not (week / GRADES_FILE).exists(), "nothing graded"
