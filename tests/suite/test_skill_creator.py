"""skill-creator folders (``evals/evals.json``, trigger eval sets) as suites: the worked example, the malformed cases,
the plan's arms, and the absence rule's reach."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from skillbench.generation import make_plan
from skillbench.suite import SuiteOverrides, detect_format, preflight
from skillbench.vocab import NO_SKILL, PLUGIN, WITH_SKILL
from tests.helpers.shared import DATA_DIR

EXAMPLE = DATA_DIR / "skill-creator-example"
SKILL = "skill-creator-example"


def _copy(tmp_path: Path) -> Path:
    dest = tmp_path / SKILL
    shutil.copytree(EXAMPLE, dest)
    return dest


def _write_evals(skill: Path, evals: list, name: str = SKILL) -> Path:
    path = skill / "evals" / "evals.json"
    path.write_text(json.dumps({"skill_name": name, "evals": evals}), encoding="utf-8")
    return path


def test_worked_example_counts_every_eval_and_query() -> None:
    assert detect_format(EXAMPLE) == "skill-creator"
    report = preflight(EXAMPLE)
    assert report.ok(), [str(d) for d in report.errors]
    evals = json.loads((EXAMPLE / "evals" / "evals.json").read_text())["evals"]
    queries = json.loads((EXAMPLE / "evals" / "trigger_eval.json").read_text())
    suite = report.suite
    assert len(suite.prompts) == len(evals) + len(queries)
    assert report.summary().startswith(f"Checked {len(evals)} evals and {len(queries)} trigger queries (3 "
                                       "should-trigger, 3 dormancy; 0 held-out) of 1 skills: 0 errors")
    by_name = {p.name: p for p in suite.prompts}
    first = by_name[f"{SKILL}-1"]
    assert first.family == SKILL and first.leaf == f"{SKILL}/SKILL.md"
    assert [i.text for i in first.test.rubric] == evals[0]["expectations"]
    assert all(i.type == "must" and i.absence is None for i in first.test.rubric)
    assert first.reference_answer == evals[0]["expected_output"]
    assert [w.dest for w in first.test.workspace] == evals[0]["files"]
    assert first.workspace_source(first.test.workspace[0]).resolve() == (EXAMPLE / evals[0]["files"][0]).resolve()
    assert suite.family_dir(SKILL) == EXAMPLE.resolve()
    kinds = [(p.dormancy, p.trigger_only) for p in suite.prompts if p.name.startswith(f"{SKILL}-")
             and not p.name[len(SKILL) + 1:].isdigit()]
    assert sorted(kinds) == [(False, True)] * 3 + [(True, False)] * 3
    assert all(not p.test.rubric for p in suite.prompts if p.dormancy or p.trigger_only)


def test_absence_rule_applies_to_skill_creator_files() -> None:
    prompts = preflight(EXAMPLE).suite.prompts
    assert {p.path.name for p in prompts} == {"evals.json", "trigger_eval.json"}
    assert all(p.absence_rule for p in prompts)  # imported: the rule decides (our own format opts in per item)


def test_dry_run_plans_trigger_queries_in_the_skilled_arms_only() -> None:
    suite = preflight(EXAMPLE).suite
    arms3 = (NO_SKILL, WITH_SKILL, PLUGIN)  # the default arms (placebo and aa are opt-in)
    plan = make_plan(suite, "k", models=["haiku"], conditions=arms3, reps=2, seed=0)
    arms = plan.groupby("prompt")["condition"].agg(lambda c: tuple(sorted(set(c))))
    for spec in suite.prompts:
        want = (WITH_SKILL,) if spec.trigger_only else tuple(sorted((WITH_SKILL, PLUGIN))) if spec.dormancy \
            else tuple(sorted(arms3))
        assert arms[spec.name] == want, spec.name
    assert len(plan) == 2 * (3 * 3 + 3 * 1 + 3 * 2)  # reps × (evals × 3 arms + true × 1 + false × 2)
    assert not (plan["condition"].eq(NO_SKILL) & plan["prompt"].str.contains("-trigger-|-dormant-")).any()


def test_generate_dry_run_on_the_example(tmp_path: Path) -> None:
    from skillbench.cli import main

    out = tmp_path / "dry"
    assert main(["generate", str(EXAMPLE), "--run-key", "dry", "--out-dir", str(out), "--backend", "sim",
                 "--models", "haiku", "--reps", "1", "--dry-run"]) == 0
    plan = pd.read_csv(out / "plan.csv")
    assert set(plan["prompt"]) == {p.name for p in preflight(EXAMPLE).suite.prompts}
    # the default arms (no-skill, with-skill): evals in both, every trigger query in with-skill only
    assert len(plan) == 3 * 2 + 3 + 3
    assert set(plan.loc[plan["prompt"].str.contains("-trigger-|-dormant-"), "condition"]) == {WITH_SKILL}


def test_cli_validate_counts_and_trigger_set_option(tmp_path: Path, capsys) -> None:
    from skillbench.cli import main

    skill = _copy(tmp_path)
    (skill / "evals" / "trigger_eval.json").unlink()
    extra = tmp_path / "more-queries.json"
    extra.write_text(json.dumps([{"query": "profile this csv", "should_trigger": True},
                                 {"query": "what is a p-value", "should_trigger": False}]), encoding="utf-8")
    assert main(["validate", str(skill), "--trigger-set", str(extra)]) == 0
    assert "Checked 3 evals and 2 trigger queries (1 should-trigger, 1 dormancy" in capsys.readouterr().out
    assert main(["validate", str(skill), "--format", "skill-creator"]) == 0
    assert "Checked 3 evals and 0 trigger queries" in capsys.readouterr().out


@pytest.mark.parametrize("evals, field, problem", [
    ([{"id": 1, "prompt": "a", "expectations": ["x"]}, {"id": 1, "prompt": "b", "expectations": ["y"]}],
     "evals[id=1].id", "duplicate id 1"),
    ([{"id": 7, "expectations": ["x"]}], "evals[id=7].prompt", "missing required field"),
    ([{"id": 2, "prompt": "a", "files": ["evals/files/nope.csv"], "expectations": ["x"]}],
     "evals[id=2].files[0]", "'evals/files/nope.csv' does not exist"),
    ([{"id": 3, "prompt": "a", "files": ["../outside.csv"], "expectations": ["x"]}],
     "evals[id=3].files[0]", "not a plain path inside the skill folder"),
    ([{"id": 4, "prompt": "a", "assertions": [{"name": "cites-source"}]}], "evals[id=4].assertions[0]",
     "an object without 'text' or 'check'"),
    ([{"id": 5, "prompt": "a", "files": [{"purpose": "input"}]}], "evals[id=5].files[0]", "is not a path"),
    ([{"id": 6, "prompt": "a", "files": [{"path": "../../etc/passwd"}]}], "evals[id=6].files[0]",
     "not a plain path inside the skill folder"),
])
def test_malformed_evals_name_file_id_and_field(tmp_path: Path, evals: list, field: str, problem: str) -> None:
    skill = _copy(tmp_path)
    path = _write_evals(skill, evals)
    report = preflight(skill)
    hits = [d for d in report.errors if d.field == field]
    assert len(hits) == 1, [str(d) for d in report.errors]
    assert problem in hits[0].problem and Path(hits[0].path).resolve() == path.resolve()
    assert " — " in str(hits[0])  # path: field: problem — fix


def test_evals_json_that_is_not_json(tmp_path: Path) -> None:
    skill = _copy(tmp_path)
    (skill / "evals" / "evals.json").write_text('{"skill_name": "x", "evals": [', encoding="utf-8")
    report = preflight(skill)
    [error] = report.errors
    assert error.field == "json" and error.problem.startswith("not JSON") and error.path.endswith("evals.json")
    assert len(report.suite.prompts) == 6  # the trigger eval set still reads


def test_skip_missing_drops_a_missing_file_with_a_warning(tmp_path: Path) -> None:
    skill = _copy(tmp_path)
    _write_evals(skill, [{"id": 2, "prompt": "a", "files": ["evals/files/nope.csv"], "expectations": ["x"]}])
    report = preflight(skill, SuiteOverrides(skip_missing=True))
    assert report.ok()
    assert any(d.field == "evals[id=2].files[0]" and "--skip-missing" in d.problem for d in report.warnings)
    assert report.suite.prompt(f"{SKILL}-2").test.workspace == []


def test_malformed_trigger_set(tmp_path: Path) -> None:
    skill = _copy(tmp_path)
    path = skill / "evals" / "trigger_eval.json"
    path.write_text(json.dumps([{"query": "a csv profile please", "should_trigger": "yes"}, {"should_trigger": True},
                                {"query": "A  csv profile please", "should_trigger": False}]), encoding="utf-8")
    fields = {d.field for d in preflight(skill).errors if d.path.endswith("trigger_eval.json")}
    assert fields == {"[0].should_trigger", "[1].query", "[2].query"}


def test_trigger_set_option_refused_for_a_tree_of_skills(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLE, tree / SKILL)
    other = tree / "csv-profile-twin"
    shutil.copytree(EXAMPLE, other)
    text = (other / "SKILL.md").read_text(encoding="utf-8")
    (other / "SKILL.md").write_text(text.replace(f"name: {SKILL}", "name: csv-profile-twin"), encoding="utf-8")
    _write_evals(other, json.loads((EXAMPLE / "evals" / "evals.json").read_text())["evals"], "csv-profile-twin")
    extra = tmp_path / "q.json"
    extra.write_text("[]", encoding="utf-8")
    report = preflight(tree, SuiteOverrides(trigger_set=str(extra)))
    assert [d.field for d in report.errors] == ["--trigger-set"]
    # the tree still loads, each skill with the trigger set beside its evals.json
    assert len(report.suite.prompts) == 18 and report.suite.families == ["csv-profile-twin", SKILL]
    assert "of 2 skills" in report.summary()


def test_query_names_are_stable_when_the_set_is_reordered(tmp_path: Path) -> None:
    skill = _copy(tmp_path)
    path = skill / "evals" / "trigger_eval.json"
    before = {p.name for p in preflight(skill).suite.prompts}
    path.write_text(json.dumps(list(reversed(json.loads(path.read_text())))), encoding="utf-8")
    assert {p.name for p in preflight(skill).suite.prompts} == before
