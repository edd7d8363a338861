"""The week-over-week noise band: when has a lift moved by more than noise? One rule for every caller.

For a lift that was ``prev`` last week and ``now`` this week (a model's headline lift, or one prompt's lift), the
move is ``Δ = now − prev`` and it is actionable when ``|Δ|`` exceeds a threshold, the larger of two known
half-widths **on the scale of Δ** (a difference of two weeks), both with the same multiplier ``q`` (the two-sided
t quantile at the Δ's degrees of freedom, :func:`skillbench.scorecard._stats.t_critical`; ``df = ∞`` gives the
normal quantile, for a caller that does not know the n behind a lift):

* **within-week noise** — how much Δ varies from the week's own sampling:

  - **paired** (:func:`paired_week_delta`, the rule whenever both weeks' per-prompt lifts are known): the prompts
    both weeks share are differenced prompt by prompt, ``Δᵢ = dᵢ(now) − dᵢ(prev)``; ``Δ`` is their mean,
    ``SE = SD(Δᵢ)/√n`` and ``q = t(n − 1)``. The same prompts run every week, so the spread of the prompts' own
    lifts cancels out of Δ, and only the rep-to-rep noise is left — a narrower, still valid band. Below
    :data:`PAIRED_MIN_PROMPTS` shared prompts, or with a zero SE, there is no paired noise (no significance from
    nothing);
  - **unpaired** (:func:`unpaired_week_delta`, the fallback for a history without per-prompt lifts, e.g. a week
    written before they were kept, or qdrant's file): the two weeks as independent samples,
    ``SE = √(SE_now² + SE_prev²)``, ``q = t(n_pairs − 1)`` of this week — conservative when the prompts are shared;

* **between-week noise** — how much a weekly lift varies from week to week when nothing changed: ``σ`` is the
  sample SD (``ddof = 1``) of the lifts of the weeks *before* this one (needs two), and the half-width is
  ``q·σ·√2``, because the difference of two independent weekly lifts has SD ``σ·√2`` (comparing ``σ`` itself
  with a difference would call a move at well under one SD of that difference). The per-prompt movers take ``q``
  at σ's own degrees of freedom (``k − 1`` for ``k`` earlier weeks) instead: a one-rep week has no Δ degrees of
  freedom to borrow, and a prompt's history is short.

A week with neither known is ``n/a``. Where many moves are read together (a week's per-prompt movers),
:func:`band_p_value` turns each move into the two-sided p-value of the same band — ``|Δ|`` against the threshold
read as ``q`` standard errors, on the t distribution of that ``q`` — so the list can be corrected for its many tests
(Benjamini–Hochberg, :func:`skillbench.scorecard._inference.adjust`); ``p < 1 − confidence`` exactly when
``|Δ|`` clears the threshold. Used by the scorecard's week-over-week table
(:func:`skillbench.scorecard._history.week_over_week`), the per-prompt movers of ``explore_weeks``
(:func:`skillbench.weekly.prompt_movers`) and the trend figure's don't-act band
(:func:`skillbench.report.figures.trend_bands`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from skillbench.scorecard._stats import DEFAULT_CONFIDENCE, t_critical

MOVED, WITHIN_NOISE, NOT_KNOWN = "yes", "no (within noise)", "n/a"
PAIRED, UNPAIRED = "paired", "unpaired"  # the week-over-week rule a Δ was judged by
PAIRED_MIN_PROMPTS = 3  # fewer shared prompts than this: a paired SE means nothing
ArrayLike = float | np.ndarray | pd.Series


def within_noise(se_now: ArrayLike, se_prev: ArrayLike, df: ArrayLike,
                 confidence: float = DEFAULT_CONFIDENCE) -> ArrayLike:
    """``t·√(SE_now² + SE_prev²)``: the unpaired within-week half-width (``se_prev = 0`` gives a paired ``t·SE``)."""
    return _like(se_now, np.asarray(t_critical(df, confidence)) * np.hypot(np.asarray(se_now, dtype=float),
                                                                             np.asarray(se_prev, dtype=float)))


def between_noise(prior_lifts: Sequence[float] | np.ndarray) -> float:
    """Sample SD (``ddof = 1``) of the earlier weeks' lifts; ``NaN`` with fewer than two (missing ones ignored)."""
    values = np.asarray(prior_lifts, dtype=float)
    values = values[np.isfinite(values)]
    return float(np.std(values, ddof=1)) if values.size >= 2 else float("nan")


def between_band(prior_lifts: Sequence[float] | np.ndarray, df: float,
                 confidence: float = DEFAULT_CONFIDENCE) -> float:
    """``t·σ·√2``: the between-week half-width on the scale of a difference of two weeks (``σ``:
    :func:`between_noise`; ``t`` at ``df``, the same multiplier as the within-week half-width it is set against)."""
    return float(t_critical(df, confidence)) * between_noise(prior_lifts) * float(np.sqrt(2.0))


def floored_between_noise(sigma: pd.Series, dof: pd.Series, by: str | Sequence[str]) -> pd.Series:
    """Each lift's between-week σ, never below the pooled σ of its group (``by``: index level(s), e.g. the model).

    A prompt's σ comes from its own few earlier weeks (``dof = k − 1``, one to three), so it is mostly luck: at
    one rep a lift moves in whole rubric items, and two or three identical earlier lifts give σ = 0 — a band of no
    width, which would call any move of that prompt a mover. The pooled σ, ``√(Σ dofᵢ·σᵢ² / Σ dofᵢ)`` over the
    group's lifts with a σ, is the same week-to-week noise read from every prompt at once (dozens of degrees of
    freedom), so it is the floor: a prompt is allowed to be noisier than its model's prompts are on average,
    never quieter than its own two or three weeks happen to show. ``NaN`` stays ``NaN`` (fewer than two weeks).
    """
    known = sigma.notna() & dof.reindex(sigma.index).gt(0)
    weight = dof.reindex(sigma.index).where(known)
    pooled = np.sqrt((weight * sigma ** 2).groupby(level=by).transform("sum")
                     / weight.groupby(level=by).transform("sum"))
    return sigma.where(~(sigma < pooled), pooled)


def threshold(within: ArrayLike, between: ArrayLike) -> ArrayLike:
    """The larger of the known noises; ``NaN`` when neither is known.

    A half-width of 0 is not a known noise (every earlier lift equal, or every rep alike): read as a band it would
    call any move at all beyond noise, so the threshold is never 0 — a band of no width tests nothing.
    """
    w, b = np.asarray(within, dtype=float), np.asarray(between, dtype=float)
    w, b = np.where(w > 0, w, np.nan), np.where(b > 0, b, np.nan)
    out = np.where(np.isnan(w), b, np.where(np.isnan(b), w, np.maximum(w, b)))
    return _like(within, out)


def moved(delta: ArrayLike, limit: ArrayLike) -> ArrayLike:
    """``yes`` when ``|delta|`` exceeds the threshold, ``no (within noise)`` when not, ``n/a`` when unknown."""
    d, t = np.asarray(delta, dtype=float), np.asarray(limit, dtype=float)
    out = np.where(~(np.isfinite(d) & np.isfinite(t)), NOT_KNOWN, np.where(np.abs(d) > t, MOVED, WITHIN_NOISE))
    return _like(delta, out)


def band_p_value(delta: ArrayLike, limit: ArrayLike, df: ArrayLike,
                 confidence: float = DEFAULT_CONFIDENCE) -> ArrayLike:
    """Two-sided p-value of ``delta`` against the band ``limit = t(df)·SE``: ``2·P(T_df > |Δ|/SE)``.

    ``NaN`` where the move, the band or ``df`` is unknown, or the band has no width (a zero SE says nothing).
    """
    from scipy import stats as sps  # only the movers need the t distribution's tail

    d, lim, dof = (np.asarray(x, dtype=float) for x in (delta, limit, df))
    q = np.asarray(t_critical(dof, confidence), dtype=float)
    ok = np.isfinite(d) & np.isfinite(lim) & (lim > 0) & np.isfinite(q)
    z = np.abs(d) / np.where(ok, lim / np.where(ok, q, 1.0), 1.0)
    p = np.where(ok, 2 * sps.t.sf(z, np.where(ok & (dof >= 1), dof, 1.0)), np.nan)
    return _like(delta, p)


@dataclass(frozen=True)
class WeekDelta:
    """One week-over-week move and its verdict.

    Attributes:
        delta: ``now − prev`` (paired: the mean of the shared prompts' differences).
        se: its standard error (paired: ``SD(Δᵢ)/√n``; unpaired: ``√(SE_now² + SE_prev²)``).
        df: degrees of freedom of the multiplier (paired: ``n − 1``; unpaired: this week's pairs − 1).
        n: prompts the Δ is over (paired: shared by both weeks; unpaired: this week's pairs).
        within: ``t·SE`` (``NaN``: not known).
        between: ``t·σ·√2`` over the earlier weeks (``NaN``: fewer than two).
        threshold: the larger known of the two.
        verdict: :data:`MOVED`, :data:`WITHIN_NOISE` or :data:`NOT_KNOWN`.
        rule: :data:`PAIRED` or :data:`UNPAIRED`.
    """

    delta: float
    se: float
    df: float
    n: int
    within: float
    between: float
    threshold: float
    verdict: str
    rule: str


def paired_week_delta(now: pd.Series, prev: pd.Series, confidence: float = DEFAULT_CONFIDENCE, *,
                      prior_lifts: Sequence[float] | np.ndarray = ()) -> WeekDelta:
    """The paired week-over-week move of a lift from per-prompt lifts (the module's paired rule).

    Args:
        now: this week's per-prompt lift ``d``, indexed by prompt.
        prev: the previous week's, indexed by prompt; only the prompts in both (with a value) are compared.
        confidence: of the multiplier ``t(n − 1)``.
        prior_lifts: the weekly lifts of the weeks before this one (the previous one among them), for the
            between-week half-width; empty: not applied.
    """
    both = pd.concat({"now": pd.Series(now, dtype=float), "prev": pd.Series(prev, dtype=float)}, axis=1,
                     join="inner").dropna()
    diff = (both["now"] - both["prev"]).to_numpy()
    n = int(diff.size)
    delta = float(diff.mean()) if n else float("nan")
    se = float(diff.std(ddof=1) / np.sqrt(n)) if n >= 2 else float("nan")
    df = float(n - 1) if n >= 2 else float("nan")
    # Too few prompts or no spread at all: a t band of width 0 (or from 2 points) would be significance from nothing.
    within = float(t_critical(df, confidence)) * se if n >= PAIRED_MIN_PROMPTS and se > 0 else float("nan")
    return _decided(delta, se, df, n, within, prior_lifts, confidence, PAIRED)


def unpaired_week_delta(now: tuple[float, float], prev: tuple[float, float], n_pairs: int,
                        confidence: float = DEFAULT_CONFIDENCE, *,
                        prior_lifts: Sequence[float] | np.ndarray = ()) -> WeekDelta:
    """The unpaired week-over-week move (the fallback without per-prompt lifts).

    Args:
        now: this week's ``(lift, SE)``.
        prev: the previous week's ``(lift, SE)``.
        n_pairs: this week's paired prompts (the multiplier is ``t(n_pairs − 1)``; 0: not known, normal quantile).
        confidence: of the multiplier.
        prior_lifts: the weekly lifts of the weeks before this one, for the between-week half-width.
    """
    delta = float(now[0]) - float(prev[0])
    se = float(np.hypot(float(now[1]), float(prev[1])))
    df = float(n_pairs - 1) if n_pairs else float("inf")
    within = float(t_critical(df, confidence)) * se if se > 0 else float("nan")
    return _decided(delta, se, df, int(n_pairs), within, prior_lifts, confidence, UNPAIRED)


def _decided(delta: float, se: float, df: float, n: int, within: float, prior_lifts: Sequence[float] | np.ndarray,
             confidence: float, rule: str) -> WeekDelta:
    # The between-week band takes the within band's multiplier (like with like); without a known df, the normal one.
    between = between_band(prior_lifts, df if np.isfinite(df) and df >= 1 else np.inf, confidence)
    limit = float(threshold(within, between))
    return WeekDelta(delta=delta, se=se, df=df, n=n, within=within, between=between, threshold=limit,
                     verdict=str(moved(delta, limit)), rule=rule)


def _like(template: ArrayLike, values: np.ndarray) -> ArrayLike:
    """``values`` shaped like ``template``: a Series keeps its index, a scalar stays a scalar."""
    if isinstance(template, pd.Series):
        return pd.Series(values, index=template.index)
    if np.ndim(template) == 0:
        item = np.asarray(values).item()
        return item if isinstance(item, str) else float(item)
    return np.asarray(values)
