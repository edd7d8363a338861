"""Objective figures: what the deterministic checks say, per arm — pass@k and pass^k curves, transitions."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from skillbench.arms import DEFAULT_PAIR, ArmPair
from skillbench.report.figures._base import _empty, _figure, arm_color
from skillbench.vocab import BASELINE_ONLY, BOTH, NEITHER, SKILLED_ONLY, TRANSITIONS

TRANSITION_COLORS = {SKILLED_ONLY: "#2a9d5c", BASELINE_ONLY: "#c44e52", BOTH: "#8fb8de", NEITHER: "#d5d9de"}


def pass_k_curves(pass_k: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> Figure:
    """Per model, pass@k (solid: at least one of k tries completes) and pass^k (dashed: all k do) against k.

    The gap between the two lines is the arm's unreliability: a skill that lifts pass@k but not pass^k makes
    the task possible, not dependable. ``pair`` tells a comparison's two versions apart (:func:`arm_color`).
    """
    if pass_k is None or pass_k.empty:
        return _empty("pass@k and pass^k", "No runs with deterministic checks.")
    models = list(dict.fromkeys(pass_k["model"]))
    fig, axes = _figure(3.6 * len(models) + 1.2, 3.2, ncols=len(models), sharey=True)
    for ax, model in zip(axes[0], models, strict=True):
        block = pass_k[pass_k["model"].eq(model)]
        for cond, arm in block.groupby("condition", sort=False):
            color = arm_color(cond, pair)
            ax.plot(arm["k"], arm["pass_at_k"], marker="o", color=color, label=f"{cond} pass@k")
            ax.plot(arm["k"], arm["pass_hat_k"], marker="s", linestyle="--", color=color, label=f"{cond} pass^k")
        ax.set_title(model, loc="left")
        ax.set_xlabel("k (tries)")
        ax.set_xticks(sorted(block["k"].unique()))
        ax.set_ylim(-0.02, 1.02)
    axes[0, 0].set_ylabel("share of stimuli")
    axes[0, -1].legend(loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, fontsize="small")
    fig.suptitle("Task completion over k tries (deterministic checks)", x=0.01, ha="left")
    return fig


def transition_bars(counts: pd.DataFrame) -> Figure:
    """Per model, stimuli by objective transition: skilled-only (the skill made it pass) … neither."""
    if counts is None or counts.empty:
        return _empty("Objective transitions", "No stimulus with checks in both lift arms.")
    fig, axes = _figure(7, 0.55 * len(counts) + 1.4)
    ax = axes[0, 0]
    left = pd.Series(0.0, index=counts.index)
    for kind in TRANSITIONS:
        ax.barh(counts["model"], counts[kind], left=left, color=TRANSITION_COLORS[kind], label=kind)
        left += counts[kind]
    ax.invert_yaxis()
    ax.set_xlabel("stimuli (prompt × model)")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=len(TRANSITIONS), frameon=False)
    return fig
