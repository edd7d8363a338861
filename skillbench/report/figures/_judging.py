"""Judge figures: verdicts per arm, pairwise outcomes, and agreement from the calibration."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from skillbench.arms import DEFAULT_PAIR, ArmPair
from skillbench.report.figures._base import (
    OUTCOME_COLORS,
    _empty,
    _figure,
    outside_legend,
)
from skillbench.scorecard import arm_names
from skillbench.vocab import ITEM_TYPES


def verdict_breakdown(scores: pd.DataFrame) -> Figure:
    """Share of verdicts per item type and arm (rubric judge), per model."""
    if scores.empty:
        return _empty("Verdicts", "Nothing graded yet.")
    counts = scores.groupby(["model", "condition", "item_type", "verdict"]).size().rename("n").reset_index()
    counts["share"] = counts["n"] / counts.groupby(["model", "condition", "item_type"])["n"].transform("sum")
    types = [t for t in ITEM_TYPES if t in set(counts["item_type"])]
    models = sorted(counts["model"].unique())
    fig, axes = _figure(4.2 * len(types) + 0.5, 0.5 * len(models) * 2 + 1.8, ncols=len(types), sharey=True)
    palette = {"met": "#2a9d5c", "missing": "#c8553d", "absent": "#b9bec4", "violated": "#c8553d",
               "clean": "#2a9d5c", "ungraded": "#e39b2d"}
    for ax, t in zip(axes[0], types, strict=True):
        sub = counts[counts["item_type"] == t]
        wide = sub.pivot_table(index=["model", "condition"], columns="verdict", values="share", fill_value=0)
        labels = [f"{m} · {c}" for m, c in wide.index]
        left = np.zeros(len(wide))
        for verdict in wide.columns:
            ax.barh(labels, wide[verdict], left=left, color=palette.get(verdict, "#999"), label=verdict)
            left += wide[verdict].to_numpy()
        ax.set_title(f"{t} items", loc="left", fontsize=10)
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of items")
        ax.invert_yaxis()
        outside_legend(ax)
    return fig


def pair_outcomes(outcomes: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> Figure:
    """Pairwise judge: the treatment's (with-skill's) wins, ties and losses per skill family × model (both orders
    agreeing).

    Args:
        outcomes: ``skill_family, model, W, T, L`` (:func:`skillbench.weekly.judge_tables` ``pair_outcomes``).
        pair: the week's arms (legend and title name them).
    """
    names = arm_names(pair)
    if outcomes.empty:
        return _empty("Pairwise outcomes", "No pairs judged.")
    labels = [f"{f} · {m}" for f, m in zip(outcomes["skill_family"], outcomes["model"], strict=True)]
    fig, axes = _figure(7, 0.4 * len(labels) + 1.6)
    ax = axes[0, 0]
    left = np.zeros(len(labels))
    for k in ("W", "T", "L"):
        ax.barh(labels, outcomes[k], left=left, color=OUTCOME_COLORS[k],
                label={"W": f"{names.treatment} wins", "T": "tie", "L": f"{names.treatment} loses"}[k])
        left += outcomes[k].to_numpy()
    ax.invert_yaxis()
    ax.set_xlabel("pairs (prompt × rep)")
    outside_legend(ax)
    ax.set_title(f"Pairwise judge — {names.versus}, a win only when both orders agree", loc="left", fontsize=11)
    return fig


def calibration_heatmap(agreement: pd.DataFrame) -> Figure:
    """Judge calibration: agreement (κ) per comparison × item type, and the confusion matrix of verdicts.

    Args:
        agreement: ``calibration.csv`` without its self-agreement rows
            (:func:`skillbench.weekly.calibration_tables` ``agreement``).
    """
    if agreement.empty:
        return _empty("Judge calibration", "No calibration comparison in this week.")
    a = agreement.copy()
    two = a["rater_b"].astype(str) != ""
    a["kappa"] = a["cohen_kappa"].where(two, a["fleiss_kappa"])
    a["pair"] = [_pair_label(c, ra, rb) for c, ra, rb in zip(a["comparison"], a["rater_a"], a["rater_b"].astype(str),
                                                             strict=True)]
    types = [t for t in (*ITEM_TYPES, "all") if t in set(a["item_type"])]
    grid = a.pivot_table(index="pair", columns="item_type", values="kappa", aggfunc="first").reindex(columns=types)
    pairs = a[(a["rater_b"].astype(str) != "") & a["item_type"].eq("all")]
    fig, axes = _figure(10, 0.45 * len(grid) + 2.6, ncols=2, width_ratios=[2.2, 1])
    sns.heatmap(grid, annot=True, fmt=".2f", vmin=-0.2, vmax=1, cmap="RdYlGn", linewidths=0.5,
                cbar_kws={"label": "κ (Cohen; Fleiss for 3+ raters)"}, ax=axes[0, 0])
    axes[0, 0].set_ylabel("")
    axes[0, 0].set_xlabel("item type")
    axes[0, 0].set_title("Agreement (Landis–Koch: > 0.80 almost perfect, > 0.60 substantial)", loc="left",
                         fontsize=10)
    ax = axes[0, 1]
    if pairs.empty:
        ax.axis("off")
        ax.text(0, 0.5, "No two-rater comparison.", color="#69737d")
        return fig
    first = pairs.iloc[0]
    cm = pd.DataFrame([[first["true_positive"], first["false_negative"]],
                       [first["false_positive"], first["true_negative"]]],
                      index=["A +", "A −"], columns=["B +", "B −"])
    sns.heatmap(cm.astype(float), annot=True, fmt=".0f", cmap="Blues", cbar=False, linewidths=0.5, ax=ax)
    ax.set_title(f"Confusion, all items\n{_pair_label(first['comparison'], first['rater_a'], first['rater_b'])}",
                 fontsize=9)
    ax.set_xlabel("+ met/violated. B+ with A−: a false +,\nthe costly error (inflates coverage)", fontsize=8)
    return fig


def _pair_label(comparison: str, rater_a: str, rater_b: str) -> str:
    """``samples: opus #1 vs #2`` rather than two long model names that differ only in the sample number."""
    if not rater_b:
        return f"{comparison} ({rater_a.count('+') + 1} raters)"
    base_a, _, sample_a = rater_a.partition("#")
    base_b, _, sample_b = rater_b.partition("#")
    if base_a == base_b and sample_a and sample_b:
        return f"{comparison}: #{sample_a} vs #{sample_b}"
    return f"{comparison}: {rater_a} vs {rater_b}"
