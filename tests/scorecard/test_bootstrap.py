"""The lift's bootstrap CI is scipy's BCa interval, resampling prompts; its degenerate cases answer, never crash.

The pinned numbers of a fixed vector live in ``tests/data/scoring_cases/bca_interval.json`` (through the ledger
readers); here the same interval is held against ``scipy.stats.bootstrap`` called directly. Coverage is measured
in ``benchmarks/validity.py``, not here (no timed or Monte Carlo unit tests).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from skillbench.scorecard import bootstrap_lift, uncertainty_table
from skillbench.scorecard._stats import DEFAULT_SEED, bootstrap_ci, bootstrap_intervals

FIXED = np.array([1.0, 0.25, 0.0, 0.25, -0.25, 0.75])  # the scoring case's d, skewed to the right


def _scipy(values: np.ndarray, seed: int | np.random.Generator, method: str = "BCa",
           n_resamples: int = 10_000) -> tuple[float, float]:
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    res = sps.bootstrap((values,), np.mean, n_resamples=n_resamples, method=method, vectorized=True, rng=rng)
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def test_the_interval_is_scipys_bca_on_the_prompts() -> None:
    ours = bootstrap_ci(FIXED, rng=DEFAULT_SEED)
    assert ours == pytest.approx(_scipy(FIXED, DEFAULT_SEED), abs=1e-12)
    assert ours == pytest.approx((1 / 24, 17 / 24), abs=1e-9)  # the values pinned in bca_interval.json
    # Not the percentile interval of the same resamples: BCa moves toward the long right tail.
    percentile = _scipy(FIXED, DEFAULT_SEED, "percentile")
    assert percentile == pytest.approx((0.0, 2 / 3), abs=1e-9)
    assert ours[0] > percentile[0] and ours[1] > percentile[1]


def test_models_share_one_generator_in_sorted_order() -> None:
    rng = np.random.default_rng(3)
    paired = pd.DataFrame({"model": ["sonnet"] * 26 + ["haiku"] * 26, "prompt": [f"p{i:02d}" for i in range(26)] * 2,
                           "d": np.r_[rng.beta(2, 5, 26), rng.beta(5, 2, 26) - 0.5]})
    got = bootstrap_lift(paired, n_resamples=4_000, seed=11).set_index("model")
    shared = np.random.default_rng(11)
    for model in ("haiku", "sonnet"):  # sorted: haiku draws first
        d = paired.loc[paired["model"] == model].sort_values("prompt")["d"].to_numpy()
        want = _scipy(d, shared, n_resamples=4_000)
        assert (got.at[model, "boot_low"], got.at[model, "boot_high"]) == pytest.approx(want, abs=1e-12)


def test_a_batch_of_weeks_is_the_same_interval_row_by_row() -> None:
    rng = np.random.default_rng(5)
    weeks = rng.choice(FIXED, size=(40, 10))
    weeks[7] = 0.25  # a flat week in the batch: zero width, and it must not disturb the others
    low, high = bootstrap_intervals(weeks, n_resamples=2_000, rng=9)
    assert (low[7], high[7]) == (0.25, 0.25)
    others = np.delete(weeks, 7, axis=0)
    res = sps.bootstrap((others,), np.mean, n_resamples=2_000, method="BCa", vectorized=True, axis=-1,
                        rng=np.random.default_rng(9))
    np.testing.assert_allclose(np.delete(low, 7), res.confidence_interval.low, atol=1e-12)
    np.testing.assert_allclose(np.delete(high, 7), res.confidence_interval.high, atol=1e-12)
    assert low.shape == high.shape == (40,)


@pytest.mark.parametrize(("values", "n_resamples", "expected"), [
    ([], 10_000, (np.nan, np.nan)),  # no prompt in both arms
    ([0.4], 10_000, (np.nan, np.nan)),
    ([0.1, 0.9], 10_000, (np.nan, np.nan)),  # below three prompts: no BCa (jackknife/bias not estimable)
    ([0.5, 0.5, 0.5], 10_000, (0.5, 0.5)),  # every dᵢ equal: every resample's mean is 0.5
    ([-1.0] * 26, 10_000, (-1.0, -1.0)),
    (FIXED.tolist(), 1, (np.nan, np.nan)),  # one resample: z₀ is infinite, no bound is computable
])
def test_degenerate_cases_answer_without_a_warning(values: list[float], n_resamples: int,
                                                  expected: tuple[float, float]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scipy's DegenerateDataWarning and numpy's RuntimeWarning included
        got = bootstrap_ci(np.array(values), n_resamples=n_resamples, rng=1)
    np.testing.assert_array_equal(got, expected)


def test_few_resamples_still_give_an_interval_around_the_lift() -> None:
    low, high = bootstrap_ci(FIXED, n_resamples=50, rng=2)  # what `scorecard --bootstrap 50` asks for
    assert np.isfinite(low) and low < FIXED.mean() < high


def test_the_uncertainty_frame_keeps_its_columns() -> None:
    paired = pd.DataFrame({"model": ["m"] * 2 + ["n"] * 6, "prompt": ["a", "b"] + list("abcdef"),
                           "d": [0.1, 0.2, *FIXED]})
    table = uncertainty_table(paired)
    assert list(table.columns) == ["model", "n_pairs", "paired_lift", "boot_low", "boot_high", "sd_d", "mde",
                                   "detectable", "n_resamples", "seed", "power"]
    assert table["boot_low"].isna().tolist() == [True, False]
