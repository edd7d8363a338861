"""The objective layer: pass@k/pass^k and transitions pinned by data-driven cases, the VALID_REGRESSION boundary
checked exhaustively like the pass boundary, and the section only in weeks with checks."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from skillbench.scorecard import (
    arm_rates,
    decide,
    pass_at_k,
    pass_hat_k,
    preference_gate,
    run_outcomes,
    stimulus_outcomes,
    task_lift,
    tool_violations,
    transitions,
)
from skillbench.scorecard._verdicts import ALPHA, NET_WIN_FLOOR, ObjectiveRecord, sign_test_p
from skillbench.vocab import (
    INVALID_INCONCLUSIVE,
    MIN_STIMULI,
    NO_SKILL,
    VALID_NO_CHANGE,
    VALID_PASS,
    VALID_REGRESSION,
    WITH_SKILL,
)

CASES = Path(__file__).resolve().parents[1] / "data" / "objective_cases"


def _cases(name: str) -> list[dict]:
    return json.loads((CASES / name).read_text())["cases"]


@pytest.mark.parametrize("case", _cases("pass_k.json"), ids=lambda c: c["why"])
def test_pass_at_k_and_pass_hat_k(case):
    at, hat = pass_at_k(case["n"], case["c"], case["k"]), pass_hat_k(case["n"], case["c"], case["k"])
    if case["pass_at_k"] is None:
        assert pd.isna(at) and pd.isna(hat)
    else:
        assert at == pytest.approx(case["pass_at_k"]) and hat == pytest.approx(case["pass_hat_k"])


def _week(arms: dict[str, list[list[str]]], prompt: str = "p1", family: str = "fam", model: str = "haiku",
          dormancy: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """checks rows and manifest rows for one stimulus: arm -> one list of check statuses per rep."""
    checks, manifest = [], []
    for cond, reps in arms.items():
        for rep, statuses in enumerate(reps, start=1):
            run_id = f"{prompt}-{model}-{cond}-r{rep}"
            manifest.append({"run_id": run_id, "prompt": prompt, "skill_family": family, "model": model,
                             "condition": cond, "rep": rep, "dormancy": dormancy})
            for i, status in enumerate(statuses):
                checks.append({"prompt": prompt, "model": model, "condition": cond, "rep": rep, "run_id": run_id,
                               "check_id": f"c{i}", "check_type": "run_command", "status": status, "detail": ""})
    return pd.DataFrame(checks), pd.DataFrame(manifest)


@pytest.mark.parametrize("case", _cases("transitions.json"), ids=lambda c: c["why"])
def test_transitions(case):
    checks, manifest = _week({NO_SKILL: case["no_skill"], WITH_SKILL: case["with_skill"]})
    trans = transitions(stimulus_outcomes(run_outcomes(checks, manifest)))
    if case["transition"] is None:
        assert trans.empty
    else:
        assert trans["transition"].tolist() == [case["transition"]]


def test_rates_leave_errors_out_and_count_them():
    checks, manifest = _week({NO_SKILL: [["passed", "failed"], ["error", "passed"]], WITH_SKILL: [["passed"] * 2] * 2})
    rates = arm_rates(run_outcomes(checks, manifest)).set_index("condition")
    assert rates.at[NO_SKILL, "check_pass_rate"] == pytest.approx(2 / 3)  # the error is neither passed nor failed
    assert rates.at[NO_SKILL, "task_pass_rate"] == 0.0 and rates.at[NO_SKILL, "unknown_runs"] == 1
    assert rates.at[NO_SKILL, "check_errors"] == 1
    assert rates.at[WITH_SKILL, "task_pass_rate"] == 1.0


def test_task_lift_is_paired_over_stimuli():
    frames = [_week({NO_SKILL: [["failed"], ["failed"]], WITH_SKILL: [["passed"], ["passed"]]}, prompt="a"),
              _week({NO_SKILL: [["passed"], ["failed"]], WITH_SKILL: [["passed"], ["passed"]]}, prompt="b"),
              _week({NO_SKILL: [["passed"]], WITH_SKILL: [["passed"]]}, prompt="dorm", dormancy=True)]
    checks = pd.concat([f[0] for f in frames]); manifest = pd.concat([f[1] for f in frames])  # noqa: E702
    lift = task_lift(stimulus_outcomes(run_outcomes(checks, manifest))).iloc[0]
    assert lift["n_pairs"] == 2  # the dormancy stimulus never enters the lift
    assert lift["task_lift"] == pytest.approx(0.75) and lift["task_lift_se"] == pytest.approx(0.25)


def test_tool_violations_are_listed():
    checks, _ = _week({WITH_SKILL: [["passed", "failed"]]})
    checks.loc[1, ["check_type", "detail"]] = ["reject_tools", "WebFetch (toolu_1)"]
    listed = tool_violations(checks)
    assert listed[["check_id", "detail"]].values.tolist() == [["c1", "WebFetch (toolu_1)"]]


# -- VALID_REGRESSION: the pass's rule mirrored, checked over every small record ------------------------------
OBJECTIVE = [(w, lo, n) for n in range(0, 31) for w in range(n + 1) for lo in range(n - w + 1)]


def test_every_objective_record_is_decided_by_the_mirrored_rule():
    for w, lo, n in OBJECTIVE:
        rec = ObjectiveRecord(n, w, lo)
        credible = (n >= MIN_STIMULI and sign_test_p(lo, w) <= ALPHA and lo > w and (lo - w) / n >= NET_WIN_FLOOR)
        assert rec.regression == credible, (w, lo, n)
        # with a preference record that would pass, the objective loss still wins
        dec = decide(9, 0, 0, objective=rec)
        assert dec.state == (VALID_REGRESSION if credible else VALID_PASS), (w, lo, n)


def test_regression_boundaries():
    assert not ObjectiveRecord(4, 0, 4).regression  # n < 5
    assert ObjectiveRecord(5, 0, 5).regression  # p = 1/32
    assert not ObjectiveRecord(5, 0, 4).regression  # p = 1/16
    assert not ObjectiveRecord(26, 0, 5).regression and ObjectiveRecord(25, 0, 5).regression  # the 20 % floor
    assert not ObjectiveRecord(10, 5, 0).regression  # a gain is never a regression


def test_verdict_precedence():
    loss = ObjectiveRecord(6, 0, 6)
    assert decide(9, 0, 0, reconciliation_complete=False, objective=loss).state == INVALID_INCONCLUSIVE
    # a judge outage, a skill that fired on a dormancy prompt or too few preference prompts never hide it
    assert decide(9, 0, 0, judge_errors=1, objective=loss).verdict == "VALID_REGRESSION (objective_loss)"
    assert decide(9, 0, 0, dormancy_activations=1, objective=loss).verdict == "VALID_REGRESSION (objective_loss)"
    assert decide(2, 0, 0, objective=loss).verdict == "VALID_REGRESSION (objective_loss)"
    assert decide(9, 0, 0, objective=loss).verdict == "VALID_REGRESSION (objective_loss)"
    assert decide(2, 3, 0, objective=loss).state == VALID_REGRESSION
    # a preference loss alone stays report-only
    assert decide(0, 0, 9).state == VALID_NO_CHANGE
    assert decide(0, 0, 9, objective=ObjectiveRecord(6, 1, 1)).state == VALID_NO_CHANGE


def test_the_gate_table_carries_the_objective_record():
    stimuli = [_week({NO_SKILL: [["passed"]], WITH_SKILL: [["failed"]]}, prompt=f"p{i}") for i in range(6)]
    checks = pd.concat([s[0] for s in stimuli]); manifest = pd.concat([s[1] for s in stimuli])  # noqa: E702
    manifest = manifest.assign(skill_activation="skill_tool")
    pairs = pd.DataFrame([{"run_key": "wk", "skill_family": "fam", "prompt": f"p{i}", "model": "haiku", "rep": 1,
                           "winner_ab": "", "winner_ba": "", "outcome": "W", "judge_model": "j", "error": ""}
                          for i in range(6)])
    trans = transitions(stimulus_outcomes(run_outcomes(checks, manifest)))
    gate = preference_gate(pairs, manifest, transitions=trans).iloc[0]
    assert gate["verdict"] == "VALID_REGRESSION (objective_loss)"
    record = ["objective_n", "objective_wins", "objective_ties", "objective_losses"]
    assert gate[record].tolist() == [6, 0, 0, 6]
    assert gate["evidence"] == ("n=6; 6W/0T/0L; p=0.0156; net +100.0%; "
                                "objective n=6; 0W/0T/6L; p(loss)=0.0156; completion drops 100.0 points")
    plain = preference_gate(pairs, manifest)
    assert plain.iloc[0]["verdict"] == VALID_PASS and "objective_n" not in plain.columns
