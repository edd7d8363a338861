"""Checks on how the run ended: the CLI's exit and result event (``exit_success``), its turn count (``max_turns``).

The simulated CLI ends with an error result and exit code 1 exactly when the run crossed its budget; its turns
are 1 + the user events (each tool result, each loaded skill's body), as the CLI counts them.
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


register(CheckKind(
    "exit_success", (), "the CLI exited 0 and its result event is not an error", _grade_exit, _simulate_exit,
    vally={"exit-success": {}}))
register(CheckKind(
    "max_turns", ("turns",), "the result's `num_turns` is at most `turns`", _grade_turns, _simulate_turns))
