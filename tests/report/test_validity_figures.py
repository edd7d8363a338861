"""The simulation check's figure draws what its frames hold: measured lift with its intervals, the true lift, and
the judge's accuracy and false-met rate per item type against the floor."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from skillbench.ledgers import load_week
from skillbench.report import figures
from skillbench.scorecard import JUDGE_ACCURACY_FLOOR, compute_scorecard
from tests.helpers.shared import TINY_WEEK


def _png(fig) -> None:
    fig.savefig(io.BytesIO(), format="png")


@pytest.fixture(scope="module")
def frames() -> dict[str, pd.DataFrame]:
    return compute_scorecard(load_week(TINY_WEEK / "20261130"), n_resamples=200).frames()


def test_the_panel_plots_measured_and_true_lift_and_the_t_interval(frames) -> None:
    lift, judge = frames["simulation_lift"], frames["simulation_judge"]
    fig = figures.simulation_panel(lift, judge)
    _png(fig)
    ax = fig.axes[0]
    points = {line.get_marker(): [] for line in ax.get_lines()}
    for line in ax.get_lines():
        points[line.get_marker()].append(float(line.get_xdata()[0]))
    assert sorted(points["D"]) == pytest.approx(sorted(lift["measured_lift"]))
    assert sorted(points["X"]) == pytest.approx(sorted(lift["true_lift"]))
    # The t interval, clipped to the lift's range [-1, 1] (haiku's runs past both ends at two prompts).
    spans = [tuple(line.get_xdata()) for line in ax.get_lines() if line.get_marker() in ("None", "", None)
             and len(line.get_xdata()) == 2 and line.get_xdata()[0] != line.get_xdata()[1]]
    assert (-0.80885, 1.0) in [pytest.approx(s, abs=1e-4) for s in spans]


def test_the_panel_plots_judge_accuracy_and_false_met_rate_per_item_type(frames) -> None:
    judge = frames["simulation_judge"]
    fig = figures.simulation_panel(frames["simulation_lift"], judge)
    _png(fig)
    ax = fig.axes[1]
    heights = {c.get_label(): [round(r.get_height(), 6) for r in c] for c in ax.containers}
    assert heights["accuracy"] == [round(v, 6) for v in judge["accuracy"]]
    assert heights["false-met rate"] == [round(v, 6) for v in judge["false_met_rate"]]
    assert [float(y) for line in ax.get_lines() for y in line.get_ydata()][:1] == [JUDGE_ACCURACY_FLOOR]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["must\n(n=48)", "bonus\n(n=16)", "avoid\n(n=16)"]


def test_a_week_without_truth_says_so() -> None:
    fig = figures.simulation_panel(pd.DataFrame(), pd.DataFrame())
    _png(fig)
    assert "Not a simulated week" in fig.axes[0].texts[0].get_text()
