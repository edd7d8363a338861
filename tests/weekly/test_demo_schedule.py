"""The demo's story falls inside the weeks it runs, whatever ``--weeks`` is (issue 32: at ``--weeks 4`` every
scripted move used to fall outside): the moves' weeks scale with the length unless given."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillbench.suite import load_suite
from skillbench.weekly import DemoOptions
from skillbench.weekly._demo_story import (
    JUDGE_DRIFT,
    MODEL_DRIFT,
    RULE_READY_WEEK,
    SKILL_EDIT,
    plan_story,
    scaled_schedule,
)

BUNDLED = Path(__file__).resolve().parents[2] / "evals"


@pytest.mark.parametrize(("weeks", "expected"), [
    (8, (5, 7, 8)),   # the command's old defaults, kept at its default length
    (4, (4, 0, 4)),   # the rule's first verdict is week 4: the edit lands there; no week is left for the drift
    (5, (4, 5, 5)),
    (6, (4, 6, 6)),
    (12, (8, 11, 12)),
    (2, (2, 0, 2)),   # shorter than the rule needs: inside the weeks, and the page says the rule needs four
])
def test_the_schedule_scales_with_the_length(weeks: int, expected: tuple[int, int, int]) -> None:
    edit, drift, judge = scaled_schedule(weeks)
    assert (edit, drift, judge) == expected
    assert 1 <= edit <= weeks and judge == weeks and (drift == 0 or edit < drift <= weeks)
    assert edit >= min(weeks, RULE_READY_WEEK)


def test_a_four_week_demo_has_its_story_inside_and_says_what_it_left_out() -> None:
    suite = load_suite(BUNDLED)
    story = plan_story(suite, DemoOptions(weekly=None, weeks=4), models=["haiku", "sonnet"], judge_model="j")
    assert [(m.week, m.kind) for m in story.moves] == [(4, SKILL_EDIT), (4, JUDGE_DRIFT)]
    assert len(story.left_out) == 1 and story.left_out[0].startswith(MODEL_DRIFT)
    assert "no week after the skill edit in 4 weeks" in story.left_out[0]
    # a week given on the command line is kept as given, even outside the demo (and said so)
    given = plan_story(suite, DemoOptions(weekly=None, weeks=4, edit_week=6, drift_week=0, judge_week=0),
                       models=["haiku"], judge_model="j")
    assert given.moves == [] and any("week 6 is outside weeks 1–4" in note for note in given.left_out)
    assert sum("not scheduled: week 0" in note for note in given.left_out) == 2
