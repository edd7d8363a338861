"""One pass per run directory: the OS file lock, with real processes — and two real judge passes at once.

Two ``skillbench judge`` (or ``judge-pairs``) on one week: the second refuses at once with one line naming the
first one's PID and command, and the ledger holds every row exactly once; with ``--wait`` both succeed and the
ledger is still exactly-once. The judges grade against a simulated endpoint whose every judge response waits a
little, so the first pass is still running when the second starts.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from skillbench.judge import select_runs
from skillbench.ledgers import LOCK_FILE, RunDirBusy, read_holder, run_dir_lock
from tests.helpers.judge import CLI, judge_endpoint
from tests.helpers.shared import ROOT, TINY_SUITE, TINY_WEEK

HOLD = textwrap.dedent("""
    import sys, time
    from skillbench.ledgers import run_dir_lock
    with run_dir_lock(sys.argv[1], command="holder under test"):
        print("locked", flush=True)
        time.sleep(float(sys.argv[2]))
""")
SLOW_JUDGE = [{"kind": "slow_first_byte", "rate": 1.0, "delay_s": 0.4, "role": "judge"}]


def _holder(run_dir: Path, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(run_dir), str(seconds)], stdout=subprocess.PIPE,
                            text=True, cwd=ROOT)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_a_second_pass_is_refused_at_once_naming_the_holder(tmp_path):
    holder = _holder(tmp_path, 30)
    try:
        t0 = time.monotonic()
        with pytest.raises(RunDirBusy) as busy, run_dir_lock(tmp_path):
            pass
        assert time.monotonic() - t0 < 3, "refused at once, not after a wait"
        message = str(busy.value)
        assert f"PID {holder.pid}" in message and "holder under test" in message and "--wait" in message
        assert "\n" not in message
    finally:
        holder.kill()
        holder.wait()


def test_a_killed_holder_never_blocks_the_week(tmp_path):
    holder = _holder(tmp_path, 30)
    os.kill(holder.pid, signal.SIGKILL)  # kill -9: no cleanup ran, the lock file is still there
    holder.wait()
    assert (tmp_path / LOCK_FILE).exists() and read_holder(tmp_path)["pid"] == holder.pid
    with run_dir_lock(tmp_path, command="next pass"):
        assert read_holder(tmp_path)["pid"] == os.getpid()
    assert not (tmp_path / LOCK_FILE).exists(), "an idle week has no lock file"


def test_wait_blocks_until_the_holder_is_done(tmp_path):
    holder = _holder(tmp_path, 1.5)
    said: list[str] = []
    t0 = time.monotonic()
    with run_dir_lock(tmp_path, wait=True, log=said.append):
        waited = time.monotonic() - t0
        assert read_holder(tmp_path)["pid"] == os.getpid()
    holder.wait(timeout=10)
    assert waited > 1.0, "it waited for the holder's 1.5 s with the lock"
    assert len(said) == 1 and f"PID {holder.pid}" in said[0]


def test_one_thread_re_enters_its_lock_and_another_thread_is_refused(tmp_path):
    errors: list[BaseException] = []

    def other() -> None:
        try:
            with run_dir_lock(tmp_path):
                pass
        except RunDirBusy as exc:
            errors.append(exc)

    with run_dir_lock(tmp_path), run_dir_lock(tmp_path):  # judge_week holds it around grade_week and pair_week
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        assert (tmp_path / LOCK_FILE).exists()
    assert len(errors) == 1 and f"PID {os.getpid()}" in str(errors[0])
    assert not (tmp_path / LOCK_FILE).exists()


def test_signals_refuses_a_held_week_with_exit_2_and_waits_with_wait(tmp_path):
    # Held long enough that the refused CLI starts (seconds on a loaded 2-core machine) while it is still held.
    holder = _holder(tmp_path, 8)
    try:
        refused = subprocess.run([*CLI, "signals", str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
        assert refused.returncode == 2
        assert refused.stderr.count("\n") == 1 and f"PID {holder.pid}" in refused.stderr
        assert not (tmp_path / "manifest.csv").exists()
        waited = subprocess.run([*CLI, "signals", str(tmp_path), "--wait"], capture_output=True, text=True, cwd=ROOT)
        assert waited.returncode == 0, waited.stderr
        assert holder.poll() is not None and (tmp_path / "manifest.csv").is_file()
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("argv", [
    ["judge", "{week}", "--backend", "sim"], ["judge-pairs", "{week}", "--backend", "sim"],
    ["calibrate", "{week}", "--backend", "sim"], ["scorecard", "{week}"], ["signals", "{week}"],
    ["generate", str(TINY_SUITE), "--run-key", "20261130", "--out-dir", "{week}", "--backend", "sim", "--dry-run"],
], ids=lambda a: a[0])
def test_every_writing_command_refuses_a_held_week(tmp_path, capsys, argv):
    """Each stage takes the lock before it touches the week (or opens an endpoint): one line, exit 2, no change."""
    from skillbench.cli import main

    week = Path(shutil.copytree(TINY_WEEK / "20261130", tmp_path / "20261130"))
    before = {str(p): p.stat().st_mtime_ns for p in week.rglob("*")}
    holder = _holder(week, 30)
    try:
        assert main([a.format(week=week) for a in argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"PID {holder.pid}" in err[0] and "holder under test" in err[0], err
        assert {str(p): p.stat().st_mtime_ns for p in week.rglob("*") if p.name != LOCK_FILE} == before
    finally:
        holder.kill()
        holder.wait()


# -- two real judge passes on one week --------------------------------------------------------------------------


def _start(*argv: str) -> subprocess.Popen:
    return subprocess.Popen([*CLI, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _holding(proc: subprocess.Popen, run_dir: Path, timeout: float = 60) -> None:
    """Wait until ``proc`` holds the week's lock."""
    deadline = time.monotonic() + timeout
    while read_holder(run_dir).get("pid") != proc.pid:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the first pass never took the lock"
        time.sleep(0.05)


def _exactly_once_scores(run_dir: Path) -> None:
    scores = pd.read_csv(run_dir / "scores.csv", dtype=str, keep_default_na=False)
    runs, _ = select_runs(run_dir)
    assert not scores.duplicated(["run_id", "item_index"]).any(), "a row was written twice"
    assert set(scores.run_id) == {r.run_id for r in runs}, "every gradeable run graded"
    for run in runs:
        assert len(scores[scores.run_id == run.run_id]) == len(run.items), run.run_id


def _exactly_once_pairs(run_dir: Path) -> None:
    pairs = pd.read_csv(run_dir / "pairs.csv", dtype=str, keep_default_na=False)
    assert len(pairs) > 0 and not pairs.duplicated(["prompt", "model", "rep"]).any(), "a pair was written twice"


@pytest.mark.parametrize(("command", "check"), [("judge", _exactly_once_scores), ("judge-pairs", _exactly_once_pairs)])
def test_two_judge_passes_at_once_the_second_refuses(sim_week: Path, command, check):
    with judge_endpoint(faults=SLOW_JUDGE) as ep:
        first = _start(command, str(sim_week), "--endpoint", ep.base_url)
        _holding(first, sim_week)
        second = subprocess.run([*CLI, command, str(sim_week), "--endpoint", ep.base_url], capture_output=True,
                                text=True, cwd=ROOT, timeout=60)
        assert first.poll() is None, "the second pass ended while the first still held the week"
        out, err = first.communicate(timeout=600)
    assert first.returncode == 0, err[-2000:]
    assert second.returncode == 2
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and f"PID {first.pid}" in lines[0] and f"skillbench {command} {sim_week}" in lines[0]
    assert second.stdout == ""
    check(sim_week)


@pytest.mark.parametrize(("command", "check"), [("judge", _exactly_once_scores), ("judge-pairs", _exactly_once_pairs)])
def test_two_judge_passes_with_wait_both_succeed_exactly_once(sim_week: Path, command, check):
    with judge_endpoint(faults=SLOW_JUDGE) as ep:
        first = _start(command, str(sim_week), "--endpoint", ep.base_url, "--wait")
        _holding(first, sim_week)
        second = _start(command, str(sim_week), "--endpoint", ep.base_url, "--wait")
        first_out, first_err = first.communicate(timeout=600)
        second_out, second_err = second.communicate(timeout=600)
    assert first.returncode == 0, first_err[-2000:]
    assert second.returncode == 0, second_err[-2000:]
    assert f"waiting for PID {first.pid}" in second_err
    if command == "judge":
        assert "graded 0 run(s) now" in second_out, "the second pass found the first one's work done"
    else:
        assert "judged 0 now" in second_out
    check(sim_week)
