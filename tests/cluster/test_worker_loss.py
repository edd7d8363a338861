"""A worker killed mid-matrix: its run goes through skillbench's retry-once rule, and a rerun leaves every planned
run exactly once.

The generate pass runs in a subprocess against the package's LocalCluster; once a run is executing on a worker and
others have finished, that worker's process is killed with SIGKILL (its nanny starts a new one). Dask never re-runs
the task (allowed-failures 0): the scheduler's ``KilledWorker`` comes back as ``worker_lost``, recorded in
``retries.json`` before the run's second attempt.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from skillbench.cluster import WORKER_LOST_EXIT
from skillbench.generation import finished_runs
from skillbench.vocab import WORKER_LOST
from tests.helpers.cluster import generate_argv, generate_cli, remove_week_containers
from tests.helpers.shared import ROOT

RUN_TASK = "skillbench-run-"
# One rep of the package's matrix (4 runs on 2 workers): when the first two have finished, the other two are in
# flight, which is all the kill needs; a run costs a container, and the rest of the pass after the kill is waited out.
ONE_REP = ("--reps", "1")
RUNS = 4


def _executing_run(client) -> str | None:
    """The address of a worker with a run in flight now, if any."""
    for address, keys in client.processing().items():
        if any(str(key).startswith(RUN_TASK) for key in keys):
            return address
    return None


def _lost_runs(out: Path) -> list[str]:
    path = out / "retries.json"
    retried = json.loads(path.read_text())["retried_runs"] if path.is_file() else []
    return [r["run_id"] for r in retried if r["reason"] == WORKER_LOST]


@pytest.fixture(scope="module")
def killed_week(dask_cluster, matrix_suite: Path, tmp_path_factory: pytest.TempPathFactory):
    """The week after one pass whose worker was killed under a run (again, if the run ended first) and a rerun."""
    from distributed import Client

    out = tmp_path_factory.mktemp("killed-week") / "ct"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(generate_argv(matrix_suite, out, "--executor", "dask", "--scheduler",
                                          dask_cluster.scheduler_address, *ONE_REP),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    killed: list[str] = []
    try:
        with Client(dask_cluster.scheduler_address, set_as_default=False) as client:
            deadline = time.time() + 300
            while not _lost_runs(out) and len(killed) < 3 and time.time() < deadline and proc.poll() is None:
                address = _executing_run(client)
                if address and len(finished_runs(out) if out.exists() else ()) >= 2:
                    pid = client.run(os.getpid, workers=[address])[address]
                    os.kill(pid, signal.SIGKILL)  # kill -9 of the worker process, a run in flight
                    killed.append(address)
                    settle = time.time() + 10  # the retry is recorded before the second attempt starts
                    while not _lost_runs(out) and time.time() < settle:
                        time.sleep(0.1)
                time.sleep(0.2)
        _, first_err = proc.communicate(timeout=600)
        assert _lost_runs(out), f"no kill landed on a run in flight ({killed}): {first_err[-2000:]}"
        rerun = generate_cli(matrix_suite, out, "--executor", "dask", "--scheduler", dask_cluster.scheduler_address,
                             *ONE_REP)
    finally:
        if proc.poll() is None:
            proc.kill()
        remove_week_containers(out)
    return out, killed, rerun


def test_rerun_completes_every_planned_run_exactly_once(killed_week):
    out, _, rerun = killed_week
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    plan = pd.read_csv(out / "plan.csv")
    manifest = pd.read_csv(out / "manifest.csv")
    assert sorted(manifest.run_id) == sorted(plan.run_id), "manifest rows == plan"
    runs = sorted(p.name for p in out.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    assert runs == sorted(plan.run_id), "no duplicate, partial or temporary folder"
    recon = json.loads((out / "reconciliation.json").read_text())
    assert recon["complete"] and recon["expected"] == recon["observed"] == RUNS


def test_the_lost_run_was_retried_once_and_recorded(killed_week):
    out, killed, _ = killed_week
    plan = pd.read_csv(out / "plan.csv").set_index("run_id")
    retried = json.loads((out / "retries.json").read_text())["retried_runs"]
    assert retried and all(r["reason"] == WORKER_LOST for r in retried), "only the kill caused retries"
    for entry in retried:
        row = plan.loc[entry["run_id"]]
        assert (entry["model"], entry["condition"]) == (row.model, row.condition)
        meta = json.loads((out / entry["run_id"] / "metadata.json").read_text())
        first, *rest = meta["attempts"]
        assert first["retry_reason"] == WORKER_LOST and first["worker"] in killed, "the killed worker is named"
        assert first["exit_code"] == WORKER_LOST_EXIT
        stderr = (out / entry["run_id"] / "attempt-1.stderr.txt").read_text()
        assert stderr.startswith(f"the Dask worker {first['worker']} was lost")
        if rest:  # retried in the same pass, on a live worker
            assert len(rest) == 1 and rest[0]["retry_reason"] is None and rest[0]["exit_code"] == 0
            assert rest[0]["worker"] != first["worker"]
