"""Bootstrap intervals of agreement statistics, clustered by run: the judge study's one interval method.

The items of one answer are not independent (one answer is good or bad as a whole, and a judge that misreads it
misreads several items), so an interval that resamples items is too narrow. Every interval here resamples
**runs**: the data handed to ``scipy.stats.bootstrap`` are the run indices, and a statistic is computed from the
per-run counts summed over the resampled runs. Every agreement statistic of two binary raters is a function of the
four confusion cells (reference positive/negative × rater positive/negative), so the per-run data are one
``(n_runs, 4)`` array and a resample costs one indexed sum.

The method is BCa (bias-corrected and accelerated). BCa is degenerate when the jackknife or the bootstrap
distribution is constant, or when a resample's statistic is undefined (κ of a resample where every verdict is
the same): then the interval is the percentile interval of the finite resamples, and ``method`` says so
(``percentile``); ``degenerate`` when every resample gives the same value; ``n/a`` when there is nothing to
resample. A paired difference (:func:`paired_interval`) uses the same resampled runs for both raters, so what the
two have in common cancels.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

CONFUSION = ("true_positive", "false_positive", "false_negative", "true_negative")
BCA, PERCENTILE, DEGENERATE, NOT_AVAILABLE = "BCa", "percentile", "degenerate", "n/a"
Statistic = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Interval:
    """A point estimate and its bootstrap interval; ``method`` is how the interval was made."""

    estimate: float
    low: float
    high: float
    method: str

    def covers(self, value: float) -> bool:
        """``low ≤ value ≤ high`` (False when the interval is missing)."""
        return bool(np.isfinite(self.low) and np.isfinite(self.high) and self.low <= value <= self.high)


# -- statistics of summed confusion counts (last axis: the four cells of CONFUSION) ------------------------


def _cells(c: np.ndarray) -> tuple[np.ndarray, ...]:
    c = np.asarray(c, dtype=float)
    return c[..., 0], c[..., 1], c[..., 2], c[..., 3]


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1), np.nan)


def raw_agreement(c: np.ndarray) -> np.ndarray:
    """Share of units where rater and reference agree: ``(TP + TN) / n``."""
    tp, fp, fn, tn = _cells(c)
    return _div(tp + tn, tp + fp + fn + tn)


def kappa(c: np.ndarray) -> np.ndarray:
    """Cohen's κ of a 2 × 2 table, ``(p_o − p_e)/(1 − p_e)``; NaN when chance agreement is 1 (one verdict only)."""
    tp, fp, fn, tn = _cells(c)
    n = tp + fp + fn + tn
    p_o = _div(tp + tn, n)
    p_e = _div((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn), n * n)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isfinite(p_e) & (p_e < 1), (p_o - p_e) / np.where(p_e < 1, 1 - p_e, 1), np.nan)


def pabak_of_counts(c: np.ndarray) -> np.ndarray:
    """Prevalence- and bias-adjusted κ, ``2·p_o − 1``."""
    return 2 * raw_agreement(c) - 1


def false_met_rate(c: np.ndarray) -> np.ndarray:
    """Share of the reference's negatives the rater credits, ``FP / (FP + TN)`` (the costly error)."""
    _, fp, _, tn = _cells(c)
    return _div(fp, fp + tn)


def false_negative_rate(c: np.ndarray) -> np.ndarray:
    """Share of the reference's positives the rater does not give, ``FN / (FN + TP)`` (on avoid items: a missed
    violation)."""
    tp, _, fn, _ = _cells(c)
    return _div(fn, fn + tp)


def _cell(i: int) -> Statistic:
    return lambda c: np.asarray(c, dtype=float)[..., i]


STATISTICS: dict[str, Statistic] = {"raw_agreement": raw_agreement, "cohen_kappa": kappa, "pabak": pabak_of_counts,
                                    "false_met_rate": false_met_rate, "false_negative_rate": false_negative_rate,
                                    **{name: _cell(i) for i, name in enumerate(CONFUSION)}}


def ratio(c: np.ndarray) -> np.ndarray:
    """``c[..., 0] / c[..., 1]`` (e.g. unanimous items / items)."""
    c = np.asarray(c, dtype=float)
    return _div(c[..., 0], c[..., 1])


# -- per-run data ------------------------------------------------------------------------------------------


def confusion_by_run(units: pd.DataFrame, runs: Sequence[str], *, reference: str = "reference",
                     rater: str = "rater", cluster: str = "run_id") -> np.ndarray:
    """Per-run confusion counts of binary labels (1 positive, 0 negative), one row per run of ``runs``.

    Units with a missing label on either side are left out; a run without units is a row of zeros (it still
    counts as a resampled run, so two raters' arrays over the same ``runs`` stay aligned).

    Returns:
        An ``(len(runs), 4)`` integer array in :data:`CONFUSION` order.
    """
    ok = units[units[reference].notna() & units[rater].notna()]
    ref, got = ok[reference].astype(int), ok[rater].astype(int)
    cells = pd.DataFrame({cluster: ok[cluster].astype(str), "true_positive": (ref == 1) & (got == 1),
                          "false_positive": (ref == 0) & (got == 1), "false_negative": (ref == 1) & (got == 0),
                          "true_negative": (ref == 0) & (got == 0)})
    summed = cells.groupby(cluster)[list(CONFUSION)].sum()
    return summed.reindex([str(r) for r in runs], fill_value=0).to_numpy(dtype=int)


def unanimity_by_run(gradings: pd.DataFrame, runs: Sequence[str]) -> np.ndarray:
    """Per run: ``(items whose gradings are unanimous, items graded every time)`` from one judge's gradings
    (``run_id, item_index, sample, positive``); an ``(len(runs), 2)`` array for :func:`ratio`."""
    wide = gradings.pivot_table(index=["run_id", "item_index"], columns="sample", values="positive",
                                aggfunc="first").dropna()
    per = pd.DataFrame({"u": wide.nunique(axis=1).eq(1).astype(int), "n": 1}).groupby(level="run_id").sum()
    return per.reindex([str(r) for r in runs], fill_value=0).to_numpy(dtype=int)


def lenient_by_run(units: pd.DataFrame, runs: Sequence[str], *, reference: str = "reference",
                   rater: str = "positive") -> np.ndarray:
    """Per run: ``(favourable verdicts where the reference's is unfavourable, the reference's unfavourable
    verdicts)``; an ``(len(runs), 2)`` array for :func:`ratio`.

    Favourable is what a lenient judge gives: a must or bonus met, an avoid clean. Labels are binary positives
    (met/violated = 1), so on an avoid item the favourable verdict is the negative one.
    """
    avoid = units["item_type"].eq("avoid").astype(int)
    unfavourable = units[reference].astype(int).eq(avoid)  # must/bonus missing, avoid violated
    favoured = units[rater].astype(int).ne(avoid)  # must/bonus met, avoid clean
    per = pd.DataFrame({"run_id": units["run_id"].astype(str), "l": (unfavourable & favoured).astype(int),
                        "n": unfavourable.astype(int)}).groupby("run_id")[["l", "n"]].sum()
    return per.reindex([str(r) for r in runs], fill_value=0).to_numpy(dtype=int)


# -- intervals ---------------------------------------------------------------------------------------------


def _interval(per_run: np.ndarray, of_sum: Callable[[np.ndarray], np.ndarray], *, n_resamples: int, seed: int,
              confidence: float) -> Interval:
    """Bootstrap ``of_sum(sum of per_run over resampled runs)`` with the run indices as the data."""
    from scipy.stats import bootstrap

    data = np.asarray(per_run, dtype=float)
    n = len(data)
    estimate = float(of_sum(data.sum(axis=0))) if n else float("nan")
    if n < 2 or not np.isfinite(estimate):
        return Interval(estimate, float("nan"), float("nan"), NOT_AVAILABLE)

    def statistic(index: np.ndarray, axis: int = -1) -> np.ndarray:
        # scipy moves the resampled axis last; data[index] is (..., n, k), summed over the runs.
        return of_sum(data[np.asarray(index, dtype=int)].sum(axis=-2))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a degenerate BCa warns; the fallback below says what was done instead
        res = bootstrap((np.arange(n),), statistic, n_resamples=n_resamples, confidence_level=confidence,
                        method="BCa", vectorized=True, axis=-1, batch=500, random_state=np.random.default_rng(seed))
    low, high = (float(v) for v in res.confidence_interval)
    if np.isfinite(low) and np.isfinite(high):
        return Interval(estimate, low, high, BCA)
    dist = np.asarray(res.bootstrap_distribution, dtype=float)
    dist = dist[np.isfinite(dist)]
    if dist.size == 0:
        return Interval(estimate, float("nan"), float("nan"), NOT_AVAILABLE)
    if np.ptp(dist) == 0:
        return Interval(estimate, float(dist[0]), float(dist[0]), DEGENERATE)
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(dist, [tail, 100 - tail])
    return Interval(estimate, float(lo), float(hi), PERCENTILE)


def cluster_interval(per_run: np.ndarray, statistic: Statistic, *, n_resamples: int = 2000, seed: int = 0,
                     confidence: float = 0.95) -> Interval:
    """The statistic of the summed per-run counts, with its run-clustered bootstrap interval.

    Args:
        per_run: ``(n_runs, k)`` counts, one row per run (e.g. :func:`confusion_by_run`).
        statistic: a vectorised function of summed counts (last axis ``k``), e.g. :data:`STATISTICS` values.
        n_resamples: bootstrap resamples.
        seed: the resampling seed (fixed: the same study gives the same interval).
        confidence: the interval's level.
    """
    return _interval(per_run, statistic, n_resamples=n_resamples, seed=seed, confidence=confidence)


def paired_interval(per_run_a: np.ndarray, per_run_b: np.ndarray, statistic: Statistic, *,
                    n_resamples: int = 2000, seed: int = 0, confidence: float = 0.95) -> Interval:
    """``statistic(a) − statistic(b)`` over the same resampled runs (rows of both arrays are the same runs)."""
    a, b = np.asarray(per_run_a, dtype=float), np.asarray(per_run_b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired_interval: per-run arrays differ in shape ({a.shape} vs {b.shape})")
    k = a.shape[1] if a.ndim == 2 else 0
    both = np.concatenate([a, b], axis=1) if a.size else np.zeros((len(a), 2 * k))
    return _interval(both, lambda c: statistic(c[..., :k]) - statistic(c[..., k:]), n_resamples=n_resamples,
                     seed=seed, confidence=confidence)
