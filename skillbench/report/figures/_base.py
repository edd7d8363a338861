"""What every figure shares: colours fixed per meaning, the Figure factory, the empty-input figure."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import seaborn as sns
from matplotlib.colors import to_hex, to_rgb
from matplotlib.figure import Figure

from skillbench.arms import DEFAULT_PAIR, ArmPair, arm_kind
from skillbench.scorecard import t_critical
from skillbench.vocab import LOSS, NO_SKILL, PLUGIN, TIE, WIN, WITH_SKILL

ROUTES = ("skill_tool", "file_read", "web_fetch", "none")


ROUTE_COLORS = {"skill_tool": "#2a9d5c", "file_read": "#3f7fbf", "web_fetch": "#e39b2d", "none": "#b9bec4",
                "(empty)": "#e5e7ea"}


OUTCOME_COLORS = {WIN: "#2a9d5c", TIE: "#b9bec4", LOSS: "#c8553d"}


ARM_COLORS = {NO_SKILL: "#8a94a0", WITH_SKILL: "#2a9d5c", PLUGIN: "#7a5cb8"}
OTHER_ARM = "#444444"  # a label of no known arm
CONTROL_TINT = 0.5  # a version arm that is the control: its arm's colour mixed halfway with white
OTHER_VERSION_TINT = 0.25  # any other version arm of a comparison


def _tint(color: str, amount: float) -> str:
    """``color`` mixed with white by ``amount`` (0: unchanged, 1: white)."""
    return to_hex(tuple(c + (1.0 - c) * amount for c in to_rgb(color)))


def arm_color(condition: str, pair: ArmPair = DEFAULT_PAIR) -> str:
    """The colour of an arm label: a plain arm's :data:`ARM_COLORS`; a version arm (``with-skill@main``) its
    arm's colour, full for the treatment and lighter for the control (and any other version), so the two
    versions of a comparison stay apart and still read as the same arm."""
    base = ARM_COLORS.get(arm_kind(condition))
    if base is None:
        return OTHER_ARM
    if condition == pair.control and arm_kind(condition) == arm_kind(pair.treatment):
        return _tint(base, CONTROL_TINT)  # two versions of one arm: the control is the lighter one
    if condition in ARM_COLORS or condition == pair.treatment:
        return base
    return _tint(base, OTHER_VERSION_TINT)


def arm_colors(conditions: Iterable[str], pair: ArmPair = DEFAULT_PAIR) -> dict[str, str]:
    """A palette for these labels (:func:`arm_color`), e.g. seaborn's ``palette=``."""
    return {str(c): arm_color(str(c), pair) for c in conditions}


Z95 = t_critical(np.inf)  # error bars: ± z·SE


def _figure(width: float, height: float, ncols: int = 1, nrows: int = 1, **kw) -> tuple[Figure, np.ndarray]:
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, **kw)
    return fig, axes


def outside_legend(ax: Any, **kw: Any) -> None:
    """The axes' legend to the right of its plot, never over it: stacked shares reach the axes' edge and dots sit
    anywhere, so a legend inside covers some (the constrained layout makes room beside the axes)."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False,
              **{"fontsize": 8, **kw})


def _empty(title: str, message: str) -> Figure:
    fig, axes = _figure(6, 1.6)
    ax = axes[0, 0]
    ax.axis("off")
    ax.set_title(title, loc="left")
    ax.text(0.0, 0.4, message, transform=ax.transAxes, color="#69737d")
    return fig


def _palette(models: Sequence[str]) -> dict[str, tuple]:
    """One colour per model, the same in every figure: by family name (sonnet, haiku, opus), else in order."""
    deep = sns.color_palette("deep", 10)
    fixed = {"sonnet": deep[0], "haiku": deep[1], "opus": deep[4]}
    out, spare = {}, iter(c for i, c in enumerate(deep) if i not in (0, 1, 4))
    for m in models:
        family = next((k for k in fixed if k in str(m).lower()), None)
        out[m] = fixed[family] if family else next(spare, deep[7])
    return out
