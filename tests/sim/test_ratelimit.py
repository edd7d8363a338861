"""The simulated endpoint's ``rate_limit`` profile: token buckets, 429s and the ``anthropic-ratelimit-*`` headers."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import anthropic
import pytest

from skillbench.sim import SimServer
from skillbench.wire import SIM_API_KEY
from tests.helpers.sim import CliOptions, run_cli

MODEL = "claude-sonnet-4-6"
BODY: dict[str, Any] = {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "Wax a chain?"}]}
BUCKETS = ("requests", "tokens", "input-tokens", "output-tokens")


class Clock:
    """A monotonic clock the test moves by hand, so refill is exact."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def make() -> Iterator[Callable[..., tuple[SimServer, anthropic.Anthropic, Clock]]]:
    servers: list[SimServer] = []

    def _make(**rate_limit: float) -> tuple[SimServer, anthropic.Anthropic, Clock]:
        server = SimServer(None, seed=2, profiles={"rate_limit": rate_limit} if rate_limit else None).start()
        servers.append(server)
        clock = Clock()
        if server.rate_limits is not None:
            server.rate_limits.clock = clock
        return server, anthropic.Anthropic(base_url=server.base_url, api_key=SIM_API_KEY, max_retries=0), clock

    yield _make
    for server in servers:
        server.stop()


def _call(client: anthropic.Anthropic, body: dict[str, Any] = BODY) -> tuple[int, Any, Any]:
    """``(status, headers, usage or error body)`` of one raw call."""
    try:
        raw = client.messages.with_raw_response.create(**body)
    except anthropic.APIStatusError as exc:
        return exc.status_code, exc.response.headers, exc.body
    return raw.status_code, raw.headers, raw.parse().usage


def test_off_by_default_no_headers(make):
    _, client, _ = make()
    status, headers, _ = _call(client)
    assert status == 200 and not [k for k in headers if k.startswith("anthropic-ratelimit-")]


def test_requests_bucket_429_then_continuous_refill(make):
    server, client, clock = make(requests_per_minute=3)
    seen = [_call(client) for _ in range(3)]
    assert [s for s, _, _ in seen] == [200, 200, 200]
    assert [h["anthropic-ratelimit-requests-remaining"] for _, h, _ in seen] == ["2", "1", "0"]
    assert all(h["anthropic-ratelimit-requests-limit"] == "3" for _, h, _ in seen)
    status, headers, body = _call(client)
    assert status == 429 and body["error"]["type"] == "rate_limit_error"
    assert headers["retry-after"] == "20"  # one request refills in 60/3 s
    assert headers["anthropic-ratelimit-requests-remaining"] == "0"
    clock.t += 19.0
    assert _call(client)[0] == 429  # not yet: 0.95 of a request
    clock.t += 1.0
    assert _call(client)[0] == 200  # refilled continuously, not at a window's edge
    assert server.rate_limits.rejected == 2


def test_tokens_bucket_headers_are_consistent(make):
    _, client, clock = make(tokens_per_minute=1000, input_tokens_per_minute=800, output_tokens_per_minute=400)
    status, headers, use = _call(client)
    assert status == 200
    assert headers["anthropic-ratelimit-tokens-remaining"] == str(1000 - use.input_tokens - use.output_tokens)
    assert headers["anthropic-ratelimit-input-tokens-remaining"] == str(800 - use.input_tokens)
    assert headers["anthropic-ratelimit-output-tokens-remaining"] == str(400 - use.output_tokens)
    assert "anthropic-ratelimit-requests-limit" not in headers  # only the limits the profile sets
    for bucket in ("tokens", "input-tokens", "output-tokens"):
        reset = datetime.fromisoformat(headers[f"anthropic-ratelimit-{bucket}-reset"].replace("Z", "+00:00"))
        assert headers[f"anthropic-ratelimit-{bucket}-reset"].endswith("Z")
        date = datetime.strptime(headers["date"], "%a, %d %b %Y %H:%M:%S GMT").timestamp()
        assert 0 <= reset.timestamp() - date <= 61  # full again within the minute (RFC 3339, UTC)
    n = 1
    while (result := _call(client))[0] == 200:  # the buckets go empty after a few calls, never mid-call
        n += 1
        assert n < 20
    status, headers, body = result
    assert status == 429 and int(headers["retry-after"]) >= 1
    assert headers["anthropic-ratelimit-output-tokens-remaining"] == "0"
    clock.t += int(headers["retry-after"])
    assert _call(client)[0] == 200  # retry-after was enough


def test_buckets_are_per_model_and_streams_carry_the_headers(make):
    _, client, _ = make(requests_per_minute=1, retry_after_s=7)
    assert _call(client)[0] == 200
    status, headers, _ = _call(client)
    assert status == 429 and headers["retry-after"] == "7"  # the profile's fixed value
    other = {**BODY, "model": "claude-haiku-4-5"}
    raw = client.messages.with_raw_response.create(**other, stream=True)
    assert raw.status_code == 200 and raw.headers["content-type"].startswith("text/event-stream")
    assert raw.headers["anthropic-ratelimit-requests-remaining"] == "0"  # haiku's own bucket, just taken
    assert raw.headers["anthropic-ratelimit-requests-limit"] == "1"
    assert [e.type for e in raw.parse()][-1] == "message_stop"


def test_batch_routes_are_not_limited(make):
    _, client, _ = make(requests_per_minute=1)
    assert _call(client)[0] == 200
    page = client.messages.batches.list()
    assert page.data == []


def test_a_short_burst_meets_429s_quickly(make):
    _, client, clock = make(requests_per_minute=120, burst_s=1)  # holds 2 requests, refills 2 per second
    assert [_call(client)[0] for _ in range(3)] == [200, 200, 429]
    status, headers, _ = _call(client)
    assert status == 429 and headers["retry-after"] == "1"
    clock.t += 0.5
    status, headers, _ = _call(client)
    assert status == 200 and headers["anthropic-ratelimit-requests-limit"] == "120"


def test_the_cli_meets_the_429_and_retries(make, tmp_path: Path):
    server, client, _ = make(requests_per_minute=20, burst_s=3)  # one request, then one per 3 s
    now = [time.monotonic()]
    server.rate_limits.clock = lambda: now[0]  # frozen: the bucket stays empty until the CLI has met the 429
    model = "claude-sonnet-5-5"  # what the pinned CLI sends for --model sonnet (a bucket per requested name)
    assert _call(client, {**BODY, "model": model})[0] == 200  # empties sonnet's bucket

    def refill_after_the_429() -> None:  # however long the CLI takes to start, its first request finds no token
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if any(r.get("rate_limited") for r in list(server.received) if r.get("model") == model):
                now[0] += 60  # a minute later: the retry finds the bucket full
                return
            time.sleep(0.05)

    threading.Thread(target=refill_after_the_429, daemon=True).start()
    run = run_cli(CliOptions(prompt="How do I wax a chain?", timeout=60), server.base_url, tmp_path)
    retries = [e for e in run.events if e.get("subtype") == "api_retry"]
    assert run.result is not None and not run.result.get("is_error"), run.summary()
    assert retries and retries[0]["error_status"] == 429 and retries[0]["error"] == "rate_limit"
    assert any(r.get("rate_limited") for r in server.received if r["model"] == model)


def test_batch_routes_have_a_bucket_of_their_own() -> None:
    profiles = {"rate_limit": {"requests_per_minute": 100}, "batches": {"rate_limit": {"requests_per_minute": 2}}}
    with SimServer(None, seed=2, profiles=profiles) as server:
        clock = Clock()
        assert server.batch_rate_limits is not None
        server.batch_rate_limits.clock = clock
        client = anthropic.Anthropic(base_url=server.base_url, api_key=SIM_API_KEY, max_retries=0)
        listed = client.messages.batches.with_raw_response.list()
        assert listed.headers["anthropic-ratelimit-requests-limit"] == "2"
        assert listed.headers["anthropic-ratelimit-requests-remaining"] == "1"
        assert "anthropic-ratelimit-tokens-limit" not in listed.headers  # a batch route's request carries no tokens
        with pytest.raises(anthropic.NotFoundError):  # every route counts, whatever it answers
            client.messages.batches.retrieve("msgbatch_none")
        with pytest.raises(anthropic.RateLimitError) as refused:
            client.messages.batches.create(requests=[{"custom_id": "a", "params": BODY}])
        headers = refused.value.response.headers
        assert headers["retry-after"] == "30" and headers["anthropic-ratelimit-requests-remaining"] == "0"
        status, messages_headers, _ = _call(client)  # Messages is another limit: its bucket is untouched
        assert status == 200 and messages_headers["anthropic-ratelimit-requests-limit"] == "100"
        clock.t += 30.0
        assert client.messages.batches.with_raw_response.list().status_code == 200
        assert [s for _, _, s in server.batch_received] == [200, 404, 429, 200]
        assert server.batch_rate_limits.rejected == 1 and server.rate_limits.rejected == 0
        client.close()


def test_batch_routes_are_not_limited_by_default(make):
    server, client, _ = make(requests_per_minute=1)  # a Messages limit alone leaves the batch routes free
    assert server.batch_rate_limits is None
    for _ in range(3):
        raw = client.messages.batches.with_raw_response.list()
        assert raw.status_code == 200 and not [k for k in raw.headers if k.startswith("anthropic-ratelimit-")]
