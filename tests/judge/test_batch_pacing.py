"""The batched judge's Batches calls paced by the budget of the endpoint's batch routes, against the simulated
endpoint's ``batches.rate_limit`` (real SDK, real server): waits instead of 429s, a 429 that still comes honoured and
counted, the unpaced path meeting them, and hostile headers never stalling a round (data-driven)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

from skillbench.judge import BatchStore, JudgeCallError, JudgeClient
from skillbench.judge._batch import BatchClient, BatchPacing
from skillbench.judge._batch_api import batches_budget
from skillbench.limiter import RateBudget
from skillbench.sim import SimServer
from skillbench.wire import BATCHES_ROUTE, SIM_API_KEY

MODEL = "claude-haiku-4-5"
CAP_S = 0.1  # the budget's cap on one wait in the hostile cases (60 s in a pass)
CASES = json.loads((Path(__file__).parents[1] / "data" / "batch_pacing_cases.json").read_text(encoding="utf-8"))


@pytest.fixture
def sim() -> Iterator[Callable[..., SimServer]]:
    """``sim(**rate_limit)`` → a started endpoint whose batches end at once, limited as given (or not at all)."""
    servers: list[SimServer] = []

    def _make(**rate_limit: float) -> SimServer:
        batches: dict[str, Any] = {"delay_s": 0.0, **({"rate_limit": rate_limit} if rate_limit else {})}
        server = SimServer(None, seed=3, profiles={"batches": batches}).start()
        servers.append(server)
        return server

    yield _make
    for server in servers:
        server.stop()


@pytest.fixture(scope="module")
def plain() -> Iterator[SimServer]:
    """One unlimited endpoint for the cases that need no bucket of their own (each brings its own budget)."""
    with SimServer(None, seed=3, profiles={"batches": {"delay_s": 0.0}}) as server:
        yield server


def _client(server: SimServer, transport: Any = None) -> JudgeClient:
    return JudgeClient(server.base_url, SIM_API_KEY, MODEL, max_retries=3, timeout=10, transport=transport)


def _round_trip(client: JudgeClient, tmp_path: Path, pacing: BatchPacing, *, items: int = 2,
                asks: int = 2) -> tuple[BatchClient, list[list[str]]]:
    """``items`` workers each asking ``asks`` questions in turn (so ``asks`` rounds of batches); every reply's text."""
    batcher = BatchClient(client, BatchStore(tmp_path), "rubric", simulated=True, pacing=pacing)

    def work(item: int) -> list[str]:
        texts = []
        for ask in range(asks):
            request = {"max_tokens": 64, "messages": [{"role": "user", "content": f"question {item}.{ask}"}]}
            try:
                texts.append(batcher.create(request, {}).message.content[0].text)
            except JudgeCallError as exc:  # the request's batch could not be read: the judge would retry it once
                texts.append(f"! {exc}")
        return texts

    try:
        return batcher, batcher.run(list(range(items)), work, lambda i: ("rubric", f"run-{i}"))
    finally:
        batcher.close()


def _answered(replies: list[list[str]], items: int = 2, asks: int = 2) -> bool:
    return len(replies) == items and all(len(r) == asks and all(t and t[0] != "!" for t in r) for r in replies)


def test_paced_rounds_wait_their_turn_and_meet_no_429(sim, tmp_path: Path) -> None:
    # 5 requests of burst, 10 a second after it: a round (create, polls, the results' two requests) drains it.
    server = sim(requests_per_minute=600, burst_s=0.5, retry_after_s=0.2)
    batcher, replies = _round_trip(_client(server), tmp_path, BatchPacing(RateBudget("batches")), asks=3)
    assert _answered(replies, asks=3)
    pacing = batcher.pacing.summary()
    sent = list(server.batch_received)
    assert pacing["paced"] is True and pacing["rate_limited"] == 0 and not [s for s in sent if s[2] == 429]
    assert pacing["requests"] == len(sent) >= 12  # three rounds: create, ≥ 1 retrieve, results (2 requests) each
    assert pacing["waited"] > 0 and pacing["waited_s"] > 0  # the schedule made some wait for a refill instead
    assert server.batch_rate_limits is not None and server.batch_rate_limits.rejected == 0


def _drain(server: SimServer) -> None:
    """Another client of the key empties the batch routes' bucket (until its first 429)."""
    other = anthropic.Anthropic(base_url=server.base_url, api_key=SIM_API_KEY, max_retries=0)
    with pytest.raises(anthropic.RateLimitError):
        for _ in range(10):
            other.messages.batches.list()
    other.close()


def test_unpaced_calls_go_at_once_into_an_empty_bucket(sim, tmp_path: Path) -> None:
    server = sim(requests_per_minute=60, burst_s=3)  # 3 of burst, then one a second
    client = JudgeClient(server.base_url, SIM_API_KEY, MODEL, max_retries=0, timeout=10)
    _drain(server)
    batcher, replies = _round_trip(client, tmp_path, BatchPacing.unpaced(), items=1, asks=1)
    assert replies[0][0].startswith("! batch not accepted (RateLimitError")  # no turn taken: sent, refused
    assert batcher.pacing.summary() == {"paced": False, "requests": 1, "rate_limited": 1, "waited": 0,
                                        "waited_s": 0.0, "capped": 0, "retries": 0}
    assert [st for _, _, st in server.batch_received].count(429) == 2  # the drain's, then the pass's


def test_a_429_that_still_comes_is_honoured_and_counted(sim, tmp_path: Path) -> None:
    # Another client of the key empties the bucket first: the pass's first call (its probe) meets a 429.
    server = sim(requests_per_minute=300, burst_s=0.6, retry_after_s=0.3)  # 3 of burst, 5 a second after it
    client = _client(server)
    _drain(server)
    budget = RateBudget("batches")
    started = time.monotonic()
    batcher, replies = _round_trip(client, tmp_path, BatchPacing(budget), items=1, asks=1)
    assert _answered(replies, 1, 1)
    pacing = batcher.pacing.summary()
    assert pacing["rate_limited"] == 1 and pacing["retries"] >= 1
    assert pacing["waited_s"] >= 0.3 - 0.01  # the retry waited its retry-after in the schedule, not less
    assert budget.summary()["rate_limited"] == 1 and time.monotonic() - started < 5


def test_the_batch_routes_have_their_own_budget(plain: SimServer) -> None:
    server = plain
    client = JudgeClient(server.base_url, SIM_API_KEY, MODEL)
    try:
        assert batches_budget(client) is not client.budget  # a separate limit, keyed apart from Messages
        assert batches_budget(client) is batches_budget(JudgeClient(server.base_url, SIM_API_KEY, "other-model"))
        assert batches_budget(client).name == server.base_url + BATCHES_ROUTE
    finally:
        client.close()


def test_a_first_call_of_two_requests_is_one_probe(sim) -> None:
    # results() is two requests; as the first call of a fresh budget its second turn must not wait for the first's
    # answer (the probe's headers), which cannot come before both are sent.
    server = sim(requests_per_minute=600, burst_s=1)
    client = _client(server)
    batch = client.sdk.messages.batches.create(requests=[{"custom_id": "a", "params": {
        "model": MODEL, "max_tokens": 16, "messages": [{"role": "user", "content": "q"}]}}])
    while client.sdk.messages.batches.retrieve(batch.id).processing_status != "ended":
        time.sleep(0.02)
    pacing = BatchPacing(RateBudget("batches"))
    started = time.monotonic()
    lines = pacing.call(client, lambda: client.sdk.messages.batches.with_raw_response.results(batch.id), sends=2)
    assert [r.custom_id for r in lines] == ["a"] and time.monotonic() - started < 2
    assert pacing.summary()["requests"] == 2 and pacing.budget is not None
    assert pacing.budget.summary()["limits"]["message-batches"]["requests"]["limit"] == 600  # the probe's answer
    client.close()


class _Hostile(httpx2.HTTPTransport):
    """Passes every request to the endpoint and puts ``headers`` on every batch route's answer (the first create
    answered 429 with them when ``first_429``)."""

    def __init__(self, headers: dict[str, str], first_429: bool):
        super().__init__()
        self.headers, self.first_429 = headers, first_429

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        if not request.url.path.startswith(BATCHES_ROUTE):
            return super().handle_request(request)
        if self.first_429 and request.method == "POST":
            self.first_429 = False
            body = {"type": "error", "error": {"type": "rate_limit_error", "message": "hostile"}}
            return httpx2.Response(429, headers=self.headers, json=body, request=request)
        response = super().handle_request(request)
        kept = [(k, v) for k, v in response.headers.items() if not k.lower().startswith("anthropic-ratelimit-")]
        response.headers = httpx2.Headers(kept + list(self.headers.items()))
        return response


@pytest.mark.parametrize("case", CASES["cases"], ids=lambda c: c["name"][:50])
def test_hostile_headers_never_stall_a_round(plain: SimServer, tmp_path: Path, case: dict) -> None:
    budget = RateBudget("batches", max_wait_s=CAP_S)
    started = time.monotonic()
    client = _client(plain, _Hostile(case["headers"], bool(case.get("first_429"))))
    batcher, replies = _round_trip(client, tmp_path, BatchPacing(budget), items=1, asks=1)
    assert _answered(replies, 1, 1)
    pacing = batcher.pacing.summary()
    assert pacing["rate_limited"] == case["rate_limited"]
    assert case["capped_at_least"] <= pacing["capped"] <= case.get("capped_at_most", 99)
    assert pacing["waited_s"] <= CAP_S * pacing["requests"] + 0.01 and time.monotonic() - started < 5
