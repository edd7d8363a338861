"""The week-over-week noise band: when has a lift moved by more than noise? One rule for every caller.

For a lift that was ``prev`` last week and ``now`` this week (a model's headline lift, or one prompt's lift):

* **within-week noise** ``t·√(SE_now² + SE_prev²)``, with ``t`` the two-sided quantile at ``df`` degrees of
  freedom (:func:`skillbench.scorecard._stats.t_critical`; ``df = ∞`` gives the normal quantile, for a history
  that does not keep each week's n);
* **between-week noise** the population SD of the lifts of the weeks *before* this one (needs two);
* **threshold** the larger of the two that is known; a move ``|now − prev|`` beyond it is actionable.

Used by the scorecard's week-over-week table (:func:`skillbench.scorecard._history.week_over_week`), the
per-prompt movers of ``explore_weeks`` (:func:`skillbench.weekly.prompt_movers`) and the trend figure's
don't-act band (:func:`skillbench.report.figures.trend_bands`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from skillbench.scorecard._stats import DEFAULT_CONFIDENCE, t_critical

MOVED, WITHIN_NOISE, NOT_KNOWN = "yes", "no (within noise)", "n/a"
ArrayLike = float | np.ndarray | pd.Series


def within_noise(se_now: ArrayLike, se_prev: ArrayLike, df: ArrayLike,
                 confidence: float = DEFAULT_CONFIDENCE) -> ArrayLike:
    """``t·√(SE_now² + SE_prev²)``."""
    return _like(se_now, np.asarray(t_critical(df, confidence)) * np.hypot(np.asarray(se_now, dtype=float),
                                                                             np.asarray(se_prev, dtype=float)))


def between_noise(prior_lifts: Sequence[float] | np.ndarray) -> float:
    """Population SD of the earlier weeks' lifts; ``NaN`` with fewer than two (missing lifts are ignored)."""
    values = np.asarray(prior_lifts, dtype=float)
    values = values[np.isfinite(values)]
    return float(np.std(values, ddof=0)) if values.size >= 2 else float("nan")


def threshold(within: ArrayLike, between: ArrayLike) -> ArrayLike:
    """The larger of the known noises; ``NaN`` when neither is known."""
    w, b = np.asarray(within, dtype=float), np.asarray(between, dtype=float)
    out = np.where(np.isnan(w), b, np.where(np.isnan(b), w, np.maximum(w, b)))
    return _like(within, out)


def moved(delta: ArrayLike, limit: ArrayLike) -> ArrayLike:
    """``yes`` when ``|delta|`` exceeds the threshold, ``no (within noise)`` when not, ``n/a`` when unknown."""
    d, t = np.asarray(delta, dtype=float), np.asarray(limit, dtype=float)
    out = np.where(~(np.isfinite(d) & np.isfinite(t)), NOT_KNOWN, np.where(np.abs(d) > t, MOVED, WITHIN_NOISE))
    return _like(delta, out)


def _like(template: ArrayLike, values: np.ndarray) -> ArrayLike:
    """``values`` shaped like ``template``: a Series keeps its index, a scalar stays a scalar."""
    if isinstance(template, pd.Series):
        return pd.Series(values, index=template.index)
    if np.ndim(template) == 0:
        item = np.asarray(values).item()
        return item if isinstance(item, str) else float(item)
    return np.asarray(values)
