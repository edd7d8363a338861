"""The placebo and aa arms in a real week: the pinned CLI in sealed containers on the simulated endpoint.

One pass of the bicycle suite (a hub with a sub-skill, and a single-file skill) × haiku × no-skill, with-skill,
placebo, aa × 2 reps = 16 runs, under a profile that always loads a listed skill and follows its link:
each arm installs what it says (the container's init skill list), the placebo loads as the skill does with the
real name and description over a neutral body of the real body's length, and the truth puts the placebo's must
coverage between no skill and the skill.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from skillbench.generation import GenerateOptions, generate
from skillbench.ledgers import PLACEBO_DIR, TRANSCRIPT_FILE
from skillbench.runtime import PassContext
from skillbench.signals import read_transcript, skip_reason
from skillbench.suite import load_suite, read_skill, tree_hash
from skillbench.suite._placebo import split_skill
from skillbench.weekly import model_endpoint
from tests.generation.test_generate import require_docker
from tests.generation.test_placebo import topic_words
from tests.helpers.sim import forced, make_suite, require_cli, write_profiles

CONDITIONS = ["no-skill", "with-skill", "placebo", "aa"]
FAMILIES = {"chain-care", "tyre-repair", "chain-waxing"}
BASE_PREFIX = "Base directory for this skill: "
pytestmark = [pytest.mark.docker, pytest.mark.cli]


@pytest.fixture(scope="module")
def week(tmp_path_factory) -> tuple[Path, Path]:
    """(suite_dir, run_dir) of one generated week with the four arms."""
    require_cli()
    require_docker()
    root = tmp_path_factory.mktemp("placebo-week")
    suite_dir = make_suite(root / "suite")
    # must: never without the skill, always with it, half the time with a placebo; every knob else forced.
    profiles = write_profiles(root / "profiles.yaml", {"default": forced(
        trigger=1.0, trigger_floor=1.0, follow_link=1.0, placebo_gain=0.5, must={"without": 0.0, "with": 1.0})})
    suite = load_suite(suite_dir)
    out = root / "week"
    opts = GenerateOptions(run_key="pl", out_dir=out, models=["haiku"], conditions=CONDITIONS, reps=2, jobs=3,
                           seed=3, sandbox="docker", timeout_s=180, extra_env={"CLAUDE_CODE_MAX_RETRIES": "0"})
    report = generate(suite, opts, PassContext(endpoint=lambda: model_endpoint("sim", suite_dir=suite, seed=3,
                                                                           profiles=profiles), log=lambda m: None))
    assert report["complete"], report
    return suite_dir, out


def _runs(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / "manifest.csv").set_index("run_id")


def _events(out: Path, run_id: str) -> list[dict]:
    return [json.loads(line) for line in (out / run_id / TRANSCRIPT_FILE).read_text().splitlines() if line.strip()]


def _loaded_bodies(out: Path, run_id: str) -> list[str]:
    """The skill bodies the Skill tool delivered (the text after the base-directory line), in order."""
    bodies = []
    for event in _events(out, run_id):
        if event.get("type") != "user":
            continue
        for block in (event.get("message") or {}).get("content") or []:
            text = block.get("text", "") if isinstance(block, dict) else ""
            if text.startswith(BASE_PREFIX):
                bodies.append(text.split("\n", 1)[1].removeprefix("\n"))
    return bodies


def test_each_arm_lists_what_it_installs(week):
    _, out = week
    runs = _runs(out)
    assert len(runs) == 16 and set(runs.condition) == set(CONDITIONS)
    for run_id, row in runs.iterrows():
        listed = FAMILIES & set(read_transcript(out / run_id / TRANSCRIPT_FILE).init["skills"])
        if row.condition in ("with-skill", "placebo"):
            assert row.skill_family in listed, run_id
        else:
            assert listed == set(), run_id
        if row.condition == "placebo":
            assert listed == {row.skill_family}, run_id  # the hub only: no sub-skill of the family
        assert row.skill_available == int(row.condition in ("with-skill", "placebo")), run_id
        assert skip_reason(row.to_dict()) is None, run_id  # every run is gradeable, the placebo's included


def test_placebo_loads_like_the_skill_with_a_neutral_body_of_its_length(week):
    suite_dir, out = week
    runs = _runs(out)
    for family in ("chain-care", "tyre-repair"):
        real_md = (suite_dir / "skills" / family / "SKILL.md").read_text(encoding="utf-8")
        real_body = split_skill(real_md)[1]
        real = runs[(runs.condition == "with-skill") & (runs.skill_family == family)].index
        fake = runs[(runs.condition == "placebo") & (runs.skill_family == family)].index
        assert len(real) == len(fake) == 2
        delivered_real = {b for r in real for b in _loaded_bodies(out, r)[:1]}
        delivered_fake = {b for r in fake for b in _loaded_bodies(out, r)}
        assert len(delivered_real) == 1 and len(delivered_fake) == 1, "the same family: the same bytes every run"
        (skill_text,), (placebo_text,) = delivered_real, delivered_fake
        # Length rule: the placebo's body has exactly the real body's UTF-8 length, and the CLI delivers both alike.
        assert len(placebo_text.encode()) == len(skill_text.encode()), (skill_text, placebo_text)
        assert not topic_words(placebo_text) & topic_words(real_md)
        for line in real_body.splitlines():
            if len(line.strip()) >= 12:
                assert line.strip() not in placebo_text
        for run_id in fake:
            uses = [b for e in _events(out, run_id) if e.get("type") == "assistant"
                    for b in (e.get("message") or {}).get("content") or [] if b.get("type") == "tool_use"]
            assert uses[0]["name"] == "Skill" and uses[0]["input"] == {"skill": family}  # triggered by its name
            meta = json.loads((out / run_id / "metadata.json").read_text())
            assert meta["installed_families"] == [family]
            folder = out / PLACEBO_DIR / f"{family}-{meta['skills_tree']}" / family  # the record names the folder
            assert tree_hash([folder]) == meta["skills_tree"] and [p.name for p in folder.iterdir()] == ["SKILL.md"]
            installed = read_skill(folder / "SKILL.md", f"{family}/SKILL.md")
            real_skill = read_skill(suite_dir / "skills" / family / "SKILL.md", f"{family}/SKILL.md")
            assert (installed.name, installed.description) == (real_skill.name, real_skill.description)
            assert len(split_skill((folder / "SKILL.md").read_text())[1].encode()) == len(real_body.encode())
    assert not list(suite_dir.rglob(f"{PLACEBO_DIR}*")), "a placebo is never written into the suite"


def test_truth_puts_the_placebo_between_no_skill_and_the_skill(week):
    _, out = week
    runs = _runs(out)
    truth = pd.read_csv(out / "truth.csv")
    final = truth[truth.attempt == truth.groupby("run_id").attempt.transform("max")]
    musts = final[final.item_type == "must"].assign(condition=lambda d: d.run_id.map(runs.condition))
    covered = musts.groupby("condition").decided.apply(lambda d: (d == "covered").mean()).to_dict()
    assert covered["no-skill"] == covered["aa"] == 0.0  # the two no-skill arms: nothing installed, nothing gained
    assert covered["with-skill"] == 1.0
    assert 0.0 < covered["placebo"] < 1.0, covered  # placebo_gain 0.5: p(must) 0.5 over 12 items
    routes = final.assign(condition=lambda d: d.run_id.map(runs.condition)).groupby("condition").activation_route
    assert set(routes.unique()["placebo"]) == {"skill_tool"} and set(routes.unique()["aa"]) == {"none"}
