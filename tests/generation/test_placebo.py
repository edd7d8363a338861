"""The placebo generator and the opt-in arms' rules: what a placebo is made of, where it lives, how the plan and
gradeability treat ``placebo`` and ``aa`` (no CLI, no container: tests/generation/test_placebo_week.py runs them)."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from skillbench.arms import ConditionError, check_condition, is_skilled, lists_skill
from skillbench.generation import PlanError, installed_families, make_plan
from skillbench.generation._versions import install_dirs
from skillbench.ledgers import PLACEBO_DIR
from skillbench.signals import skip_reason
from skillbench.suite import RunSettings, load_suite, read_skill
from skillbench.suite._placebo import (
    RECOGNISED_CHARS,
    SENTENCES,
    carries_placebo,
    materialize_placebo,
    neutral_text,
    placebo_text,
    split_skill,
)
from skillbench.suite._versions import tree_hash, working_tree
from tests.helpers.shared import ROOT, TINY_SUITE
from tests.helpers.sim import make_suite

_WORD = re.compile(r"[a-z]+")
# Words that carry no topic (prepositions and the like); everything else of four letters or more counts.
FUNCTION_WORDS = frozenset(
    "above across after again against away back been below beside down from have into near once onto over than "
    "that then there they this through under were what when while with each".split())


def topic_words(text: str) -> set[str]:
    """Words of four letters or more that are not function words."""
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 4 and w not in FUNCTION_WORDS}


@pytest.fixture(scope="module")
def bike_suite(tmp_path_factory) -> Path:
    return make_suite(tmp_path_factory.mktemp("bike"))


def _families(suite_dirs: list[Path]) -> list[Path]:
    """Every family folder (with a hub SKILL.md) of the bundled suites and the test suites."""
    out = []
    for suite_dir in suite_dirs:
        suite = load_suite(suite_dir)
        out += [suite.family_dir(f) for f in suite.families]
    return out


@pytest.fixture(scope="module")
def families(bike_suite) -> list[Path]:
    found = _families([ROOT / "evals", TINY_SUITE, bike_suite])
    assert len(found) >= 8
    return found


# -- the generator ------------------------------------------------------------------------------------------


def test_placebo_keeps_the_frontmatter_and_the_body_length(families):
    for family in families:
        real = (family / "SKILL.md").read_text(encoding="utf-8")
        fake = placebo_text(real)
        assert split_skill(fake)[0] == split_skill(real)[0], family  # the real frontmatter, byte for byte
        real_body, fake_body = split_skill(real)[1], split_skill(fake)[1]
        assert len(fake_body.encode()) == len(real_body.encode()), family  # the same UTF-8 length, exactly
        assert len(fake.encode()) == len(real.encode())
        assert fake_body.isascii() and not re.search(r"[0-9`#\[\]()/]", fake_body), family


def test_placebo_is_listed_as_the_skill(families, tmp_path):
    for family in families:
        real = read_skill(family / "SKILL.md", f"{family.name}/SKILL.md")
        path = materialize_placebo(family, tmp_path / PLACEBO_DIR) / "SKILL.md"
        fake = read_skill(path, f"{family.name}/SKILL.md")
        assert (fake.name, fake.description, fake.allowed_tools) == (real.name, real.description, real.allowed_tools)


def test_placebo_says_nothing_about_its_family(families):
    for family in families:
        skill_files = sorted(family.rglob("SKILL.md"))
        real_text = "\n".join(p.read_text(encoding="utf-8") for p in skill_files)
        body = split_skill(placebo_text((family / "SKILL.md").read_text(encoding="utf-8")))[1]
        shared = topic_words(body) & (topic_words(real_text) | topic_words(family.name.replace("-", " ")))
        assert not shared, (family, sorted(shared))
        for line in split_skill((family / "SKILL.md").read_text(encoding="utf-8"))[1].splitlines():
            if len(line.strip()) >= 12:
                assert line.strip() not in body, (family, line)


def test_placebo_is_deterministic_and_follows_the_content():
    real = "---\nname: tyre-repair\ndescription: Use when a tyre is flat.\n---\n# Tyre repair\n\nPatch the tube.\n"
    longer = real + "Then pump it up to the pressure printed on the sidewall.\n" * 20
    assert placebo_text(real) == placebo_text(real)
    assert placebo_text(longer) == placebo_text(longer)
    edited = real.replace("Patch the tube.", "Patch the inner tube.")
    assert split_skill(placebo_text(edited))[1] != split_skill(placebo_text(real))[1]  # another content, another text
    assert neutral_text(500, b"seed") == neutral_text(500, b"seed") != neutral_text(500, b"other")


@pytest.mark.parametrize("body", ["", "\n", "\n\n", "x", "\n# Title\n", "Café — naïve résumé.\n",
                                  "\r\n# Windows\r\nline one\r\nline two\r\n", "   indented only   ", "a" * 5000])
def test_placebo_body_length_edge_cases(body):
    real = f"---\nname: edge\ndescription: Use when testing edges.\n---\n{body}"
    fake_body = split_skill(placebo_text(real))[1]
    assert len(fake_body.encode()) == len(body.encode())
    core = body.strip()
    assert fake_body.startswith(body[: len(body) - len(body.lstrip())])  # the real body's leading whitespace
    if core:
        assert fake_body.endswith(body[len(body.rstrip()):]) and not fake_body.strip()[-1:].isspace()


def test_neutral_text_is_whole_sentences_cut_at_the_end():
    text = neutral_text(3000, b"k")
    assert len(text) == 3000
    paragraphs = text.split("\n\n")
    assert len(paragraphs) > 3 and all("\n" not in p for p in paragraphs)  # one paragraph per line
    whole = paragraphs[:-1]
    for para in whole:
        rest = para
        while rest:
            hit = next((s for s in SENTENCES if rest.startswith(s)), None)
            assert hit, rest[:60]
            rest = rest[len(hit):].lstrip(" ")


def test_placebo_is_recognised_and_a_real_skill_never_is(families):
    assert len({s[:RECOGNISED_CHARS] for s in SENTENCES}) == len(SENTENCES)
    for family in families:
        real = (family / "SKILL.md").read_text(encoding="utf-8")
        fake = placebo_text(real)
        assert carries_placebo(fake) and carries_placebo(split_skill(fake)[1])
        # as the Read tool returns it (cat -n prefixes) and as the Skill tool's body block
        numbered = "".join(f"{i}\t{line}" for i, line in enumerate(fake.splitlines(keepends=True), 1))
        assert carries_placebo(numbered)
        for path in family.rglob("*"):
            if path.is_file():
                assert not carries_placebo(path.read_text(encoding="utf-8", errors="replace")), path
    for prompt in (ROOT / "evals" / "test-prompts").glob("*.json"):
        assert not carries_placebo(prompt.read_text(encoding="utf-8"))


# -- where a placebo lives -------------------------------------------------------------------------------------


def test_materialized_placebo_is_named_by_its_tree_and_reused(bike_suite, tmp_path):
    family = bike_suite / "skills" / "chain-care"  # a hub with a sub-skill: the placebo has the hub only
    root = tmp_path / "run" / PLACEBO_DIR
    got: list[Path] = []
    threads = [threading.Thread(target=lambda: got.append(materialize_placebo(family, root))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(got)) == 1
    path = got[0]
    assert path.name == "chain-care" and path.parent.name == f"chain-care-{tree_hash([path])}"
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == [
        path.parent.name, f"{path.parent.name}/chain-care", f"{path.parent.name}/chain-care/SKILL.md"]
    first = (path / "SKILL.md").read_bytes()
    again = materialize_placebo(family, tmp_path / "other-run" / PLACEBO_DIR)  # a new pass: the same bytes
    assert again.parent.name == path.parent.name and (again / "SKILL.md").read_bytes() == first
    assert not list(bike_suite.rglob(f"{PLACEBO_DIR}*")), "never written into the suite"


def test_install_dirs_per_arm(bike_suite, tmp_path):
    suite = load_suite(bike_suite)
    version = working_tree(suite)
    assert install_dirs(suite, version, "tyre-repair", "aa") == []
    assert install_dirs(suite, version, "tyre-repair", "no-skill") == []
    assert install_dirs(suite, version, "tyre-repair", "with-skill") == [suite.family_dir("tyre-repair")]
    (placebo,) = install_dirs(suite, version, "tyre-repair", "placebo", out_dir=tmp_path)
    assert placebo.is_relative_to(tmp_path / PLACEBO_DIR) and placebo.name == "tyre-repair"
    with pytest.raises(PlanError, match="run directory"):
        install_dirs(suite, version, "tyre-repair", "placebo")


# -- the plan and the arms' rules ---------------------------------------------------------------------------


def test_opt_in_arms_plan_like_no_skill():
    suite = load_suite(TINY_SUITE)
    plan = make_plan(suite, "k", models=["haiku"], conditions=["no-skill", "with-skill", "placebo", "aa"], reps=1,
                     seed=0)
    assert set(plan[plan.dormancy == 1].condition) == {"with-skill"}  # dormancy: the real skill's arm only
    lift = plan[plan.dormancy == 0]
    assert lift.groupby("condition").size().to_dict() == {c: len(suite.scored_prompts) - 1 for c in
                                                          ("no-skill", "with-skill", "placebo", "aa")}
    assert installed_families(suite, "dates", "aa") == [] and installed_families(suite, "dates", "placebo") == ["dates"]
    for config in (RunSettings(), load_suite(ROOT / "evals").config.run):  # opt-in: never a default condition
        assert not {"placebo", "aa"} & set(config.conditions)


def test_opt_in_arms_take_no_ref():
    for label in ("placebo@main", "aa@HEAD"):
        with pytest.raises(ConditionError):
            check_condition(label)
    assert not is_skilled("placebo") and lists_skill("placebo") and not lists_skill("aa")


@pytest.mark.parametrize("condition, available, reason", [
    ("placebo", 0, "invalid: skill unavailable"), ("placebo", 1, None), ("aa", 0, None), ("no-skill", 0, None),
    ("with-skill", 0, "invalid: skill unavailable")])
def test_a_placebo_that_is_not_listed_is_not_gradeable(condition, available, reason):
    signals = {"condition": condition, "skill_available": available, "exit_code": 0, "budget_hit": 0, "is_error": 0}
    assert skip_reason(signals) == reason
