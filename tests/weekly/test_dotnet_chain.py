"""The weekly chain on a dotnet/skills tree as it is: no config file, a read-only tree, the week elsewhere."""

from __future__ import annotations

import json

import pytest

from skillbench import weekly
from tests.generation.test_generate import require_docker
from tests.helpers.shared import DOTNET, require
from tests.helpers.sim import require_cli
from tests.helpers.weekly import require_kernel

EVAL = "clr-activation-debugging"


@pytest.mark.docker
@pytest.mark.cli
def test_weekly_on_the_snapshot_tree_reports_checks_and_a_gate_verdict_per_skill(tmp_path):
    require_cli()
    require_kernel()
    require_docker()
    tree = require(DOTNET / "snapshot-1b8f2aa")
    before = sorted(p.name for p in tree.iterdir())
    opts = weekly.WeeklyOptions(suite_dir=tree, run_key="dotnet1", backend="sim", models=["haiku"], reps=1, jobs=3,
                                families=[EVAL], calibration_repeat=2, calibration_sample=4,
                                reports_dir=tmp_path / "reports", weeks_dir=tmp_path / "weeks")
    result = weekly.run_weekly(opts)
    assert result.ok, f"failed at {result.failed_stage}: {result.state['error']}"
    assert sorted(p.name for p in tree.iterdir()) == before, "nothing is written into the tree"
    page = (tmp_path / "weeks" / "dotnet1" / "scorecard.md").read_text()
    assert "## Objective checks" in page
    gate = [line for line in page.splitlines() if line.startswith(f"| {EVAL} ") and "objective n=" in line]
    assert gate, "the gate has a verdict for the skill, with its objective record"
    state = json.loads((result.report_dir / "weekly.json").read_text())
    assert state["endpoint_kind"] == "simulated"
    assert (result.report_dir / "scorecard.html").is_file()
