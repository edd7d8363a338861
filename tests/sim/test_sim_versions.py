"""Skill versions: the profile's ``skill_versions`` section, its keys, and the true effect of a version over HTTP."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from skillbench.ledgers import parse_truth_csv
from skillbench.sim import ProfileError, SimServer, load_profiles, skill_version_key, version_key
from skillbench.sim._conversation import parse_request
from skillbench.sim._profiles import Pair
from skillbench.sim._versions import LISTED_MAX, listed_description
from skillbench.wire import ATTEMPT_HEADER, RUN_ID_HEADER, SIM_API_KEY, TRUTH_ROUTE
from tests.helpers.sim import PROMPTS, QUIET, TYRE, make_suite, write_profiles
from tests.sim.test_sim_units import _cli_like_body, _post

DEFAULT_DESC = TYRE.split("description: ", 1)[1].split("\n", 1)[0]
SAME_DESC = "Use when a bicycle tyre goes flat, in a rewrite that says nothing the model did not already know."
BAD_DESC = "Use when a bicycle tyre goes flat, in a rewrite that teaches the wrong repair."
RUNS = 200


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_suite(tmp_path_factory.mktemp("suite"))


def _skill_md(folder: Path, frontmatter_description: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: tyre-repair\ndescription: {frontmatter_description}\n---\n# Tyre repair\n",
                    encoding="utf-8")
    return path


# -- keys ------------------------------------------------------------------------------------------------


def test_version_key_is_the_sha256_prefix_of_the_listed_description(tmp_path):
    import hashlib

    assert version_key(DEFAULT_DESC) == hashlib.sha256(DEFAULT_DESC.encode()).hexdigest()[:12]
    # A multi-line YAML description is listed as one line: the file and the listing's copy key alike.
    multi = _skill_md(tmp_path / "multi", "|\n  First line of desc.\n  Second line of desc.\n")
    listing = "- tyre-repair: First line of desc. Second line of desc.\n- other: Something else."
    listed = parse_request(_cli_like_body("x", listing=listing)).listing["tyre-repair"]
    assert skill_version_key(multi) == skill_version_key(multi.parent) == version_key(listed)
    # A description longer than the listing carries is cut with an ellipsis; cutting again changes nothing.
    long = "word " * 400
    cut = listed_description(long)
    assert len(cut) == LISTED_MAX and cut.endswith("…") and listed_description(cut) == cut
    assert version_key(long) == version_key(cut) == version_key(long + "more")  # past the cut: unseen
    assert version_key("more" + long) != version_key(long)
    assert version_key(SAME_DESC) != version_key(BAD_DESC)


# -- the profile section ----------------------------------------------------------------------------------


def test_skill_versions_section_parses(tmp_path):
    key = version_key(BAD_DESC)
    path = tmp_path / "p.yaml"
    path.write_text(f'skill_versions:\n  "{key}": {{gain: -1.0}}\n  123456789012: {{}}\n', encoding="utf-8")
    prof = load_profiles(path)
    assert prof.skill_versions[key].gain == -1.0
    assert prof.skill_versions["123456789012"].gain == 1.0  # an unquoted all-digit key reads as its text
    assert load_profiles().skill_versions == {}  # the shipped file declares none: every version as is


@pytest.mark.parametrize(("text", "field"), [
    ('skill_versions:\n  "3F2A9C0D1E4B": {gain: 0}\n', "skill_versions.3F2A9C0D1E4B"),
    ('skill_versions:\n  "3f2a9c0d1e": {gain: 0}\n', "skill_versions.3f2a9c0d1e"),
    ('skill_versions:\n  "3f2a9c0d1e4b": {gian: 0}\n', "skill_versions.3f2a9c0d1e4b.gian"),
    ('skill_versions:\n  "3f2a9c0d1e4b": {gain: .nan}\n', "skill_versions.3f2a9c0d1e4b.gain"),
])
def test_bad_skill_versions_are_one_line_profile_errors(tmp_path, text, field):
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProfileError) as err:
        load_profiles(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}: {field}: ") and "\n" not in msg


def test_pair_at_extrapolates_and_clamps():
    must, avoid = Pair(without=0.5, with_=0.8), Pair(without=0.2, with_=0.05)
    assert must.at(0.0) == 0.5 and must.at(1.0) == 0.8 and must.at(-1.0) == pytest.approx(0.2)
    assert must.at(-3.0) == 0.0 and must.at(3.0) == 1.0
    assert avoid.at(-1.0) == pytest.approx(0.35) and avoid.at(10.0) == 0.0  # a harmful version violates more


# -- the true effect of a version, through the HTTP endpoint ----------------------------------------------


def _converse(url: str, run_id: str, listing: str) -> None:
    """One run as the CLI has it: the first request, then, after a Skill call, the loaded skill's body."""
    body = _cli_like_body(PROMPTS["tyre-flat"]["prompt"], listing=listing)
    headers = {RUN_ID_HEADER: run_id, ATTEMPT_HEADER: "1"}
    for _ in range(3):
        status, msg = _post(url, json.dumps(body).encode(), headers)
        assert status == 200, msg
        if msg["stop_reason"] != "tool_use":
            return
        (use,) = [b for b in msg["content"] if b["type"] == "tool_use"]
        assert use["name"] == "Skill" and use["input"] == {"skill": "tyre-repair"}
        body["messages"] += [
            {"role": "assistant", "content": msg["content"]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": use["id"], "content": "Launching skill: tyre-repair"},
                {"type": "text", "text": "Base directory for this skill: /home/u1/.claude/skills/tyre-repair\n\n"
                                         + TYRE.split("---\n", 2)[2]}]},
        ]
    raise AssertionError(f"{run_id}: no answer after the skill was loaded")


def _truth(base_url: str, run_ids: Iterable[str]) -> list:
    ids = list(run_ids)
    rows = []
    for i in range(0, len(ids), 50):
        query = urllib.parse.urlencode([("run_id", r) for r in ids[i:i + 50]])
        request = urllib.request.Request(f"{base_url}{TRUTH_ROUTE}?{query}", headers={"x-api-key": SIM_API_KEY})
        with urllib.request.urlopen(request, timeout=5) as resp:
            rows += parse_truth_csv(resp.read().decode())
    return rows


def test_a_version_gain_moves_the_truth(suite_dir, tmp_path):
    """gain 0 covers no more musts than no skill; gain -1 fewer than no skill; the default version more."""
    same = _skill_md(tmp_path / "same", SAME_DESC)
    prof = {**QUIET, "trigger": 1.0, "trigger_floor": 1.0, "item_spread": 0.0,
            "must": {"without": 0.5, "with": 0.8}, "bonus": {"without": 0.3, "with": 0.6},
            "avoid": {"without": 0.2, "with": 0.05}}
    profiles = write_profiles(tmp_path / "p.yaml", {"default": prof}, skill_versions={
        skill_version_key(same): {"gain": 0.0}, version_key(BAD_DESC): {"gain": -1.0}})
    arms = {"default": f"- tyre-repair: {DEFAULT_DESC}\n- other: Something else.",
            "same": f"- tyre-repair: {SAME_DESC}\n- other: Something else.",
            "bad": f"- other: Something else.\n- tyre-repair: {BAD_DESC}",
            "none": "- other: Something else."}
    with SimServer(suite_dir, seed=11, profiles=profiles) as server:
        url = f"{server.base_url}/v1/messages"
        jobs = [(f"{arm}-r{r}", listing) for arm, listing in arms.items() for r in range(RUNS)]
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda job: _converse(url, *job), jobs))
        rows = _truth(server.base_url, (run_id for run_id, _ in jobs))

    assert len(rows) == len(jobs) * len(PROMPTS["tyre-flat"]["rubric"])

    def rate(arm: str, item_type: str, decided: str) -> float:
        mine = [r for r in rows if r.run_id.startswith(f"{arm}-") and r.item_type == item_type]
        return sum(r.decided == decided for r in mine) / len(mine)

    for arm in ("default", "same", "bad"):  # every versioned run really had the skill in context
        assert {(r.activation_route, r.skill_in_context) for r in rows if r.run_id.startswith(f"{arm}-")} == {
            ("skill_tool", 1)}
    assert {(r.activation_route, r.skill_in_context) for r in rows if r.run_id.startswith("none-")} == {("none", 0)}
    musts = {arm: rate(arm, "must", "covered") for arm in arms}
    # p(must) is 0.8 / 0.5 / 0.2 / 0.5 over 600 items each (sd of a rate about 0.02).
    assert musts["default"] > musts["same"] + 0.15
    assert abs(musts["same"] - musts["none"]) < 0.08
    assert musts["none"] > musts["bad"] + 0.15
    assert musts["default"] == pytest.approx(0.8, abs=0.07) and musts["bad"] == pytest.approx(0.2, abs=0.07)
    # The harmful version commits the violation more often than no skill (0.35 against 0.2, 200 items each).
    assert rate("bad", "avoid", "violated") > rate("none", "avoid", "violated") + 0.05
