"""Grading of each check type, pinned by data-driven cases, and the alias table.

The cases are tests/data/check_cases/grading.json's and, for a check type added in its own registry module,
those of tests/checks/cases/<type>.json (same format), so adding a type adds its cases without editing this file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillbench.checks import grade_check
from skillbench.checktypes import (
    TOOL_ALIASES,
    Check,
    ProbeResult,
    canonical_tool,
    check_kinds,
    matching_uses,
    tools_used,
)
from skillbench.signals import Transcript
from tests.helpers.shared import DATA_DIR

TYPE_CASES = Path(__file__).parent / "cases"
CASES = [case for path in [DATA_DIR / "check_cases" / "grading.json", *sorted(TYPE_CASES.glob("*.json"))]
         for case in json.loads(path.read_text(encoding="utf-8"))["cases"]]


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
    """The case's probe; a glob probe's ``files`` ({path: text}) become its output (NUL, path, NUL, content)."""
    if "probe" not in case:
        return {}
    raw = dict(case["probe"])
    files = raw.pop("files", {})
    raw["output"] = raw.get("output", "").encode() + b"".join(
        b"\0" + name.encode() + b"\0" + text.encode() for name, text in files.items())
    return {check.check_id: ProbeResult(check.check_id, **raw)}


@pytest.mark.parametrize("case", CASES, ids=[c["comment"] for c in CASES])
def test_check_grading(case):
    check = Check(**case["check"])
    got = grade_check(check, _transcript(case), case.get("exit_code", 0), _probes(case, check))
    assert (got.check_id, got.check_type) == (check.check_id, check.type)
    assert got.status == case["expect"]["status"], got
    assert case["expect"].get("detail", "") in got.detail, got


def test_every_check_type_has_a_case():
    from tests.checks.test_grade_dotnet import CASES as DOTNET_CASES  # the types dotnet's formats added

    registered = {k.name for k in check_kinds()}
    assert {c["check"]["type"] for c in CASES} | {c[0]["type"] for c in DOTNET_CASES} == registered
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
