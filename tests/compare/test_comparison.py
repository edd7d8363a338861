"""Planning a comparison: refs, change discovery and the refusals that write nothing (no runs, no Docker)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from skillbench.arms import ArmPair, ConditionError, arm_kind, arm_ref, check_condition
from skillbench.cli import main
from skillbench.compare import CompareError, json_schema, plan_comparison, shipped_schema
from skillbench.compare._verdicts import (
    IMPROVEMENT,
    INVALID,
    PREFERENCE_LOSS,
    REGRESSION,
    compare_verdicts,
    exit_code,
    preference_loss,
)
from skillbench.generation import PlanError
from skillbench.generation._versions import arm_versions, install_dirs
from skillbench.suite import load_suite
from tests.helpers.git import commit_all, git

BUNDLED = Path(__file__).resolve().parents[2] / "evals"
FAMILY = "regression-statsmodels"


@pytest.fixture
def repo(tmp_path) -> Path:
    """The bundled suite as the whole repository, one commit."""
    root = tmp_path / "repo"
    shutil.copytree(BUNDLED, root, ignore=shutil.ignore_patterns("weekly", "compare"))
    git(root, "init", "-q")
    commit_all(root, "A")
    return root


def test_condition_labels():
    assert (arm_kind("with-skill@origin/main"), arm_ref("with-skill@origin/main")) == ("with-skill", "origin/main")
    assert check_condition("plugin@v1.2") == "plugin@v1.2"
    for bad, why in (("no-skill@main", "installs nothing"), ("with-skill@", "names no ref"),
                     ("skilled@main", "unknown condition"), ("with-skill@-x", "must not start")):
        with pytest.raises(ConditionError, match=why):
            check_condition(bad)
    pair = ArmPair("with-skill@HEAD", "with-skill@main", "no-skill")
    assert pair.lift_arms == ("with-skill@main", "with-skill@HEAD") and not pair.is_default
    assert pair.graded_arms == ("with-skill@main", "with-skill@HEAD", "no-skill")
    with pytest.raises(ConditionError):
        ArmPair("with-skill", "with-skill")


def test_changed_family_and_changed_prompt_are_planned_and_nothing_else(repo):
    skill = repo / "skills" / FAMILY / "SKILL.md"
    skill.write_text(skill.read_text() + "\nOne more rule.\n")
    prompt = repo / "test-prompts" / "ts-asof-join-quotes.json"
    data = json.loads(prompt.read_text())
    data["prompt"] += " Please be brief."
    prompt.write_text(json.dumps(data, indent=2))
    (repo / "NOTES.md").write_text("not part of any run\n")
    commit_all(repo, "B")
    comp = plan_comparison(load_suite(repo), "HEAD~1")
    assert comp.changes.families == [FAMILY, "time-series-pandas"]
    assert comp.changes.prompts == ["ts-asof-join-quotes"]
    assert "NOTES.md" in comp.changes.files and comp.changes.added == [] == comp.changes.removed
    assert {p.family for p in comp.suite.prompts} == {FAMILY, "time-series-pandas"}
    assert comp.conditions == ["no-skill", "with-skill@HEAD~1", "with-skill@HEAD"]
    assert comp.run_key.startswith("compare-") and len(comp.run_key.split("-")) == 3


def test_a_dirty_tree_is_refused_unless_allowed_and_then_its_diff_is_recorded(repo, tmp_path, capsys):
    skill = repo / "skills" / FAMILY / "SKILL.md"
    skill.write_text(skill.read_text() + "\nAn uncommitted rule.\n")
    (repo / "weekly").mkdir()  # results in the tree are not a version of the skills
    (repo / "weekly" / "x.csv").write_text("a\n1\n")
    assert main(["compare", str(repo), "--base", "HEAD", "--backend", "sim"]) == 1
    err = capsys.readouterr().err
    assert "working tree differs from HEAD" in err and "skills/regression-statsmodels/SKILL.md" in err
    assert "--allow-dirty" in err and len(err.strip().splitlines()) == 1
    assert not (repo / "compare").exists()  # refused before anything is written
    comp = plan_comparison(load_suite(repo), "HEAD", allow_dirty=True)
    assert comp.head.diff and "-dirty-" in comp.run_key and comp.changes.families == [FAMILY]


def test_refusals_are_one_line_naming_what_to_fix(repo, capsys):
    suite = load_suite(repo)
    with pytest.raises(CompareError, match="names no commit"):
        plan_comparison(suite, "no-such-branch")
    with pytest.raises(CompareError, match="same commit"):
        plan_comparison(suite, "HEAD")
    new = repo / "skills" / "brand-new-skill"
    new.mkdir()
    (new / "SKILL.md").write_text("---\nname: brand-new-skill\ndescription: Use for nothing yet.\n---\n# New\n")
    commit_all(repo, "a family without prompts")
    # not refused: said before any run (it can never pass, and how many prompts it needs), and not run
    comp = plan_comparison(load_suite(repo), "HEAD~1")
    assert comp.changes.families == ["brand-new-skill"] == comp.changes.added and comp.measured == []
    assert comp.weeks(repo / "run") == []
    [note] = [n for n in comp.notes if n.startswith("brand-new-skill")]
    assert "0 preference-eligible prompt(s)" in note and "can never pass" in note and "add 5" in note


def test_a_family_new_at_the_head_installs_nothing_in_the_base_arm(repo, tmp_path):
    skill = repo / "skills" / FAMILY
    shutil.move(skill, repo / "moved")
    commit_all(repo, "the family is not there at the base")
    shutil.move(repo / "moved", skill)
    commit_all(repo, "the family is back")
    comp = plan_comparison(load_suite(repo), "HEAD~1")
    assert comp.changes.added == [FAMILY] and comp.changes.families == [FAMILY]
    versions = comp.versions(tmp_path / "run")
    base = versions[comp.arms.control]
    assert install_dirs(comp.suite, base, FAMILY, comp.arms.control) == []
    assert [d.name for d in install_dirs(comp.suite, versions[comp.arms.treatment], FAMILY,
                                         comp.arms.treatment)] == [FAMILY]


def test_a_nothing_changed_comparison_reports_so_and_passes(repo, capsys):
    (repo / "NOTES.md").write_text("docs only\n")
    commit_all(repo, "docs")
    assert main(["compare", str(repo), "--base", "HEAD~1", "--fail-on", "no-improvement", "--backend", "sim"]) == 0
    report = Path(capsys.readouterr().out.strip())
    assert "nothing to evaluate" in report.read_text()
    results = json.loads(report.with_name("results.json").read_text())
    assert results["verdicts"] == [] and results["exit_code"] == 0


def test_a_resumed_week_refuses_a_ref_that_moved(repo, tmp_path):
    suite = load_suite(repo)
    with pytest.raises(PlanError, match="ran commit 000000000000 and now resolves to"):
        arm_versions(suite, ["with-skill@HEAD"], tmp_path,
                     recorded={"with-skill@HEAD": {"ref": "HEAD", "commit": "0" * 40, "diff": ""}})


def test_results_schema_is_the_shipped_file():
    assert shipped_schema() == json_schema()  # regenerate with skillbench.compare._results.write_schema


def test_findings_and_exit_codes():
    gate = pd.DataFrame([
        {"skill_family": "a", "model": "m", "state": "VALID_PASS", "reason": "", "n": 6, "wins": 6, "ties": 0,
         "losses": 0, "p_value": 0.0156, "net_win": 1.0, "evidence": "e"},
        {"skill_family": "b", "model": "m", "state": "VALID_NO_CHANGE", "reason": "no_positive_direction", "n": 6,
         "wins": 0, "ties": 0, "losses": 6, "p_value": 1.0, "net_win": -1.0, "evidence": "e"},
        {"skill_family": "c", "model": "m", "state": "VALID_REGRESSION", "reason": "objective_loss", "n": 6,
         "wins": 3, "ties": 0, "losses": 3, "p_value": 0.6, "net_win": 0.0, "evidence": "e"}])
    v = compare_verdicts(gate, ["a", "b", "c", "d"], ["m"])
    found = dict(zip(v["skill_family"], v["finding"], strict=True))
    assert found == {"a": IMPROVEMENT, "b": PREFERENCE_LOSS, "c": REGRESSION, "d": INVALID}
    assert list(v["finding"])[0] == REGRESSION  # worst first
    assert v.set_index("skill_family").at["d", "verdict"] == "INVALID_INCONCLUSIVE (underpowered)"
    assert exit_code(v, None) == 0 and exit_code(v, "regression") == 1 and exit_code(v, "no-improvement") == 1
    only_loss = v[v["skill_family"].isin(["a", "b"])]
    assert exit_code(only_loss, "regression") == 0 and exit_code(only_loss, "no-improvement") == 1
    assert preference_loss(6, 0, 6) and not preference_loss(4, 0, 4) and not preference_loss(10, 3, 5)


def test_a_skill_creator_skill_folder_compares_too(tmp_path):
    """The skill's own folder is the suite (its evals inside it): the family is the folder itself."""
    folder = tmp_path / "skill-creator-example"
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "skill-creator-example", folder)
    git(tmp_path, "init", "-q")
    commit_all(tmp_path, "A")
    skill = folder / "SKILL.md"
    skill.write_text(skill.read_text() + "\nOne more rule.\n")
    commit_all(tmp_path, "B")
    comp = plan_comparison(load_suite(folder), "HEAD~1")
    assert comp.changes.families == ["skill-creator-example"] and comp.changes.added == []
    base_dir = comp.versions(tmp_path / "run")[comp.arms.control].family_dir(comp.suite, "skill-creator-example")
    assert base_dir is not None and "One more rule." not in (base_dir / "SKILL.md").read_text()
