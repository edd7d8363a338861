"""The one verdict specification: data-driven cases in ``tests/data/verdict_cases/`` pin every precedence step of
the gate and of the objective record (inputs that trigger each step, and inputs that satisfy two conditions at
once, naming the one that must win); the docs' table lists every state of vocab in the order ``decide()`` uses."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from skillbench import vocab
from skillbench.compare._verdicts import REPAIRS
from skillbench.scorecard import GATE_RULES, OBJECTIVE_RULES, ObjectiveRecord, decide, gate_rule, verdicts_table
from skillbench.scorecard._verdicts import (
    FabricationRecord,
    GateRecord,
    decide_record,
    decide_week,
    objective_rule,
    rule_words,
)

CASES = Path(__file__).resolve().parents[1] / "data" / "verdict_cases"
GATE = json.loads((CASES / "gate.json").read_text(encoding="utf-8"))
OBJECTIVE = json.loads((CASES / "objective.json").read_text(encoding="utf-8"))
HEALTH = ("reconciliation_complete", "judge_errors", "dormancy_activations", "commit_mismatches")


def _objective(case: dict[str, Any]) -> ObjectiveRecord | None:
    o = case["objective"]
    return None if o is None else ObjectiveRecord(o["n"], o["wins"], o["losses"])


def _fabrication(case: dict[str, Any]) -> FabricationRecord | None:
    f = case.get("fabrication")  # the opt-in rule's record (absent: the rule is off)
    return None if f is None else FabricationRecord(f["n"], f["wins"], f["losses"])


def _record(case: dict[str, Any]) -> GateRecord:
    return GateRecord(case["wins"], case["ties"], case["losses"], *(case[k] for k in HEALTH),
                      objective=_objective(case), invalid_spec=case.get("invalid_spec", False),
                      p_adjusted=case.get("p_adjusted"), fabrication=_fabrication(case))


@pytest.mark.parametrize("case", GATE["cases"], ids=[c["why"][:60] for c in GATE["cases"]])
def test_gate_case(case: dict[str, Any]) -> None:
    record = _record(case)
    holds = [r.reason for r in GATE_RULES if r.reason and r.holds(record)]
    assert holds == case["holds"], "the conditions the inputs satisfy (in the spec's order)"
    dec = decide_record(record)
    # a family left out for its spec has no votes to decide() on; a Holm-adjusted p comes from decide_week
    if not case.get("invalid_spec") and "p_adjusted" not in case and "fabrication" not in case:
        dec = decide(case["wins"], case["ties"], case["losses"], **{k: case[k] for k in HEALTH},
                     objective=_objective(case))
    assert dec.verdict == case["verdict"]
    assert dec.rule.verdict == case["verdict"]


@pytest.mark.parametrize("case", OBJECTIVE["cases"], ids=[c["why"][:60] for c in OBJECTIVE["cases"]])
def test_objective_case(case: dict[str, Any]) -> None:
    record = ObjectiveRecord(case["n"], case["wins"], case["losses"])
    assert [r.reason for r in OBJECTIVE_RULES if r.reason and r.holds(record)] == case["holds"]
    assert (record.reason, record.regression) == (case["reason"], case["regression"])


def _outranks(cases: list[dict[str, Any]], winner_of: Any) -> set[tuple[str, str]]:
    """(a, b) for every case where conditions a and b both hold and a decides ("" is the always-holding pass)."""
    pairs = set()
    for case in cases:
        winner = winner_of(case)
        pairs |= {(winner, other) for other in [*case["holds"], ""] if other != winner}
    return pairs


def _check_order(rules: tuple[Any, ...], data: dict[str, Any], winner_of: Any) -> None:
    """The cases' precedence agrees with the spec's order, and orders every neighbouring pair of reachable steps."""
    order = [r.reason for r in rules]
    pairs = _outranks(data["cases"], winner_of)
    for a, b in pairs:
        assert order.index(a) < order.index(b), f"the cases rank {a or 'the pass'} above {b or 'the pass'}"
    reachable = [r for r in order if r not in data["unreachable"]]
    for a, b in itertools.pairwise(reachable):
        assert (a, b) in pairs, f"no case satisfies both {a!r} and {b or 'the pass'!r}: add one to pin their order"
    decided = {winner_of(c) for c in data["cases"]}
    assert decided == set(reachable), "every reachable step is some case's verdict"


def test_the_gate_cases_pin_the_spec_order() -> None:
    _check_order(GATE_RULES, GATE, lambda c: gate_rule_of(c["verdict"]))


def test_the_objective_cases_pin_the_spec_order() -> None:
    _check_order(OBJECTIVE_RULES, OBJECTIVE, lambda c: c["reason"])


def gate_rule_of(verdict: str) -> str:
    match = re.fullmatch(r"(\w+)(?: \((\w+)\))?", verdict)
    assert match, verdict
    return match.group(2) or ""


@pytest.mark.parametrize("reason", ["no_positive_direction", "no_loss_direction"])
def test_the_unreachable_steps_never_decide(reason: str) -> None:
    """Exhaustively up to 30 stimuli: whenever the step's condition holds, an earlier step already holds."""
    assert reason in GATE["unreachable"] or reason in OBJECTIVE["unreachable"]
    for n in range(0, 31):
        for w in range(n + 1):
            for lo in range(n - w + 1):
                if reason in GATE["unreachable"]:
                    assert decide(w, n - w - lo, lo).reason != reason, (w, lo, n)
                else:
                    assert ObjectiveRecord(n, w, lo).reason != reason, (w, lo, n)


def test_rules_name_vocab_words_once() -> None:
    gate_reasons = [r.reason for r in GATE_RULES]
    assert len(set(gate_reasons)) == len(gate_reasons), "a reason names one rule (gate_rule looks it up)"
    assert {r.state for r in GATE_RULES} == set(vocab.GATE_STATES)
    assert GATE_RULES[-1].holds(GateRecord(0, 0, 0)) and GATE_RULES[-1].state == vocab.VALID_PASS
    assert OBJECTIVE_RULES[-1].state == vocab.VALID_REGRESSION and OBJECTIVE_RULES[-1].reason == ""
    for reason in gate_reasons:
        assert gate_rule(reason).reason == reason
    for rule in OBJECTIVE_RULES:
        assert objective_rule(rule.reason) is rule


def _table_rows(markdown: str) -> list[list[list[str]]]:
    """Each markdown table of ``markdown`` as its body rows of stripped cells."""
    tables, block = [], []
    for line in [*markdown.splitlines(), ""]:
        if line.startswith("|"):
            block.append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]])
        elif block:
            tables.append(block[2:])
            block = []
    return tables


def test_verdicts_table_lists_every_state_in_decide_order() -> None:
    gate, objective = _table_rows(verdicts_table())
    assert [row[0] for row in gate] == [str(i) for i in range(1, len(GATE_RULES) + 1)]
    listed = [(row[1].strip("`"), row[2].strip("`").replace("—", "")) for row in gate]
    assert listed == [(r.state, r.reason) for r in GATE_RULES]
    assert {state for state, _ in listed} == set(vocab.GATE_STATES)
    # the order decide() uses, as the cases show it independently of the spec
    _check_order(tuple(gate_rule(reason) for _, reason in listed), GATE, lambda c: gate_rule_of(c["verdict"]))
    assert [row[2].strip("`").replace("—", "") for row in objective] == [r.reason for r in OBJECTIVE_RULES]
    assert all(row[4] for row in gate + objective), "every rule has a plain label"
    assert "{" not in verdicts_table(), "every action's placeholders are filled"


def test_comparison_repairs_read_the_spec() -> None:
    """compare's repairs are the rules' actions in a comparison's words (the head, the base)."""
    assert REPAIRS["objective_loss"] == "the head fails deterministic checks the base passes: see the objective record"
    assert REPAIRS["net_win_below_floor"] == "the head wins, but by less than the 20 % net-win floor"
    assert REPAIRS["incomplete_reconciliation"] == (
        "some planned runs are missing: rerun the same `skillbench compare` to resume them")
    assert set(REPAIRS) - {"preference loss (report only)"} == {r.reason for r in GATE_RULES if r.reason}


def test_rule_words_state_the_regression_step() -> None:
    words = rule_words()
    assert (words["alpha"], words["floor"], words["min_n"]) == ("0.05", "20%", "5")
    # deterministic evidence first (issue 31): only a spec or the runs themselves come before the checks' verdict
    assert words["before_regression"] == (
        "`INVALID_INCONCLUSIVE (invalid_spec)` and `INVALID_INCONCLUSIVE (incomplete_reconciliation)`")
    # the opt-in fabrication rule is deterministic evidence too: it comes before the judge's health (issue 33)
    assert words["after_regression"].startswith(
        "`VALID_REGRESSION (fabrication)`, `INVALID_INCONCLUSIVE (judge_errors)`, ")
    assert words["after_regression"].endswith("and `VALID_PASS`")


WEEK = json.loads((CASES / "week.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", WEEK["cases"], ids=[c["why"][:60] for c in WEEK["cases"]])
def test_week_case(case: dict[str, Any]) -> None:
    """Holm across a report's records: which records are members, their adjusted p, and which passes survive."""
    records = [GateRecord(r["wins"], r["ties"], r["losses"], judge_errors=r.get("judge_errors", 0),
                          objective=_objective({"objective": r.get("objective")})) for r in case["records"]]
    decisions = decide_week(records)
    assert [d.verdict for d in decisions] == case["verdicts"]
    for dec, want in zip(decisions, case["p_adjusted"], strict=True):
        assert (not dec.tested) if want is None else dec.p_adjusted == pytest.approx(want)
        assert dec.p_value == decide_record(GateRecord(dec.wins, dec.ties, dec.losses)).p_value  # raw p kept
