"""``skillbench generate --executor dask`` on a real LocalCluster produces the run directory the local executor does.

The 8-run sim matrix is generated once by each executor (real CLI, real containers, the sealed network); the dask
week must have the same plan, the same complete runs, the same manifest rows on every column that does not depend
on timing, a complete reconciliation, and name the executor and each run's worker in its metadata.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from skillbench.signals import run_state
from skillbench.vocab import FINISHED

TIMING_COLUMNS = {"timestamp", "duration_ms"}  # when a run ran and how long it took; nothing else may differ


def _manifest(week: Path) -> pd.DataFrame:
    return pd.read_csv(week / "manifest.csv", dtype=str, keep_default_na=False).sort_values("run_id").reset_index(
        drop=True)


def test_dask_week_equals_the_local_week(local_week: Path, dask_week: Path):
    assert (dask_week / "plan.csv").read_text() == (local_week / "plan.csv").read_text()
    plan = pd.read_csv(dask_week / "plan.csv")
    assert len(plan) == 8
    local, dask = _manifest(local_week), _manifest(dask_week)
    assert list(dask.run_id) == sorted(plan.run_id) == list(local.run_id), "every planned run exactly once"
    same = [c for c in dask.columns if c not in TIMING_COLUMNS and c != "total_cost_usd"]
    pd.testing.assert_frame_equal(dask[same], local[same])
    # The CLI writes its "USD budget: $spent/$2" reminder into the next request while it may not have added the last
    # answer's cost yet (a race of its own, seen on a loaded machine as "$0/$2" in one week and "$0.027/$2" in the
    # other): a few input tokens apart, never more.
    pd.testing.assert_series_equal(dask.total_cost_usd.astype(float), local.total_cost_usd.astype(float),
                                   check_exact=False, rtol=1e-3)
    for week in (local_week, dask_week):
        recon = json.loads((week / "reconciliation.json").read_text())
        assert recon["complete"] and recon["expected"] == recon["observed"] == recon["written"] == 8
    assert {run_state(dask_week / r) for r in plan.run_id} == {FINISHED}
    truth_local = pd.read_csv(local_week / "truth.csv").sort_values(["run_id", "item_index"]).reset_index(drop=True)
    truth_dask = pd.read_csv(dask_week / "truth.csv").sort_values(["run_id", "item_index"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(truth_dask, truth_local)


def test_dask_runs_name_their_executor_and_worker(dask_cluster, local_week: Path, dask_week: Path):
    workers = set(dask_cluster.scheduler_info["workers"])
    seen = set()
    for run_id in pd.read_csv(dask_week / "plan.csv").run_id:
        meta = json.loads((dask_week / run_id / "metadata.json").read_text())
        assert meta["executor"] == "dask" and meta["sandbox"] == "docker" and meta["network"] == "sealed"
        assert meta["worker"] in workers and [a["worker"] for a in meta["attempts"]] == [meta["worker"]]
        seen.add(meta["worker"])
        local = json.loads((local_week / run_id / "metadata.json").read_text())
        assert "executor" not in local and "worker" not in local  # a local week's metadata reads as before
    assert seen == workers, "both workers ran runs"
