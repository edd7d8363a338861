"""What the Dask executor refuses, in one line, before a run could be paid for twice or reach the sim from afar:
a scheduler that re-runs tasks, a worker on another host with the simulated endpoint, and flags that cannot work;
and how a lost worker reads (a retry reason, then a run state that is not complete)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillbench.cli import main
from skillbench.cluster import DaskExecutor, ExecutorError, open_executor, refuse_remote_workers, remote_workers
from skillbench.generation import Endpoint, SandboxResult
from skillbench.generation._retries import needs_retry
from skillbench.signals import run_state
from skillbench.vocab import COMPLETE_STATES, WORKER_LOST
from tests.helpers.shared import TINY_SUITE

THIS_HOST = {"10.0.0.5", "vm", "fe80::1"}


def test_remote_workers_are_those_off_this_host():
    workers = ["tcp://127.0.0.1:40001", "tcp://10.0.0.5:40002", "tcp://[::1]:40003", "tcp://10.0.0.9:40004",
               "tcp://vm:40005", "tcp://gpu-7.example:40006"]
    assert remote_workers(workers, THIS_HOST) == ["tcp://10.0.0.9:40004", "tcp://gpu-7.example:40006"]
    refuse_remote_workers(workers[:3], THIS_HOST)
    with pytest.raises(ExecutorError, match=r"^worker tcp://10\.0\.0\.9:40004 is on another host, but the simulated "
                                            r"endpoint is loopback-only: .*--backend anthropic\)$"):
        refuse_remote_workers(workers[:4], THIS_HOST)


class _FarClient:
    """A connected client whose one worker is on another host (never asked to run anything)."""

    def nthreads(self) -> dict[str, int]:
        return {"tcp://203.0.113.7:40001": 4}

    def run(self, *args, **kwargs):
        raise AssertionError("nothing may run on a far worker with the sim")


def test_the_sim_refuses_a_far_worker_for_generation_and_judging(tmp_path: Path):
    executor = DaskExecutor(_FarClient(), log=lambda message: None)
    sim = Endpoint(base_url="http://127.0.0.1:9", api_key="k", kind="simulated")
    with pytest.raises(ExecutorError, match="203.0.113.7:40001 is on another host"):
        executor.sandbox(None, sim, tmp_path)
    with pytest.raises(ExecutorError, match="203.0.113.7:40001 is on another host"):
        executor.http_transport(simulated=True)
    assert executor.http_transport(simulated=False) is not None  # the Anthropic backend may use any host


def test_a_scheduler_that_re_runs_tasks_is_refused():
    import dask
    from distributed import LocalCluster

    with dask.config.set({"distributed.scheduler.allowed-failures": 3}):  # Dask's own default
        cluster = LocalCluster(n_workers=0, processes=False, dashboard_address=None)
    try:
        with pytest.raises(ExecutorError, match=r"allowed-failures 3.*`DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES"
                                                r"=0 dask scheduler`$"):
            with open_executor("dask", cluster.scheduler_address, log=lambda message: None):
                pass
    finally:
        cluster.close()


@pytest.mark.parametrize(("flags", "message"), [
    (["--scheduler", "tcp://127.0.0.1:9"], "--scheduler needs --executor dask"),
    (["--executor", "dask", "--sandbox", "local"], "--executor dask runs every run in Docker on a worker"),
])
def test_flags_that_cannot_work_are_usage_errors(flags, message, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = tmp_path / "week"
    assert main(["generate", str(TINY_SUITE), "--run-key", "x1", "--out-dir", str(out), *flags]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists(), "nothing written"


def test_a_lost_worker_is_retried_then_left_for_the_next_pass(tmp_path: Path):
    lost = SandboxResult(-2, False, b"", b"lost\n", 0.0, 1.0, worker="tcp://127.0.0.1:1", worker_lost="lost")
    assert needs_retry(lost) == WORKER_LOST
    folder = tmp_path / "r1"
    folder.mkdir()
    (folder / "metadata.json").write_text(json.dumps({"run_id": "r1", WORKER_LOST: "lost", "timed_out": False}))
    assert run_state(folder) == WORKER_LOST and WORKER_LOST not in COMPLETE_STATES
