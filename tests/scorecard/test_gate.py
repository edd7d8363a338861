"""The paired preference gate: exhaustive W/T/L boundaries, vote collapsing and the dormancy contract."""

from __future__ import annotations

import pandas as pd
import pytest

from skillbench.scorecard import collapse_votes, decide, preference_gate
from skillbench.scorecard._verdicts import ALPHA, NET_WIN_FLOOR, sign_test_p
from skillbench.vocab import INVALID_INCONCLUSIVE, VALID_NO_CHANGE, VALID_PASS

RECORDS = [(w, t, n - w - t) for n in range(5, 31) for w in range(n + 1) for t in range(n - w + 1)]


def _sign_test_passes(w: int, losses: int) -> bool:
    return sign_test_p(w, losses) <= ALPHA and w > losses


def test_every_record_is_decided_consistently() -> None:
    for w, t, lo in RECORDS:
        dec = decide(w, t, lo)
        n = w + t + lo
        floor_ok = (w - lo) / n >= NET_WIN_FLOOR
        assert (dec.state == VALID_PASS) == (_sign_test_passes(w, lo) and floor_ok), (w, t, lo)
        if dec.state != VALID_PASS:
            assert dec.state == VALID_NO_CHANGE, (w, t, lo)


def test_net_win_floor_never_blocks_a_sign_test_pass_below_26_stimuli() -> None:
    blocked = [(w, t, lo) for w, t, lo in RECORDS
               if _sign_test_passes(w, lo) and decide(w, t, lo).reason == "net_win_below_floor"]
    assert blocked, "the floor must bite somewhere in 5..30"
    assert min(w + t + lo for w, t, lo in blocked) == 26
    assert [r for r in blocked if sum(r) == 26] == [(5, 21, 0)]
    for w, t, lo in RECORDS:
        if w + t + lo < 26 and _sign_test_passes(w, lo):
            assert decide(w, t, lo).state == VALID_PASS, (w, t, lo)


def test_named_boundaries() -> None:
    assert decide(5, 20, 0).state == VALID_PASS
    first = decide(5, 21, 0)
    assert (first.state, first.reason) == (VALID_NO_CHANGE, "net_win_below_floor")
    far = decide(5, 95, 0)
    assert (far.state, far.reason) == (VALID_NO_CHANGE, "net_win_below_floor")
    assert far.p_value == pytest.approx(0.03125)
    small = decide(4, 0, 0)
    assert (small.state, small.reason) == (INVALID_INCONCLUSIVE, "underpowered")
    assert decide(4, 1, 0).reason == "not_significant"
    assert decide(5, 0, 0).state == VALID_PASS


def test_evidence_line() -> None:
    assert decide(4, 1, 0).evidence == "n=5; 4W/1T/0L; p=0.0625; net +80.0%"
    assert decide(4, 1, 0).verdict == "VALID_NO_CHANGE (not_significant)"
    assert decide(5, 0, 0).verdict == "VALID_PASS"


def test_invalid_states_come_first() -> None:
    assert decide(9, 0, 0, reconciliation_complete=False).reason == "incomplete_reconciliation"
    assert decide(9, 0, 0, judge_errors=1).reason == "judge_errors"
    assert decide(9, 0, 0, judge_errors=1).state == INVALID_INCONCLUSIVE
    contract = decide(9, 0, 0, dormancy_activations=1)
    assert (contract.state, contract.reason) == (VALID_NO_CHANGE, "activation_contract_failed")


def _pairs(votes: dict[str, list[str]], family: str = "fam", model: str = "haiku", error: dict | None = None
           ) -> pd.DataFrame:
    rows = []
    for prompt, outcomes in votes.items():
        for rep, outcome in enumerate(outcomes, start=1):
            err = (error or {}).get((prompt, rep), "")
            rows.append({"run_key": "wk", "skill_family": family, "prompt": prompt, "model": model, "rep": rep,
                         "winner_ab": "", "winner_ba": "", "outcome": "" if err else outcome, "judge_model": "j",
                         "error": err})
    return pd.DataFrame(rows)


def test_votes_collapse_to_the_majority_direction() -> None:
    votes = collapse_votes(_pairs({"even": ["W", "L"], "win": ["W", "W", "L"], "lean": ["W", "T"],
                                   "ties": ["T", "T"], "loss": ["L", "L", "W"]}))
    assert dict(zip(votes["prompt"], votes["vote"], strict=True)) == {
        "even": "T", "win": "W", "lean": "W", "ties": "T", "loss": "L"}


def _manifest(prompts: dict[str, bool], activation: str = "none", family: str = "fam",
              model: str = "haiku") -> pd.DataFrame:
    rows = []
    for prompt, dormancy in prompts.items():
        for condition in (["with-skill", "plugin"] if dormancy else ["no-skill", "with-skill"]):
            rows.append({"prompt": prompt, "skill_family": family, "model": model, "condition": condition,
                         "dormancy": dormancy, "skill_activation": activation if dormancy else "skill_tool"})
    return pd.DataFrame(rows)


def test_gate_on_pairs_and_manifest() -> None:
    prompts = {f"p{i}": False for i in range(6)}
    pairs = _pairs({p: ["W", "W"] for p in prompts})
    ok = preference_gate(pairs, _manifest({**prompts, "quiet": True}))
    assert ok[["state", "n", "wins"]].values.tolist() == [[VALID_PASS, 6, 6]]
    assert ok["evidence"].iloc[0] == "n=6; 6W/0T/0L; p=0.0156; net +100.0%"

    fired = preference_gate(pairs, _manifest({**prompts, "quiet": True}, activation="skill_tool"))
    assert fired["verdict"].iloc[0] == "VALID_NO_CHANGE (activation_contract_failed)"
    # the verdict names its cause (issue 32): which dormancy prompt the skill fired on, in how many of its runs
    assert fired["evidence"].iloc[0] == "n=6; 6W/0T/0L; p=0.0156; net +100.0%; activated on quiet in 2/2 runs"

    broken = _pairs({p: ["W", "W"] for p in prompts}, error={("p0", 1): "timeout after retries"})
    assert preference_gate(broken, _manifest(prompts))["verdict"].iloc[0] == "INVALID_INCONCLUSIVE (judge_errors)"

    partial = preference_gate(pairs, _manifest(prompts), reconciliation_complete=False)
    assert partial["verdict"].iloc[0] == "INVALID_INCONCLUSIVE (incomplete_reconciliation)"

    few = preference_gate(_pairs({"p0": ["W"], "p1": ["W"]}), _manifest(prompts))
    assert few["verdict"].iloc[0] == "INVALID_INCONCLUSIVE (underpowered)"


def test_dormancy_prompts_never_vote() -> None:
    prompts = {f"p{i}": False for i in range(5)}
    pairs = _pairs({**{p: ["W"] for p in prompts}, "quiet": ["L"]})
    gate = preference_gate(pairs, _manifest({**prompts, "quiet": True}))
    assert gate[["n", "wins", "losses"]].values.tolist() == [[5, 5, 0]]


def test_a_family_with_only_dormancy_prompts_still_has_a_record() -> None:
    """dotnet's migrate-dotnet8-to-dotnet9 has 12 dormancy stimuli and no preference-eligible one: it can never
    vote, and its record says so (or that its contract failed) instead of missing from the verdicts."""
    sound = {f"p{i}": False for i in range(6)}
    manifest = pd.concat([_manifest(sound), _manifest({"d1": True, "d2": True}, family="dormant")])
    gate = preference_gate(_pairs({p: ["W"] for p in sound}), manifest).set_index("skill_family")
    assert gate.loc["dormant", "verdict"] == "INVALID_INCONCLUSIVE (underpowered)" and gate.loc["dormant", "n"] == 0
    fired = pd.concat([_manifest(sound), _manifest({"d1": True}, activation="skill_tool", family="dormant")])
    gate = preference_gate(_pairs({p: ["W"] for p in sound}), fired).set_index("skill_family")
    assert gate.loc["dormant", "verdict"] == "VALID_NO_CHANGE (activation_contract_failed)"
