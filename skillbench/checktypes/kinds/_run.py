"""Checks on how the run ended: the CLI's exit and result event (``exit_success``, ``completed``), its turn count
(``max_turns``) and its tool calls (``max_tool_calls``).

The simulated CLI ends with an error result and exit code 1 exactly when the run crossed its budget; its turns
are 1 + the user events (each tool result, each loaded skill's body), as the CLI counts them; its tool calls are
the calls that ran (a denied attempt is not one), as the transcript shows them.
"""

from __future__ import annotations

from skillbench.checktypes._grading import Outcome, short
from skillbench.checktypes._registry import Check, CheckKind, RunFacts, SimRun, register
from skillbench.vocab import CHECK_ERROR, CHECK_FAILED, CHECK_PASSED


def _grade_exit(_check: Check, facts: RunFacts) -> Outcome:
    if facts.exit_code != 0:
        return CHECK_FAILED, f"exit {facts.exit_code}"
    if facts.result is None:
        return CHECK_FAILED, "exit 0 but no result event"
    if facts.result.get("is_error"):
        return CHECK_FAILED, short(f"exit 0, result is an error ({facts.result.get('subtype')})")
    return CHECK_PASSED, "exit 0"


def _simulate_exit(_check: Check, _run: SimRun, _answer: str, crossed: bool) -> bool:
    return not crossed


def _grade_turns(check: Check, facts: RunFacts) -> Outcome:
    turns = (facts.result or {}).get("num_turns")
    if not isinstance(turns, int | float) or isinstance(turns, bool):
        return CHECK_ERROR, "no num_turns in the result event"
    if turns <= (check.turns or 0):
        return CHECK_PASSED, f"{int(turns)} turns"
    return CHECK_FAILED, f"{int(turns)} turns > {check.turns}"


def _simulate_turns(check: Check, run: SimRun, _answer: str, _crossed: bool) -> bool:
    return run.num_turns() <= (check.turns or 0)


def _grade_completed(check: Check, facts: RunFacts) -> Outcome:
    if facts.result is None:
        return CHECK_FAILED, "no result event: the session ended mid-turn"
    if facts.result.get("is_error"):
        return CHECK_FAILED, short(f"the result is an error ({facts.result.get('subtype')})")
    return (CHECK_PASSED, "") if facts.answer.strip() else (CHECK_FAILED, "the final answer is empty")


def _simulate_completed(_check: Check, _run: SimRun, answer: str, crossed: bool) -> bool:
    return not crossed and bool(answer.strip())


def _grade_calls(check: Check, facts: RunFacts) -> Outcome:
    n = len(facts.tool_uses)
    limit = check.calls or 0
    return (CHECK_PASSED, f"{n} tool calls") if n <= limit else (CHECK_FAILED, f"{n} tool calls > {limit}")


def _simulate_calls(check: Check, run: SimRun, _answer: str, _crossed: bool) -> bool:
    return len(run.used_tools()) <= (check.calls or 0)


register(CheckKind(
    "exit_success", (), "the CLI exited 0 and its result event is not an error", _grade_exit, _simulate_exit))
register(CheckKind(
    "max_turns", ("turns",), "the result's `num_turns` is at most `turns`", _grade_turns, _simulate_turns,
    vally={"turn-count": {"max": "turns"}}))
# Vally's ``completed``: non-empty output, no error, the turn ended (the CLI writes its result event at the end)
register(CheckKind(
    "completed", (), "the run has a result event that is not an error, and a final answer that is not empty",
    _grade_completed, _simulate_completed, vally={"completed": {}}))
register(CheckKind(
    "max_tool_calls", ("calls",), "the run made at most `calls` tool calls (a denied attempt is not one)",
    _grade_calls, _simulate_calls, vally={"tool-call-count": {"max": "calls"}}))
