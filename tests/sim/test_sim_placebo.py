"""The simulated agent and a placebo: recognised from the loaded text alone, worth the profile's ``placebo_gain``,
and decided into the truth (the Skill tool's body block and a Read of SKILL.md alike)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from skillbench.sim import SimServer, load_profiles, version_key
from skillbench.sim._agent import Agent
from skillbench.sim._conversation import parse_request
from skillbench.suite import load_suite
from skillbench.suite._placebo import placebo_text, split_skill
from skillbench.wire import ATTEMPT_HEADER, RUN_ID_HEADER
from tests.helpers.sim import PROMPTS, QUIET, TYRE, make_suite, write_profiles
from tests.sim.test_sim_units import _cli_like_body, _post
from tests.sim.test_sim_versions import DEFAULT_DESC, _truth

PLACEBO = placebo_text(TYRE)
LISTING = f"- tyre-repair: {DEFAULT_DESC}\n- other: Something else."
SKILL_PATH = "/home/u1/.claude/skills/tyre-repair/SKILL.md"
RUNS = 200


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_suite(tmp_path_factory.mktemp("suite"))


def _loaded_by_skill_tool(skill_md: str) -> list[dict]:
    """The request's tail after a Skill call, as the CLI sends it: the body (no frontmatter) in a text block."""
    use = {"type": "tool_use", "id": "toolu_1", "name": "Skill", "input": {"skill": "tyre-repair"}}
    return [{"role": "assistant", "content": [use]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Launching skill: tyre-repair"},
                {"type": "text", "text": "Base directory for this skill: /home/u1/.claude/skills/tyre-repair\n\n"
                                         + split_skill(skill_md)[1]}]}]


def _loaded_by_read(skill_md: str) -> list[dict]:
    """The request's tail after a Read of SKILL.md: the whole file in ``cat -n`` form."""
    numbered = "".join(f"{i}\t{line}" for i, line in enumerate(skill_md.splitlines(keepends=True), 1))
    use = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": SKILL_PATH}}
    return [{"role": "assistant", "content": [use]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": numbered}]}]


def test_share_of_a_placebo_is_the_profile_gain_whatever_the_version(suite_dir):
    suite = load_suite(suite_dir)
    spec = suite.prompt("tyre-flat")
    prof = load_profiles({"models": {"default": {"placebo_gain": 0.3}}}).agent("claude-sonnet-5-5")
    assert load_profiles().agent("claude-sonnet-5-5").placebo_gain == pytest.approx(0.1)  # the shipped default

    def share(agent: Agent, tail: list[dict]) -> float:
        body = _cli_like_body(PROMPTS["tyre-flat"]["prompt"], listing=LISTING)
        body["messages"] += tail
        return agent.share(parse_request(body), spec, prof)

    plain = Agent(suite, seed=1, site_base="")
    assert share(plain, _loaded_by_skill_tool(TYRE)) == 1.0
    assert share(plain, _loaded_by_skill_tool(PLACEBO)) == pytest.approx(0.3)
    assert share(plain, _loaded_by_read(PLACEBO)) == pytest.approx(0.3)
    assert share(plain, []) == 0.0
    # A version gain keyed on the listed description moves the skill, never its placebo (which lists the same one).
    useless = Agent(suite, seed=1, site_base="", versions=load_profiles(
        {"skill_versions": {version_key(DEFAULT_DESC): {"gain": 0.0}}}).skill_versions)
    assert share(useless, _loaded_by_skill_tool(TYRE)) == 0.0
    assert share(useless, _loaded_by_skill_tool(PLACEBO)) == pytest.approx(0.3)


def _converse(url: str, run_id: str, skill_md: str | None) -> None:
    """One run over HTTP: the first request, then whatever tool call the agent makes answered with ``skill_md``."""
    body = _cli_like_body(PROMPTS["tyre-flat"]["prompt"], listing=LISTING if skill_md else "- other: Else.")
    headers = {RUN_ID_HEADER: run_id, ATTEMPT_HEADER: "1"}
    for _ in range(3):
        status, msg = _post(url, json.dumps(body).encode(), headers)
        assert status == 200, msg
        if msg["stop_reason"] != "tool_use":
            return
        (use,) = [b for b in msg["content"] if b["type"] == "tool_use"]
        assert skill_md is not None
        tail = _loaded_by_skill_tool(skill_md) if use["name"] == "Skill" else _loaded_by_read(skill_md)
        tail[0]["content"] = msg["content"]
        tail[1]["content"][0]["tool_use_id"] = use["id"]
        body["messages"] += tail
    raise AssertionError(f"{run_id}: no answer after the skill was loaded")


@pytest.mark.parametrize("route", ["trigger", "file_read"])
def test_the_truth_of_a_placebo_lies_between_no_skill_and_the_skill(suite_dir, tmp_path, route):
    """p(must) 0.2 without, 0.9 with, placebo_gain 0.5 → 0.55: 600 items per arm (sd of a rate about 0.02)."""
    prof = {**QUIET, route: 1.0, "trigger_floor": 1.0, "item_spread": 0.0, "placebo_gain": 0.5,
            "must": {"without": 0.2, "with": 0.9}, "bonus": {"without": 0.3, "with": 0.6},
            "avoid": {"without": 0.2, "with": 0.05}}
    profiles = write_profiles(tmp_path / "p.yaml", {"default": prof})
    arms = {"skill": TYRE, "placebo": PLACEBO, "none": None}
    with SimServer(suite_dir, seed=5, profiles=profiles) as server:
        url = f"{server.base_url}/v1/messages"
        jobs = [(f"{arm}-r{r}", text) for arm, text in arms.items() for r in range(RUNS)]
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda job: _converse(url, *job), jobs))
        rows = _truth(server.base_url, (run_id for run_id, _ in jobs))

    expected_route = {"trigger": "skill_tool", "file_read": "file_read"}[route]
    for arm in ("skill", "placebo"):  # the placebo is loaded exactly as the skill is
        assert {(r.activation_route, r.skill_in_context) for r in rows if r.run_id.startswith(f"{arm}-")} == {
            (expected_route, 1)}

    def musts(arm: str) -> float:
        mine = [r for r in rows if r.run_id.startswith(f"{arm}-") and r.item_type == "must"]
        return sum(r.decided == "covered" for r in mine) / len(mine)

    assert musts("skill") == pytest.approx(0.9, abs=0.06)
    assert musts("placebo") == pytest.approx(0.55, abs=0.07)
    assert musts("none") == pytest.approx(0.2, abs=0.06)
