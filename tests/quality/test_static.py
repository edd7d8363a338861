"""Static findings, one small temp skill per finding: each check's value, severity and target on a skill built to
pass or to fail it (a hub's size counts its sub-skills; links resolve; sub-skills reachable; references/)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from skillbench.quality import skill_units, static_findings
from skillbench.quality._categories import CategoryError, QualitySettings, quality_settings, skill_category
from skillbench.suite import SuiteOverrides, preflight

GOOD = ("Fits regression models. Use when someone asks 'fit a regression', 'which predictors matter', or "
        "'check the residuals' with statsmodels. Do not use for plotting.")


def skill_md(name: str, description: str = GOOD, body: str = "# Body\n", **meta: str) -> str:
    extra = "".join(f"{k}: {v}\n" for k, v in meta.items())
    return f"---\nname: {name}\ndescription: \"{description}\"\n{extra}---\n{body}"


def lint(tmp_path: Path, files: dict[str, str], settings: QualitySettings | None = None) -> pd.DataFrame:
    """The static table of a temp suite whose skills tree holds ``files`` (path under skills/ -> text)."""
    (tmp_path / "test-prompts").mkdir(exist_ok=True)
    for rel, text in files.items():
        path = tmp_path / "skills" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    suite = preflight(tmp_path, SuiteOverrides(site_base="https://skills.test")).suite
    return static_findings(skill_units(suite, settings or QualitySettings()))


def row(frame: pd.DataFrame, skill: str, finding: str) -> dict:
    hit = frame[(frame["skill"] == skill) & (frame["finding"] == finding)]
    assert len(hit) == 1, f"{skill} {finding}: {len(hit)} rows"
    return hit.iloc[0].to_dict()


def test_trigger_contexts_are_counted_with_their_quoted_phrases(tmp_path):
    f = lint(tmp_path, {"fit/SKILL.md": skill_md("fit")})
    r = row(f, "fit", "trigger-contexts")
    assert (r["value"], r["severity"]) == ("4", "ok") and "3 of them quoted" in r["detail"] and "≥ 3" in r["target"]


def test_no_use_when_context_is_a_warning_on_the_hub(tmp_path):
    f = lint(tmp_path, {"fit/SKILL.md": skill_md("fit", "Regression models with statsmodels, fitted and checked "
                                                        "carefully for every analyst on the team.")})
    assert row(f, "fit", "trigger-contexts")["severity"] == "warning"
    assert row(f, "fit", "trigger-contexts")["value"] == "0"


def test_negative_contexts(tmp_path):
    f = lint(tmp_path, {"fit/SKILL.md": skill_md("fit"),
                        "other/SKILL.md": skill_md("other", GOOD.replace(" Do not use for plotting.", ""))})
    assert (row(f, "fit", "negative-contexts")["value"], row(f, "fit", "negative-contexts")["severity"]) == ("1", "ok")
    assert (row(f, "other", "negative-contexts")["value"], row(f, "other", "negative-contexts")["severity"]) == \
        ("0", "info")


def test_description_length_in_characters_and_words(tmp_path):
    long = GOOD + " More." * 160
    f = lint(tmp_path, {"long/SKILL.md": skill_md("long", long),
                        "short/SKILL.md": skill_md("short", "Use when fitting.")})
    r = row(f, "long", "description-chars")
    assert r["severity"] == "warning" and int(r["value"]) > 1024 and "Agent Skills specification" in r["target"]
    r = row(f, "short", "description-words")
    assert (r["severity"], r["value"]) == ("warning", "3") and "≥ 20 words" in r["target"]
    assert row(f, "long", "description-words")["severity"] == "ok"


def test_lines_over_the_category_bound_and_references_missing(tmp_path):
    body = "# Workflow\n" + "step\n" * 320
    f = lint(tmp_path, {"big/SKILL.md": skill_md("big", body=body, category="workflow")})
    assert row(f, "big", "category")["value"] == "workflow" and row(f, "big", "category")["target"] == "frontmatter"
    r = row(f, "big", "lines")
    assert r["severity"] == "warning" and r["target"] == "≤ 300 lines (workflow)"
    r = row(f, "big", "size")
    assert r["severity"] == "warning" and "150–300 lines (workflow" in r["target"]
    assert (row(f, "big", "references")["severity"], row(f, "big", "references")["value"]) == ("warning", "absent")


def test_references_folder_satisfies_a_large_skill(tmp_path):
    body = "# Workflow\n" + "step\n" * 320
    f = lint(tmp_path, {"big/SKILL.md": skill_md("big", body=body, category="workflow"),
                        "big/references/api.md": "# API\n"})
    assert row(f, "big", "references")["value"] == "present (1 files)"
    assert row(f, "big", "references")["severity"] == "ok"


def test_a_hubs_size_counts_its_sub_skills(tmp_path):
    hub = skill_md("hub", body="# Hub\nSee [part](part/SKILL.md).\n" + "x\n" * 90, category="coordination")
    sub = skill_md("hub-part", body="# Part\n" + "y\n" * 150)
    f = lint(tmp_path, {"hub/SKILL.md": hub, "hub/part/SKILL.md": sub})
    hub_lines, sub_lines = int(row(f, "hub", "lines")["value"]), int(row(f, "hub/part", "lines")["value"])
    r = row(f, "hub", "size")
    assert int(r["value"]) == hub_lines + sub_lines and r["severity"] == "warning"
    assert row(f, "hub", "lines")["severity"] == "ok"  # the hub alone is within 200 lines
    assert row(f, "hub", "references")["value"] == "sub-skills"


def test_a_small_skill_is_under_its_range(tmp_path):
    f = lint(tmp_path, {"tiny/SKILL.md": skill_md("tiny", category="code generator")})
    r = row(f, "tiny", "size")
    assert r["severity"] == "info" and "100–200 lines (code-generator" in r["target"]


def test_links_that_do_not_resolve_are_errors_and_links_out_of_the_folder_warnings(tmp_path):
    f = lint(tmp_path, {"a/SKILL.md": skill_md("a", body="[gone](missing.md) and `[code](not-a-link.md)`\n"),
                        "b/SKILL.md": skill_md("b", body="[other skill](../a/SKILL.md) [ok](notes.md)\n"),
                        "b/notes.md": "notes\n"})
    r = row(f, "a", "links")
    assert (r["severity"], r["value"]) == ("error", "0/1") and "missing.md" in r["detail"]
    r = row(f, "b", "links")
    assert (r["severity"], r["value"]) == ("warning", "1/2") and "../a/SKILL.md" in r["detail"]


def test_sub_skills_reachable_from_the_hub_by_relative_or_site_links(tmp_path):
    hub = skill_md("h", body="[one](one/SKILL.md)\n")
    one = skill_md("h-one", body="[two](https://skills.test/h/one/two/SKILL.md)\n")
    f = lint(tmp_path, {"h/SKILL.md": hub, "h/one/SKILL.md": one, "h/one/two/SKILL.md": skill_md("h-two"),
                        "h/lost/SKILL.md": skill_md("h-lost")})
    assert row(f, "h/one", "reachable")["value"] == "yes"
    assert row(f, "h/one/two", "reachable")["value"] == "yes"
    r = row(f, "h/lost", "reachable")
    assert (r["value"], r["severity"]) == ("no", "warning")
    assert row(f, "h/one", "links")["value"] == "1/1"


def test_an_unknown_frontmatter_category_is_a_warning_and_falls_through(tmp_path):
    f = lint(tmp_path, {"c/SKILL.md": skill_md("c", category="poetry")}, QualitySettings(default_category="diagnostic"))
    r = row(f, "c", "category")
    assert (r["severity"], r["value"], r["target"]) == ("warning", "diagnostic", "[quality].default_category")


def test_category_from_the_config_table(tmp_path):
    (tmp_path / "skillbench.toml").write_text('[quality]\ndefault_category = "workflow"\n'
                                              '[quality.categories]\nfit = "Reference"\n')
    settings = quality_settings(tmp_path)
    assert skill_category("fit", {}, settings).name == "reference"
    assert skill_category("fit", {}, settings).source == "[quality].categories"
    assert skill_category("other", {}, settings).target == (150, 300)
    assert skill_category("fit", {"category": "integration"}, settings).source == "frontmatter"
    (tmp_path / "skillbench.toml").write_text('[quality.categories]\nfit = "novel"\n')
    with pytest.raises(CategoryError, match=r"quality\.categories\.fit: unknown category 'novel'"):
        quality_settings(tmp_path)
