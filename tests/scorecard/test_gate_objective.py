"""VALID_REGRESSION at the gate: the objective record's boundary checked exhaustively over (W, T, L) grids, as the
pass boundary is in test_gate.py, the verdict precedence over every preference state, and the gate table."""

from __future__ import annotations

import pandas as pd
import pytest

from skillbench.scorecard import decide, preference_gate
from skillbench.scorecard._verdicts import ALPHA, NET_LOSS_FLOOR, ObjectiveRecord, sign_test_p
from skillbench.vocab import (
    BASELINE_ONLY,
    BOTH,
    INVALID_INCONCLUSIVE,
    NEITHER,
    SKILLED_ONLY,
    VALID_PASS,
    VALID_REGRESSION,
)

RECORDS = [(w, t, n - w - t) for n in range(0, 31) for w in range(n + 1) for t in range(n - w + 1)]
# The pass's reasons and their mirror images for a loss.
MIRROR = {"": "", "not_significant": "not_significant", "no_positive_direction": "no_loss_direction",
          "net_win_below_floor": "net_loss_below_floor", "underpowered": "underpowered"}


def _record(w: int, t: int, lo: int) -> ObjectiveRecord:
    return ObjectiveRecord(w + t + lo, w, lo)


def _credible(w: int, t: int, lo: int) -> bool:
    n = w + t + lo
    return n >= 5 and sign_test_p(lo, w) <= ALPHA and lo > w and (lo - w) / n >= NET_LOSS_FLOOR


def test_a_loss_is_decided_by_the_pass_rule_mirrored() -> None:
    for w, t, lo in RECORDS:
        rec = _record(w, t, lo)
        assert rec.regression == _credible(w, t, lo), (w, t, lo)
        # the same record read the other way round passes exactly when this one is a credible loss
        mirrored = decide(lo, t, w)
        assert MIRROR[mirrored.reason] == rec.reason, (w, t, lo)
        assert (mirrored.state == VALID_PASS) == rec.regression, (w, t, lo)


def test_net_loss_floor_never_blocks_a_sign_test_loss_below_26_stimuli() -> None:
    blocked = [(w, t, lo) for w, t, lo in RECORDS if _record(w, t, lo).reason == "net_loss_below_floor"]
    assert min(sum(r) for r in blocked) == 26
    assert [r for r in blocked if sum(r) == 26] == [(0, 21, 5)]
    assert _record(0, 20, 5).regression and not _record(0, 21, 5).regression
    assert _record(0, 0, 5).regression and not _record(0, 0, 4).regression  # p = 1/32 vs n < 5
    assert _record(0, 1, 4).reason == "not_significant"  # p = 1/16


# Preference records in each state the gate knows, and what a credible objective loss does to them: deterministic
# evidence is decided on its own n whatever the judge's health (issue 31), so only missing runs outrank it.
PREFERENCE = {
    "passes": ((9, 0, 0), {}, VALID_REGRESSION),
    "not significant": ((4, 1, 0), {}, VALID_REGRESSION),
    "preference loss": ((0, 0, 9), {}, VALID_REGRESSION),
    "underpowered": ((4, 0, 0), {}, VALID_REGRESSION),
    "incomplete": ((9, 0, 0), {"reconciliation_complete": False}, INVALID_INCONCLUSIVE),
    "judge errors": ((9, 0, 0), {"judge_errors": 1}, VALID_REGRESSION),
    "activation contract": ((9, 0, 0), {"dormancy_activations": 1}, VALID_REGRESSION),
}


@pytest.mark.parametrize("name", list(PREFERENCE))
def test_verdict_precedence_over_every_objective_record(name: str) -> None:
    (pw, pt, pl), flags, on_loss = PREFERENCE[name]
    alone = decide(pw, pt, pl, **flags)
    for w, t, lo in RECORDS:
        dec = decide(pw, pt, pl, **flags, objective=_record(w, t, lo))
        if _credible(w, t, lo) and on_loss == VALID_REGRESSION:
            assert dec.verdict == "VALID_REGRESSION (objective_loss)", (name, w, t, lo)
        else:  # no credible loss, or a state that outranks it: the preference record decides alone
            assert (dec.state, dec.reason) == (alone.state, alone.reason), (name, w, t, lo)
        assert dec.evidence.startswith(alone.evidence + "; objective ")
    assert alone.state != VALID_REGRESSION  # a preference loss alone stays report-only


def _transitions(w: int, t: int, lo: int, *, family: str = "fam", model: str = "haiku") -> pd.DataFrame:
    kinds = [SKILLED_ONLY] * w + [BOTH, NEITHER] * (t // 2) + [NEITHER] * (t % 2) + [BASELINE_ONLY] * lo
    rows = [{"skill_family": family, "prompt": f"p{i}", "model": model, "dormancy": False, "transition": k}
            for i, k in enumerate(kinds)]
    # dormancy stimuli never vote: five baseline-only ones would otherwise flip many records
    rows += [{"skill_family": family, "prompt": f"quiet{i}", "model": model, "dormancy": True,
              "transition": BASELINE_ONLY} for i in range(5)]
    return pd.DataFrame(rows)


def _week(n_prompts: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    prompts = [f"p{i}" for i in range(n_prompts)]
    manifest = pd.DataFrame([{"prompt": p, "skill_family": "fam", "model": "haiku", "condition": c,
                              "dormancy": False, "skill_activation": "skill_tool"}
                             for p in prompts for c in ("no-skill", "with-skill")])
    pairs = pd.DataFrame([{"run_key": "wk", "skill_family": "fam", "prompt": p, "model": "haiku", "rep": 1,
                           "winner_ab": "", "winner_ba": "", "outcome": "W", "judge_model": "j", "error": ""}
                          for p in prompts])
    return pairs, manifest


def test_the_gate_table_decides_each_small_record_as_decide_does() -> None:
    pairs, manifest = _week(6)
    for w, t, lo in [r for r in RECORDS if sum(r) <= 8]:
        row = preference_gate(pairs, manifest, transitions=_transitions(w, t, lo)).iloc[0]
        # only dormancy stimuli have checks at n = 0: the family has no objective record at all
        dec = decide(6, 0, 0, objective=_record(w, t, lo) if w + t + lo else None)
        assert (row["state"], row["reason"], row["evidence"]) == (dec.state, dec.reason, dec.evidence), (w, t, lo)
        if w + t + lo:
            assert row[["objective_n", "objective_wins", "objective_ties", "objective_losses"]].tolist() == [
                w + t + lo, w, t, lo]
        else:  # no record anywhere in the week: the table keeps its columns as they were
            assert "objective_n" not in row.index


def test_a_week_without_checks_keeps_the_gate_table_as_it_was() -> None:
    pairs, manifest = _week(6)
    for transitions in (None, pd.DataFrame()):
        plain = preference_gate(pairs, manifest, transitions=transitions)
        assert list(plain.columns) == ["skill_family", "model", "state", "reason", "verdict", "n", "wins", "ties",
                                       "losses", "p_value", "p_adjusted", "net_win", "judge_errors",
                                       "dormancy_activations", "evidence"]
        assert plain[["verdict", "evidence"]].values.tolist() == [
            [VALID_PASS, "n=6; 6W/0T/0L; p=0.0156; net +100.0%"]]


def test_a_family_without_checks_beside_one_with_checks() -> None:
    pairs, manifest = _week(6)
    other = pairs.assign(skill_family="fam-2")
    week = pd.concat([pairs, other]), pd.concat([manifest, manifest.assign(skill_family="fam-2")])
    gate = preference_gate(*week, transitions=_transitions(0, 1, 5)).set_index("skill_family")
    assert gate.at["fam", "verdict"] == "VALID_REGRESSION (objective_loss)"
    assert gate.at["fam-2", "verdict"] == VALID_PASS and gate.at["fam-2", "objective_n"] == 0
    assert "objective" not in gate.at["fam-2", "evidence"]
