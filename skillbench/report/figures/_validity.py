"""Validity figures: a simulated week's measurement against its truth (the scorecard's simulation check).

Left, per model: the measured paired lift with its 95 % t interval (line, clipped to ±1) and bootstrap interval
(band), and the true lift from ``truth.csv`` as a cross — a cross outside the line or band is a miss. Right, per
rubric item type: the judge's accuracy against the answer key, with the floor below which the week is flagged,
and the false-met rate beside it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from skillbench.arms import DEFAULT_PAIR, ArmPair
from skillbench.report.figures._base import _empty, _figure, _palette, outside_legend
from skillbench.scorecard import JUDGE_ACCURACY_FLOOR, arm_names

TRUTH_COLOR = "#c8553d"
ACCURACY_COLOR = "#3f7fbf"
FALSE_MET_COLOR = "#e39b2d"


def simulation_panel(lift: pd.DataFrame, judge: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> Figure:
    """True vs measured lift with its intervals per model, and the judge's accuracy per item type.

    Args:
        lift: the scorecard's ``simulation_lift`` frame (``model, true_lift, measured_lift, ci_low, ci_high,
            boot_low, boot_high, t_covers, boot_covers``).
        judge: the ``simulation_judge`` frame (``item_type, n, accuracy, false_met_rate``).
        pair: the week's arms (the lift axis names its direction).
    """
    if (lift is None or lift.empty) and (judge is None or judge.empty):
        return _empty("Simulation check", "Not a simulated week (no truth.csv).")
    rows = lift.dropna(subset=["measured_lift"]) if lift is not None and not lift.empty else pd.DataFrame()
    fig, axes = _figure(11, max(2.6, 0.7 * max(len(rows), 3) + 1.4), ncols=2, width_ratios=[3, 2])
    _lift_axis(axes[0, 0], rows, pair)
    _judge_axis(axes[0, 1], judge if judge is not None else pd.DataFrame())
    fig.suptitle("Simulation check — the measurement against the simulation's truth", x=0.01, ha="left")
    return fig


def _lift_axis(ax, rows: pd.DataFrame, pair: ArmPair) -> None:
    if rows.empty:
        ax.axis("off")
        ax.text(0.0, 0.5, "No model has prompts graded in both arms.", transform=ax.transAxes, color="#69737d")
        return
    models = list(rows["model"])
    y = np.arange(len(models))[::-1]
    colors = _palette(models)
    for yi, rec in zip(y, rows.itertuples(index=False), strict=True):
        color = colors[rec.model]
        if np.isfinite(rec.ci_low) and np.isfinite(rec.ci_high):
            ax.plot([max(rec.ci_low, -1.0), min(rec.ci_high, 1.0)], [yi, yi], color=color, lw=2.2,
                    solid_capstyle="butt")
        if np.isfinite(rec.boot_low) and np.isfinite(rec.boot_high):
            ax.plot([rec.boot_low, rec.boot_high], [yi - 0.18] * 2, color=color, lw=5, alpha=0.35,
                    solid_capstyle="butt")
        ax.plot(rec.measured_lift, yi, "D", color=color, ms=8, zorder=3, label="measured" if yi == y[0] else None)
        if np.isfinite(rec.true_lift):
            ax.plot(rec.true_lift, yi, "X", color=TRUTH_COLOR, ms=10, zorder=4, label="truth" if yi == y[0] else None)
        missed = any(not pd.isna(v) and not bool(v) for v in (rec.t_covers, rec.boot_covers))
        ax.annotate(f"measured {rec.measured_lift:+.3f} · true {rec.true_lift:+.3f}" + ("  ⚠ missed" if missed else ""),
                    (rec.measured_lift, yi), xytext=(0, 9), textcoords="offset points", ha="center", fontsize=9)
    ax.axvline(0, color="#444", lw=1, ls="--")
    ax.set_yticks(y, models)
    ax.set_xlim(-1.05, 1.05)
    ax.set_ylim(y.min() - 0.6, y.max() + 0.6)
    ax.set_xlabel(f"must-coverage lift ({arm_names(pair).lift})")
    ax.set_title("Lift: line 95 % t interval, band bootstrap CI, × truth", loc="left", fontsize=10)
    outside_legend(ax, fontsize="small")


def _judge_axis(ax, judge: pd.DataFrame) -> None:
    if judge.empty or not judge["n"].gt(0).any():
        ax.axis("off")
        ax.text(0.0, 0.5, "No graded item has a truth row.", transform=ax.transAxes, color="#69737d")
        return
    x = np.arange(len(judge))
    ax.bar(x - 0.2, judge["accuracy"].fillna(0.0), width=0.4, color=ACCURACY_COLOR, label="accuracy")
    ax.bar(x + 0.2, judge["false_met_rate"].fillna(0.0), width=0.4, color=FALSE_MET_COLOR, label="false-met rate")
    ax.axhline(JUDGE_ACCURACY_FLOOR, color="#444", lw=1, ls="--", label=f"floor {JUDGE_ACCURACY_FLOOR:.0%}")
    ax.set_xticks(x, [f"{t}\n(n={int(n)})" for t, n in zip(judge["item_type"], judge["n"], strict=True)])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share of items")
    ax.set_title("Judge against the answer key", loc="left", fontsize=10)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.08), ncols=3, frameon=False, fontsize="small")
