"""``skillbench compare`` on a repository laid out like qdrant/skills: ``skills/`` beside ``evals/``, absolute
``skill_url``s on a site base, no ``skillbench.toml`` in any commit, and pull requests merged as merge commits.

The history (all synthetic): a first commit with family ``alpha`` and its prompts; a merge that edits
``skills/alpha/SKILL.md`` (only the skills root changes); a merge that adds family ``beta`` with one prompt and a
held-out one. Planning is tested without runs; one end-to-end run (1 model, 1 rep, the new family's two runs)
goes through the CLI on the simulated endpoint.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from skillbench.cli import main
from skillbench.compare import CompareError, plan_comparison
from skillbench.compare._verdicts import IMPROVEMENT, INVALID, exit_code
from skillbench.suite import SuiteOverrides, load_suite, preflight
from tests.generation.test_generate import require_docker
from tests.helpers.git import commit_all, git
from tests.helpers.sim import require_cli

SITE = "https://skills.example.org"
FLAGS = SuiteOverrides(site_base=SITE, heldout_prefixes=("discord-",))
CLI_FLAGS = ["--site-base", SITE, "--heldout-prefix", "discord-"]


def write_skill(root: Path, family: str, body: str) -> None:
    folder = root / "skills" / family
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {family}\ndescription: Use when the task is about {family}.\n"
                                     f"---\n# {family}\n\n{body}\n", encoding="utf-8")


def write_prompt(root: Path, name: str, family: str) -> None:
    rubric = [{"type": "must", "text": f"Names the {family} rule {i}"} for i in range(3)]
    rubric += [{"type": "bonus", "text": "Gives an example"}, {"type": "avoid", "text": "Invents an API"}]
    data = {"name": name, "product_area": family, "skill_url": f"{SITE}/{family}/SKILL.md",
            "prompt": f"How do I apply {family} in case {name}?", "rubric": rubric}
    (root / "evals" / "test-prompts" / f"{name}.json").write_text(json.dumps(data, indent=2), encoding="utf-8")


def merge(root: Path, branch: str, message: str) -> str:
    git(root, "-c", "user.email=t@example.org", "-c", "user.name=t", "merge", "-q", "--no-ff", "-m", message, branch)
    return git(root, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def qdrant_like(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("qdrant-like")
    (root / "evals" / "test-prompts").mkdir(parents=True)
    write_skill(root, "alpha", "Rule one.")
    for i in range(5):
        write_prompt(root, f"alpha-{i}", "alpha")
    (root / "README.md").write_text("a skills repository\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    first = commit_all(root, "alpha and its prompts")
    git(root, "checkout", "-q", "-b", "edit")
    write_skill(root, "alpha", "Rule one, revised for the new release.")
    commit_all(root, "alpha: revised")
    git(root, "checkout", "-q", "main")
    edit = merge(root, "edit", "Merge pull request #1: alpha revised")
    git(root, "checkout", "-q", "-b", "add")
    write_skill(root, "beta", "Rule two.")
    write_prompt(root, "beta-0", "beta")
    write_prompt(root, "discord-beta-question", "beta")
    commit_all(root, "beta: a new skill")
    git(root, "checkout", "-q", "main")
    add = merge(root, "add", "Merge pull request #2: beta")
    assert not list(root.rglob("skillbench.toml"))
    return {"root": root, "suite": root / "evals", "first": first, "edit": edit, "add": add}


def test_a_merge_that_edits_only_the_skills_root_is_found_and_its_base_materialized(qdrant_like, tmp_path):
    suite = load_suite(qdrant_like["suite"], FLAGS)
    edit = qdrant_like["edit"]
    comp = plan_comparison(suite, f"{edit}^1", edit, cache_dir=tmp_path / "v", overrides=FLAGS)
    assert comp.base.commit == qdrant_like["first"]  # a merge compares with its first parent
    assert comp.changes.families == ["alpha"] and comp.changes.added == []
    assert comp.changes.files == ["../skills/alpha/SKILL.md"]
    assert any("has no skillbench.toml" in n and "defaults" in n for n in comp.notes)
    [week] = comp.weeks(tmp_path / "run")
    assert week.conditions == ["no-skill", f"with-skill@{edit}^1", f"with-skill@{edit}"] and not week.new
    base_dir = week.versions[f"with-skill@{edit}^1"].family_dir(week.suite, "alpha")
    head_dir = week.versions[f"with-skill@{edit}"].family_dir(week.suite, "alpha")
    assert base_dir is not None and "Rule one." in (base_dir / "SKILL.md").read_text()
    assert head_dir is not None and "revised" in (head_dir / "SKILL.md").read_text()
    assert base_dir.resolve().is_relative_to((tmp_path / "run").resolve())  # archived beside the suite, not read live


def test_a_merge_that_adds_a_family_runs_it_head_against_no_skill_and_says_it_can_never_pass(qdrant_like, tmp_path):
    suite = load_suite(qdrant_like["suite"], FLAGS)
    add = qdrant_like["add"]
    comp = plan_comparison(suite, f"{add}^1", add, cache_dir=tmp_path / "v", overrides=FLAGS)
    assert comp.changes.families == ["beta"] == comp.changes.added
    [week] = comp.weeks(tmp_path / "run")
    assert week.new and week.conditions == ["no-skill", f"with-skill@{add}"]
    assert week.arms.control == "no-skill" and week.run_dir == tmp_path / "run" / "_new"
    [note] = [n for n in comp.notes if n.startswith("beta:")]
    assert "1 preference-eligible prompt(s)" in note and "needs 5" in note and "add 4" in note


def test_a_prompt_already_broken_at_the_base_is_left_out_and_one_the_change_breaks_refuses(tmp_path):
    root = tmp_path / "repo"
    (root / "evals" / "test-prompts").mkdir(parents=True)
    write_skill(root, "alpha", "Rule one.")
    for i in range(5):
        write_prompt(root, f"alpha-{i}", "alpha")
    old = root / "evals" / "test-prompts" / "alpha-old.json"
    write_prompt(root, "alpha-old", "alpha")
    old.write_text(old.read_text().replace(SITE, "https://github.com/example/skills/blob/main/skills"))
    git(root, "init", "-q")
    commit_all(root, "alpha, one prompt on an old URL form")
    write_skill(root, "alpha", "Rule one, revised.")
    edit = commit_all(root, "alpha revised")
    suite = preflight(root / "evals", FLAGS).suite  # the working tree places the roots; its own error is the head's
    comp = plan_comparison(suite, f"{edit}^1", edit, cache_dir=tmp_path / "v", overrides=FLAGS)
    [note] = [n for n in comp.notes if n.startswith("left out")]
    assert f"{edit}:evals/test-prompts/alpha-old.json: skill_url" in note and "github.com" in note
    assert comp.measured == ["alpha"] and len(comp.suite.prompts) == 5
    broken = root / "evals" / "test-prompts" / "alpha-0.json"  # a change that breaks its own losing prompt
    broken.write_text(broken.read_text().replace(SITE, "https://elsewhere.example.org"))
    head = commit_all(root, "alpha-0 on another host")
    with pytest.raises(CompareError, match=rf"^the suite at --head {head} has errors: {head}:evals/test-prompts/"
                                           r"alpha-0.json: skill_url"):
        plan_comparison(suite, f"{head}^1", head, cache_dir=tmp_path / "v2", overrides=FLAGS)


def test_without_base_the_head_compares_with_its_first_parent_and_the_same_commit_says_how(qdrant_like, capsys):
    suite, add = qdrant_like["suite"], qdrant_like["add"]
    code = main(["compare", str(suite), "--head", add, "--base", add, *CLI_FLAGS, "--backend", "sim"])
    err = capsys.readouterr().err
    assert code == 1 and "same commit" in err and f"--base {add}^1" in err and len(err.strip().splitlines()) == 1


def test_a_new_family_too_small_to_judge_does_not_fail_regression_but_fails_no_improvement():
    rows = pd.DataFrame([{"finding": INVALID, "reason": "underpowered", "new": True},
                         {"finding": IMPROVEMENT, "reason": "", "new": False}])
    assert exit_code(rows, "regression") == 0 and exit_code(rows, "no-improvement") == 1
    rows.loc[0, "new"] = False  # an existing family that cannot be judged still fails a regression gate
    assert exit_code(rows, "regression") == 1
    rows.loc[0, ["new", "reason"]] = [True, "judge_errors"]  # a new family's broken measurement does too
    assert exit_code(rows, "regression") == 1


@pytest.mark.docker
@pytest.mark.cli
def test_compare_reviews_a_merged_pull_request_that_adds_a_skill_end_to_end(qdrant_like, capsys):
    require_cli()
    require_docker()
    suite, add = qdrant_like["suite"], qdrant_like["add"]
    code = main(["compare", str(suite), "--head", add, *CLI_FLAGS, "--models", "haiku", "--reps", "1",
                 "--jobs", "2", "--backend", "sim", "--fail-on", "regression"])
    out = capsys.readouterr()
    assert code == 0, out.err  # a PR that adds a skill does not fail the regression gate
    report = Path(out.out.strip().splitlines()[-1])
    assert "beta: 1 preference-eligible prompt(s)" in out.err  # said before any run
    run_dir = report.parent
    plan = pd.read_csv(run_dir / "_new" / "plan.csv")
    assert set(plan["condition"]) == {"no-skill", f"with-skill@{add}"} and set(plan["skill_family"]) == {"beta"}
    assert not (run_dir / "plan.csv").exists()  # no head-against-base week: alpha did not change
    results = json.loads((run_dir / "results.json").read_text())
    assert results["changes"]["added"] == ["beta"] and results["exit_code"] == 0
    [verdict] = results["verdicts"]
    assert verdict["new"] and verdict["skill_family"] == "beta" and verdict["n"] == 1
    text = report.read_text()
    assert "beta (new: head vs no-skill)" in text and "has no skillbench.toml" in text and "## Before the runs" in text
