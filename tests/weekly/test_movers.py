"""The per-prompt movers of ``explore_weeks``: each move's p-value against the noise band, Benjamini–Hochberg
across the week's moves (hand-made weeks: no ledger is read)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skillbench import weekly
from skillbench.weekly import Weeks

CASES = json.loads((Path(__file__).parents[1] / "data" / "movers_bh_cases.json").read_text(encoding="utf-8"))


def _weeks(moves: dict[str, float], se: float) -> Weeks:
    """Two weeks: every prompt's lift 0 last week, ``moves[prompt]`` this week; this week's rep noise ``se``, last
    week's none, infinite degrees of freedom (so the band is z·se and the p-value a normal tail)."""
    prev = pd.DataFrame({"model": "m", "prompt": list(moves), "skill": "s", "d": 0.0, "se": 0.0, "df": np.inf,
                         "run_key": "w1"})
    now = prev.assign(d=list(moves.values()), se=se, run_key="w2")
    empty = pd.DataFrame()
    return Weeks(keys=["w1", "w2"], runs=empty, prompts=empty, paired=pd.concat([prev, now], ignore_index=True),
                 history=empty)


@pytest.mark.parametrize("case", CASES["cases"], ids=lambda c: c["name"])
def test_movers_are_corrected_by_benjamini_hochberg(case) -> None:
    movers = weekly.prompt_movers(_weeks(case["moves"], case["se"])).set_index("prompt")
    for column in ("p_value", "p_adjusted"):
        expected = pd.Series(case["expected"][column])
        np.testing.assert_allclose(movers.loc[expected.index, column], expected, atol=1e-6, err_msg=column)
    assert movers["moved"].to_dict() == case["expected"]["moved"]
    # Uncorrected, a raw p below 0.05 is exactly a move beyond the band.
    assert ((movers["p_value"] < 0.05) == (movers["delta"].abs() > movers["threshold"])).all()
    assert weekly.movers_correction(movers) == ("Benjamini–Hochberg (false-discovery rate ≤ 5 %) across the 6 "
                                                "prompt × model moves with a test: `moved = yes` when the adjusted "
                                                "p ≤ 0.05. Of the 2 flagged, at most 0.1 are expected to be noise "
                                                "on average (5%).")


def test_a_move_without_a_noise_band_is_not_tested() -> None:
    """No rep noise in either week and no earlier weeks: no band, no p-value, not a member of the family."""
    movers = weekly.prompt_movers(_weeks({"p1": 0.5, "p2": 0.3}, 0.0))
    assert movers["p_value"].isna().all() and movers["moved"].eq("n/a").all()
    assert weekly.movers_correction(movers) == "No prompt move has a known noise band, so none is tested."


def test_one_rep_weeks_are_read_against_the_prompts_earlier_weeks() -> None:
    """One rep per arm: no rep noise (se and df unknown), so the band is the between-week one, t at k − 1 degrees of
    freedom (σ from the prompt's k earlier weeks), and the p-value reads that band (issue 32's over-flagged movers:
    a one-rep week used to have no band or a threshold of 0). A prompt whose earlier lifts were all equal (σ = 0)
    is read against its model's pooled σ, never against a band of no width."""
    from scipy import stats

    lifts = {"p1": [0.0, 0.05, 0.1, 1.0], "p2": [0.5, 0.5, 0.5, 0.6]}  # p2: σ = 0 on its own
    frames = [pd.DataFrame({"model": "m", "prompt": list(lifts), "skill": "s", "d": [v[w] for v in lifts.values()],
                            "se": np.nan, "df": np.nan, "run_key": f"w{w + 1}"}) for w in range(4)]
    empty = pd.DataFrame()
    weeks = Weeks(keys=["w1", "w2", "w3", "w4"], runs=empty, prompts=empty,
                  paired=pd.concat(frames, ignore_index=True), history=empty)
    movers = weekly.prompt_movers(weeks).set_index("prompt")
    sigma = np.std([0.0, 0.05, 0.1], ddof=1)  # 0.05, from three earlier weeks: df 2
    t2 = stats.t.ppf(0.975, 2)
    assert movers.at["p1", "between"] == pytest.approx(t2 * sigma * np.sqrt(2))
    assert movers.at["p1", "p_value"] == pytest.approx(2 * stats.t.sf(0.9 / (sigma * np.sqrt(2)), 2))
    assert movers.at["p1", "p_adjusted"] <= 0.05 and movers.at["p1", "moved"] == "yes"
    pooled = np.sqrt((2 * sigma ** 2 + 2 * 0.0) / 4)  # p2's floor: the model's σ pooled over its prompts
    assert movers.at["p2", "between"] == pytest.approx(t2 * pooled * np.sqrt(2))
    assert (movers["threshold"] > 0).all()
    assert movers.at["p2", "p_value"] == pytest.approx(2 * stats.t.sf(0.1 / (pooled * np.sqrt(2)), 2))
    assert movers.at["p2", "moved"] == "no (within noise)"
    line = weekly.movers_correction(movers.reset_index())
    assert "across the 2 prompt × model moves with a test" in line
    assert "Of the 1 flagged, at most 0.1 are expected to be noise on average (5%)." in line
    assert "No within-week noise is known (one rep per arm)" in line
