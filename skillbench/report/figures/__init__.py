"""The report's figures: seaborn on matplotlib, one function per figure, tidy DataFrames in, a Figure out.

Each function takes the frames skillbench already computes (:func:`skillbench.scorecard.scorecard_frames`,
:func:`skillbench.ledgers.load_week`, :func:`skillbench.weekly.calibration_tables`, …) and returns a
:class:`matplotlib.figure.Figure` built without pyplot, so a notebook shows it once (as the cell's value) and
nothing accumulates in pyplot's registry. An empty input gives a small figure that says there is nothing to
plot, never an exception: a stage must not fail because a week had no pairs.

Colours are fixed per meaning (arms, activation routes, pairwise outcomes), so the same thing looks the
same in every figure and every week; a comparison's two versions of one arm are two shades of its colour
(:func:`arm_color`). Figures that name the arms take the week's ``pair`` (:func:`skillbench.ledgers.week_arms`;
default with-skill vs no-skill, whose wording is unchanged).
"""

from skillbench.report.figures._activation import activation_breakdown, activation_by_week_heatmap
from skillbench.report.figures._base import ARM_COLORS, OUTCOME_COLORS, ROUTE_COLORS, ROUTES, Z95, arm_color, arm_colors
from skillbench.report.figures._judging import calibration_heatmap, pair_outcomes, verdict_breakdown
from skillbench.report.figures._lift import (
    cost_vs_lift,
    lift_forest,
    lift_trend,
    prompt_lift_dots,
    prompt_moves,
    trend_bands,
)
from skillbench.report.figures._objective import pass_k_curves, transition_bars
from skillbench.report.figures._runs import run_durations, suite_composition
from skillbench.report.figures._validity import simulation_panel

__all__ = [
    "ARM_COLORS",
    "OUTCOME_COLORS",
    "ROUTES",
    "ROUTE_COLORS",
    "Z95",
    "activation_breakdown",
    "arm_color",
    "arm_colors",
    "activation_by_week_heatmap",
    "calibration_heatmap",
    "cost_vs_lift",
    "lift_forest",
    "lift_trend",
    "pair_outcomes",
    "pass_k_curves",
    "prompt_lift_dots",
    "prompt_moves",
    "run_durations",
    "simulation_panel",
    "suite_composition",
    "transition_bars",
    "trend_bands",
    "verdict_breakdown",
]
