"""Grading of each check type, pinned by the data-driven cases in tests/data/check_cases/, and the alias table."""

from __future__ import annotations

import json
from typing import Any

import pytest

from skillbench.checks import TOOL_ALIASES, ProbeResult, canonical_tool, grade_check, matching_uses, tools_used
from skillbench.signals.transcript import Transcript
from skillbench.suite.task import Check
from tests.helpers.shared import DATA_DIR

CASES = json.loads((DATA_DIR / "check_cases" / "grading.json").read_text(encoding="utf-8"))["cases"]


def _transcript(case: dict[str, Any]) -> Transcript:
    """A transcript with the case's tool uses (denied ones listed in the result) and its answer."""
    events: list[dict[str, Any]] = [{"type": "system", "subtype": "init", "skills": []}]
    denied = []
    for i, tool in enumerate(case.get("tools", [])):
        events.append({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": f"t{i}", "name": tool["name"], "input": tool.get("input", {})}]}})
        if tool.get("denied"):
            denied.append({"tool_use_id": f"t{i}"})
    if not case.get("no_result"):
        events.append({"type": "result", "subtype": case.get("subtype", "success"),
                       "is_error": bool(case.get("is_error")), "result": case.get("answer", ""),
                       "num_turns": case.get("num_turns", 1), "permission_denials": denied})
    return Transcript(events)


def _probes(case: dict[str, Any], check: Check) -> dict[str, ProbeResult]:
    if "probe" not in case:
        return {}
    raw = dict(case["probe"])
    raw["output"] = raw.get("output", "").encode()
    return {check.check_id: ProbeResult(check.check_id, **raw)}


@pytest.mark.parametrize("case", CASES, ids=[c["comment"] for c in CASES])
def test_check_grading(case):
    check = Check(**case["check"])
    got = grade_check(check, _transcript(case), case.get("exit_code", 0), _probes(case, check))
    assert (got.check_id, got.check_type) == (check.check_id, check.type)
    assert got.status == case["expect"]["status"], got
    assert case["expect"].get("detail", "") in got.detail, got


def test_every_check_type_has_a_case():
    from skillbench.suite.task import CHECK_TYPES
    from tests.checks.test_grade_dotnet import CASES as DOTNET_CASES  # the types dotnet's formats added

    assert {c["check"]["type"] for c in CASES} | {c[0]["type"] for c in DOTNET_CASES} == set(CHECK_TYPES)
    assert {c["expect"]["status"] for c in CASES} == {"passed", "failed", "error"}


@pytest.mark.parametrize(("alias", "canonical"), [
    ("create", "write"), ("CREATE_FILE", "write"), ("str_replace", "edit"), ("str_replace_based_edit_tool", "edit"),
    ("view", "read"), ("bash", "bash"), ("powershell", "bash"), ("Grep", "grep"), ("glob", "glob"),
    ("web_fetch", "webfetch"), ("WebSearch", "websearch"), ("skill", "skill"), (" Task ", "task"),
    ("mcp__custom__thing", "mcp__custom__thing"),
])
def test_alias_table(alias, canonical):
    assert canonical_tool(alias) == canonical


def test_alias_table_maps_to_claude_code_names_only():
    known = {"Write", "Edit", "MultiEdit", "Read", "Bash", "Grep", "Glob", "WebFetch", "WebSearch", "Skill", "Task",
             "TodoWrite", "NotebookEdit"}
    assert set(TOOL_ALIASES.values()) <= known
    assert all(k == k.lower() for k in TOOL_ALIASES), "keys are compared in lower case"


def test_tools_used_nets_out_denials_and_matching_uses_dedups():
    t = _transcript({"tools": [{"name": "Write"}, {"name": "Bash", "denied": True}, {"name": "Write"}]})
    assert tools_used(t) == ["write", "write"]
    assert matching_uses(["create", "Write", "bash"], tools_used(t)) == ["write"]
