"""Trigger health, activation and gradeability on a comparison week: version arms are skilled arms, and the tables
that describe "the with-skill arm" describe the treatment version, never a pool of both versions."""

from __future__ import annotations

import pandas as pd
import pytest

from skillbench.arms import ArmPair
from skillbench.signals import (
    activation_counts,
    activation_summary,
    false_trigger_arms,
    self_served_baseline,
    skip_reason,
    trigger_health,
)
from tests.signals.test_trigger import _run

PAIR = ArmPair("with-skill@head", "with-skill@base", "no-skill")


@pytest.fixture
def manifest() -> pd.DataFrame:
    rows = [
        # the head version triggers on both of its runs, the base version on neither
        _run("a1", "alpha", "with-skill@head", "skill_tool", rep=1),
        _run("a1", "alpha", "with-skill@head", "file_read", rep=2),
        _run("a1", "alpha", "with-skill@base", "none", rep=1),
        _run("a1", "alpha", "with-skill@base", "none", rep=2),
        _run("a1", "alpha", "no-skill", "web_fetch", fetched=1),
        # dormancy: the base version false-triggers (not the version under test), head and plugin once each
        _run("a-dormant", "alpha", "with-skill@base", "skill_tool", dormancy=True),
        _run("a-dormant", "alpha", "with-skill@head", "skill_tool", dormancy=True),
        _run("a-dormant", "alpha", "with-skill@head", "none", dormancy=True, rep=2),
        _run("a-dormant", "alpha", "plugin", "skill_tool", dormancy=True),
    ]
    return pd.DataFrame(rows)


def test_trigger_health_reads_the_treatment_version(manifest: pd.DataFrame) -> None:
    row = trigger_health(manifest, pair=PAIR).set_index("skill_family").loc["alpha"]
    assert (row["scored_runs"], row["activations"], row["recall"]) == (2, 2, 1.0)
    # head's two dormancy runs and plugin's one; the base version's false trigger is not the head's
    assert (row["dormancy_runs"], row["false_triggers"]) == (3, 2)
    assert activation_counts(manifest, PAIR) == {"with_skill_runs": 2, "trigger_misses": 0, "web_fetch": 0,
                                                 "unreliable": 0}
    summary = activation_summary(manifest, PAIR).set_index("prompt")
    assert summary.loc["a1", "runs"] == 2 and not summary.loc["a1", "never_triggered"]
    # With the versions the other way round the base is the treatment: it never triggered.
    swapped = ArmPair("with-skill@base", "with-skill@head")
    assert activation_summary(manifest, swapped).set_index("prompt").loc["a1", "never_triggered"]
    # The weekly pair sees no plain with-skill run here at all.
    assert activation_counts(manifest)["with_skill_runs"] == 0


def test_false_trigger_arms_are_the_treatment_and_plugin() -> None:
    labels = pd.Series(["no-skill", "with-skill", "with-skill@base", "with-skill@head", "plugin", "plugin@x"])
    assert labels[false_trigger_arms(labels, PAIR)].tolist() == ["with-skill@head", "plugin", "plugin@x"]
    assert labels[false_trigger_arms(labels)].tolist() == ["with-skill", "plugin", "plugin@x"]


def test_the_no_skill_reference_still_reads_as_the_self_served_baseline(manifest: pd.DataFrame) -> None:
    assert self_served_baseline(manifest)["prompt"].tolist() == ["a1"]


@pytest.mark.parametrize(("condition", "reason"), [
    ("with-skill@main", "invalid: skill unavailable"),  # a version arm is a skilled arm: it must have its skill
    ("plugin@main", "invalid: skill unavailable"),
    ("with-skill", "invalid: skill unavailable"),
    ("no-skill", None),
])
def test_a_version_arm_without_its_skill_is_not_gradeable(condition: str, reason: str | None) -> None:
    signals = {"condition": condition, "skill_available": 0, "exit_code": 0, "is_error": 0, "budget_hit": 0}
    assert skip_reason(signals, "an answer") == reason
