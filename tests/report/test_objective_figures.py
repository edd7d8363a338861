"""Objective figures draw what the objective frames hold: pass@k/pass^k lines and stacked transition bars."""

from __future__ import annotations

import io

import pandas as pd

from skillbench.report import figures
from skillbench.vocab import TRANSITIONS


def _png(fig) -> None:
    fig.savefig(io.BytesIO(), format="png")


def test_pass_k_curves_draw_one_solid_and_one_dashed_line_per_arm():
    arms = {"no-skill": [(1, 0.2, 0.2), (2, 0.3, 0.1)], "with-skill": [(1, 0.5, 0.5), (2, 0.8, 0.2)]}
    pass_k = pd.DataFrame([{"model": "haiku", "condition": c, "k": k, "stimuli": 6, "pass_at_k": a, "pass_hat_k": h}
                           for c, rows in arms.items() for k, a, h in rows])
    fig = figures.pass_k_curves(pass_k)
    _png(fig)
    lines = {line.get_label(): list(line.get_ydata()) for line in fig.axes[0].get_lines()}
    assert lines["with-skill pass@k"] == [0.5, 0.8] and lines["with-skill pass^k"] == [0.5, 0.2]
    assert lines["no-skill pass^k"] == [0.2, 0.1]


def test_transition_bars_stack_each_kind_per_model():
    counts = pd.DataFrame([{"model": "haiku", **dict(zip(TRANSITIONS, (3, 1, 1, 1), strict=True))}])
    fig = figures.transition_bars(counts)
    _png(fig)
    widths = {c.get_label(): [r.get_width() for r in c] for c in fig.axes[0].containers}
    assert widths == {"skilled-only": [3], "baseline-only": [1], "both": [1], "neither": [1]}


def test_empty_objective_frames_say_so():
    for fig in (figures.pass_k_curves(pd.DataFrame()), figures.transition_bars(pd.DataFrame())):
        _png(fig)
        assert fig.axes[0].texts and fig.axes[0].texts[0].get_text()
