"""Suite and run figures: what the suite holds, and how long its runs took."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from skillbench.arms import DEFAULT_PAIR, ArmPair
from skillbench.report.figures._base import (
    _empty,
    _figure,
    arm_colors,
    outside_legend,
)
from skillbench.scorecard import arm_order


def suite_composition(prompts: pd.DataFrame) -> Figure:
    """Prompts per skill family: lift-scored, dormancy and held-out (from ``Suite.prompts_df()``)."""
    if prompts.empty:
        return _empty("Suite", "No prompts.")
    kind = np.select([prompts["heldout"], prompts["dormancy"]], ["held-out", "dormancy"], "lift-scored")
    table = pd.crosstab(prompts["skill_family"], kind).reindex(columns=["lift-scored", "dormancy", "held-out"],
                                                               fill_value=0)
    fig, axes = _figure(7, 0.45 * len(table) + 1.6)
    ax = axes[0, 0]
    left = np.zeros(len(table))
    for col, color in zip(table.columns, ("#2a9d5c", "#7a5cb8", "#b9bec4"), strict=True):
        ax.barh(table.index, table[col], left=left, color=color, label=col)
        left += table[col].to_numpy()
    ax.axvline(5, color="#c8553d", lw=1, ls=":", label="5 (the paired gate's minimum)")
    ax.invert_yaxis()
    ax.set_xlabel("prompts")
    outside_legend(ax)
    ax.set_title("Prompts per skill family", loc="left", fontsize=11)
    return fig


def run_durations(manifest: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> Figure:
    """Per-run duration and cost by model and arm (one dot per run; version arms coloured by :func:`arm_colors`)."""
    if manifest.empty or manifest["duration_ms"].isna().all():
        return _empty("Runs", "No timed runs.")
    m = manifest.assign(seconds=manifest["duration_ms"] / 1000)
    conditions = arm_order(m["condition"], pair)
    fig, axes = _figure(11, 3.8, ncols=2)
    for ax, (col, label) in zip(axes[0], (("seconds", "duration (s)"), ("total_cost_usd", "cost ($)")),
                                strict=True):
        sns.stripplot(data=m, x="model", y=col, hue="condition", hue_order=conditions, dodge=True, size=4,
                      palette=arm_colors(conditions, pair), ax=ax, alpha=0.8)
        ax.set_ylabel(label)
        ax.set_xlabel("")
        outside_legend(ax, title=None)
    axes[0, 0].set_title("Per-run duration and cost", loc="left", fontsize=11)
    return fig
