"""The simulated model's trigger rule (skillbench.sim._triggering): a description read as the guidance says a model
does.

"Use when" contexts raise the propensity, exclusions lower it below any off-topic prompt, off-topic prompts stay at
the floor; the bundled suite's dormancy prompts are less likely to trigger than their family's own prompts under
the shipped profiles (no model calls).
"""

from __future__ import annotations

import pytest

import skillbench
from skillbench.paths import DEFAULT_SUITE
from skillbench.sim import AgentProfile, load_profiles
from skillbench.sim._agent import Agent
from skillbench.sim._conversation import parse_request
from skillbench.sim._triggering import content_words, read_description, relevance, trigger_probability
from tests.helpers.sim import make_suite

NAME = "tyre-repair"
DESCRIPTION = ("Finds and patches punctures in bicycle inner tubes. Use when a bicycle tyre keeps going flat, or "
               "someone says 'my tube has a hole' or 'the valve leaks'. Not for wheel truing, spoke tension or "
               "brake adjustment (rim or disc).")
PROF = AgentProfile(trigger=0.6, trigger_floor=0.1, overlap_saturation=4, use_when_gain=1.4, exclusion_scale=0.2,
                    phrase_match=0.5)

USE_WHEN = "My bicycle tyre keeps going flat overnight, what should I check?"
ON_TOPIC = "Which puncture patches work best for a bicycle repair kit?"  # topic words only, no context
OFF_TOPIC = "How do I bake sourdough bread with a stiff starter?"
EXCLUDED = "How do I fix the spoke tension on a bicycle wheel that wobbles?"


def _p(prompt: str, prof: AgentProfile = PROF) -> float:
    return trigger_probability(prof, prompt, read_description(NAME, DESCRIPTION))


def test_the_description_is_split_into_topic_contexts_and_exclusions():
    desc = read_description(NAME, DESCRIPTION)
    assert {"punctur", "tube", "tyre", "repair"} <= desc.topic
    assert content_words("a bicycle tyre keeps going flat") in desc.contexts
    assert content_words("my tube has a hole") in desc.contexts and content_words("valve leaks") in desc.contexts
    # a parenthesised list is read item by item; nothing after "Not for" is a positive context
    assert {content_words(x) for x in ("spoke tension", "rim", "disc")} <= set(desc.exclusions)
    assert not desc.topic & content_words("spoke tension truing")


def test_a_quoted_cue_is_not_a_cue_and_other_cue_forms_are_read():
    desc = read_description("x", "Plans trips. Use this when someone says 'not for me, the ferry'. "
                                 "Don't use when booking flights.")
    assert desc.contexts == (content_words("not for me, the ferry"),)
    assert desc.exclusions == (content_words("booking flights"),)
    assert read_description("x", "Plans trips. Do not use for visa questions.").exclusions == (
        content_words("visa questions"),)


def test_a_use_when_match_raises_the_propensity():
    assert relevance(PROF, USE_WHEN, read_description(NAME, DESCRIPTION))[1] == "use_when"
    assert _p(USE_WHEN) == pytest.approx(PROF.trigger * PROF.use_when_gain)
    assert _p(USE_WHEN) > _p(ON_TOPIC) > _p(OFF_TOPIC)
    assert _p(USE_WHEN, PROF.model_copy(update={"use_when_gain": 3.0})) == 1.0  # a probability: at most 1


def test_an_exclusion_match_lowers_it_below_the_off_topic_level():
    desc = read_description(NAME, DESCRIPTION)
    assert relevance(PROF, EXCLUDED, desc)[1] == "exclusion"
    # the prompt shares "bicycle" with the topic, yet the exclusion wins
    assert content_words(EXCLUDED) & desc.topic
    assert _p(EXCLUDED) == pytest.approx(PROF.trigger * PROF.trigger_floor * PROF.exclusion_scale)
    assert _p(EXCLUDED) < _p(OFF_TOPIC)


def test_an_off_topic_prompt_stays_at_the_floor():
    assert relevance(PROF, OFF_TOPIC, read_description(NAME, DESCRIPTION)) == (PROF.trigger_floor, "topic")
    assert _p(OFF_TOPIC) == pytest.approx(PROF.trigger * PROF.trigger_floor)


def test_forced_profiles_still_force():
    """Tests force behaviour with probabilities of 0 and 1; the rule keeps them (no exclusion in play)."""
    always = AgentProfile(trigger=1.0, trigger_floor=1.0)
    assert _p(OFF_TOPIC, always) == _p(ON_TOPIC, always) == _p(USE_WHEN, always) == 1.0
    assert _p(USE_WHEN, AgentProfile(trigger=0.0)) == 0.0


def test_the_agent_reaches_an_excluded_or_off_topic_skill_by_no_route(tmp_path):
    """The fallbacks (Read of SKILL.md, curl of the site) follow the same reading: deterministic per run."""
    suite = skillbench.load_suite(make_suite(tmp_path))
    prof = AgentProfile(trigger=0.0, file_read=1.0, self_serve=1.0, web_search=0.0, deny_rate=0.0,
                        trigger_floor=0.0)
    agent = Agent(suite, 3, "http://127.0.0.1:1/site")
    spec = suite.prompt("tyre-flat")
    hub = suite.skills["tyre-repair/SKILL.md"]
    listing = f"- {hub.name}: {hub.description}"
    body = {"model": "claude-sonnet-5-5", "max_tokens": 10, "messages": [{"role": "user", "content": [
        {"type": "text", "text": spec.test.prompt}]}], "system": [{"type": "text", "text": (
            "The following skills are available for use with the Skill tool:\n\n" + listing)}]}
    conv = parse_request(body)
    assert conv.listing, "the listing is read"
    assert agent.plan(conv, spec, prof, "run-1")[:1] == ["curl_leaf"]  # on-topic: the fallback fires
    off = parse_request({**body, "messages": [{"role": "user", "content": [{"type": "text", "text": OFF_TOPIC}]}]})
    assert agent.plan(off, spec, prof, "run-1") == []  # off-topic at a zero floor: no route at all
    assert [agent.plan(conv, spec, prof, "run-1") for _ in range(3)] == [["curl_leaf"]] * 3  # deterministic


def _bundled():
    if not (DEFAULT_SUITE / "test-prompts").is_dir():
        pytest.skip("the bundled demo suite is not there")
    return skillbench.load_suite(DEFAULT_SUITE)


@pytest.mark.parametrize("model", ["sonnet", "haiku", "opus"])
def test_bundled_dormancy_prompts_trigger_less_than_their_familys_own_prompts(model):
    suite = _bundled()
    prof = load_profiles().agent(model)
    agent = Agent(suite, 0, "http://127.0.0.1:1/site")
    dormant = [p for p in suite.prompts if p.dormancy]
    assert {p.family for p in dormant} == set(suite.families)  # every family has one
    for spec in dormant:
        hub = suite.skills[f"{spec.family}/SKILL.md"]

        def p(prompt: str, hub=hub) -> float:
            return agent.trigger_probability(prof, prompt, hub.name, hub.description)

        own = [p(q.test.prompt) for q in suite.prompts if q.family == spec.family and q.preference_eligible]
        assert own and p(spec.test.prompt) < min(own), (spec.name, p(spec.test.prompt), own)


def test_bundled_exclusions_hold_their_dormancy_prompts_below_the_off_topic_floor():
    """Every family whose description names an exclusion keeps its dormancy prompt out by it (the demo's
    activation contracts), and none of its own prompts is excluded by mistake."""
    suite = _bundled()
    prof = load_profiles().agent("sonnet")
    agent = Agent(suite, 0, "http://127.0.0.1:1/site")
    excluding = 0
    for family in suite.families:
        hub = suite.skills[f"{family}/SKILL.md"]
        desc = read_description(hub.name, hub.description, agent.common)
        if not desc.exclusions:
            continue
        excluding += 1
        for spec in (q for q in suite.prompts if q.family == family):
            reason = relevance(prof, spec.test.prompt, desc)[1]
            assert (reason == "exclusion") == spec.dormancy, (spec.name, reason)
    assert excluding >= 3
