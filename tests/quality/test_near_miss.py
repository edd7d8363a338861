"""The near-miss generator on the simulated endpoint, through the real anthropic SDK (JudgeClient).

The request holds the family's description and the other families' names and descriptions — no query of the
trigger set, so no test query; the simulated rule (:mod:`skillbench.sim._near_miss`) is deterministic and its
queries carry the family's words and another family's intent; in the trigger set they read ``source: generated``.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

from skillbench.judge import JudgeClient, ProtocolError, ask_validated
from skillbench.quality import near_miss_payload, near_miss_request, parse_near_misses
from skillbench.quality._trigger_set import GENERATED, TEST, build_trigger_set, family_eval_queries
from skillbench.sim import _triggering as triggering
from skillbench.suite import load_suite
from skillbench.weekly import model_endpoint
from skillbench.wire import RUN_ID_HEADER

EVALS = Path(__file__).resolve().parents[2] / "evals"
FAMILY = "time-series-pandas"
QUOTED = re.compile(r"(?<!\w)'(.+?)'(?!\w)")


def _ask(client: JudgeClient, body: dict, count: int) -> list[str]:
    return ask_validated(client, lambda attempt: (body, {RUN_ID_HEADER: "near-miss-test"}),
                         lambda message: parse_near_misses(message, count),
                         next_attempt=itertools.count(1).__next__)


def test_the_simulated_generator_reads_no_query_is_deterministic_and_its_queries_are_labelled_generated() -> None:
    suite = load_suite(EVALS)
    payload = near_miss_payload(suite, FAMILY, 4)
    assert set(payload) == {"skill", "description", "other_skills", "count", "max_chars"}
    body = near_miss_request(payload)
    text = json.dumps(body)
    queries = [s.test.prompt for s in suite.prompts]
    queries += [q for f in suite.families for q, _, _ in family_eval_queries(suite, f)]
    assert queries and not any(json.dumps(q)[1:-1] in text for q in queries)  # no query at all, so no test query
    with model_endpoint("sim", seed=0) as ep:
        client = JudgeClient(ep.base_url, ep.api_key, "claude-opus-5-5")
        try:
            first, again = _ask(client, body, 4), _ask(client, body, 4)
        finally:
            client.close()
    assert first == again and len(first) == 4 and len(set(first)) == 4
    others = {o["name"]: o["description"] for o in payload["other_skills"]}
    own = triggering.read_description(FAMILY, payload["description"]).topic
    for query in first:
        assert triggering.content_words(query) & own  # the family's vocabulary …
        intent, frame = query.split("? ", 1)  # … and another family's quoted phrasing; the frame reads no word
        assert not triggering.content_words(frame) - own
        intent = intent.lower()
        assert any(intent == p.lower().rstrip("?") for d in others.values() for p in QUOTED.findall(d))
    tset = build_trigger_set(suite, FAMILY, seed=0, generated=first)
    made = [q for q in tset.queries if q.source == GENERATED]
    assert sorted(q.text for q in made) == sorted(first) and not any(q.should_trigger for q in made)
    assert any(q.split == TEST for q in made)


def test_a_reply_with_too_many_or_repeated_queries_is_invalid() -> None:
    def reply(queries: object) -> object:
        block = {"type": "tool_use", "id": "t", "name": "propose_near_misses", "input": {"queries": queries}}
        return type("Message", (), {"content": [type("Block", (), block)()]})()

    assert parse_near_misses(reply([" a query "]), 2) == ["a query"]
    for bad in ([], ["a", "b", "c"], ["a", "A"], ["two\nlines"], [""], "a"):
        with pytest.raises(ProtocolError):
            parse_near_misses(reply(bad), 2)
