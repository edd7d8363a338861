"""Activation figures: how each skill family was reached, per arm and per week.

"The with-skill arm" is the week's treatment arm (``pair``; :func:`skillbench.signals._trigger.with_skill_runs`);
a comparison's panels name its labels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from skillbench.arms import DEFAULT_PAIR, ArmPair
from skillbench.markdown import fmt, span
from skillbench.report.figures._base import (
    ROUTE_COLORS,
    ROUTES,
    _empty,
    _figure,
)
from skillbench.scorecard import arm_names
from skillbench.signals import false_trigger_arms
from skillbench.vocab import PLUGIN

HEATMAP_DIGITS = 2  # a heatmap cell holds a few characters: its rate and interval at 2 decimals


def activation_breakdown(manifest: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> Figure:
    """How each skill family was reached: share of runs by activation route, per arm.

    Panels: the with-skill (treatment) and plugin arms on the family's own prompts (``none`` is a trigger miss),
    and the family's dormancy prompts in those arms (anything but ``none`` is a false trigger).
    """
    if manifest.empty:
        return _empty("Activation per skill", "No runs.")
    treatment = arm_names(pair).treatment
    m = manifest.assign(route=manifest["skill_activation"].fillna("").replace("", "(empty)"))
    panels = [(f"{treatment}, own prompts", m[m["condition"].eq(pair.treatment) & ~m["dormancy"]]),
              ("plugin, own prompts", m[m["condition"].eq(PLUGIN) & ~m["dormancy"]]),
              ("dormancy prompts (should stay none)", m[m["dormancy"] & false_trigger_arms(m["condition"], pair)])]
    panels = [(t, d) for t, d in panels if not d.empty]
    if not panels:
        return _empty("Activation per skill", f"No {treatment}, plugin or dormancy runs.")
    families = sorted(m["skill_family"].dropna().unique())
    routes = [r for r in (*ROUTES, "(empty)") if r in set(m["route"])] + \
        sorted(set(m["route"]) - set(ROUTES) - {"(empty)"})
    fig, axes = _figure(4.2 * len(panels) + 1.5, 0.45 * len(families) + 1.8, ncols=len(panels), sharey=True)
    for ax, (title, d) in zip(axes[0], panels, strict=True):
        share = pd.crosstab(d["skill_family"], d["route"], normalize="index").reindex(index=families,
                                                                                      columns=routes).fillna(0)
        counts = d.groupby("skill_family").size().reindex(families).fillna(0).astype(int)
        left = np.zeros(len(families))
        for route in routes:
            ax.barh(families, share[route], left=left, color=ROUTE_COLORS.get(route, "#999"), label=route)
            left += share[route].to_numpy()
        for i, n in enumerate(counts):
            ax.text(1.01, i, f"n={n}", va="center", fontsize=8, color="#555")
        ax.set_xlim(0, 1.12)
        ax.set_title(title, loc="left", fontsize=10)
        ax.set_xlabel("share of runs")
        ax.invert_yaxis()
    fig.legend(handles=[Patch(color=ROUTE_COLORS.get(r, "#999"), label=r) for r in routes], loc="outside lower center",
               ncols=len(routes), fontsize=9, title="activation route")
    return fig


def activation_by_week_heatmap(table: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> Figure:
    """Activation rate per skill family × week (with-skill arm, own prompts), each over its 95 % interval; 0 means
    it never triggered.

    Args:
        table: :func:`skillbench.weekly.activation_by_week` output.
        pair: the weeks' arms (the title names the treatment).
    """
    treatment = arm_names(pair).treatment
    if table.empty:
        return _empty("Activation by week", f"No {treatment} runs.")
    keys = list(dict.fromkeys(table["run_key"]))
    grid = table.pivot(index="skill_family", columns="run_key", values="rate").reindex(columns=keys)
    # each cell: the rate over its 95 % interval (a table from before the interval columns shows the rate alone),
    # both at 2 decimals: a heatmap cell is a few characters wide; the pages' tables print the 3-decimal values
    labels = grid.map(lambda v: "" if pd.isna(v) else fmt(v, HEATMAP_DIGITS))
    if {"low", "high"} <= set(table.columns):
        nd = HEATMAP_DIGITS
        text = table.assign(_t=["" if pd.isna(r) else f"{fmt(r, nd)}\n{span(lo, hi, nd)}".strip()
                                for r, lo, hi in zip(table["rate"], table["low"], table["high"], strict=True)])
        labels = text.pivot(index="skill_family", columns="run_key", values="_t").reindex(index=grid.index,
                                                                                          columns=keys).fillna("")
    fig, axes = _figure(1.4 * len(keys) + 3.5, 0.6 * len(grid) + 1.6)
    sns.heatmap(grid, annot=labels.to_numpy(), fmt="", vmin=0, vmax=1, cmap="YlGn",
                cbar_kws={"label": "activation rate"}, linewidths=0.5, ax=axes[0, 0], annot_kws={"fontsize": 8})
    axes[0, 0].set_xlabel("week")
    axes[0, 0].set_ylabel("")
    axes[0, 0].set_title(f"Skill activation rate by week ({treatment} arm)", loc="left", fontsize=11)
    return fig
