"""No significance from nothing (issue 31): the headline is the paired lift; its CI flag reads "too few prompts"
below three pairs or with a zero SE; qdrant's cell lift is shown beside it only when a prompt graded in one arm
makes the two differ."""

from __future__ import annotations

import pandas as pd

from skillbench.scorecard import cell_scores, lift_table
from skillbench.scorecard._stats import ci_flag, ci_flag_text
from skillbench.vocab import NO_SKILL, WITH_SKILL

METRICS = {"bonus_rate": 0.0, "avoid_violations": 0.0, "composite": 0.0}


def _prompts(values: dict[str, tuple[float | None, float | None]]) -> pd.DataFrame:
    rows = [{"model": "haiku", "condition": cond, "prompt": p, "must_coverage": v, **METRICS}
            for p, pair in values.items() for cond, v in zip((NO_SKILL, WITH_SKILL), pair, strict=True)
            if v is not None]
    return pd.DataFrame(rows)


def _lift(values: dict[str, tuple[float | None, float | None]]) -> pd.Series:
    prompts = _prompts(values)
    return lift_table(prompts, cell_scores(prompts)).iloc[0]


def test_two_prompts_with_equal_differences_are_not_significant() -> None:
    """The issue's "+0.333 ± 0.000 | yes": a zero SE over two prompts proves nothing."""
    row = _lift({"p1": (0.0, 1 / 3), "p2": (1 / 3, 2 / 3)})
    assert row["must_lift_se"] == 0 and row["excludes_zero"] is pd.NA
    assert ci_flag_text(row["excludes_zero"]) == "too few prompts"


def test_three_prompts_with_spread_read_yes_or_no() -> None:
    assert bool(_lift({"p1": (0.0, 1.0), "p2": (0.0, 0.9), "p3": (0.1, 1.0)})["excludes_zero"]) is True
    assert bool(_lift({"p1": (0.0, 1.0), "p2": (1.0, 0.0), "p3": (0.5, 0.6)})["excludes_zero"]) is False
    assert ci_flag(0.5, 0.0, 0.0, 10) is pd.NA  # every dᵢ equal: SE 0 at any n


def test_a_prompt_in_one_arm_separates_the_cell_lift_from_the_paired_lift() -> None:
    row = _lift({"p1": (0.0, 1.0), "p2": (0.0, 0.5), "p3": (0.5, 1.0), "p4": (None, 0.0)})
    assert row["paired_lift"] == 2 / 3  # over p1..p3: (1 + 0.5 + 0.5) / 3
    assert row["must_lift"] == (2.5 / 4) - (0.5 / 3)  # the cells' means: p4 counts in with-skill only
    assert row["one_arm_prompts"] == 1
    assert _lift({"p1": (0.0, 1.0), "p2": (0.0, 0.5), "p3": (0.5, 1.0)})["one_arm_prompts"] == 0
