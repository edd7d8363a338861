"""Pacing before a 429: every run's relay and the judge's client wait for their turn in the endpoint's one rate budget.

Against a real :class:`skillbench.sim.SimServer` whose ``rate_limit`` profile is small and fast (4 requests in the
bucket, 10 a second), requests sent at once through real relays (one per run, as generation serves them) and
through the real judge client are all admitted, where the same requests forwarded at once meet 429s; against a
local endpoint that answers hostile headers, the pacing is capped and said so in the relay's record, never a stall.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anthropic
import pytest

from skillbench.generation import Endpoint, Relay, RelayPlan
from skillbench.judge import JudgeClient
from skillbench.limiter import AdaptiveLimiter, endpoint_budget
from skillbench.sim import Serving, SimServer

KEY = "sk-pacing-test-key"
MODEL = "claude-sonnet-4-5"
FAST_LIMIT = {"requests_per_minute": 600, "burst_s": 0.4}  # 4 in the bucket, 10 a second


@pytest.fixture
def limited() -> Iterator[SimServer]:
    with SimServer(None, seed=4, profiles={"rate_limit": FAST_LIMIT}, serving=Serving(api_key=KEY)) as server:
        yield server


def _endpoint(server: SimServer) -> Endpoint:
    return Endpoint(base_url=server.base_url, api_key=KEY, kind="simulated")


def _through_relays(endpoint: Endpoint, *, paced: bool, runs: int = 4, each: int = 3) -> list[Relay]:
    """``runs`` relays (one per run), each asked ``each`` times in a row by its own thread, all at once."""
    relays = [Relay(RelayPlan.for_run(endpoint, f"run-{i}", 1, paced=paced), unix=False).start() for i in range(runs)]
    clients = {id(r): anthropic.Anthropic(base_url=r.url, api_key=r.plan.token, max_retries=0) for r in relays}
    start = threading.Barrier(runs)  # the first requests leave together, however loaded the machine

    def ask(relay: Relay) -> None:
        client = clients[id(relay)]
        start.wait(timeout=30)
        for _ in range(each):
            try:
                client.messages.create(model=MODEL, max_tokens=32, messages=[{"role": "user", "content": "hi"}])
            except anthropic.RateLimitError:
                pass  # counted by the endpoint
        client.close()

    threads = [threading.Thread(target=ask, args=(r,)) for r in relays]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    for relay in relays:
        relay.stop()
    return relays


def test_relays_wait_for_the_budget_instead_of_forwarding_into_an_empty_bucket(limited: SimServer) -> None:
    relays = _through_relays(_endpoint(limited), paced=True, each=2)
    assert limited.rate_limits is not None and limited.rate_limits.rejected == 0  # no request met an empty bucket
    exchanges = [ex for r in relays for ex in r.exchanges]
    assert len(exchanges) == 8 and all(ex["status"] == 200 for ex in exchanges)
    assert len({id(r.budget) for r in relays}) == 1  # the runs' relays share the endpoint's one budget
    # the four first requests left together: the three behind the probe waited for its answer at least, and 8
    # requests into a bucket of 4 refilling at 10 a second could not all go at once; the record says how long
    assert sum(1 for ex in exchanges if ex.get("paced_s")) >= 3
    summary = relays[0].budget.summary()  # type: ignore[union-attr]
    assert summary["rate_limited"] == 0 and summary["limits"][MODEL.lower()]["requests"]["limit"] == 600


def test_the_same_requests_unpaced_meet_429s() -> None:
    """The control: relays that forward at once send as many requests and more (12) into the same bucket, and 429s
    come."""
    with SimServer(None, seed=4, profiles={"rate_limit": FAST_LIMIT}, serving=Serving(api_key=KEY)) as server:
        relays = _through_relays(_endpoint(server), paced=False)
        assert server.rate_limits is not None and server.rate_limits.rejected > 0
    assert all(r.budget is None for r in relays)
    assert not any(ex.get("paced_s") for r in relays for ex in r.exchanges)


def test_the_judge_client_paces_and_shares_the_relays_budget(limited: SimServer) -> None:
    limiter = AdaptiveLimiter(8)
    client = JudgeClient(limited.base_url, KEY, MODEL, limiter=limiter, max_retries=0)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            client.create({"max_tokens": 32, "messages": [{"role": "user", "content": "grade"}]}, {})
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    client.close()
    assert not errors, errors  # max_retries=0: a single 429 would have failed its call
    assert limited.rate_limits is not None and limited.rate_limits.rejected == 0
    assert limiter.signals == 0  # the AIMD fallback never had to act
    summary = client.budget.summary()
    assert summary["requests"] == 10 and summary["paced"] >= 6 and summary["rate_limited"] == 0
    relay = Relay(RelayPlan.for_run(_endpoint(limited), "run-x", 1), unix=False)
    relay.stop()
    assert relay.budget is client.budget  # one budget per endpoint: the judge and generation's relays


class _Hostile(BaseHTTPRequestHandler):
    """An endpoint that answers every message with headers meant to stall or crash a client."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"id": "msg_h", "type": "message", "role": "assistant", "model": MODEL,
                           "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                           "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 1}}).encode()
        self.send_response(200)
        for name, value in {"content-type": "application/json", "content-length": str(len(body)),
                            "anthropic-ratelimit-requests-limit": "1e-9",  # a refill of years
                            "anthropic-ratelimit-requests-remaining": "0",
                            "anthropic-ratelimit-requests-reset": "9999-12-31T23:59:59Z",
                            "anthropic-ratelimit-tokens-limit": "NaN", "anthropic-ratelimit-tokens-remaining": "-1",
                            "anthropic-ratelimit-output-tokens-limit": "1e400",
                            "anthropic-ratelimit-output-tokens-remaining": "5"}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        return


@pytest.fixture
def hostile() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    endpoint_budget(url, KEY).max_wait_s = 0.1  # the cap, made small so the test is quick (60 s by default)
    yield url
    server.shutdown()
    server.server_close()


def test_hostile_headers_are_capped_and_recorded_never_a_stall(hostile: str) -> None:
    endpoint = Endpoint(base_url=hostile, api_key=KEY, kind="real")
    t0 = time.monotonic()
    relays = _through_relays(endpoint, paced=True, runs=1, each=3)
    client = JudgeClient(hostile, KEY, MODEL, max_retries=0)
    client.create({"max_tokens": 8, "messages": [{"role": "user", "content": "x"}]}, {})
    client.close()
    assert time.monotonic() - t0 < 10  # four requests, each waiting 0.1 s at most
    exchanges = relays[0].exchanges
    assert [ex["status"] for ex in exchanges] == [200, 200, 200]
    assert [bool(ex.get("pace_capped")) for ex in exchanges] == [False, True, True]  # the probe did not wait
    summary = client.budget.summary()
    assert summary["capped"] == 3 and summary["skewed_resets"] >= 1 and summary["unreadable_headers"] >= 2
