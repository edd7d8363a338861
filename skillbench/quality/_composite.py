"""The composite skill-quality score: the four dimensions' weighted mean, the weights normalised to sum to 1.

Contract: PluginEval's weights are triggering accuracy 0.25, orchestration fitness 0.20, output quality 0.15 and
scope calibration 0.12 (:data:`skillbench.quality._anchored.DIMENSIONS`); they sum to 0.72, so each is divided by
0.72 (0.347, 0.278, 0.208, 0.167) and the composite stays on the anchors' 0–1 scale. A family's dimension score is
the mean of its graded samples; a family with a dimension no sample graded has no composite (NaN), never a
composite of the other three re-weighted in silence.
"""

from __future__ import annotations

import pandas as pd

from skillbench.quality._anchored import DIMENSIONS

RAW_WEIGHTS = {d.id: d.weight for d in DIMENSIONS}
WEIGHT_SUM = sum(RAW_WEIGHTS.values())
WEIGHTS = {k: v / WEIGHT_SUM for k, v in RAW_WEIGHTS.items()}


def normalisation_note() -> str:
    """One sentence stating the normalisation (every page that shows a composite prints it)."""
    parts = ", ".join(f"{d.name.lower()} {d.weight:.2f} → {WEIGHTS[d.id]:.3f}" for d in DIMENSIONS)
    return (f"The composite is the weighted mean of the four dimensions; PluginEval's weights sum to "
            f"{WEIGHT_SUM:.2f}, so each is divided by {WEIGHT_SUM:.2f} to sum to 1: {parts}.")


def dimension_means(scores: pd.DataFrame) -> pd.DataFrame:
    """Families × dimensions: the mean of the graded samples (columns ``family, sample, dimension, score``)."""
    wide = scores.pivot_table(index="family", columns="dimension", values="score", aggfunc="mean")
    return wide.reindex(columns=list(RAW_WEIGHTS))


def composite_scores(means: pd.DataFrame) -> pd.Series:
    """The composite per family from :func:`dimension_means` (NaN when a dimension has no graded sample)."""
    weights = pd.Series(WEIGHTS)
    return means[weights.index].mul(weights, axis=1).sum(axis=1, min_count=len(weights)).where(
        means[weights.index].notna().all(axis=1))
