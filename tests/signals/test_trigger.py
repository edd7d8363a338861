"""Trigger health, activation counts and the self-served caveat on a hand-made manifest with known answers."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from skillbench.signals import (
    activation_counts,
    activation_summary,
    never_triggered,
    self_served_baseline,
    trigger_health,
)


def _run(prompt: str, family: str, condition: str, activation: str, *, dormancy: bool = False, ok: int = 1,
         rep: int = 1, fetched: int = 0) -> dict:
    model = "sonnet"
    return {"run_id": f"{prompt}-{model}-{condition}-r{rep}-{activation}", "prompt": prompt, "skill_family": family,
            "model": model, "condition": condition, "rep": rep, "dormancy": dormancy, "skill_activation": activation,
            "signals_ok": ok, "reached_leaf": int(activation != "none"), "fetched_site": fetched,
            "fetched_count": fetched}


@pytest.fixture
def manifest() -> pd.DataFrame:
    rows = [
        # family "alpha": 4 reliable with-skill runs on its own prompts, 3 activated by three routes
        _run("a1", "alpha", "with-skill", "skill_tool", rep=1),
        _run("a1", "alpha", "with-skill", "file_read", rep=2),
        _run("a2", "alpha", "with-skill", "web_fetch", rep=1),
        _run("a2", "alpha", "with-skill", "none", rep=2),
        # an unparsed transcript is not evidence of anything: left out of every count
        _run("a2", "alpha", "with-skill", "skill_tool", rep=3, ok=0),
        # the no-skill arm never counts as a trigger, even when it self-served the published skill
        _run("a1", "alpha", "no-skill", "web_fetch", fetched=1),
        _run("a2", "alpha", "no-skill", "none"),
        # alpha's dormancy prompt: 4 runs in the skilled arms, 1 false trigger
        _run("a-dormant", "alpha", "with-skill", "none", dormancy=True, rep=1),
        _run("a-dormant", "alpha", "with-skill", "skill_tool", dormancy=True, rep=2),
        _run("a-dormant", "alpha", "plugin", "none", dormancy=True, rep=1),
        _run("a-dormant", "alpha", "plugin", "none", dormancy=True, rep=2),
        # family "beta": never triggers, and has no dormancy prompt
        _run("b1", "beta", "with-skill", "none", rep=1),
        _run("b1", "beta", "with-skill", "none", rep=2),
    ]
    return pd.DataFrame(rows)


def test_trigger_health_counts_recall_false_triggers_precision_and_f1(manifest):
    health = trigger_health(manifest).set_index("skill_family")
    alpha = health.loc["alpha"]
    assert (alpha["scored_runs"], alpha["activations"]) == (4, 3)
    assert (alpha["dormancy_runs"], alpha["false_triggers"]) == (4, 1)
    assert alpha["recall"] == pytest.approx(0.75)
    assert alpha["false_trigger_rate"] == pytest.approx(0.25)
    assert alpha["precision"] == pytest.approx(3 / 4)
    assert alpha["f1"] == pytest.approx(0.75)
    beta = health.loc["beta"]
    assert (beta["scored_runs"], beta["activations"], beta["recall"]) == (2, 0, 0.0)
    # without dormancy runs precision is unknown, not 1, and so is F1
    assert beta["dormancy_runs"] == 0 and math.isnan(beta["precision"]) and math.isnan(beta["f1"])


def test_trigger_health_by_model_splits_the_counts(manifest):
    other = manifest.assign(model="haiku", run_id=manifest["run_id"] + "-h")
    health = trigger_health(pd.concat([manifest, other], ignore_index=True), by=("skill_family", "model"))
    assert len(health) == 4
    assert set(health.loc[health["skill_family"] == "alpha", "activations"]) == {3}


def test_activation_counts_and_misses(manifest):
    counts = activation_counts(manifest)
    # with-skill runs of scored prompts: alpha 5 (one unreliable) + beta 2
    assert counts == {"with_skill_runs": 7, "trigger_misses": 3, "web_fetch": 1, "unreliable": 1}


def test_activation_summary_and_never_triggered(manifest):
    summary = activation_summary(manifest).set_index("prompt")
    assert summary.loc["a2", "runs"] == 3 and summary.loc["a2", "trigger_misses"] == 1
    assert summary.loc["a2", "unreliable"] == 1
    assert never_triggered(summary.reset_index()) == ["b1"]
    assert "a-dormant" not in summary.index, "dormancy prompts are not in the activation section"


def test_self_served_baseline_lists_no_skill_runs_that_fetched_the_site(manifest):
    served = self_served_baseline(manifest)
    assert list(served["prompt"]) == ["a1"] and list(served["fetched_count"]) == [1]
