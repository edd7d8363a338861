"""κ between judge samples, per dimension, on the five anchor bands — and how to read it.

Contract: the units are the suite's skills (families); the raters are the judge's independent samples; the labels
are the anchor bands 0…4 (scores 0, 0.25, 0.5, 0.75, 1). With two samples the statistic is **Cohen's κ**, with
three or more **Fleiss' κ**, both computed by :mod:`skillbench.calibration._agreement` (``statsmodels``, one home
for κ); a family with an ungraded sample is left out of that dimension. κ is undefined (NaN, read "undefined")
with fewer than two units or when every rating falls in one band (chance agreement is then 1).

κ's interval (:func:`kappa_interval`) is a 95 % bootstrap over the families (each with all its samples' bands);
with fewer than 10 families — the bundled suite has 5 — there is none, and the page says so: so few units cannot
say how far κ would move on another suite.

The reading is PluginEval's: ≥ 0.80 strong, 0.60–0.79 moderate, 0.40–0.59 fair, < 0.40 poor; the target is
≥ 0.70 (:data:`KAPPA_TARGET`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from skillbench.quality._anchored import ANCHORS, DIMENSION_IDS

KAPPA_TARGET = 0.70
KAPPA_COLUMNS = ["dimension", "statistic", "kappa", "reading", "meets_target", "n_units", "n_raters",
                 "raw_agreement", "kappa_low", "kappa_high", "interval_method"]
BANDS = len(ANCHORS)


def band(score: float) -> int:
    """The anchor band 0…4 of a score (the nearest anchor)."""
    return min(range(len(ANCHORS)), key=lambda i: abs(ANCHORS[i] - float(score)))


def reading(kappa: float) -> str:
    """PluginEval's words for a κ value."""
    if kappa is None or not math.isfinite(kappa):
        return "undefined"
    if kappa >= 0.80:
        return "strong"
    if kappa >= 0.60:
        return "moderate"
    if kappa >= 0.40:
        return "fair"
    return "poor"


def kappa(ratings: pd.DataFrame) -> tuple[str, float]:
    """``(statistic, κ)`` of a units × raters band matrix (complete rows only): Cohen for 2 raters, Fleiss for more."""
    from skillbench.calibration import cohen_kappa, fleiss_kappa

    complete = ratings.dropna()
    raters = complete.shape[1]
    if raters < 2:
        return "", float("nan")
    if len(complete) < 2:
        return ("cohen" if raters == 2 else "fleiss"), float("nan")
    if raters == 2:
        return "cohen", cohen_kappa(list(complete.iloc[:, 0]), list(complete.iloc[:, 1]))[0]
    return "fleiss", fleiss_kappa(complete.to_numpy())


def kappa_by_dimension(scores: pd.DataFrame, *, n_resamples: int = 2000) -> pd.DataFrame:
    """κ per dimension from judged scores (columns ``family, sample, dimension, score``; NaN score = ungraded).

    Returns:
        One row per dimension (:data:`KAPPA_COLUMNS`); ``raw_agreement`` is the share of units whose samples all
        fall in one band; ``kappa_low``/``kappa_high`` κ's interval over families (:func:`kappa_interval`).
    """
    rows = []
    for dim in DIMENSION_IDS:
        part = scores[scores["dimension"] == dim]
        wide = part.pivot_table(index="family", columns="sample", values="score", aggfunc="first", dropna=False)
        bands = wide.apply(lambda col: col.map(lambda v: band(v) if pd.notna(v) else float("nan")))
        complete = bands.dropna()
        stat, k = kappa(bands) if not bands.empty else ("", float("nan"))
        agree = float((complete.nunique(axis=1) == 1).mean()) if len(complete) else float("nan")
        rows.append({"dimension": dim, "statistic": stat, "kappa": k, "reading": reading(k),
                     "meets_target": bool(math.isfinite(k) and k >= KAPPA_TARGET), "n_units": int(len(complete)),
                     "n_raters": int(bands.shape[1]), "raw_agreement": agree,
                     **kappa_interval(complete, stat, n_resamples=n_resamples)})
    return pd.DataFrame(rows, columns=KAPPA_COLUMNS)


def _per_family(bands: pd.DataFrame, statistic: str) -> np.ndarray:
    """Per family (row of complete bands), the summable pieces of its κ: Cohen's 5 × 5 cell (one-hot, 25
    columns) or Fleiss' ``(1, P_i, n_i0 … n_i4)``."""
    x = bands.to_numpy(dtype=int)
    if statistic == "cohen":
        out = np.zeros((len(x), BANDS * BANDS))
        out[np.arange(len(x)), x[:, 0] * BANDS + x[:, 1]] = 1
        return out
    m = x.shape[1]
    counts = np.stack([(x == b).sum(axis=1) for b in range(BANDS)], axis=1)
    p_i = ((counts * (counts - 1)).sum(axis=1)) / (m * (m - 1))
    return np.column_stack([np.ones(len(x)), p_i, counts])


def _cohen_of_cells(c: np.ndarray) -> np.ndarray:
    t = np.asarray(c, dtype=float).reshape(*np.shape(c)[:-1], BANDS, BANDS)
    n = t.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        p_o = np.trace(t, axis1=-2, axis2=-1) / n
        p_e = (t.sum(axis=-1) * t.sum(axis=-2)).sum(axis=-1) / (n * n)
        return np.where(p_e < 1, (p_o - p_e) / (1 - p_e), np.nan)


def _fleiss_of_sums(c: np.ndarray) -> np.ndarray:
    c = np.asarray(c, dtype=float)
    units, p_sum, counts = c[..., 0], c[..., 1], c[..., 2:]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = counts / counts.sum(axis=-1, keepdims=True)
        p_e = (p * p).sum(axis=-1)
        return np.where(p_e < 1, (p_sum / units - p_e) / (1 - p_e), np.nan)


def kappa_interval(bands: pd.DataFrame, statistic: str, *, n_resamples: int = 2000, seed: int = 0) -> dict:
    """κ's 95 % bootstrap interval over families (each family resampled with all its samples' bands).

    BCa (percentile when BCa is degenerate), :func:`skillbench.calibration.cluster_interval`. With fewer than
    :data:`skillbench.calibration.MIN_CLUSTERS` families there is no interval (``interval_method`` says how many),
    nor when every resample gives the same κ.

    Returns:
        ``kappa_low``, ``kappa_high``, ``interval_method``.
    """
    from skillbench.calibration import MIN_CLUSTERS, cluster_interval

    n = len(bands)
    none = {"kappa_low": float("nan"), "kappa_high": float("nan")}
    if statistic not in ("cohen", "fleiss"):
        return none | {"interval_method": "n/a"}
    if n < MIN_CLUSTERS:
        return none | {"interval_method": f"none: {n} families (< {MIN_CLUSTERS})"}
    of = _cohen_of_cells if statistic == "cohen" else _fleiss_of_sums
    iv = cluster_interval(_per_family(bands, statistic), of, n_resamples=n_resamples, seed=seed)
    if not (math.isfinite(iv.low) and math.isfinite(iv.high)) or iv.method == "degenerate":
        return none | {"interval_method": iv.method}
    return {"kappa_low": iv.low, "kappa_high": iv.high, "interval_method": iv.method}
