"""A skill written with skill-creator, run as it is: its evals graded, its trigger queries feeding trigger health.

The worked example (``tests/data/skill-creator-example``): real CLI, sealed containers, the simulated endpoint.
Should-trigger queries run with-skill only and are never judged; should-not queries are dormancy prompts; the
skill's own ``evals/`` folder (expectations, expected answers) is never installed with it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from skillbench.cli import main
from skillbench.generation import skill_entries
from skillbench.ledgers import MANIFEST_FILE, METADATA_FILE, SCORES_FILE, SKILL_EVALS_DIR, load_week, read_manifest
from skillbench.scorecard import compute_scorecard
from skillbench.suite import load_suite
from tests.generation.test_generate import require_docker
from tests.helpers.shared import DATA_DIR
from tests.helpers.sim import generate_sim_week, require_cli

EXAMPLE = DATA_DIR / "skill-creator-example"


def test_the_skills_evals_folder_is_never_installed():
    suite = load_suite(EXAMPLE)
    (family,) = suite.families
    installed = [rel for rel, _, _ in skill_entries(suite.family_dir(family))]
    assert "SKILL.md" in installed
    assert not [r for r in installed if r == SKILL_EVALS_DIR or r.startswith(f"{SKILL_EVALS_DIR}/")]


@pytest.fixture(scope="module")
def example_week(tmp_path_factory) -> Path:
    require_docker()
    require_cli()
    return generate_sim_week(EXAMPLE, tmp_path_factory.mktemp("skill-creator") / "wk", run_key="sc", seed=2,
                             conditions=["no-skill", "with-skill"])


@pytest.mark.docker
@pytest.mark.cli
def test_every_eval_and_trigger_query_is_accounted_for(example_week):
    suite = load_suite(EXAMPLE)
    manifest = read_manifest(example_week / MANIFEST_FILE)
    evals = [p for p in suite.prompts if not p.dormancy and not p.trigger_only]
    triggers = [p for p in suite.prompts if p.trigger_only]
    dormant = [p for p in suite.prompts if p.dormancy]
    assert evals and triggers and dormant
    runs = manifest.groupby("prompt")["condition"].agg(lambda c: sorted(set(c)))
    assert all(runs[p.name] == ["no-skill", "with-skill"] for p in evals)
    assert all(runs[p.name] == ["with-skill"] for p in triggers + dormant)
    assert manifest.loc[manifest["prompt"].isin({p.name for p in triggers}), "trigger_only"].all()
    assert json.loads((example_week / "reconciliation.json").read_text())["complete"]
    meta = [json.loads(p.read_text()) for p in example_week.glob(f"*/{METADATA_FILE}")]
    assert any(w for m in meta for w in m.get("workspace", [])), "an eval's files reached the workspace"


@pytest.mark.docker
@pytest.mark.cli
def test_trigger_queries_are_never_judged_and_feed_trigger_health(example_week):
    assert main(["judge", str(example_week), "--backend", "sim"]) == 0
    scores = pd.read_csv(example_week / SCORES_FILE, dtype=str)
    suite = load_suite(EXAMPLE)
    assert not set(scores["prompt"]) & {p.name for p in suite.prompts if p.trigger_only or p.dormancy}
    data = compute_scorecard(load_week(example_week), n_resamples=100)
    assert not data.incomplete, data.incomplete_reasons
    reasons = data.coverage.set_index("prompt")["reason"]
    assert all(reasons[p.name] == "trigger query (trigger recall only)" for p in suite.prompts if p.trigger_only)
    health = data.trigger_health.iloc[0]
    triggered = sum(1 for p in suite.prompts if not p.dormancy)  # evals and should-trigger queries, with-skill
    assert health["scored_runs"] == triggered and health["dormancy_runs"] == sum(p.dormancy for p in suite.prompts)
