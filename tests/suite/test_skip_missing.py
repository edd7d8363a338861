"""--skip-missing drops a missing workspace file and everything that uses it, one line per dropped piece."""

from __future__ import annotations

from pathlib import Path

from skillbench.suite import PromptSpec, TestPrompt
from skillbench.suite._skip_missing import drop_missing


def _spec(tmp_path: Path, **fields) -> PromptSpec:
    (tmp_path / "test-prompts").mkdir(exist_ok=True)
    (tmp_path / "test-prompts" / "present.txt").write_text("here\n")
    test = TestPrompt(name="t", product_area="a", skill_url="u", prompt="p", rubric=[], **fields)
    return PromptSpec(test, tmp_path / "test-prompts" / "t.json", "fam", "fam/SKILL.md", False)


def test_a_missing_script_takes_its_setup_and_checks_with_it(tmp_path):
    spec = _spec(
        tmp_path,
        workspace=[{"src": "present.txt", "dest": "logs/a.txt"}, {"src": "gone.py", "dest": ".eval/validate.py"}],
        setup=["python .eval/validate.py --prepare", "echo ok > ready.txt"],
        checks=[{"type": "run_command", "command": "python .eval/validate.py logs/a.txt healthy", "id": "validate"},
                {"type": "file_exists", "path": ".eval/validate.py", "id": "has-script"},
                {"type": "file_exists", "path": "logs/a.txt", "id": "has-log"},
                {"type": "output_contains", "value": "healthy", "id": "says"}])
    test, dropped = drop_missing(spec)
    assert [w.dest for w in test.workspace] == ["logs/a.txt"]
    assert test.setup == ["echo ok > ready.txt"]
    assert [c.check_id for c in test.checks] == ["has-log", "says"]
    assert dropped == ["workspace[1] .eval/validate.py: src gone.py is missing from the tree",
                       "setup[0] 'python .eval/validate.py --prepare': uses a dropped file",
                       "check validate (run_command): uses a dropped file",
                       "check has-script (file_exists): uses a dropped file"]


def test_nothing_missing_changes_nothing(tmp_path):
    spec = _spec(tmp_path, workspace=[{"src": "present.txt", "dest": "a.txt"}],
                 checks=[{"type": "run_command", "command": "test -f a.txt"}])
    test, dropped = drop_missing(spec)
    assert test is spec.test and dropped == []
