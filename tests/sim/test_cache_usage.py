"""Prompt caching in the usage the simulated endpoint reports, through the real ``anthropic`` SDK."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import pytest

from skillbench.judge import build_judge_request, judge_headers
from skillbench.sim import SimServer
from skillbench.sim._usage import min_cacheable, tokens
from skillbench.wire import SIM_API_KEY
from tests.helpers.sim import PROMPTS

SONNET = "claude-sonnet-4-6"
EPHEMERAL = {"type": "ephemeral"}


class Clock:
    """The cache's clock, moved by hand so TTLs are exact whatever the machine's load."""

    def __init__(self) -> None:
        self.t = 50.0

    def __call__(self) -> float:
        return self.t


CLOCK = Clock()


@pytest.fixture
def make() -> Iterator[Callable[..., anthropic.Anthropic]]:
    """``make(**cache)`` → an SDK client on a fresh endpoint whose ``cache`` section is that (every role), on
    :data:`CLOCK`."""
    servers: list[SimServer] = []

    def _make(**cache: Any) -> anthropic.Anthropic:
        server = SimServer(None, seed=1, profiles={"cache": {"roles": ["agent", "judge"], **cache}}).start()
        server.cache.clock = CLOCK
        servers.append(server)
        return anthropic.Anthropic(base_url=server.base_url, api_key=SIM_API_KEY, max_retries=0)

    yield _make
    for server in servers:
        server.stop()


def _compact(obj: Any) -> int:
    return len(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode())


def _system(n_tokens: int, marked: bool = True) -> list[dict[str, Any]]:
    block: dict[str, Any] = {"type": "text", "text": "A stable reference paragraph. " * (n_tokens * 4 // 30)}
    return [{**block, "cache_control": EPHEMERAL} if marked else block]


def _body(system: list[dict[str, Any]], question: str, model: str = SONNET) -> dict[str, Any]:
    return {"model": model, "max_tokens": 64, "system": system, "messages": [{"role": "user", "content": question}]}


def _prefix_tokens(system: list[dict[str, Any]]) -> int:
    bare = [{k: v for k, v in b.items() if k != "cache_control"} for b in system]
    return tokens(_compact(bare))


def _use(client: anthropic.Anthropic, body: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return client.messages.create(**body, **kw).usage.model_dump()


def test_without_cache_control_the_usage_is_unchanged(make):
    client = make()
    body = _body(_system(2000, marked=False), "How do I wax a chain?")
    use = _use(client, body)
    assert use["input_tokens"] == tokens(_compact(body))  # the estimate from before caching existed
    assert use["cache_creation_input_tokens"] == use["cache_read_input_tokens"] == 0 and use["cache_creation"] is None


def test_write_then_read_with_the_right_counts(make):
    client = make()
    system = _system(2000)
    prefix = _prefix_tokens(system)
    assert prefix >= min_cacheable(SONNET)
    first_body, second_body = _body(system, "How do I wax a chain?"), _body(system, "And how often should I?")
    first, second = _use(client, first_body), _use(client, second_body)
    assert first["cache_creation_input_tokens"] == prefix and first["cache_read_input_tokens"] == 0
    assert first["input_tokens"] == tokens(_compact(first_body)) - prefix
    assert first["cache_creation"] == {"ephemeral_5m_input_tokens": prefix, "ephemeral_1h_input_tokens": 0}
    assert second["cache_read_input_tokens"] == prefix and second["cache_creation_input_tokens"] == 0
    assert second["input_tokens"] == tokens(_compact(second_body)) - prefix


def test_below_the_minimum_nothing_is_cached(make):
    client = make()
    system = _system(600)
    assert _prefix_tokens(system) < min_cacheable(SONNET)
    for _ in range(2):
        use = _use(client, body := _body(system, "How do I wax a chain?"))
        assert use["cache_creation_input_tokens"] == use["cache_read_input_tokens"] == 0
        assert use["input_tokens"] == tokens(_compact(body))


def test_the_minimum_is_per_model(make):
    client = make()
    system = _system(1500)  # above sonnet's 1024, below the 2048 of claude-3-5-haiku
    assert min_cacheable("claude-3-5-haiku-20241022") == 2048 and min_cacheable("claude-haiku-4-5") == 4096
    assert _use(client, _body(system, "q", SONNET))["cache_creation_input_tokens"] > 0
    assert _use(client, _body(system, "q", "claude-3-5-haiku-20241022"))["cache_creation_input_tokens"] == 0
    override = make(min_tokens={"haiku": 100})
    assert _use(override, _body(system, "q", "claude-3-5-haiku-20241022"))["cache_creation_input_tokens"] > 0


def test_keyed_on_model_and_exact_prefix(make):
    client = make()
    system = _system(2000)
    _use(client, _body(system, "q"))
    assert _use(client, _body(system, "q", "claude-opus-5-5"))["cache_creation_input_tokens"] > 0  # other model
    changed = [{**system[0], "text": system[0]["text"] + "!"}]
    assert _use(client, _body(changed, "q"))["cache_read_input_tokens"] == 0  # one character differs
    moved = [{"type": "text", "text": system[0]["text"]}]
    body = {**_body(moved, "q"), "messages": [{"role": "user", "content": [
        {"type": "text", "text": "q", "cache_control": EPHEMERAL}]}]}
    use = _use(client, body)  # only a breakpoint after the message: another prefix, so a new entry
    assert use["cache_read_input_tokens"] == 0 and use["cache_creation_input_tokens"] > _prefix_tokens(system)


def test_two_breakpoints_read_the_shared_part_and_write_the_rest(make):
    client = make()
    system = _system(1200)
    history = "Earlier turns of the conversation. " * 150

    def body(question: str) -> dict[str, Any]:
        return {**_body(system, question), "messages": [
            {"role": "user", "content": [{"type": "text", "text": history, "cache_control": EPHEMERAL}]},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": question}]}

    first = _use(client, body("one"))
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > _prefix_tokens(system)
    assert _use(client, body("two"))["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    other_history = {**body("three"), "messages": [
        {"role": "user", "content": [{"type": "text", "text": history + ".", "cache_control": EPHEMERAL}]}]}
    use = _use(client, other_history)
    assert use["cache_read_input_tokens"] == _prefix_tokens(system)  # the shared system part
    assert 0 < use["cache_creation_input_tokens"] < first["cache_creation_input_tokens"]  # only the new history


def test_ttl_expires_and_a_read_refreshes(make):
    client = make()  # the default 5-minute TTL
    system = _system(2000)
    assert _use(client, _body(system, "a"))["cache_creation_input_tokens"] > 0
    CLOCK.t += 200
    assert _use(client, _body(system, "b"))["cache_read_input_tokens"] > 0  # and refreshed
    CLOCK.t += 200
    assert _use(client, _body(system, "c"))["cache_read_input_tokens"] > 0  # 400 s after the write
    CLOCK.t += 301
    assert _use(client, _body(system, "d"))["cache_creation_input_tokens"] > 0  # expired: written again


def test_one_hour_entries_and_top_level_cache_control(make):
    client = make()
    system = [{**_system(2000)[0], "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    first = _use(client, _body(system, "a"))
    assert first["cache_creation"]["ephemeral_1h_input_tokens"] == first["cache_creation_input_tokens"] > 0
    CLOCK.t += 3000
    assert _use(client, _body(system, "b"))["cache_read_input_tokens"] > 0  # past 5 minutes, within the hour
    automatic = _body(_system(2000, marked=False), "x" * 9000)
    use = _use(client, automatic, extra_body={"cache_control": EPHEMERAL})  # the breakpoint on the last block
    whole = tokens(_compact({**automatic, "cache_control": EPHEMERAL}))
    assert use["cache_creation_input_tokens"] > 0.95 * whole  # all but the request's framing
    assert use["input_tokens"] == whole - use["cache_creation_input_tokens"]


def test_more_than_four_breakpoints_is_a_400(make):
    client = make()
    body = _body([{"type": "text", "text": f"part {i}", "cache_control": EPHEMERAL} for i in range(5)], "q")
    with pytest.raises(anthropic.BadRequestError) as err:
        client.messages.create(**body)
    assert err.value.body["error"]["type"] == "invalid_request_error"


def test_by_default_only_the_judge_is_cached():
    server = SimServer(None, seed=1).start()  # the shipped profiles
    try:
        client = anthropic.Anthropic(base_url=server.base_url, api_key=SIM_API_KEY, max_retries=0)
        agent = _use(client, body := _body(_system(2000), "How do I wax a chain?"))
        assert agent["cache_creation_input_tokens"] == 0 and agent["input_tokens"] == tokens(_compact(body))
        spec = PROMPTS["chain-wax"]
        items = [(i, kind, text) for i, (kind, text) in enumerate(spec["rubric"])]
        req = build_judge_request(spec["prompt"], "Melt the wax. " * 400, items, shuffle_seed=1)
        req["messages"][0]["content"] = [{"type": "text", "text": req["messages"][0]["content"],
                                          "cache_control": EPHEMERAL}]
        uses = [_use(client, {"model": "claude-opus-5-5", **req}, extra_headers=judge_headers(s)) for s in (1, 2)]
        assert uses[0]["cache_creation_input_tokens"] > 0 and uses[1]["cache_read_input_tokens"] == \
            uses[0]["cache_creation_input_tokens"]
    finally:
        server.stop()
