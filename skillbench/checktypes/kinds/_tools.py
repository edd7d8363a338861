"""Checks on the tools the run used: the calls that ran (denied attempts netted out), names compared through the
alias table of :mod:`skillbench.checktypes._tools` (``create`` is Write, ``bash`` is Bash).
"""

from __future__ import annotations

from collections.abc import Mapping

from skillbench.checktypes._grading import Outcome, short
from skillbench.checktypes._registry import Check, CheckKind, RunFacts, SimRun, register
from skillbench.checktypes._tools import canonical_tool, matching_uses
from skillbench.vocab import CHECK_FAILED, CHECK_PASSED


def _tool_summary(name: str, args: Mapping[str, object]) -> str:
    """``Bash(rm -rf x)``: a use named with its most telling argument."""
    for key in ("command", "file_path", "path", "url", "pattern", "query", "skill"):
        if isinstance(args.get(key), str):
            return f"{name}({args[key]})"
    return name


def _grade_expect(check: Check, facts: RunFacts) -> Outcome:
    used = [canonical_tool(u.name) for u in facts.tool_uses]
    missing = [name for name in check.tools or [] if canonical_tool(name) not in used]
    return (CHECK_PASSED, "") if not missing else (CHECK_FAILED, short("not used: " + ", ".join(missing)))


def _grade_reject(check: Check, facts: RunFacts) -> Outcome:
    wanted = [canonical_tool(t) for t in check.tools or []]
    for use in facts.tool_uses:
        if canonical_tool(use.name) in wanted:
            return CHECK_FAILED, short("used " + _tool_summary(use.name, use.input))
    return CHECK_PASSED, ""


def _simulate_expect(check: Check, run: SimRun, _answer: str, _crossed: bool) -> bool:
    wanted = check.tools or []
    return len(matching_uses(wanted, run.used_tools())) == len({canonical_tool(t) for t in wanted})


def _simulate_reject(check: Check, run: SimRun, _answer: str, _crossed: bool) -> bool:
    return not matching_uses(check.tools or [], run.used_tools())


# skill-validator and Vally write these as scenario fields (expect_tools: [...]), not assertions:
# suite.dotnet.stimulus reads them into checks of these types
register(CheckKind(
    "expect_tools", ("tools",), "every tool in `tools` was called (and not denied)", _grade_expect,
    _simulate_expect))
register(CheckKind(
    "reject_tools", ("tools",), "no tool in `tools` was called (a denied attempt does not count)", _grade_reject,
    _simulate_reject))
