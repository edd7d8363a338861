"""The week-over-week noise band: one rule, and the three places that use it agree with it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from skillbench.report.figures import trend_bands
from skillbench.scorecard import _history as hist, _noise as noise

Z = stats.norm.ppf(0.975)
CASES = json.loads((Path(__file__).parents[1] / "data" / "week_delta_cases.json").read_text(encoding="utf-8"))


def _check(got: noise.WeekDelta, expected: dict) -> None:
    for name, value in expected.items():
        actual = getattr(got, name)
        if value is None:
            assert math.isnan(actual), name
        elif isinstance(value, str):
            assert actual == value, name
        else:
            assert actual == pytest.approx(value, abs=1e-6), name


@pytest.mark.parametrize("case", CASES["paired"], ids=lambda c: c["name"])
def test_paired_week_delta_matches_the_hand_arithmetic(case):
    got = noise.paired_week_delta(pd.Series(case["now"]), pd.Series(case["prev"]), prior_lifts=case["prior_lifts"])
    _check(got, case["expected"])
    assert got.rule == noise.PAIRED


@pytest.mark.parametrize("case", CASES["unpaired"], ids=lambda c: c["name"])
def test_unpaired_week_delta_matches_the_hand_arithmetic(case):
    got = noise.unpaired_week_delta(tuple(case["now"]), tuple(case["prev"]), case["n_pairs"],
                                    prior_lifts=case["prior_lifts"])
    _check(got, case["expected"])
    assert got.rule == noise.UNPAIRED


@pytest.mark.parametrize("case", CASES["between_noise"], ids=lambda c: str(c["lifts"]))
def test_between_noise_is_the_sample_sd_of_at_least_two_earlier_lifts(case):
    got = noise.between_noise([np.nan if v is None else v for v in case["lifts"]])
    assert math.isnan(got) if case["expected"] is None else got == pytest.approx(case["expected"], abs=1e-6)


def test_pairing_removes_the_prompts_own_spread():
    """The same prompts both weeks, with very different lifts, each up by about 0.10: the paired rule sees the move,
    the unpaired one (which counts the prompts' spread twice) does not."""
    prev = pd.Series([-0.4, -0.2, 0.0, 0.2, 0.4, 0.6, -0.3, 0.1], index=[f"p{i}" for i in range(8)])
    now = prev + np.array([0.12, 0.08, 0.10, 0.11, 0.09, 0.10, 0.12, 0.08])
    paired = noise.paired_week_delta(now, prev)
    se = prev.std(ddof=1) / math.sqrt(len(prev))
    unpaired = noise.unpaired_week_delta((now.mean(), now.std(ddof=1) / math.sqrt(8)), (prev.mean(), se), 8)
    assert paired.delta == pytest.approx(unpaired.delta) == pytest.approx(0.10)
    assert (paired.verdict, unpaired.verdict) == (noise.MOVED, noise.WITHIN_NOISE)


def test_within_noise_is_t_times_the_combined_se():
    assert noise.within_noise(0.03, 0.04, 9) == pytest.approx(stats.t.ppf(0.975, 9) * 0.05)
    assert noise.within_noise(0.03, 0.04, np.inf) == pytest.approx(Z * 0.05)
    assert math.isnan(noise.within_noise(0.03, 0.04, 0)), "no degrees of freedom, no t"


@pytest.mark.parametrize(("within", "between", "expected"), [
    (0.1, 0.2, 0.2), (0.3, 0.2, 0.3), (0.1, math.nan, 0.1), (math.nan, 0.2, 0.2), (math.nan, math.nan, math.nan),
    # a band of no width is no known noise (issue 32: a threshold of 0 called every move of a prompt a mover)
    (0.0, math.nan, math.nan), (math.nan, 0.0, math.nan), (0.0, 0.2, 0.2), (0.1, 0.0, 0.1), (0.0, 0.0, math.nan),
])
def test_threshold_is_the_larger_known_noise(within, between, expected):
    got = noise.threshold(within, between)
    assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected)


@pytest.mark.parametrize(("delta", "limit", "verdict"), [
    (0.25, 0.2, "yes"), (-0.25, 0.2, "yes"), (0.15, 0.2, "no (within noise)"), (0.2, 0.2, "no (within noise)"),
    (math.nan, 0.2, "n/a"), (0.3, math.nan, "n/a"),
])
def test_moved(delta, limit, verdict):
    assert noise.moved(delta, limit) == verdict


def test_a_prompts_between_week_sigma_is_floored_at_its_models_pooled_sigma():
    """σ pooled with the degrees of freedom as weights, per model: a σ of 0 (identical earlier lifts) and a σ below
    the pool are raised to it, a larger one is kept, an unknown one stays unknown, and models do not mix."""
    idx = pd.MultiIndex.from_tuples([("m", "p1"), ("m", "p2"), ("m", "p3"), ("m", "p4"), ("n", "p1")],
                                    names=["model", "prompt"])
    sigma = pd.Series([0.3, 0.0, 0.1, math.nan, 0.0], idx)
    dof = pd.Series([2, 1, 3, 0, 2], idx)
    pooled_m = math.sqrt((2 * 0.09 + 1 * 0.0 + 3 * 0.01) / 6)  # 0.187
    got = noise.floored_between_noise(sigma, dof, "model")
    assert got[("m", "p1")] == pytest.approx(0.3)
    assert got[("m", "p2")] == pytest.approx(pooled_m) and got[("m", "p3")] == pytest.approx(pooled_m)
    assert math.isnan(got[("m", "p4")])
    assert got[("n", "p1")] == 0.0  # every lift of the model alike: the pool is 0 too, and threshold() tests nothing
    assert math.isnan(noise.threshold(math.nan, got[("n", "p1")]))


def test_series_in_series_out_with_the_index_kept():
    idx = pd.Index(["p1", "p2"], name="prompt")
    within = noise.within_noise(pd.Series([0.03, 0.3], idx), pd.Series([0.04, 0.4], idx), pd.Series([9, 0], idx))
    assert list(within.index) == ["p1", "p2"] and math.isnan(within["p2"])
    assert list(noise.moved(pd.Series([0.5, 0.1], idx), within)) == ["yes", "n/a"]


def _history(lifts, ses, endpoint="real"):
    return pd.DataFrame({"run_key": [f"w{i}" for i in range(len(lifts))], "model": "sonnet",
                         "window_end": [f"2026010{i}T000000Z" for i in range(len(lifts))],
                         "must_lift": lifts, "must_lift_se": ses, "endpoint": endpoint})


def test_trend_band_has_the_rules_exact_width_on_a_hand_made_history():
    lifts, ses = [0.10, 0.30, 0.20, 0.50], [0.05, 0.04, 0.03, 0.02]
    bands = trend_bands(_history(lifts, ses)).set_index("run_key")
    assert math.isnan(bands.loc["w0", "band_low"]), "the first week has no previous week"
    # w1: only within-week noise (one earlier lift): z·√(0.04² + 0.05²) around the previous lift 0.10
    half = Z * math.hypot(0.04, 0.05)
    assert bands.loc["w1", "band_high"] - bands.loc["w1", "band_low"] == pytest.approx(2 * half)
    assert (bands.loc["w1", "band_low"] + bands.loc["w1", "band_high"]) / 2 == pytest.approx(0.10)
    # w2: between = z·√2·SD(0.10, 0.30; ddof 1) = z·0.2 beats within = z·√(0.03² + 0.04²) = z·0.05
    assert bands.loc["w2", "band_high"] - bands.loc["w2", "band_low"] == pytest.approx(2 * Z * 0.2)
    # w3: within = z·√(0.02² + 0.03²) < between = z·√2·SD(0.1, 0.3, 0.2; ddof 1) = z·√2·0.1
    assert bands.loc["w3", "band_high"] - 0.20 == pytest.approx(Z * math.sqrt(2) * 0.1)


def test_week_over_week_uses_the_same_rule():
    history = hist.upsert(hist.empty_history(), pd.concat([
        hist.history_rows(f"w{i}", f"2026010{i}T000000Z", pd.DataFrame(
            {"model": ["sonnet"], "must_lift": [lift], "must_lift_se": [se], "composite_lift": [0.0],
             "cost_delta": [0.0], "turns_delta": [0.0]}), "real")
        for i, (lift, se) in enumerate(zip([0.1, 0.3, 0.2, 0.6], [0.05, 0.04, 0.03, 0.02], strict=True))]))
    lift = pd.DataFrame({"model": ["sonnet"], "must_lift": [0.6], "must_lift_se": [0.02], "n_pairs": [12]})
    wow = hist.week_over_week(history, "w3", lift, "real")
    row = wow.table.iloc[0]
    assert wow.ready and wow.previous == "w2"
    assert row["within"] == pytest.approx(noise.within_noise(0.02, 0.03, 11))
    assert row["between"] == pytest.approx(stats.t.ppf(0.975, 11) * math.sqrt(2) * np.std([0.1, 0.3, 0.2], ddof=1))
    assert row["threshold"] == pytest.approx(max(row["within"], row["between"]))
    assert row["actionable"] == "yes", "0.2 → 0.6 is beyond either noise (between = t(11)·√2·0.1 = 0.31)"


def test_one_t_multiplier_for_every_caller() -> None:
    """``stats.t_critical`` is the t multiplier of the lift's interval, the noise band and the drift sentinel:
    table values (two-sided 95 %), the normal quantile at df = ∞, NaN below one degree of freedom, array in →
    array out."""
    from skillbench.scorecard import t_critical

    assert t_critical(1) == pytest.approx(12.7062, abs=1e-4)
    assert t_critical(5) == pytest.approx(2.5706, abs=1e-4)
    assert t_critical(np.inf) == pytest.approx(1.95996, abs=1e-5)
    assert np.isnan(t_critical(0))
    assert isinstance(t_critical(5), float)
    np.testing.assert_allclose(t_critical(np.array([0.0, 5.0, np.inf])), [np.nan, 2.570582, 1.959964], atol=1e-6)
    assert noise.within_noise(0.3, 0.4, 5) == pytest.approx(t_critical(5) * 0.5)
