"""``skillbench judge --executor dask`` (every judge request one Dask task, through the SDK's real client) grades the
same items, with the same verdicts and evidence, as the local pass, and ``judge-pairs`` judges the same pairs — by
the Messages API and by Message Batches; a lost worker is a connection error the judge client retries."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx2
import pandas as pd
import pytest

from skillbench.cli import main
from skillbench.cluster import DaskTransport

KEY = ["run_id", "item_index"]


def _scores(week: Path) -> pd.DataFrame:
    return pd.read_csv(week / "scores.csv", dtype=str, keep_default_na=False).sort_values(KEY).reset_index(drop=True)


def _pairs(week: Path) -> pd.DataFrame:
    frame = pd.read_csv(week / "pairs.csv", dtype=str, keep_default_na=False)
    return frame.sort_values(["prompt", "model", "rep"]).reset_index(drop=True)


@pytest.mark.parametrize("batch", [False, True], ids=["messages", "batches"])
def test_dask_judge_grades_what_the_local_judge_grades(dask_cluster, dask_week: Path, tmp_path: Path, batch: bool):
    weeks = {kind: Path(shutil.copytree(dask_week, tmp_path / kind)) for kind in ("local", "dask")}
    extra = ["--batch"] if batch else []
    assert main(["judge", str(weeks["local"]), "--backend", "sim", *extra]) == 0
    assert main(["judge", str(weeks["dask"]), "--backend", "sim", "--executor", "dask", "--scheduler",
                 dask_cluster.scheduler_address, *extra]) == 0
    local, dask = _scores(weeks["local"]), _scores(weeks["dask"])
    assert len(local) == 40 and set(local.verdict) - {"ungraded"} == set(local.verdict)
    pd.testing.assert_frame_equal(dask, local)
    assert main(["judge-pairs", str(weeks["local"]), "--backend", "sim", *extra]) == 0
    assert main(["judge-pairs", str(weeks["dask"]), "--backend", "sim", "--executor", "dask", "--scheduler",
                 dask_cluster.scheduler_address, *extra]) == 0
    pairs = {kind: _pairs(week) for kind, week in weeks.items()}
    assert len(pairs["local"]) == 4 and pairs["local"].outcome.ne("").all()
    pd.testing.assert_frame_equal(pairs["dask"], pairs["local"])


def test_without_a_scheduler_a_local_cluster_serves_the_pass(dask_week: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]):
    week = Path(shutil.copytree(dask_week, tmp_path / "auto"))
    assert main(["judge", str(week), "--backend", "sim", "--executor", "dask", "--limit", "2"]) == 0
    assert "executor dask: local cluster tcp://127.0.0.1:" in capsys.readouterr().err
    graded = _scores(week)
    assert graded.run_id.nunique() == 2 and graded.verdict.ne("ungraded").all()


class _LostFuture:
    def result(self):
        from distributed import KilledWorker

        raise KilledWorker("skillbench-http-x", None, 0)

    def release(self) -> None:
        pass


class _LosingClient:
    """A client whose every task's worker dies (what the scheduler answers with allowed-failures 0)."""

    def submit(self, *args, **kwargs):
        return _LostFuture()


def test_a_lost_worker_is_a_connection_error():
    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/messages", content=b"{}")
    with pytest.raises(httpx2.ConnectError, match="was lost"):
        DaskTransport(_LosingClient()).handle_request(request)
