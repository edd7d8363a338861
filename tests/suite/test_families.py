"""One broken spec does not stop the others: a preflight error makes its own family invalid, the rest loads
(``skillbench.suite.load_families``); an error that belongs to no family still stops the suite. The suites are
written here (tmp_path): two qdrant families, and a dotnet tree of two skills."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillbench.suite import SuiteError, load_families, load_suite, preflight
from skillbench.weekly import require_sound

SITE = "https://skills.example.test"
CONFIG = f'[suite]\nskills_root = "skills"\nsite_base = "{SITE}"\n'


def _prompt(name: str, family: str, *, rubric_type: str = "must", url: str | None = None) -> dict:
    return {"name": name, "product_area": "demo", "skill_url": url if url is not None else f"{SITE}/{family}/SKILL.md",
            "prompt": f"Question {name}?",
            "rubric": [{"type": rubric_type, "text": f"Claim {i} of {name}"} for i in range(3)]}


def _qdrant(tmp_path: Path, broken: dict | None = None) -> Path:
    root = tmp_path / "suite"
    for family in ("alpha", "beta"):
        skill = root / "skills" / family
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(f"---\nname: {family}\ndescription: Helps. Use when asked.\n---\n# {family}\n")
    prompts = root / "test-prompts"
    prompts.mkdir()
    (root / "skillbench.toml").write_text(CONFIG)
    for family in ("alpha", "beta"):
        for i in range(5):
            spec = _prompt(f"{family}-{i}", family)
            (prompts / f"{spec['name']}.json").write_text(json.dumps(spec))
    if broken is not None:
        (prompts / f"{broken['name']}.json").write_text(json.dumps(broken))
    return root


def test_a_prompt_with_a_bad_rubric_makes_only_its_family_invalid(tmp_path):
    suite_dir = _qdrant(tmp_path, _prompt("beta-bad", "beta", rubric_type="should"))
    with pytest.raises(SuiteError):
        load_suite(suite_dir)  # a run that is not a week (compare) still refuses the suite
    suite = load_families(suite_dir)
    assert list(suite.invalid_families) == ["beta"]
    lines = suite.invalid_families["beta"]
    assert len(lines) == 3 and lines[0].startswith("test-prompts/beta-bad.json: rubric[0].type: unknown rubric type "
                                                   "'should'"), "recorded relative to the suite, wherever it ran"
    assert {p.family for p in suite.prompts} == {"alpha"}, "none of the invalid family's prompts runs"
    assert suite.families == ["alpha"], "nor is it installed where every family is (a plugin arm)"


def test_an_error_that_belongs_to_no_family_still_stops_the_suite(tmp_path):
    suite_dir = _qdrant(tmp_path, _prompt("stray", "alpha", url="https://elsewhere.test/alpha/SKILL.md"))
    with pytest.raises(SuiteError) as caught:
        load_families(suite_dir)
    assert "stray.json: skill_url:" in str(caught.value), "the line that belongs to no family is named first"


def test_the_preflight_stage_names_the_invalid_families_and_lets_the_chain_go_on(tmp_path):
    report = preflight(_qdrant(tmp_path, _prompt("alpha-bad", "alpha", rubric_type="should")))
    assert not report.ok()
    verdict = require_sound(report)
    assert "alpha" in verdict and "INVALID_INCONCLUSIVE (invalid_spec)" in verdict and "continues" in verdict
    assert len(report.suite.prompts) == 10, "the report itself is left as read"


SKILL_MD = "---\nname: {name}\ndescription: Reads logs. Use when a build fails.\n---\n# {name}\n"


def _stimuli(n: int, assertion: str = "output_contains") -> str:
    return "scenarios:\n" + "".join(
        f"  - name: Case {i}\n    prompt: Explain failure {i}.\n    assertions:\n"
        f"      - type: {assertion}\n        value: fail{i}\n    rubric:\n      - Names step {i}\n"
        for i in range(n))


def test_a_dotnet_eval_with_an_unknown_assertion_makes_only_its_skill_invalid(tmp_path):
    root = tmp_path / "tree"
    for skill, spec in (("good-skill", _stimuli(5)), ("bad-skill", _stimuli(5, "output_teleports"))):
        folder = root / "plugins/demo/skills" / skill
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(SKILL_MD.format(name=skill))
        tests = root / "tests/demo" / skill
        tests.mkdir(parents=True)
        (tests / "eval.yaml").write_text(spec)
    suite = load_families(root)
    assert list(suite.invalid_families) == ["bad-skill"]
    assert all(line.startswith("tests/demo/bad-skill/eval.yaml: ") and "unknown assertion type 'output_teleports'"
               in line for line in suite.invalid_families["bad-skill"])
    assert {p.family for p in suite.scored_prompts} == {"good-skill"}


def test_selecting_an_invalid_family_says_why_it_has_no_run(tmp_path):
    from skillbench.generation import SelectionError, make_plan, selected

    suite = load_families(_qdrant(tmp_path, _prompt("beta-bad", "beta", rubric_type="should")))
    plan = make_plan(suite, "wk", models=["haiku"], conditions=["no-skill", "with-skill"], reps=1, seed=0)
    assert set(plan["skill_family"]) == {"alpha"}
    with pytest.raises(SelectionError, match="--families beta: is held out, so none of its runs is planned"):
        selected(plan, suite, families=["beta"])


def test_a_broken_skill_makes_its_family_invalid_and_it_is_never_installed(tmp_path):
    suite_dir = _qdrant(tmp_path)
    (suite_dir / "skills/beta/SKILL.md").write_text("no frontmatter at all\n")
    (suite_dir / "skills/alpha/leak").symlink_to("/etc/hostname")
    with pytest.raises(SuiteError):
        load_families(suite_dir)  # both families broken: nothing sound is left
    (suite_dir / "skills/alpha/leak").unlink()
    suite = load_families(suite_dir)
    assert list(suite.invalid_families) == ["beta"] and "frontmatter" in suite.invalid_families["beta"][0]
    assert suite.families == ["alpha"] and {p.family for p in suite.prompts} == {"alpha"}


def test_a_link_out_of_a_family_is_held_to_that_family(tmp_path):
    suite_dir = _qdrant(tmp_path)
    (suite_dir / "skills/beta/leak").symlink_to("/etc/hostname")
    suite = load_families(suite_dir)
    assert list(suite.invalid_families) == ["beta"] and "symlink" in suite.invalid_families["beta"][0]
    assert suite.families == ["alpha"], "the link is never copied into a run, by any arm"


def test_a_setup_that_cannot_start_in_the_sandbox_holds_out_its_family_and_validate_only_warns(tmp_path):
    """dotnet's binlog-failure-analysis builds its workspace with `dotnet build`, which the image lacks: its runs
    could never start (exit 127 before the CLI), so a week holds the family out with that line instead of leaving it
    incomplete for ever; the spec itself is valid, so `validate` warns and passes."""
    task = {**_prompt("beta-task", "beta"), "setup": ["dotnet build App.sln -bl:build.binlog"]}
    suite_dir = _qdrant(tmp_path, task)
    report = preflight(suite_dir)
    assert not report.errors and any("the run never starts" in w.problem for w in report.warnings)
    suite = load_families(suite_dir)
    assert list(suite.invalid_families) == ["beta"] and {p.family for p in suite.prompts} == {"alpha"}
    [line] = suite.invalid_families["beta"]
    assert line.startswith("test-prompts/beta-task.json: setup[0]: runs dotnet, which the sandbox image does not")
