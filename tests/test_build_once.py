"""tests.helpers.once: an artefact several xdist workers need is built by one of them, and a failed build is
reported to the others rather than redone."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from tests.helpers.once import build_once, shared_temp


class _Factory:
    """The part of pytest's TempPathFactory build_once reads: a worker's base temp inside the run's."""

    def __init__(self, basetemp: Path) -> None:
        self._basetemp = basetemp

    def getbasetemp(self) -> Path:
        return self._basetemp


def _build(directory: Path) -> dict[str, str]:
    with (directory.parent / "builds.log").open("a") as log:
        log.write(f"{os.getpid()}\n")
    (directory / "week.csv").write_text("run_id\nr1\n")
    return {"week": str(directory / "week.csv")}


def _fail(directory: Path) -> None:
    with (directory.parent / "builds.log").open("a") as log:
        log.write(f"{os.getpid()}\n")
    raise RuntimeError("generate exited 1")


def _worker(run: Path, name: str, build_name: str, results: multiprocessing.Queue) -> None:
    os.environ["PYTEST_XDIST_WORKER"] = name
    try:
        results.put(("ok", build_once(_Factory(run / f"popen-{name}"), "week", globals()[build_name])))
    except BaseException as exc:  # pytest.fail raises a BaseException
        results.put(("failed", str(exc)))


def _run_workers(run: Path, build_name: str, count: int = 3) -> list[tuple[str, object]]:
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    procs = [context.Process(target=_worker, args=(run, f"gw{i}", build_name, results)) for i in range(count)]
    for proc in procs:
        proc.start()
    outcomes = [results.get(timeout=60) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
    return outcomes


def test_concurrent_workers_share_one_build(tmp_path: Path):
    outcomes = _run_workers(tmp_path, "_build")
    assert outcomes == [("ok", {"week": str(tmp_path / "week" / "week.csv")})] * 3
    assert len((tmp_path / "builds.log").read_text().splitlines()) == 1, "built once"


def test_a_failed_build_fails_the_other_workers_without_rebuilding(tmp_path: Path):
    outcomes = _run_workers(tmp_path, "_fail")
    assert sorted(state for state, _ in outcomes) == ["failed"] * 3
    messages = sorted(str(message) for _, message in outcomes)
    assert messages[0] == "generate exited 1"
    assert all(m == "week failed to build in another worker: RuntimeError: generate exited 1" for m in messages[1:])
    assert len((tmp_path / "builds.log").read_text().splitlines()) == 1, "not rebuilt"


def test_without_xdist_the_sessions_own_temp_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    assert shared_temp(_Factory(tmp_path)) == tmp_path
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    assert shared_temp(_Factory(tmp_path / "popen-gw1")) == tmp_path
