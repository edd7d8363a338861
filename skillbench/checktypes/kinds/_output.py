"""Checks on the final answer's text: contains / matches (and their negations), and that there is an answer.

``*_contains`` compare case-insensitively unless the check sets ``case_sensitive: true`` (skill-validator
compares an answer case-insensitively; Vally too, unless its grader's ``case_sensitive`` says otherwise);
``*_matches`` are Python ``re.search`` (inline flags like ``(?i)`` work). The simulated agent draws each one's
outcome (its ``check`` profile knob) and writes the line that gives it; its truth applies the grader's rule.
"""

from __future__ import annotations

from skillbench.checktypes._grading import Outcome, holds_value, text_check
from skillbench.checktypes._patterns import search
from skillbench.checktypes._registry import AnswerLine, Check, CheckKind, RunFacts, SimRun, register
from skillbench.vocab import CHECK_FAILED, CHECK_PASSED


def _grade(check: Check, facts: RunFacts) -> Outcome:
    return text_check(check.type.removeprefix("output_"), check, facts.answer, "the answer")


def _simulate(check: Check, _run: SimRun, answer: str, _crossed: bool) -> bool:
    if check.type == "output_contains":
        return holds_value(check, answer)
    if check.type == "output_not_contains":
        return not holds_value(check, answer)
    found = search(check.pattern or "", answer)
    return found if check.type == "output_matches" else not found


register(CheckKind(
    "output_contains", ("value",), "the final answer holds `value` (case-insensitive unless `case_sensitive`)",
    _grade, _simulate, accepts=("case_sensitive",), answer_line=AnswerLine("value", when=True),
    dotnet=("output_contains",), vally={"output-contains": {"substring": "value", "case_sensitive": "case_sensitive"}},
    dotnet_case=False))
register(CheckKind(
    "output_not_contains", ("value",), "the final answer does not hold `value` (case-insensitive unless "
    "`case_sensitive`)", _grade, _simulate, accepts=("case_sensitive",), answer_line=AnswerLine("value", when=False),
    dotnet=("output_not_contains",),
    vally={"output-not-contains": {"substring": "value", "case_sensitive": "case_sensitive"}}, dotnet_case=False))
register(CheckKind(
    "output_matches", ("pattern",), "`re.search(pattern)` finds a match in the final answer", _grade, _simulate,
    answer_line=AnswerLine("pattern", when=True), dotnet=("output_matches",),
    vally={"output-matches": {"pattern": "pattern"}}))
register(CheckKind(
    "output_not_matches", ("pattern",), "`re.search(pattern)` finds no match in the final answer", _grade,
    _simulate, answer_line=AnswerLine("pattern", when=False), dotnet=("output_not_matches",),
    vally={"output-not-matches": {"pattern": "pattern"}}))


def _grade_nonempty(_check: Check, facts: RunFacts) -> Outcome:
    return (CHECK_PASSED, "") if facts.answer.strip() else (CHECK_FAILED, "the final answer is empty")


def _simulate_nonempty(_check: Check, _run: SimRun, answer: str, _crossed: bool) -> bool:
    return bool(answer.strip())


# skill-validator's ``exit_success`` and Vally's ``exit-success`` mean "the agent produced output": this type, not ours
# of that name
register(CheckKind(
    "output_nonempty", (), "the final answer holds more than whitespace", _grade_nonempty, _simulate_nonempty,
    dotnet=("exit_success",), vally={"exit-success": {}}))
