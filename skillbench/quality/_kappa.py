"""κ between judge samples, per dimension, on the five anchor bands — and how to read it.

Contract: the units are the suite's skills (families); the raters are the judge's independent samples; the labels
are the anchor bands 0…4 (scores 0, 0.25, 0.5, 0.75, 1). With two samples the statistic is **Cohen's κ**, with
three or more **Fleiss' κ**, both computed by :mod:`skillbench.calibration._agreement` (``statsmodels``, one home
for κ); a family with an ungraded sample is left out of that dimension. κ is undefined (NaN, read "undefined")
with fewer than two units or when every rating falls in one band (chance agreement is then 1).

The reading is PluginEval's: ≥ 0.80 strong, 0.60–0.79 moderate, 0.40–0.59 fair, < 0.40 poor; the target is
≥ 0.70 (:data:`KAPPA_TARGET`).
"""

from __future__ import annotations

import math

import pandas as pd

from skillbench.quality._anchored import ANCHORS, DIMENSION_IDS

KAPPA_TARGET = 0.70
KAPPA_COLUMNS = ["dimension", "statistic", "kappa", "reading", "meets_target", "n_units", "n_raters",
                 "raw_agreement"]


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


def kappa_by_dimension(scores: pd.DataFrame) -> pd.DataFrame:
    """κ per dimension from judged scores (columns ``family, sample, dimension, score``; NaN score = ungraded).

    Returns:
        One row per dimension (:data:`KAPPA_COLUMNS`); ``raw_agreement`` is the share of units whose samples all
        fall in one band.
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
                     "n_raters": int(bands.shape[1]), "raw_agreement": agree})
    return pd.DataFrame(rows, columns=KAPPA_COLUMNS)
