"""``--config FILE`` (a skillbench.toml from elsewhere) and held-out tags (``--heldout-tag``,
``[suite].heldout_tags``): a prompt whose tags include one is held out. Synthetic trees written here."""

from __future__ import annotations

from pathlib import Path

from skillbench.suite import SuiteOverrides, preflight
from tests.suite.test_qdrant_repo import SITE, qdrant_repo

SKILL = "---\nname: demo-skill\ndescription: Reads build logs. Use when a build fails.\n---\n# Demo\n"


def _stimulus(i: int, tags: str) -> str:
    return (f"  - name: Stimulus {i}\n    prompt: Explain build failure number {i}.\n{tags}"
            f"    graders:\n      - type: output-matches\n        config:\n          pattern: fail{i}\n"
            f"    rubric:\n      - Names the failing step {i}\n")


def dotnet_tree(root: Path, tags: dict[int, str], n: int = 6) -> Path:
    """A dotnet tree with one Vally eval of ``n`` stimuli; ``tags[i]`` is stimulus i's ``tags:`` value."""
    skill = root / "plugins/demo/skills/demo-skill"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    folder = root / "tests/demo/demo-skill"
    folder.mkdir(parents=True)
    body = "".join(_stimulus(i, f"    tags: {tags[i]}\n" if i in tags else "") for i in range(n))
    (folder / "eval.yaml").write_text(f"name: demo-skill\ntype: capability\nstimuli:\n{body}")
    return root


def _heldout(report) -> list[str]:
    return sorted(p.stimulus for p in report.suite.prompts if p.heldout)


def test_config_file_from_elsewhere_sets_the_site_base_and_the_heldout_prefixes(tmp_path):
    suite = qdrant_repo(tmp_path / "repo", per_family=6)
    config = tmp_path / "qdrant.toml"
    config.write_text(f'[suite]\nsite_base = "{SITE}"\nheldout_prefixes = ["discord-"]\n')
    report = preflight(suite, SuiteOverrides(config=str(config)))
    assert report.errors == []
    assert sum(p.heldout for p in report.suite.prompts) == 2 and report.suite.site_base == SITE


def test_a_flag_still_wins_over_the_config_file(tmp_path):
    suite = qdrant_repo(tmp_path / "repo", per_family=6)
    config = tmp_path / "qdrant.toml"
    config.write_text(f'[suite]\nsite_base = "{SITE}"\nheldout_prefixes = ["discord-"]\n')
    report = preflight(suite, SuiteOverrides(config=str(config), heldout_prefixes=("nothing-",)))
    assert not any(p.heldout for p in report.suite.prompts)


def test_a_broken_config_file_is_one_line_naming_the_flag_and_nothing_else(tmp_path):
    suite = qdrant_repo(tmp_path / "repo")
    config = tmp_path / "bad.toml"
    config.write_text('[suite]\nsite_base = "x"\ncolour = 1\n')
    report = preflight(suite, SuiteOverrides(config=str(config)))
    [error] = report.defects
    assert error.path.endswith("bad.toml") and error.field == "--config: suite.colour" and report.stopped
    [missing] = preflight(suite, SuiteOverrides(config=str(tmp_path / "none.toml"))).defects
    assert "does not exist" in missing.problem


def test_a_heldout_tag_holds_out_the_tagged_stimuli_in_list_and_mapping_form(tmp_path):
    root = dotnet_tree(tmp_path, {1: "[slow, flaky]", 2: "{tier: nightly}", 3: "[fast]"})
    report = preflight(root, SuiteOverrides(heldout_tags=("flaky", "tier=nightly")))
    assert report.errors == [] and _heldout(report) == ["Stimulus 1", "Stimulus 2"]
    assert report.suite.heldout_tags == ("flaky", "tier=nightly")
    assert "(4 scored, 2 held-out" in report.summary()
    assert _heldout(preflight(root)) == []


def test_heldout_tags_come_from_the_config_unless_the_flag_says_otherwise(tmp_path):
    root = dotnet_tree(tmp_path, {0: "[slow]", 4: "[fast]"})
    (root / "skillbench.toml").write_text('[suite]\nheldout_tags = ["slow"]\n')
    assert _heldout(preflight(root)) == ["Stimulus 0"]
    assert _heldout(preflight(root, SuiteOverrides(heldout_tags=("fast",)))) == ["Stimulus 4"]


def test_a_heldout_tag_no_prompt_has_is_a_warning(tmp_path):
    report = preflight(dotnet_tree(tmp_path, {0: "[slow]"}), SuiteOverrides(heldout_tags=("sloww",)))
    [warning] = report.warnings
    assert "no prompt has the tag 'sloww'" in warning.problem and report.errors == []


def test_overrides_survive_a_notebook_parameter_round_trip():
    o = SuiteOverrides(site_base=SITE, heldout_prefixes=("a-",), heldout_tags=("t",), skip_missing=True,
                       config="/x/skillbench.toml")
    assert SuiteOverrides.from_params(o.as_params()) == o
    assert SuiteOverrides.from_params({}) == SuiteOverrides()


def test_a_dormancy_stimulus_with_a_heldout_tag_is_an_error(tmp_path):
    root = dotnet_tree(tmp_path, {5: "[slow]\n    expect_activation: false"})
    report = preflight(root, SuiteOverrides(heldout_tags=("slow",)))
    [error] = report.errors
    assert "a dormancy prompt is also held out (tag 'slow')" in error.problem and "Stimulus 5" in error.field
