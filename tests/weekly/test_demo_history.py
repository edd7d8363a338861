"""``skillbench demo-history``: four simulated weeks through the real chain, the skill edit scripted in week 4.

Two families of the bundled suite, haiku, one rep, the two arms the lift compares (no plugin arm): enough prompts
for the week-over-week rule (ready from the fourth week) to tell a scripted move from noise. The draft version is
worth nothing (``before_gain=0``), so the edit's move is the skill's whole effect, in a quiet simulated world
(``--profiles``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from skillbench.cli import main
from skillbench.weekly import DemoOptions, WeeklyOptions, run_demo
from skillbench.weekly._demo import FAMILY_RULE, HEADLINE, MOVERS
from skillbench.weekly._demo_story import DRAFT_SUFFIX, SKILL_EDIT, draft_text
from tests.helpers.sim import forced, require_cli, write_profiles
from tests.helpers.weekly import require_kernel

BUNDLED = Path(__file__).resolve().parents[2] / "evals"
FAMILIES = ["time-series-pandas", "regression-statsmodels"]
EDITED = "regression-statsmodels"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict:
    require_cli()
    require_kernel()
    reports = tmp_path_factory.mktemp("demo-reports")
    # A decided world (every listed skill is used and fully read, every outcome 0 or 1, a judge that never errs):
    # the test is that the edit reaches the runs, the history and the rule end to end; how often the rule sees a
    # move through real noise is benchmarks/validity.py's question (the demo's page says so either way).
    profile = forced(trigger=1.0, trigger_floor=1.0, follow_link=1.0, must={"without": 0.0, "with": 1.0})
    base = write_profiles(reports / "base-profiles.yaml", {"default": profile},
                          judges={"default": {"flip_rate": 0.0, "fabricated_quote_rate": 0.0, "position_bias": 0.0}})
    # the lift is with-skill − no-skill: a plugin arm would add a third of the runs and nothing the story reads;
    # the local sandbox: the story is the point here, and four weeks of containers cost CI a minute (the chain in
    # Docker is the tiny chain's and the generation tests')
    weekly = WeeklyOptions(suite_dir=BUNDLED, backend="sim", models=["haiku"], reps=1, families=FAMILIES, jobs=3,
                           conditions=["no-skill", "with-skill"], calibration_repeat=2, seed=5, reports_dir=reports,
                           sandbox="local")
    result = run_demo(DemoOptions(weekly=weekly, weeks=4, edit_week=4, drift_week=0, judge_week=0, edit_family=EDITED,
                                  before_gain=0.0, base_profiles=base), log=lambda line: None)
    return {"result": result, "reports": reports}


def test_the_demo_writes_four_complete_weeks_and_the_story(demo):
    result, reports = demo["result"], demo["reports"]
    assert result.ok, result.failed
    for week in range(1, 5):
        state = json.loads((reports / f"demo-w{week:02d}" / "weekly.json").read_text())
        assert state["status"] == "complete"
    history = pd.read_csv(result.out_dir / "suite" / "weekly" / "scorecard-history.csv", dtype=str)
    assert sorted(history["run_key"]) == [f"demo-w0{w}" for w in range(1, 5)] and set(history["model"]) == {"haiku"}
    story = json.loads((result.out_dir / "demo-story.json").read_text())
    assert [(m["week"], m["kind"], m["target"]) for m in story["moves"]] == [(4, SKILL_EDIT, EDITED)]
    assert story["left_out"] and "model drift" in story["left_out"][0]
    assert not (BUNDLED / "weekly" / "demo-w01").exists()  # the demo runs a copy; the bundled suite is untouched


def test_the_edit_is_in_the_runs_and_the_rule_catches_it(demo):
    result = demo["result"]
    weekly = result.out_dir / "suite" / "weekly"

    def trees(week: int) -> set[str]:
        m = pd.read_csv(weekly / f"demo-w{week:02d}" / "manifest.csv", dtype=str, keep_default_na=False)
        return set(m.loc[m["condition"].eq("with-skill") & m["skill_family"].eq(EDITED), "skills_tree"])

    assert trees(1) == trees(2) == trees(3) and trees(3) != trees(4)  # the draft, then the real skill
    lifts = result.weeks.set_index("week")["must_lift"]
    assert lifts[4] > lifts[[1, 2, 3]].max()
    # The edit is read by the headline rule (haiku), the family's paired rule and the per-prompt movers.
    rows = result.caught.set_index("by")
    assert sorted(rows.index) == sorted([HEADLINE, FAMILY_RULE, MOVERS])
    move = rows.loc[HEADLINE].to_dict()
    assert move["week"] == 4 and move["expected"] == "up" and move["delta"] > 0
    assert move["rule"] == "yes" and move["caught"], move
    # A decided world: every edited prompt's lift goes from 0 to exactly 1 — no spread, so no noise band to read
    # the family's or a prompt's move against (n/a, never a band of width 0).
    assert rows.loc[FAMILY_RULE, "delta"] == 1.0 and rows.loc[FAMILY_RULE, "rule"].startswith("n/a")
    assert rows.loc[MOVERS, "rule"].startswith("0 of ") and not rows.loc[MOVERS, "caught"]
    assert (result.weeks[result.weeks["week"] < 4]["actionable"] == "not ready").all()
    page = result.page.read_text()
    assert "## Did the measurement catch them?" in page and "| caught" in page
    assert f"- **{SKILL_EDIT}** ({EDITED}, week 4): caught by the {HEADLINE}" in page
    assert (result.out_dir / "demo.html").is_file() and (result.out_dir / "explore_weeks.html").is_file()


def test_draft_text_changes_only_the_description():
    real = (BUNDLED / "skills" / EDITED / "SKILL.md").read_text()
    draft = draft_text(real)
    assert draft != real and DRAFT_SUFFIX.strip() in draft.split("\n---\n", 1)[0]
    assert draft.split("\n---\n", 1)[1] == real.split("\n---\n", 1)[1]


def test_an_unknown_family_is_one_usage_line(tmp_path, capsys):
    code = main(["demo-history", "--weeks", "2", "--edit-family", "no-such-family", "--reports", str(tmp_path),
                 "--families", "time-series-pandas"])
    assert code == 2
    err = capsys.readouterr().err
    assert "no-such-family" in err and len(err.strip().splitlines()) == 1
