"""Lift statistics per model: paired lift with its SE and t interval, bootstrap CI, minimum detectable effect.

The unit of inference is the prompt. For each model, ``dᵢ = with_skill(i) − no_skill(i)`` over the prompts
present in both arms (each side the mean over its reps); the arms are the week's
:class:`~skillbench.arms.ArmPair` (``pair``): ``with_skill`` is the treatment, ``no_skill`` the control (the
columns keep the weekly run's names, so a comparison's frames read like a weekly one's). The headline lift is
the **paired lift**, ``mean(dᵢ)``, the quantity its SE ``stdev(dᵢ)/√n`` describes; qdrant's lift, the difference
of the two cells' flat macro means (``must_lift``, the history's column), is shown beside it when the two differ —
only when some prompt was graded in one arm only (``one_arm_prompts``). "95 % CI ≠ 0?" asks whether
``|mean(dᵢ)| > t₀.₉₇₅(n−1)·SE`` with the exact t quantile (qdrant rounds df down to a table; the flag agrees), and
is "too few prompts" below three pairs or with a zero SE (:func:`ci_flag`).

What this module adds to qdrant's maths:

* a **BCa bootstrap CI** of the paired lift (bias-corrected and accelerated: ``scipy.stats.bootstrap`` draws the
  resamples, the acceleration comes from the mean's closed-form jackknife, :func:`_bca_bounds`), resampling
  prompts (each carrying all its reps, so the resampled statistic is the mean of resampled ``dᵢ``), seeded,
  10,000 resamples by default. BCa, not the percentile interval, because the ``dᵢ`` are skewed and
  bounded: on synthetic weeks resampled from qdrant's published differences the percentile interval covers
  the true lift less often than 95 % at 26 prompts, BCa within 93–97 % (``benchmarks/validity.py`` measures it;
  at 10 prompts every interval here, t included, covers somewhat less than 95 %);
* the **minimum detectable effect** at 80 % power for a two-sided paired t test at this n and SD(dᵢ)
  (statsmodels' ``TTestPower``), so a "no" can be read as "this week could not have seen it".
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Iterator

import numpy as np
import pandas as pd
from scipy import stats as sps

from skillbench.arms import DEFAULT_PAIR, ArmPair

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 20260808
DEFAULT_CONFIDENCE = 0.95
DEFAULT_POWER = 0.80
# Bound the bootstrap's working array (resamples × prompts) so 10k resamples stay cheap at any n.
_BOOTSTRAP_CELLS = 4_000_000
# BCa's bias correction and jackknife acceleration need at least three prompts to mean anything.
MIN_BCA_PROMPTS = 3
# Below three prompts (or with a zero SE) no interval is read as significant: "too few prompts".
MIN_CI_PROMPTS = 3


def paired_differences(prompts: pd.DataFrame, metric: str = "must_coverage", *,
                       pair: ArmPair = DEFAULT_PAIR) -> pd.DataFrame:
    """Per model × prompt, the two arms' prompt-level values and their difference ``d``.

    Args:
        prompts: :func:`skillbench.scorecard.prompt_scores` output (rows of other arms, e.g. plugin, are ignored).
        metric: which prompt-level metric to pair.
        pair: the arms: ``d`` = treatment − control.

    Returns:
        ``model, prompt, no_skill, with_skill, d`` (``no_skill``: the control's value, ``with_skill``: the
        treatment's) for the prompts present (with a value) in both arms.
    """
    no, wi = pair.lift_arms
    arms = prompts[prompts["condition"].isin(pair.lift_arms)]
    wide = arms.pivot(index=["model", "prompt"], columns="condition", values=metric)
    wide = wide.reindex(columns=list(pair.lift_arms)).dropna()
    out = pd.DataFrame({"no_skill": wide[no], "with_skill": wide[wi]})
    out["d"] = out["with_skill"] - out["no_skill"]
    return out.reset_index().sort_values(["model", "prompt"], kind="stable").reset_index(drop=True)


def t_critical(df: float | np.ndarray | pd.Series,
               confidence: float = DEFAULT_CONFIDENCE) -> float | np.ndarray | pd.Series:
    """Two-sided t multiplier for ``df`` degrees of freedom (``np.inf``: the normal quantile); ``NaN`` below 1.

    The one t quantile of the package (the lift's CI, the objective layer's, the noise band, the sentinel, the
    figures' error bars). A scalar ``df`` gives a float; an array or a Series gives the same shape (a Series keeps
    its index).
    """
    dof = np.asarray(df, dtype=float)
    out = np.where(dof >= 1, sps.t.ppf(0.5 + confidence / 2, np.where(dof >= 1, dof, 1.0)), np.nan)
    if isinstance(df, pd.Series):
        return pd.Series(out, index=df.index)
    return float(out) if out.ndim == 0 else out


def lift_table(prompts: pd.DataFrame, cells: pd.DataFrame, confidence: float = DEFAULT_CONFIDENCE, *,
               pair: ArmPair = DEFAULT_PAIR) -> pd.DataFrame:
    """Lift per model (with-skill − no-skill: treatment − control), qdrant's headline plus the paired statistics.

    Args:
        prompts: :func:`skillbench.scorecard.prompt_scores` output for the lift arms.
        cells: :func:`skillbench.scorecard.cell_scores` output, with cost columns.
        confidence: level of the t interval.
        pair: the arms compared.

    Returns:
        One row per model: ``must_no, must_with, must_lift`` (cell difference; ``must_no`` is the control's,
        ``must_with`` the treatment's), ``n_pairs, paired_lift,
        sd_d, must_lift_se, t_crit, ci_low, ci_high, excludes_zero`` (``NA`` below two pairs),
        ``bonus_delta, avoid_delta, composite_lift, cost_delta, turns_delta``.
    """
    arms = list(pair.lift_arms)
    no, wi = arms
    c = cells[cells["condition"].isin(arms)].pivot(index="model", columns="condition")
    models = sorted(set(cells["model"]))

    def delta(col: str) -> pd.Series:
        if col not in c.columns.get_level_values(0):
            return pd.Series(np.nan, index=models)
        block = c[col].reindex(columns=arms).reindex(models)
        return block[wi] - block[no]

    def arm(col: str, cond: str) -> pd.Series:
        return c[col].reindex(columns=arms).reindex(models)[cond]

    out = pd.DataFrame(index=pd.Index(models, name="model"))
    out["must_no"] = arm("must_coverage", no)
    out["must_with"] = arm("must_coverage", wi)
    out["must_lift"] = delta("must_coverage")
    paired = paired_differences(prompts, pair=pair).groupby("model")["d"]
    out["n_pairs"] = paired.size().reindex(models).fillna(0).astype(int)
    out["paired_lift"] = paired.mean().reindex(models)
    out["sd_d"] = paired.std(ddof=1).reindex(models)
    out["must_lift_se"] = out["sd_d"] / np.sqrt(out["n_pairs"].where(out["n_pairs"] > 0))
    out["t_crit"] = [t_critical(n - 1, confidence) for n in out["n_pairs"]]
    half = out["t_crit"] * out["must_lift_se"]
    out["ci_low"] = out["paired_lift"] - half
    out["ci_high"] = out["paired_lift"] + half
    out["excludes_zero"] = pd.array([ci_flag(lift, se, h, n) for lift, se, h, n in
                                     zip(out["paired_lift"], out["must_lift_se"], half, out["n_pairs"], strict=True)],
                                    dtype="boolean")
    out["one_arm_prompts"] = _one_arm_prompts(prompts, metric="must_coverage", pair=pair).reindex(models).fillna(0
                                                                                               ).astype(int)
    out["bonus_delta"] = delta("bonus_rate")
    out["avoid_delta"] = delta("avoid_violations")
    out["composite_lift"] = delta("composite")
    out["cost_delta"] = delta("mean_cost")
    out["turns_delta"] = delta("mean_turns")
    return out.reset_index()


def ci_flag(lift: float, se: float, half: float, n: int) -> bool | pd.NA:
    """Whether the interval ``lift ± half`` leaves zero out; NA — "too few prompts" — below
    :data:`MIN_CI_PROMPTS` pairs or when the SE is 0 or unknown (every dᵢ equal on two prompts would otherwise
    read "significant" with a zero SE: no significance from nothing)."""
    if n < MIN_CI_PROMPTS or not np.isfinite(se) or se <= 0 or not np.isfinite(half):
        return pd.NA
    return bool(abs(lift) > half)


TOO_FEW = "too few prompts"  # how a page reads a flag ci_flag could not give


def ci_flag_text(flag: object) -> str:
    """The "95% CI != 0?" cell: ``yes``, ``no``, or ``too few prompts`` (:func:`ci_flag` gave NA)."""
    if flag is None or flag is pd.NA or (isinstance(flag, float) and math.isnan(flag)):
        return TOO_FEW
    return "yes" if bool(flag) else "no"


def _one_arm_prompts(prompts: pd.DataFrame, *, metric: str, pair: ArmPair) -> pd.Series:
    """Per model, prompts with a value in one lift arm only: they move the cell means' lift, never the paired one."""
    valued = prompts[prompts["condition"].isin(pair.lift_arms) & prompts[metric].notna()]
    arms = valued.groupby(["model", "prompt"])["condition"].nunique()
    return arms[arms == 1].groupby(level="model").size()


def bootstrap_intervals(values: np.ndarray, *, n_resamples: int = DEFAULT_RESAMPLES,
                        rng: np.random.Generator | int | None = None,
                        confidence: float = DEFAULT_CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """BCa bootstrap CI of the mean of each row of ``values`` (prompts on the last axis): one scipy call draws the
    resamples, :func:`_bca_bounds` reads the BCa interval off them (scipy's own BCa to rounding, in linear time).

    The scorecard's interval (:func:`bootstrap_ci` is this function on one row); a batch of rows is how
    ``benchmarks/validity.py`` measures its coverage on thousands of synthetic weeks without a Python loop.

    Degenerate rows never reach scipy (whose BCa would warn and return NaN), and get instead:

    * fewer than :data:`MIN_BCA_PROMPTS` values: ``(nan, nan)`` — the jackknife acceleration and the bias
      correction are not estimable from two prompts, so the scorecard reads "n/a" rather than a made-up interval;
    * every value equal: ``(value, value)`` — every resample has that mean (the t interval is as wide: SE 0);
    * a bound scipy cannot compute (the observed mean at the edge of the bootstrap distribution, which
      happens only with very few resamples): ``(nan, nan)``.

    Args:
        values: one row (1-D) or rows (2-D: ``rows × prompts``) of per-prompt differences.
        n_resamples: resamples per row.
        rng: generator (or seed) for the resampling.
        confidence: the interval's level.

    Returns:
        ``(low, high)`` arrays of the rows' shape without the last axis.
    """
    values = np.atleast_1d(np.asarray(values, dtype=float))
    rows = values.reshape(math.prod(values.shape[:-1]), values.shape[-1])
    low = np.full(rows.shape[0], np.nan)
    high = np.full(rows.shape[0], np.nan)
    if rows.shape[1] >= MIN_BCA_PROMPTS:
        flat = np.ptp(rows, axis=1) == 0
        low[flat] = high[flat] = rows[flat, 0]
        # A row with a missing value has no interval (NaN, as scipy's BCa answers); the batch stays the one every
        # non-flat row sets, so the others draw the same resamples.
        todo = ~flat & np.isfinite(rows).all(axis=1)
        if todo.any():
            rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
            data = rows[todo]
            # The edge cases left (z₀ infinite with few resamples) come back NaN, the documented answer, not a
            # warning a reader of a scorecard can act on. numpy's error state is per thread (the scorecard runs the
            # bootstrap beside its other tables); the process-wide warning filters are touched only for a single
            # resample, whose SD scipy warns about.
            with np.errstate(all="ignore"), _quiet_single_resample(n_resamples):
                # scipy draws the resamples (the same generator calls and means as its BCa); the BCa bounds are
                # then read off them here, because scipy's jackknife materialises n × (n − 1) resamples — a
                # quadratic cost (seconds at 25k prompts) that the mean's closed form does not need.
                res = sps.bootstrap((data,), np.mean, n_resamples=n_resamples, confidence_level=confidence,
                                    method="percentile", vectorized=True, axis=-1, rng=rng,
                                    batch=max(1, _BOOTSTRAP_CELLS // rows[~flat].size))
                lo, hi = _bca_bounds(data, res.bootstrap_distribution, confidence)
            known = np.isfinite(lo) & np.isfinite(hi)  # half an interval is not an interval
            low[todo] = np.where(known, lo, np.nan)
            high[todo] = np.where(known, hi, np.nan)
    return low.reshape(values.shape[:-1]), high.reshape(values.shape[:-1])


@contextlib.contextmanager
def _quiet_single_resample(n_resamples: int) -> Iterator[None]:
    """Silence scipy's warnings about a one-resample bootstrap (its SD has no degree of freedom); nothing otherwise."""
    if n_resamples >= 2:
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sps.DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _bca_bounds(data: np.ndarray, theta_b: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """The BCa interval of each row's mean from its bootstrap means ``theta_b`` (rows × resamples).

    scipy's ``_bca_interval`` step for step (Efron & Tibshirani 14.3, 15.4: z₀ from the share of resampled means
    below the observed one, the acceleration from the jackknife, ``scipy.stats.quantile`` at the adjusted levels),
    except that the jackknife means are the closed form of the mean, ``(Σx − xᵢ)/(n − 1)``: linear in n where
    scipy's resampling is quadratic; the bounds agree with scipy's BCa to rounding (``tests/scorecard``).
    """
    from scipy.special import ndtr, ndtri

    theta_hat = np.mean(data, axis=-1, keepdims=True)
    below = np.count_nonzero(theta_b < theta_hat, axis=-1) + np.count_nonzero(theta_b <= theta_hat, axis=-1)
    z0 = ndtri(below / (2 * theta_b.shape[-1]))
    n = float(data.shape[-1])
    jack = (np.sum(data, axis=-1, keepdims=True) - data) / (n - 1)
    u = (n - 1) * (np.mean(jack, axis=-1, keepdims=True) - jack)
    a = 1 / 6 * (np.sum(u**3, axis=-1) / n**3) / (np.sum(u**2, axis=-1) / n**2) ** (3 / 2)
    z_alpha = float(ndtri((1 - confidence) / 2))
    levels = [ndtr(z0 + num / (1 - a * num)) for num in (z0 + z_alpha, z0 - z_alpha)]
    bounds = sps.quantile(theta_b, np.stack(levels, axis=-1), axis=-1)
    return bounds[..., 0], bounds[..., 1]


def bootstrap_ci(values: np.ndarray, *, n_resamples: int = DEFAULT_RESAMPLES,
                 rng: np.random.Generator | int | None = None,
                 confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """BCa bootstrap CI of the mean of ``values`` (:func:`bootstrap_intervals` on one row).

    Returns:
        ``(low, high)``; ``(nan, nan)`` with fewer than three values, ``(v, v)`` when every value is ``v``.
    """
    low, high = bootstrap_intervals(np.asarray(values, dtype=float).ravel(), n_resamples=n_resamples, rng=rng,
                                    confidence=confidence)
    return float(low), float(high)


def bootstrap_lift(paired: pd.DataFrame, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                   confidence: float = DEFAULT_CONFIDENCE) -> pd.DataFrame:
    """BCa bootstrap CI of the paired lift per model, resampling prompts with their reps.

    One generator seeded with ``seed`` serves the models in sorted order, so the same ledgers and seed give the
    same interval.

    Args:
        paired: :func:`paired_differences` output.

    Returns:
        ``model, n_pairs, paired_lift, boot_low, boot_high, n_resamples, seed``.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for model, group in paired.sort_values(["model", "prompt"]).groupby("model", sort=True):
        d = group["d"].to_numpy()
        low, high = bootstrap_ci(d, n_resamples=n_resamples, rng=rng, confidence=confidence)
        rows.append({"model": model, "n_pairs": d.size, "paired_lift": float(d.mean()), "boot_low": low,
                     "boot_high": high, "n_resamples": n_resamples, "seed": seed})
    cols = ["model", "n_pairs", "paired_lift", "boot_low", "boot_high", "n_resamples", "seed"]
    return pd.DataFrame(rows, columns=cols)


def minimum_detectable_effect(sd: float, n: int, *, alpha: float = 1 - DEFAULT_CONFIDENCE,
                              power: float = DEFAULT_POWER) -> float:
    """Smallest true paired lift a two-sided paired t test at ``alpha`` detects with ``power``.

    ``MDE = d_z · SD(dᵢ)`` where ``d_z`` solves statsmodels' one-sample/paired ``TTestPower`` for ``n`` pairs.

    Returns:
        The MDE in the metric's units; ``NaN`` below two pairs or without an SD, 0 when every ``dᵢ`` is equal.
    """
    if n < 2 or sd is None or not np.isfinite(sd):
        return float("nan")
    if sd == 0:
        return 0.0
    from statsmodels.stats.power import TTestPower  # heavy import, only needed here

    dz = TTestPower().solve_power(effect_size=None, nobs=n, alpha=alpha, power=power, alternative="two-sided")
    return float(np.asarray(dz).item() * sd)


def uncertainty_table(paired: pd.DataFrame, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                      confidence: float = DEFAULT_CONFIDENCE, power: float = DEFAULT_POWER) -> pd.DataFrame:
    """BCa bootstrap CI and MDE per model, and whether the observed paired lift reaches the MDE.

    Returns:
        ``model, n_pairs, paired_lift, boot_low, boot_high, sd_d, mde, detectable, n_resamples, seed, power``.
    """
    boot = bootstrap_lift(paired, n_resamples=n_resamples, seed=seed, confidence=confidence)
    sd = paired.groupby("model")["d"].std(ddof=1)
    boot["sd_d"] = boot["model"].map(sd)
    boot["mde"] = [minimum_detectable_effect(s, n, alpha=1 - confidence, power=power)
                   for s, n in zip(boot["sd_d"], boot["n_pairs"], strict=True)]
    boot["detectable"] = pd.array([bool(abs(lift) >= m) if np.isfinite(m) else pd.NA
                                   for lift, m in zip(boot["paired_lift"], boot["mde"], strict=True)],
                                  dtype="boolean")
    boot["power"] = power
    return boot[["model", "n_pairs", "paired_lift", "boot_low", "boot_high", "sd_d", "mde", "detectable",
                 "n_resamples", "seed", "power"]]
