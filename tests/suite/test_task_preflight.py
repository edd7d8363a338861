"""Preflight of the agentic task fields: one line per defect, file and field named; stable check ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillbench.checktypes import Check
from skillbench.suite import TestPrompt, preflight
from tests.suite.test_preflight import _prompt, _run, suite  # noqa: F401 - the fixture is reused

TASK = {"workspace": [{"src": "task/report.py", "dest": "report.py"}, {"dest": "data.csv", "content": "a,b\n1,2\n"}],
        "setup": [], "allowed_tools": ["Read", "Edit", "Bash"], "timeout": 300,
        "checks": [{"type": "run_command", "command": "python report.py", "id": "runs"},
                   {"type": "output_contains", "value": "mean"}]}


def _fixture(suite: Path) -> None:  # noqa: F811 - suite is the fixture's name
    path = suite / "fixtures" / "task" / "report.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("print('hi')\n")


def _task(suite: Path, name: str, **changes) -> Path:  # noqa: F811
    _fixture(suite)
    return _prompt(suite, name, **{**TASK, **changes})


def test_a_valid_task_passes_strict(suite, capsys):  # noqa: F811
    _task(suite, "alpha-task")
    code, out = _run(capsys, str(suite), "--strict")
    assert code == 0, out
    spec = preflight(suite).suite.prompt("alpha-task")
    assert spec.test.is_task and spec.test.has_workspace_checks
    assert spec.workspace_source(spec.test.workspace[0]) == suite / "fixtures" / "task" / "report.py"


CASES = {
    "unknown_check_type": ({"checks": [{"type": "output_smells", "value": "x"}]}, "checks[0].type",
                           "unknown check type"),
    "needs_options": ({"checks": [{"type": "output_matches"}]}, "checks[0]", "needs pattern"),
    "option_not_applicable": ({"checks": [{"type": "exit_success", "pattern": "x"}]}, "checks[0].pattern",
                              "does not apply"),
    "case_sensitive_not_applicable": ({"checks": [{"type": "output_matches", "pattern": "x", "case_sensitive": True}]},
                                      "checks[0].case_sensitive", "does not apply"),
    "case_sensitive_not_bool": ({"checks": [{"type": "output_contains", "value": "x", "case_sensitive": "yes"}]},
                                "checks[0].case_sensitive", "boolean"),
    "unknown_option": ({"checks": [{"type": "output_contains", "value": "x", "colour": 1}]}, "checks[0].colour",
                       "unknown check option"),
    "invalid_regex": ({"checks": [{"type": "output_matches", "pattern": "(unclosed"}]}, "checks[0].pattern",
                      "invalid regular expression"),
    "duplicate_ids": ({"checks": [{"type": "output_contains", "value": "x"}, {"type": "output_contains",
                                                                              "value": "x"}]},
                      "checks[1].id", "duplicate check id"),
    "duplicate_given_ids": ({"checks": [{"type": "exit_success", "id": "a"}, {"type": "max_turns", "turns": 3,
                                                                              "id": "a"}]},
                            "checks[1].id", "duplicate check id"),
    "missing_fixture": ({"workspace": [{"src": "nowhere.py", "dest": "x.py"}]}, "workspace[0].src",
                        "missing fixture file"),
    "src_and_content": ({"workspace": [{"src": "task/report.py", "dest": "x.py", "content": "y"}]}, "workspace[0]",
                        "exactly one"),
    "dest_escapes": ({"workspace": [{"content": "x", "dest": "../x.py"}]}, "workspace[0].dest", "leaves"),
    "script_not_in_workspace": ({"checks": [{"type": "run_command", "command": "python -m pytest -q test_gone.py"}]},
                                "checks[0].command", "not in the workspace"),
    "file_path_absolute": ({"checks": [{"type": "file_exists", "path": "/etc/passwd"}]}, "checks[0].path",
                           "absolute"),
    "empty_allowed_tools": ({"allowed_tools": []}, "allowed_tools", "is empty"),
    "bad_timeout": ({"timeout": 0}, "timeout", ""),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_task_defect(suite, capsys, case):  # noqa: F811
    changes, field, words = CASES[case]
    _task(suite, "alpha-task", **changes)
    code, out = _run(capsys, str(suite))
    assert code == 1, out
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    hit = [line for line in errors if "alpha-task.json" in line and f": {field}: " in line]
    assert hit and words in hit[0], out
    assert all(" — " in line for line in errors), "every defect says how to fix it"


def test_a_script_made_by_setup_is_not_refused(suite, capsys):  # noqa: F811
    _task(suite, "alpha-task", setup=["printf 'print(1)' > gen.py"],
          checks=[{"type": "run_command", "command": "python gen.py"}])
    code, out = _run(capsys, str(suite), "--strict")
    assert code == 0, out


def test_check_ids_depend_on_content_not_position():
    a = Check(type="output_contains", value="mean")
    b = Check(type="run_command", command="pytest -q")
    first = TestPrompt(name="n", product_area="a", skill_url="u", prompt="p", rubric=[], checks=[a, b])
    second = TestPrompt(name="n", product_area="a", skill_url="u", prompt="p", rubric=[],
                        checks=[Check(type="exit_success"), b, a])
    assert [c.check_id for c in first.checks] == [c.check_id for c in second.checks[1:]][::-1]
    assert a.check_id.startswith("output_contains-") and len(a.check_id) == len("output_contains-") + 8
    assert Check(type="output_contains", value="median").check_id != a.check_id
    assert Check(type="output_contains", value="mean", id="says-mean").check_id == "says-mean"


def test_a_qdrant_prompt_is_not_a_task():
    plain = TestPrompt(name="n", product_area="a", skill_url="u", prompt="p", rubric=[])
    assert not plain.is_task and not plain.has_workspace_checks and plain.checks == []
