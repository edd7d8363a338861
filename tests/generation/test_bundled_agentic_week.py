"""The bundled agentic family end to end: real CLI, real sealed containers, the simulated endpoint.

Every check of every run graded in its container (checks.csv) agrees with what the simulation decided
(truth.csv), the week owes no check row, and the scorecard shows the objective layer beside the rubric.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillbench.ledgers import CHECKS_FILE, load_week, read_checks
from skillbench.paths import DEFAULT_SUITE as EVALS_DIR
from skillbench.scorecard import compute_scorecard, render_markdown
from tests.generation.test_generate import require_docker
from tests.helpers.sim import assert_checks_agree_with_truth, generate_sim_week, require_cli

FAMILY = "analysis-debugging"
# Three of the family's seven tasks cover every case this week is about: every check type the family uses
# (file_matches only in the merge task), run_command checks that pass (dayfirst) and fail (merge), output checks
# both ways, and the dormancy chore that runs with-skill only. Each bundled task's own checks are shown real in
# the runner image by tests/suite/test_bundled_tasks.py; running all seven here cost 26 container runs (48 s in CI).
LIFT_PROMPTS = ["debug-dayfirst-dates", "debug-merge-duplicate-keys"]
DORMANCY_PROMPT = "dormancy-debug-rename-exports"
REPS = 2


@pytest.fixture(scope="module")
def agentic_week(tmp_path_factory) -> Path:
    """One haiku pass over three of the family's prompts, both lift arms, 2 reps (10 runs: the dormancy task runs
    with-skill only)."""
    require_docker()
    require_cli()
    return generate_sim_week(EVALS_DIR, tmp_path_factory.mktemp("agentic") / "wk", run_key="agentic",
                             conditions=["no-skill", "with-skill"], reps=REPS, seed=11, families=[FAMILY],
                             prompts=[*LIFT_PROMPTS, DORMANCY_PROMPT])


@pytest.mark.docker
@pytest.mark.cli
def test_every_check_agrees_with_the_simulations_truth(agentic_week):
    assert_checks_agree_with_truth(agentic_week, min_rows=1)
    checks = read_checks(agentic_week / CHECKS_FILE)
    # the checks really discriminate: some run_command checks pass (solution written) and some fail
    commands = checks[checks["check_type"] == "run_command"]["status"]
    assert set(commands) == {"passed", "failed"}
    # the three tasks still cover what the family's seven do: every check type, and the dormancy chore's checks
    assert set(checks["check_type"]) == {"run_command", "output_matches", "reject_tools", "file_matches"}
    assert set(checks["prompt"]) == {*LIFT_PROMPTS, DORMANCY_PROMPT}


@pytest.mark.docker
@pytest.mark.cli
def test_the_scorecard_shows_the_objective_layer(agentic_week):
    week = load_week(agentic_week)
    data = compute_scorecard(week, n_resamples=200)
    assert data.has_checks
    assert not [f for f in week.reconciliation.findings if "checks.csv" in f], "no check row is owed"
    rates = data.objective["check_rates"].set_index("condition")
    # dormancy left out
    assert set(rates.index) == {"no-skill", "with-skill"} and rates["runs"].sum() == 2 * REPS * len(LIFT_PROMPTS)
    assert set(data.objective["pass_k"]["k"]) == {1, 2}
    # the dormancy chore runs with-skill only
    assert sorted(data.objective["transitions"]["prompt"].unique()) == LIFT_PROMPTS
    page = render_markdown(data)
    for heading in ("## Objective checks", "### pass@k and pass^k", "### Objective completion transitions",
                    "### Task pass lift"):
        assert heading in page


@pytest.mark.docker
@pytest.mark.cli
def test_a_lost_check_row_makes_the_week_incomplete(agentic_week, tmp_path):
    recorded = json.loads((agentic_week / "reconciliation.json").read_text())
    checks = read_checks(agentic_week / CHECKS_FILE)
    assert recorded["checks_expected"] == len(checks) and recorded["checks_missing"] == []
    week = tmp_path / "wk"
    shutil.copytree(agentic_week, week)
    lines = (week / CHECKS_FILE).read_text().splitlines(keepends=True)
    (week / CHECKS_FILE).write_text("".join(lines[:-1]))  # one row lost
    rec = load_week(week).reconciliation
    assert not rec.is_complete and rec.checks_missing == [f"{checks.iloc[-1]['run_id']}/{checks.iloc[-1]['check_id']}"]
    assert "skillbench signals" in rec.findings[-1]
