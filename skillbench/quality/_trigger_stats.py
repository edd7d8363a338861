"""The uncertainty of a measured triggering: F1's interval and the paired test of two descriptions.

**F1's interval** (:func:`f1_interval`). A triggering is measured on two strata of units — should-trigger and
should-not-trigger queries (or prompts, whose runs are summed) — whose sizes the design fixes. F1 is
``2·TP / (2·TP + FP + FN)`` of the summed counts.

* With at least :data:`BOOTSTRAP_FROM` units on each side, the interval is a **stratified bootstrap over the
  units** (``scipy.stats.bootstrap``, BCa, percentile when BCa is degenerate): each side's units are resampled
  within their side, so a resample keeps the design's numbers of should and should-not units, and a unit's runs
  stay together (the runs of one prompt are alike; resampling runs would narrow the interval).
* Below that, or when every resample gives the same F1 (a perfect score resamples to itself: a bootstrap cannot
  see beyond what was observed), the interval is **exact and conservative**: Clopper–Pearson intervals of the
  recall and of the false-trigger rate, each at level ``1 − (1 − level)/2`` so that both hold together with
  probability ≥ ``level`` (Bonferroni), mapped through F1 at the observed side sizes — F1 rises with recall and
  falls with the false-trigger rate, so its extremes over that box are the box's corners. It covers at least
  ``level`` (more, usually) and the page says "exact (conservative)". At 4 + 4 perfectly classified queries it
  reads 1.00 [0.33, 1.00]: a perfect score on so few queries is compatible with a poor detector.

In trigger-f1.csv the units of the exact path are runs (the counts are summed over a family's runs), which treats
the repetitions of one prompt as independent; the prompt-clustered bootstrap takes over once each side has
:data:`BOOTSTRAP_FROM` prompts.

**Two descriptions on the same test queries** (:func:`paired_test`): McNemar's exact test — each query either
description classified right or wrong; only the discordant queries (right for one, wrong for the other) carry
information, and under "no difference" each is equally likely to go either way, so the two-sided p is the
binomial test of the discordant split at ½ (``scipy.stats.binomtest``; the same value as statsmodels'
``mcnemar(exact=True)``). Its smallest possible p with ``d`` discordant queries is ``2 · 0.5^d``: 0.0625 at 5,
0.03125 at 6. Below :data:`MIN_TEST_QUERIES` = 6 queries measured by both, no difference can reach p ≤ 0.05
whatever the outcome, so no winner is called (:func:`winner_call`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from skillbench.scorecard import NOT_AVAILABLE, F1Interval, exact_f1_interval, f1_of_counts

BOOTSTRAP_FROM = 20  # units per side from which the stratified bootstrap is used (below: exact, conservative)
ALPHA = 0.05
MIN_TEST_QUERIES = 6  # 2 · 0.5^6 = 0.031 ≤ 0.05 < 0.0625 = 2 · 0.5^5: the fewest discordant queries that can win
BOOTSTRAP_BCA, BOOTSTRAP_PERCENTILE = "bootstrap BCa", "bootstrap percentile"
# what an F1 interval's method reads as on a page, in one sentence
F1_WORDS = (f"F1's 95 % interval: a bootstrap that resamples the should and the should-not units each within its "
            f"side when each side has ≥ {BOOTSTRAP_FROM}; below that (or when every resample agrees) exact and "
            f"conservative — the F1 at the corners of the Clopper–Pearson intervals of recall and false-trigger "
            f"rate (each at 97.5 %).")


def f1_interval(positives: np.ndarray, negatives: np.ndarray, *, level: float = 0.95, n_resamples: int = 2000,
                seed: int = 0) -> F1Interval:
    """F1 and its interval from per-unit counts (module docstring).

    Args:
        positives: ``(n_pos, 2)``: per should-trigger unit, ``(activations, runs)`` (a query: ``(0 or 1, 1)``).
        negatives: ``(n_neg, 2)``: per should-not unit, ``(activations, runs)``.
        level: the interval's level.
        n_resamples: bootstrap resamples (the bootstrap path only).
        seed: the resampling seed (fixed: the same counts give the same interval).
    """
    pos = np.asarray(positives, dtype=float).reshape(-1, 2)
    neg = np.asarray(negatives, dtype=float).reshape(-1, 2)
    tp, n_pos = (int(v) for v in pos.sum(axis=0))
    fp, n_neg = (int(v) for v in neg.sum(axis=0))
    exact = exact_f1_interval(tp, n_pos, fp, n_neg, level=level)
    if len(pos) < BOOTSTRAP_FROM or len(neg) < BOOTSTRAP_FROM or exact.method == NOT_AVAILABLE:
        return exact
    from scipy.stats import bootstrap

    def statistic(i: np.ndarray, j: np.ndarray, axis: int = -1) -> np.ndarray:
        p = pos[np.asarray(i, dtype=int)].sum(axis=-2)  # (..., 2): activations, runs
        q = neg[np.asarray(j, dtype=int)].sum(axis=-2)
        return f1_of_counts(p[..., 0], q[..., 0], p[..., 1] - p[..., 0])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a degenerate BCa warns; the fallbacks below say what was done instead
        res = bootstrap((np.arange(len(pos)), np.arange(len(neg))), statistic, n_resamples=n_resamples,
                        confidence_level=level, method="BCa", vectorized=True, paired=False, axis=-1,
                        random_state=np.random.default_rng(seed))
    dist = np.asarray(res.bootstrap_distribution, dtype=float)
    dist = dist[np.isfinite(dist)]
    if dist.size == 0 or np.ptp(dist) == 0:
        return exact
    low, high = (float(v) for v in res.confidence_interval)
    if np.isfinite(low) and np.isfinite(high):
        return F1Interval(exact.estimate, low, high, BOOTSTRAP_BCA)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(dist, [tail, 100 - tail])
    return F1Interval(exact.estimate, float(lo), float(hi), BOOTSTRAP_PERCENTILE)


@dataclass(frozen=True)
class PairedTest:
    """McNemar's exact test of two descriptions on the queries both were measured on.

    ``only_a``: queries ``a`` classified right and ``b`` wrong; ``only_b`` the reverse; ``n`` queries in common.
    """

    n: int
    only_a: int
    only_b: int
    p_value: float

    @property
    def discordant(self) -> int:
        return self.only_a + self.only_b

    def text(self) -> str:
        p = "n/a" if not np.isfinite(self.p_value) else f"{self.p_value:.3g}"
        return (f"{self.n} test queries measured by both; right for the candidate only: {self.only_b}, for the "
                f"original only: {self.only_a}; McNemar exact p = {p}")


def mcnemar_exact_p(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p: the binomial test of ``only_a`` of ``only_a + only_b`` at ½ (1 with none)."""
    from scipy.stats import binomtest

    d = int(only_a) + int(only_b)
    return 1.0 if d == 0 else float(binomtest(int(only_a), d, 0.5).pvalue)


def paired_test(correct_a: Mapping[str, bool], correct_b: Mapping[str, bool]) -> PairedTest:
    """McNemar's exact test of ``a`` against ``b`` on the query ids both classified (``query_id → right?``)."""
    common = sorted(set(correct_a) & set(correct_b))
    only_a = sum(bool(correct_a[q]) and not bool(correct_b[q]) for q in common)
    only_b = sum(bool(correct_b[q]) and not bool(correct_a[q]) for q in common)
    return PairedTest(len(common), only_a, only_b, mcnemar_exact_p(only_a, only_b))


def winner_call(test: PairedTest) -> tuple[bool, str]:
    """``(candidate b is called the winner, the one line that says why or why not)``."""
    if test.n < MIN_TEST_QUERIES:
        return False, (f"no winner called: {test.n} test queries measured by both, below the minimum of "
                       f"{MIN_TEST_QUERIES} — with fewer, McNemar's exact test cannot reach p ≤ {ALPHA:g} whatever "
                       f"the outcome (its smallest p is 2·0.5^d at d discordant queries: 0.0625 at 5)")
    if test.only_b > test.only_a and test.p_value <= ALPHA:
        return True, f"the candidate beats the original on test ({test.text()} ≤ {ALPHA:g})"
    return False, f"no winner called: the test difference is not significant ({test.text()}; needs ≤ {ALPHA:g})"


__all__ = ["BOOTSTRAP_FROM", "F1_WORDS", "MIN_TEST_QUERIES", "PairedTest", "f1_interval", "mcnemar_exact_p",
           "paired_test", "winner_call"]
