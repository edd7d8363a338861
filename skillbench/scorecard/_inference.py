"""The package's small-sample inference, in one place: intervals on rates and error control across many tests.

Every rate a page prints (a pass rate, a trigger recall or precision, an accumulated false-pass rate) carries an
interval from :func:`rate_interval`; every set of tests read together (a week's gate records, a week's per-prompt
movers) is corrected by :func:`adjust` with the rule its page names.

**Rate intervals.** Wilson's score interval (statsmodels' ``proportion_confint(method="wilson")``) has close to
nominal coverage from about 20 trials up; below :data:`EXACT_BELOW` trials, or on request, the interval is
Clopper–Pearson's exact one (``method="beta"``), which never covers less than its level (it covers *more*: it
is conservative, and the page says "exact" rather than claim a coverage it cannot have). A rate of 0 trials
has no interval (``NaN``).

**Error control.** ``holm``: Holm's step-down adjustment controls the family-wise error rate (the chance of *any*
false claim among the family) at α for any dependence between the tests; it is what a verdict that gates a
merge needs. ``bh``: Benjamini–Hochberg controls the false-discovery rate (the expected share of false claims
among the claims) — for exploratory lists such as movers, where a few false leads are acceptable and power
matters. Only finite p-values enter the family (a test not performed is no member); its adjusted p stays NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from skillbench.markdown import RATE_DIGITS, with_span

DEFAULT_LEVEL = 0.95
EXACT_BELOW = 20  # fewer trials than this: Clopper–Pearson (Wilson's coverage dips below nominal at small n)
WILSON, EXACT = "Wilson", "exact (Clopper–Pearson)"
HOLM, BH = "holm", "bh"
CONSERVATIVE, NOT_AVAILABLE = "exact (Clopper–Pearson), conservative", "n/a"  # how an F1 interval was made
# statsmodels' names for the two rules, and how a page names them
_STATSMODELS = {HOLM: "holm", BH: "fdr_bh"}
RULE_WORDS = {HOLM: "Holm (family-wise error ≤ 5 %)", BH: "Benjamini–Hochberg (false-discovery rate ≤ 5 %)"}


@dataclass(frozen=True)
class RateInterval:
    """``k`` of ``n``, the rate and its interval; ``method`` names how it was made (:data:`WILSON`/:data:`EXACT`)."""

    k: int
    n: int
    low: float
    high: float
    method: str

    @property
    def rate(self) -> float:
        return self.k / self.n if self.n else float("nan")

    def text(self, digits: int = RATE_DIGITS) -> str:
        """``0.620 [0.410, 0.790]``, or ``n/a`` without trials."""
        return with_span(f"{self.rate:.{digits}f}", self.low, self.high, digits) if self.n else "n/a"


def interval_method(n: int, exact: bool = False) -> str:
    """The method :func:`rate_interval` uses for ``n`` trials."""
    return EXACT if exact or n < EXACT_BELOW else WILSON


def rate_interval(k: int, n: int, *, level: float = DEFAULT_LEVEL, exact: bool = False) -> RateInterval:
    """The interval of the rate ``k/n``: Wilson, or Clopper–Pearson below :data:`EXACT_BELOW` trials or on request.

    Raises:
        ValueError: ``k`` outside ``0 … n``.
    """
    k, n = int(k), int(n)
    if n < 0 or not 0 <= k <= max(n, 0):
        raise ValueError(f"a rate needs 0 ≤ k ≤ n, got k={k}, n={n}")
    method = interval_method(n, exact)
    if n == 0:
        return RateInterval(0, 0, float("nan"), float("nan"), method)
    low, high = _confint(np.array([k]), np.array([n]), level, method)
    return RateInterval(k, n, float(low[0]), float(high[0]), method)


def rate_intervals(k: pd.Series | np.ndarray, n: pd.Series | np.ndarray, *, level: float = DEFAULT_LEVEL,
                   exact: bool = False) -> pd.DataFrame:
    """:func:`rate_interval` for many rates at once.

    Returns:
        ``rate, low, high, method`` (one row per element; a Series input keeps its index).
    """
    index = k.index if isinstance(k, pd.Series) else None
    ks, ns = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    methods = np.where(exact | (ns < EXACT_BELOW), EXACT, WILSON)
    low, high = np.full(ks.shape, np.nan), np.full(ks.shape, np.nan)
    for method in (WILSON, EXACT):
        at = (methods == method) & (ns > 0)
        if at.any():
            low[at], high[at] = _confint(ks[at], ns[at], level, method)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(ns > 0, ks / np.where(ns > 0, ns, 1), np.nan)
    return pd.DataFrame({"rate": rate, "low": low, "high": high, "method": methods}, index=index)


def _confint(k: np.ndarray, n: np.ndarray, level: float, method: str) -> tuple[np.ndarray, np.ndarray]:
    from statsmodels.stats.proportion import proportion_confint  # heavy import, only needed here

    low, high = proportion_confint(k, n, alpha=1 - level, method="wilson" if method == WILSON else "beta")
    # Clopper–Pearson's bound at k = 0 (or n) comes back NaN from the beta quantile: it is 0 (or 1) by definition
    low = np.where(k == 0, 0.0, np.asarray(low, dtype=float))
    high = np.where(k == n, 1.0, np.asarray(high, dtype=float))
    return low, high


@dataclass(frozen=True)
class F1Interval:
    """F1 of the summed counts, its interval, and how it was made (``method``)."""

    estimate: float
    low: float
    high: float
    method: str

    def text(self, digits: int = RATE_DIGITS) -> str:
        """``0.800 [0.410, 1.000]``; ``n/a`` when F1 is undefined."""
        if not np.isfinite(self.estimate):
            return "n/a"
        return with_span(f"{self.estimate:.{digits}f}", self.low, self.high, digits)


def f1_of_counts(tp: np.ndarray | float, fp: np.ndarray | float, fn: np.ndarray | float) -> np.ndarray:
    """``2·TP / (2·TP + FP + FN)`` (NaN when nothing was positive on either side), vectorised."""
    tp, fp, fn = (np.asarray(v, dtype=float) for v in (tp, fp, fn))
    den = 2 * tp + fp + fn
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, 2 * tp / np.where(den > 0, den, 1), np.nan)


def _f1_at(recall: float, false_rate: float, n_pos: int, n_neg: int) -> float:
    """F1 of the expected counts at a recall and a false-trigger rate with ``n_pos`` and ``n_neg`` units."""
    return float(f1_of_counts(n_pos * recall, n_neg * false_rate, n_pos * (1 - recall)))


def exact_f1_interval(tp: int, n_pos: int, fp: int, n_neg: int, *, level: float = 0.95) -> F1Interval:
    """F1's exact, conservative interval from counts: the Clopper–Pearson intervals of the recall (``tp`` of
    ``n_pos``) and of the false-trigger rate (``fp`` of ``n_neg``), each at ``1 − (1 − level)/2`` so both hold
    together with probability ≥ ``level`` (Bonferroni), mapped through F1 at the observed side sizes — F1 rises
    with recall and falls with the false-trigger rate, so its extremes over that box are the box's corners. It
    covers at least ``level``; ``n/a`` without units on a side. (:mod:`skillbench.quality._trigger_stats` uses it
    below its bootstrap's size.)"""
    estimate = float(f1_of_counts(tp, fp, n_pos - tp))
    if n_pos <= 0 or n_neg <= 0 or not np.isfinite(estimate):
        return F1Interval(estimate, float("nan"), float("nan"), NOT_AVAILABLE)
    each = 1 - (1 - level) / 2  # Bonferroni: recall's and false-trigger rate's intervals hold together at ≥ level
    recall = rate_interval(tp, n_pos, level=each, exact=True)
    false_rate = rate_interval(fp, n_neg, level=each, exact=True)
    low = _f1_at(recall.low, false_rate.high, n_pos, n_neg)
    high = _f1_at(recall.high, false_rate.low, n_pos, n_neg)
    return F1Interval(estimate, low if np.isfinite(low) else 0.0, high, CONSERVATIVE)


def adjust(p_values: pd.Series | np.ndarray | list[float], rule: str = HOLM) -> np.ndarray:
    """Adjusted p-values under ``rule`` (:data:`HOLM` or :data:`BH`) across the finite entries of ``p_values``.

    A NaN entry (no test) is not a member of the family and stays NaN; an empty or all-NaN input comes back as is.
    An adjusted p is compared with the same α as a raw one.
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    tested = np.isfinite(p)
    if not tested.any():
        return out
    if rule == HOLM:
        # Holm's step-down by hand: statsmodels' multipletests runs gc.collect() on every Holm call (~50 ms with a
        # large heap), which a scorecard pays per gate and a benchmark per simulated week. The cases in
        # tests/data/inference_cases.json hold both to the same values.
        members = p[tested]
        order = np.argsort(members, kind="stable")
        scaled = members[order] * np.arange(len(members), 0, -1)
        adjusted = np.empty_like(members)
        adjusted[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
        out[tested] = adjusted
        return out
    from statsmodels.stats.multitest import multipletests

    out[tested] = multipletests(p[tested], method=_STATSMODELS[rule])[1]
    return out


def family_words(members: int, rule: str = HOLM, what: str = "records") -> str:
    """How a page says which tests are corrected together: ``Holm (…) across the 14 records with a test``."""
    noun = what[:-1] if members == 1 and what.endswith("s") else what
    return f"{RULE_WORDS[rule]} across the {members} {noun} with a test"
