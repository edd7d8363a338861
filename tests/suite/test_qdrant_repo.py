"""A qdrant-shaped repository read as its team would: ``skills/`` beside ``evals/``, absolute ``skill_url``s and no
``skillbench.toml`` (qdrant never committed one). Synthetic trees written here; no shared data is needed."""

from __future__ import annotations

import json
from pathlib import Path

from skillbench.cli import main
from skillbench.suite import SuiteOverrides, preflight

SITE = "https://skills.example.test"
FAMILIES = ("alpha-search", "beta-scaling")


def _skill(folder: Path, name: str, description: str) -> None:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n",
                                     encoding="utf-8")


def _prompt(name: str, family: str) -> dict:
    return {"name": name, "product_area": "search", "skill_url": f"{SITE}/{family}/SKILL.md",
            "prompt": f"How do I tune {family} for case {name}?",
            "rubric": [{"type": "must", "text": f"Names step {i} of {name}"} for i in range(3)]
            + [{"type": "bonus", "text": "Mentions a benchmark"}, {"type": "avoid", "text": "Invents an API"}]}


def qdrant_repo(root: Path, per_family: int = 5) -> Path:
    """``root/evals/test-prompts/*.json`` and ``root/skills/<family>/SKILL.md``; returns the suite folder."""
    for family in FAMILIES:
        _skill(root / "skills" / family, family, f"Tunes {family}. Use when a query is slow.")
    prompts = root / "evals" / "test-prompts"
    prompts.mkdir(parents=True)
    for family in FAMILIES:
        for i in range(per_family):
            name = f"{'discord-' if i == 0 else ''}{family}-{i}"
            (prompts / f"{name}.json").write_text(json.dumps(_prompt(name, family)), encoding="utf-8")
    return root / "evals"


def test_no_site_base_is_one_error_that_names_the_base_the_skill_urls_use(tmp_path):
    report = preflight(qdrant_repo(tmp_path))
    [error] = report.errors
    assert error.field == "suite.site_base"
    assert "none of the 10 prompts' skill_url" in error.problem
    assert f"--site-base {SITE}" in error.fix and f'site_base = "{SITE}"' in error.fix and "[suite]" in error.fix
    assert not any("skill_url" == d.field for d in report.defects)  # no consequence repeated per prompt


def test_the_site_base_flag_makes_the_repository_clean_with_the_sibling_skills_root(tmp_path):
    report = preflight(qdrant_repo(tmp_path), SuiteOverrides(site_base=SITE))
    assert report.errors == []
    assert report.suite.skills_root == (tmp_path / "skills").resolve()
    assert sorted(report.suite.families) == list(FAMILIES) and len(report.suite.prompts) == 10


def test_heldout_prefix_holds_out_the_discord_prompts(tmp_path, capsys):
    suite = qdrant_repo(tmp_path, per_family=6)
    code = main(["validate", str(suite), "--site-base", SITE, "--heldout-prefix", "discord-"])
    out = capsys.readouterr().out
    assert code == 0 and "(10 scored, 2 held-out, 0 dormancy)" in out


def test_a_site_base_under_a_path_is_guessed_whole(tmp_path):
    suite = qdrant_repo(tmp_path)
    for path in (suite / "test-prompts").glob("*.json"):
        data = json.loads(path.read_text())
        data["skill_url"] = data["skill_url"].replace(SITE, f"{SITE}/docs/v2")
        path.write_text(json.dumps(data))
    [error] = preflight(suite).errors
    assert f"--site-base {SITE}/docs/v2 " in error.fix


def test_an_unquoted_colon_in_a_description_names_line_column_and_the_quoting_fix(tmp_path):
    """Strict YAML refuses the line, but Claude Code reads it (its skill is listed): a warning with where and the
    fix, and the skill is measured with the description the CLI reads."""
    from skillbench.suite import load_suite

    suite = qdrant_repo(tmp_path)
    skill = tmp_path / "skills" / FAMILIES[0] / "SKILL.md"
    skill.write_text(f"---\nname: {FAMILIES[0]}\ndescription: Tunes search. Keywords: latency, recall\n---\n# x\n",
                     encoding="utf-8")
    report = preflight(suite, SuiteOverrides(site_base=SITE))
    assert not report.errors
    [warning] = [w for w in report.warnings if w.field == "frontmatter"]
    assert "line 3, column 36" in warning.problem and "'description'" in warning.problem
    assert "mapping values are not allowed here" in warning.problem and "Claude Code still reads it" in warning.problem
    assert warning.fix.startswith('quote the value: description: "…"')
    loaded = load_suite(suite, SuiteOverrides(site_base=SITE))
    [read] = [s for s in loaded.skills.values() if s.family == FAMILIES[0]]
    assert read.description == "Tunes search. Keywords: latency, recall"


def test_a_frontmatter_the_cli_cannot_read_either_is_one_error(tmp_path):
    suite = qdrant_repo(tmp_path)
    skill = tmp_path / "skills" / FAMILIES[0] / "SKILL.md"
    skill.write_text(f"---\nname: {FAMILIES[0]}\ndescription: a: b\n  - c\n---\n# x\n", encoding="utf-8")
    [error] = preflight(suite, SuiteOverrides(site_base=SITE)).errors
    assert error.field == "frontmatter" and "not valid YAML at line " in error.problem


def test_a_yaml_error_in_crlf_frontmatter_counts_lines_of_the_file(tmp_path):
    suite = qdrant_repo(tmp_path)
    skill = tmp_path / "skills" / FAMILIES[1] / "SKILL.md"
    skill.write_bytes(f"---\r\nname: {FAMILIES[1]}\r\ndescription: ok\r\nmetadata: [unclosed\r\n---\r\n".encode())
    [error] = preflight(suite, SuiteOverrides(site_base=SITE)).errors
    assert "frontmatter is not valid YAML at line " in error.problem and "(in 'metadata')" in error.problem


def test_a_demo_copy_of_the_repository_reads_its_own_copied_skills(tmp_path):
    from skillbench.suite import load_suite
    from skillbench.weekly._demo import copied_overrides, copy_suite

    flags = SuiteOverrides(site_base=SITE)
    copy = copy_suite(qdrant_repo(tmp_path / "repo"), tmp_path / "demo" / "suite", [FAMILIES[0]], flags)
    suite = load_suite(copy, copied_overrides(copy, flags))
    assert suite.skills_root == (copy / "skills").resolve() and suite.families == [FAMILIES[0]]
    assert len(suite.prompts) == 5 and suite.site_base == SITE


def test_the_weekly_chains_simulated_endpoint_reads_the_repository_with_the_flags(tmp_path):
    from skillbench.weekly._chain import chain_endpoint

    suite = qdrant_repo(tmp_path)
    with chain_endpoint("sim", suite, 0, overrides=SuiteOverrides(site_base=SITE)) as url:
        assert url.startswith("http://127.0.0.1:")
