"""Task runs with the real CLI on the simulated endpoint, in real (sealed) containers.

A tiny suite built in tmp_path: the sim helpers' bicycle skills plus task prompts whose checks do not depend on
what the simulated agent does (``test -f`` on a workspace file, the workspace's own files, ``exit_success``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from skillbench.generation import (
    ContainerLimits,
    GenerateOptions,
    LocalSandbox,
    TaskRun,
    WorkspaceItem,
    finished_runs,
    generate,
)
from skillbench.ledgers._checks import expected_check_rows, missing_check_rows, read_checks
from skillbench.runtime import PassContext
from skillbench.signals import run_state
from skillbench.suite import load_suite
from skillbench.weekly import model_endpoint
from tests.generation.test_generate import require_docker
from tests.helpers.relay import offline_plan
from tests.helpers.sim import SITE, forced, make_suite, require_cli, write_profiles

MARKER = "ran-in-container.marker"
SKILL_URL = f"{SITE}/tyre-repair/SKILL.md"
RUBRIC = [{"type": "must", "text": "Says what the notes file asks for"}]
NO_RETRIES = {"CLAUDE_CODE_MAX_RETRIES": "0"}


def _task(name: str, **fields) -> dict:
    return {"name": name, "product_area": "bicycles", "skill_url": SKILL_URL, "rubric": RUBRIC,
            "prompt": "Read notes.txt in the working directory and say what it asks for.", **fields}


TASKS = {
    "task-marker": _task(
        "task-marker",
        workspace=[{"dest": "notes.txt", "content": "Patch the tube.\n"}, {"dest": "kit", "src": "kit"},
                   {"dest": "bin/check.sh", "content": "#!/bin/sh\ntest -f notes.txt\n", "executable": True}],
        setup=["echo prepared > setup.txt"],
        checks=[{"id": "marker", "type": "run_command", "command": f"./bin/check.sh && touch {MARKER}"},
                {"id": "setup-ran", "type": "file_contains", "path": "setup.txt", "value": "PREPARED"},
                {"id": "fixture-folder", "type": "file_exists", "path": "kit/patches.txt"},
                {"id": "exit", "type": "exit_success"},
                {"id": "slow", "type": "run_command", "command": "sleep 30", "timeout": 1}],
        timeout=150, allowed_tools=["Read", "Bash", "Grep"]),
    "task-bad-setup": _task("task-bad-setup", workspace=[{"dest": "notes.txt", "content": "x\n"}],
                            setup=["true", "echo broken >&2; exit 3"],
                            checks=[{"id": "exit", "type": "exit_success"}]),
    "task-slow-check": _task("task-slow-check", workspace=[{"dest": "notes.txt", "content": "x\n"}],
                             checks=[{"id": "slow-ok", "type": "run_command", "command": "sleep 4", "timeout": 30},
                                     {"id": "exit", "type": "exit_success"}]),
}


def _suite(root: Path, names: list[str]) -> Path:
    make_suite(root)
    (root / "fixtures" / "kit").mkdir(parents=True)
    (root / "fixtures" / "kit" / "patches.txt").write_text("6 patches\n")
    (root / "solutions" / "task-marker").mkdir(parents=True)
    (root / "solutions" / "task-marker" / "SECRET-SOLUTION.txt").write_text("never in the container\n")
    for name in names:
        (root / "test-prompts" / f"{name}.json").write_text(json.dumps(TASKS[name], indent=2))
    return root


def _generate(suite_dir: Path, out_dir: Path, prompts: list[str], profiles: Path, sandbox: str = "docker"):
    suite = load_suite(suite_dir)
    opts = GenerateOptions(run_key="tk", out_dir=out_dir, models=["haiku"], conditions=["with-skill"], reps=1,
                           jobs=2, seed=3, sandbox=sandbox, timeout_s=120, extra_env=NO_RETRIES, prompts=prompts)
    return generate(suite, opts, PassContext(endpoint=lambda: model_endpoint("sim", suite_dir=suite_dir,
                                                                         profiles=profiles), log=lambda m: None))


@pytest.fixture(scope="module")
def task_week(tmp_path_factory) -> tuple[Path, Path, dict]:
    """One docker pass over task-marker and task-bad-setup (1 run each)."""
    require_cli()
    require_docker()
    base = tmp_path_factory.mktemp("tasks")
    suite_dir = _suite(base / "evals", ["task-marker", "task-bad-setup"])
    profiles = write_profiles(base / "p.yaml", {"haiku": forced()})
    out_dir = base / "week"
    report = _generate(suite_dir, out_dir, ["task-marker", "task-bad-setup"], profiles)
    return base, out_dir, report


def _run_of(out_dir: Path, prompt: str) -> Path:
    plan = pd.read_csv(out_dir / "plan.csv")
    return out_dir / plan.loc[plan.prompt == prompt, "run_id"].item()


@pytest.mark.docker
@pytest.mark.cli
def test_a_run_command_check_ran_in_the_container(task_week):
    base, out_dir, _ = task_week
    run = _run_of(out_dir, "task-marker")
    assert run_state(run) == "finished"
    rows = read_checks(out_dir / "checks.csv").set_index("check_id")
    mine = rows[rows.run_id == run.name]
    assert mine.loc["marker", "status"] == "passed", mine
    assert mine.loc["setup-ran", "status"] == "passed" and mine.loc["fixture-folder", "status"] == "passed"
    assert mine.loc["exit", "status"] == "passed"
    assert not list(base.rglob(MARKER)), "the marker was written in the container, never on the host"
    meta = json.loads((run / "metadata.json").read_text())
    assert meta["checks"] == [{"id": c["id"], "type": c["type"]} for c in TASKS["task-marker"]["checks"]]
    assert meta["allowed_tools"] == ["Read", "Bash", "Grep"] and meta["timeout_s"] == 150
    assert meta["workspace"] == ["notes.txt", "kit", "bin/check.sh"]
    assert meta["container_limits"] == ContainerLimits().to_json(), "the run records its container's limits"
    assert "limits_hit" not in meta and "output_cut" not in meta, "none hit, nothing cut"
    flags = meta["flags"]
    assert flags[flags.index("--allowedTools") + 1] == "Read,Bash,Grep", "the task's allow-list reached the CLI"
    assert "SECRET-SOLUTION" not in (run / "transcript.jsonl").read_text()


@pytest.mark.docker
@pytest.mark.cli
def test_a_check_timeout_is_an_error(task_week):
    _, out_dir, _ = task_week
    rows = read_checks(out_dir / "checks.csv")
    slow = rows[rows.check_id == "slow"].iloc[0]
    assert slow.status == "error" and slow.detail == "timeout after 1s"


@pytest.mark.docker
@pytest.mark.cli
def test_a_failing_setup_command_is_harness_invalid(task_week):
    _, out_dir, report = task_week
    run = _run_of(out_dir, "task-bad-setup")
    assert run_state(run) == "harness_invalid"
    meta = json.loads((run / "metadata.json").read_text())
    assert meta["harness_invalid"] == "echo broken >&2; exit 3: exit 3: broken"
    assert len(meta["attempts"]) == 1, "a setup failure is not retried"
    assert not (run / "transcript.jsonl").exists(), "the CLI never ran"
    assert json.loads((run / "checks.json").read_text()) == {"setup": {"ok": False, "detail": meta["harness_invalid"]},
                                                            "checks": []}
    assert run.name not in set(read_checks(out_dir / "checks.csv").run_id), "no check rows"
    assert run.name in report["missing"] and not report["complete"]
    manifest = pd.read_csv(out_dir / "manifest.csv").set_index("run_id")
    assert manifest.loc[run.name, "run_state"] == "harness_invalid"


KILL_SCRIPT = """
import sys
from pathlib import Path
from skillbench.generation import GenerateOptions, generate
from skillbench.runtime import PassContext
from skillbench.weekly import model_endpoint
from skillbench.suite import load_suite

suite_dir, out_dir, profiles = sys.argv[1:4]
opts = GenerateOptions(run_key="tk", out_dir=Path(out_dir), models=["haiku"], conditions=["no-skill",
                       "with-skill"], reps=1, jobs=1, sandbox="docker", timeout_s=120,
                       extra_env={"CLAUDE_CODE_MAX_RETRIES": "0"})
report = generate(load_suite(suite_dir), opts, PassContext(
    log=lambda m: None, endpoint=lambda: model_endpoint("sim", suite_dir=suite_dir, profiles=profiles)))
sys.exit(0 if report["complete"] else 1)
"""


def _in_check_phase(out_dir: Path) -> bool:
    """A container of this week is running the slow check (``sleep 4``) right now."""
    import docker

    try:  # sparse: no inspect per container, which races a container removed behind its run
        listed = docker.from_env().containers.list(sparse=True, filters={"label": f"skillbench.out_dir={out_dir}"})
    except docker.errors.APIError:
        return False
    for container in listed:
        try:
            procs = container.top().get("Processes") or []
        except docker.errors.APIError:  # gone between the list and now
            continue
        if any("sleep 4" in " ".join(p) for p in procs):
            return True
    return False


@pytest.mark.docker
@pytest.mark.cli
def test_kill_9_in_the_check_phase_then_resume_leaves_every_check_row_once(tmp_path):
    require_cli()
    require_docker()
    suite_dir = _suite(tmp_path / "evals", ["task-slow-check"])
    for plain in ("chain-wax", "tyre-flat"):
        (suite_dir / "test-prompts" / f"{plain}.json").unlink()
    profiles = write_profiles(tmp_path / "p.yaml", {"haiku": forced()})
    out_dir = tmp_path / "week"
    argv = [sys.executable, "-c", KILL_SCRIPT, str(suite_dir), str(out_dir), str(profiles)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 300
    while not (out_dir.exists() and finished_runs(out_dir) and _in_check_phase(out_dir)):
        assert proc.poll() is None and time.time() < deadline, proc.communicate()
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # kill -9 of the generator while a run's check runs in its container
    proc.wait()
    done = finished_runs(out_dir)
    assert len(done) == 1, "the kill must land in the second run's check phase"
    assert set(read_checks(out_dir / "checks.csv").run_id) == done, "only committed runs have rows"

    assert subprocess.run(argv, capture_output=True, timeout=600).returncode == 0
    plan = pd.read_csv(out_dir / "plan.csv")
    rows = read_checks(out_dir / "checks.csv")  # refuses a (run, check) listed twice
    assert len(rows) == 2 * len(plan) and set(rows.run_id) == set(plan.run_id)
    assert missing_check_rows(rows, expected_check_rows(out_dir, plan.run_id)) == []
    assert set(rows.status) == {"passed"}
    assert list(rows.sort_values(["run_id", "check_id"]).index) == list(rows.index), "sorted"
    import docker

    assert not docker.from_env().containers.list(all=True, filters={"label": f"skillbench.out_dir={out_dir}"})


def test_local_sandbox_refuses_workspace_checks_in_one_line(tmp_path, capsys):
    from skillbench.cli import main

    suite_dir = _suite(tmp_path / "evals", ["task-marker", "task-slow-check"])
    out = tmp_path / "week"
    assert main(["generate", str(suite_dir), "--run-key", "tk", "--out-dir", str(out), "--backend", "sim",
                 "--models", "haiku", "--reps", "1", "--sandbox", "local"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "task-marker, task-slow-check" in err[0] and "--sandbox docker" in err[0], err
    assert not [p for p in out.iterdir() if p.is_dir()], "no run started"


def test_local_sandbox_copies_the_workspace_and_runs_setup(tmp_path):
    """A task without workspace checks runs locally: its files and setup are in the CLI's working directory."""
    task = TaskRun(items=(WorkspaceItem("notes.txt", b"patch\n"), WorkspaceItem("bin/x.sh", b"#!/bin/sh\necho x\n",
                                                                                   0o755)),
                   setup=("./bin/x.sh > setup.txt",))
    sandbox = LocalSandbox(Path("/bin/sh"), root=tmp_path)
    result = sandbox.run(["claude", "-c", "cat notes.txt setup.txt"], {"PATH": "/usr/bin:/bin"}, [], 10, "r",
                         task=task, relay=offline_plan())
    assert result.setup.ok and result.stdout == b"patch\nx\n"
    failed = sandbox.run(["claude", "-c", "echo never"], {"PATH": "/usr/bin:/bin"}, [], 10, "r",
                         task=TaskRun(setup=("exit 7",)), relay=offline_plan())
    assert failed.setup_failed and failed.setup.detail == "exit 7: exit 7" and failed.stdout == b""


@pytest.mark.docker
@pytest.mark.cli
def test_a_harness_invalid_run_is_named_in_the_scorecards_coverage(task_week):
    from skillbench.ledgers import load_week
    from skillbench.scorecard import compute_scorecard, render_markdown

    _, out_dir, _ = task_week
    run = _run_of(out_dir, "task-bad-setup")
    data = compute_scorecard(load_week(out_dir), n_resamples=100)
    dropped = data.dropped.set_index("run_id")
    assert dropped.loc[run.name, "reason"].startswith("harness-invalid: the harness could not set the run up")
    page = render_markdown(data)
    assert "INCOMPLETE" in page.splitlines()[0] and run.name in page
