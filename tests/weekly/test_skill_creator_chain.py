"""The weekly chain on a skill folder written with skill-creator: lift, the gate and trigger health, no config."""

from __future__ import annotations

import pytest

from skillbench import weekly
from tests.helpers.shared import DATA_DIR
from tests.helpers.sim import require_cli
from tests.helpers.weekly import require_kernel


@pytest.mark.cli
def test_weekly_on_a_skill_folder_reports_lift_gate_and_trigger_health(tmp_path):
    require_cli()
    require_kernel()
    folder = DATA_DIR / "skill-creator-example"
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    # the local sandbox: the chain on a skill folder is the point (its runs in Docker are
    # tests/generation/test_skill_creator_week.py's), and CI's time is better spent there
    opts = weekly.WeeklyOptions(suite_dir=folder, run_key="sc1", backend="sim", models=["haiku"], reps=1, jobs=3,
                                calibration_repeat=2, calibration_sample=3, reports_dir=tmp_path / "reports",
                                weeks_dir=tmp_path / "weeks", sandbox="local")
    result = weekly.run_weekly(opts)
    assert result.ok, f"failed at {result.failed_stage}: {result.state['error']}"
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before, "nothing is written into the skill"
    page = (tmp_path / "weeks" / "sc1" / "scorecard.md").read_text()
    lift = page.split("## Lift per model", 1)[1].split("\n## ", 1)[0]
    assert "| haiku |" in lift
    health = page.split("## Trigger health per skill family", 1)[1].split("\n## ", 1)[0]
    assert "| skill-creator-example |" in health
    gate = page.split("## Preference gate", 1)[1].split("\n## ", 1)[0]
    assert "| skill-creator-example | haiku |" in gate
