"""Task preparation: what goes into a run's workspace (and what never does), and the probes its checks need."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from skillbench.generation import TaskError, prepare_task
from skillbench.suite import load_suite
from skillbench.suite._task import WorkspaceFile
from tests.helpers.sim import SITE, make_suite


def _spec(root: Path, **fields):
    make_suite(root)
    (root / "fixtures" / "data").mkdir(parents=True)
    (root / "fixtures" / "data" / "a.csv").write_text("x\n1\n")
    (root / "test-prompts" / "beside.txt").write_text("beside the prompt\n")
    (root / "solutions" / "t").mkdir(parents=True)
    (root / "solutions" / "t" / "fix.py").write_text("solution\n")
    data = {"name": "t", "product_area": "p", "skill_url": f"{SITE}/tyre-repair/SKILL.md", "prompt": "q",
            "rubric": [{"type": "must", "text": "x"}], **fields}
    (root / "test-prompts" / "t.json").write_text(json.dumps(data))
    return load_suite(root).prompt("t")


def test_workspace_entries_setup_and_probes(tmp_path):
    spec = _spec(tmp_path, workspace=[{"dest": "data", "src": "data"}, {"dest": "notes/b.txt", "src": "beside.txt"},
                                      {"dest": "run.sh", "content": "echo hi\n", "executable": True}],
                 setup=["sh run.sh"],
                 checks=[{"type": "run_command", "command": "sh run.sh", "timeout": 5},
                         {"type": "file_contains", "path": "data/a.csv", "value": "1"},
                         {"type": "output_contains", "value": "x"}])
    task = prepare_task(spec)
    assert task.dests == ("data", "notes/b.txt", "run.sh") and task.setup == ("sh run.sh",)
    assert [(p.check_id, p.timeout_s, p.reads_file) for p in task.probes] == [
        (spec.test.checks[0].check_id, 5.0, False), (spec.test.checks[1].check_id, 60.0, True)]
    with tarfile.open(fileobj=io.BytesIO(task.tar(1000))) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert set(members) == {"data", "data/a.csv", "notes", "notes/b.txt", "run.sh"}
        assert members["run.sh"].mode == 0o755 and members["data"].isdir() and members["notes"].isdir()
        assert {m.uid for m in members.values()} == {1000}
        assert tar.extractfile("notes/b.txt").read() == b"beside the prompt\n"
        texts = b"".join(tar.extractfile(m).read() for m in members.values() if m.isfile())
    assert b"solution" not in texts and b"run_command" not in texts, "neither solutions nor checks go in"
    assert prepare_task(_spec(tmp_path / "plain")) is None, "a plain prompt has no task"


@pytest.mark.parametrize(("entry", "message"), [
    ({"dest": "../up.txt", "content": "x"}, "must be a path inside the workspace"),
    ({"dest": "/etc/x", "content": "x"}, "must be a path inside the workspace"),
    ({"dest": "w", "src": "gone.txt"}, "neither beside the prompt file nor in the suite's fixtures/"),
    ({"dest": "w", "src": "."}, "holds the suite's test prompts or solutions"),
    ({"dest": "w", "src": "../solutions"}, "holds the suite's test prompts or solutions"),
])
def test_a_workspace_that_would_leak_or_escape_is_refused_in_one_line(tmp_path, entry, message):
    """Preflight refuses most of these first; generation refuses them again (a spec edited behind its back)."""
    spec = _spec(tmp_path)
    spec.test.workspace = [WorkspaceFile(**entry)]
    with pytest.raises(TaskError) as err:
        prepare_task(spec)
    assert message in str(err.value) and "t.json" in str(err.value) and len(str(err.value).splitlines()) == 1
