"""The simulated Message Batches API through the real ``anthropic`` SDK (``client.messages.batches``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx
import pytest

from skillbench.judge import VERDICTS_TOOL, build_judge_request, judge_headers, parse_verdicts, tool_input
from skillbench.sim import SimServer
from skillbench.sim._batches import decode_params, encode_user_id
from skillbench.wire import SIM_API_KEY
from tests.helpers.sim import PROMPTS

PROMPT = PROMPTS["chain-wax"]["prompt"]
ITEMS = [(i, kind, text) for i, (kind, text) in enumerate(PROMPTS["chain-wax"]["rubric"])]
JUDGE = "claude-opus-5-5"
ANSWER = "Strip the factory grease, then immerse the chain in melted wax and let it cool. " * 3


@pytest.fixture
def make() -> Iterator[Callable[..., tuple[SimServer, anthropic.Anthropic]]]:
    """``make(**batches)`` → a fresh endpoint (seed 5, a judge without errors) and an SDK client on it."""
    servers: list[SimServer] = []

    def _make(**batches: float) -> tuple[SimServer, anthropic.Anthropic]:
        profiles = {"judges": {"default": {"flip_rate": 0.1, "fabricated_quote_rate": 0.0}},
                    "batches": {"delay_s": 0.05, **batches}}
        server = SimServer(None, seed=5, profiles=profiles).start()
        servers.append(server)
        return server, anthropic.Anthropic(base_url=server.base_url, api_key=SIM_API_KEY, max_retries=0)

    yield _make
    for server in servers:
        server.stop()


def _judge_call(sample: int) -> tuple[dict[str, Any], dict[str, str]]:
    body = {"model": JUDGE, **build_judge_request(PROMPT, ANSWER, ITEMS, shuffle_seed=sample)}
    return body, judge_headers(sample, run_id=f"judge-r{sample}", attempt=1)


def _wait(client: anthropic.Anthropic, batch_id: str, timeout: float = 20.0) -> Any:
    end = time.monotonic() + timeout
    while (batch := client.messages.batches.retrieve(batch_id)).processing_status != "ended":
        assert time.monotonic() < end, f"batch {batch_id} still {batch.processing_status}"
        time.sleep(0.02)
    return batch


def _batched(body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    return {**body, "metadata": {"user_id": encode_user_id(headers)}}


def test_round_trip_matches_the_synchronous_replies(make):
    calls = [_judge_call(s) for s in range(1, 7)]
    _, sync = make()
    expected = [sync.messages.create(extra_headers=h, **b) for b, h in calls]
    _, client = make()
    batch = client.messages.batches.create(
        requests=[{"custom_id": f"r{n}", "params": _batched(b, h)} for n, (b, h) in enumerate(calls)])
    assert batch.type == "message_batch" and batch.processing_status == "in_progress"
    assert batch.request_counts.processing == 6 and batch.results_url is None and batch.ended_at is None
    assert batch.expires_at.timestamp() - batch.created_at.timestamp() == pytest.approx(24 * 3600)
    done = _wait(client, batch.id)
    assert done.request_counts.succeeded == 6 and done.request_counts.processing == 0
    assert done.results_url.endswith(f"/v1/messages/batches/{batch.id}/results") and done.ended_at is not None
    got = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert sorted(got) == [f"r{n}" for n in range(6)]
    for n, want in enumerate(expected):
        msg = got[f"r{n}"].message
        assert got[f"r{n}"].type == "succeeded"
        assert parse_verdicts(tool_input(msg, VERDICTS_TOOL), ITEMS) == parse_verdicts(
            tool_input(want, VERDICTS_TOOL), ITEMS)
        assert msg.usage.model_dump() == want.usage.model_dump()  # the same body, the same estimate


def test_user_id_metadata_maps_to_the_headers_and_is_dropped():
    headers = judge_headers(2, run_id="judge-abc", attempt=3)
    params = {"model": JUDGE, "max_tokens": 5, "messages": [], "metadata": {"user_id": encode_user_id(headers)}}
    body, got = decode_params(params)
    assert got == headers and "metadata" not in body
    assert encode_user_id(headers).startswith("skillbench:{") and " " not in encode_user_id(headers)
    other = {**params, "metadata": {"user_id": "someone-else"}}
    assert decode_params(other) == (other, {})  # a user_id that is not ours is left alone


def test_cancel_then_ended_with_unprocessed_requests_canceled(make):
    _, client = make(delay_s=30)
    body, headers = _judge_call(1)
    batch = client.messages.batches.create(
        requests=[{"custom_id": f"c{n}", "params": _batched(body, headers)} for n in range(3)])
    canceling = client.messages.batches.cancel(batch.id)
    assert canceling.processing_status == "canceling" and canceling.cancel_initiated_at is not None
    done = _wait(client, batch.id, timeout=5)
    assert done.request_counts.canceled == 3 and done.request_counts.succeeded == 0
    assert {r.result.type for r in client.messages.batches.results(batch.id)} == {"canceled"}


def test_cancel_mid_batch_keeps_what_was_answered(make):
    _, client = make(delay_s=0.0, per_request_s=0.3)
    body, headers = _judge_call(1)
    batch = client.messages.batches.create(
        requests=[{"custom_id": f"m{n}", "params": _batched(body, headers)} for n in range(5)])
    time.sleep(0.45)  # the first one or two are answered
    client.messages.batches.cancel(batch.id)
    counts = _wait(client, batch.id, timeout=5).request_counts
    assert counts.succeeded >= 1 and counts.canceled >= 1 and counts.succeeded + counts.canceled == 5


def test_delete_only_once_ended(make):
    _, client = make(delay_s=30)
    body, headers = _judge_call(1)
    batch = client.messages.batches.create(requests=[{"custom_id": "d1", "params": _batched(body, headers)}])
    with pytest.raises(anthropic.BadRequestError) as err:
        client.messages.batches.delete(batch.id)
    assert err.value.body["error"]["type"] == "invalid_request_error"
    client.messages.batches.cancel(batch.id)
    _wait(client, batch.id, timeout=5)
    deleted = client.messages.batches.delete(batch.id)
    assert deleted.id == batch.id and deleted.type == "message_batch_deleted"
    with pytest.raises(anthropic.NotFoundError):
        client.messages.batches.retrieve(batch.id)


def test_list_pages_newest_first(make):
    _, client = make(delay_s=30)
    body, headers = _judge_call(1)
    ids = [client.messages.batches.create(requests=[{"custom_id": "x", "params": _batched(body, headers)}]).id
           for _ in range(5)]
    first = client.messages.batches.list(limit=2)
    assert [b.id for b in first.data] == ids[::-1][:2] and first.has_more
    assert first.first_id == ids[4] and first.last_id == ids[3]
    assert [b.id for b in client.messages.batches.list(limit=2)] == ids[::-1]  # auto-paging with after_id
    back = client.messages.batches.list(before_id=ids[1], limit=2)
    assert [b.id for b in back.data] == [ids[3], ids[2]] and back.has_more
    assert not client.messages.batches.list(after_id=ids[1], limit=5).has_more


def test_expired_and_errored_at_the_profile_rates(make):
    n = 200
    _, client = make(expire_rate=0.2, error_rate=0.25)
    body, headers = _judge_call(1)
    reqs = [{"custom_id": f"e{i}", "params": _batched(body, headers)} for i in range(n)]
    batch = client.messages.batches.create(requests=reqs)
    counts = _wait(client, batch.id).request_counts
    assert counts.expired + counts.errored + counts.succeeded == n
    assert 0.1 * n < counts.expired < 0.3 * n
    assert 0.1 * n < counts.errored < 0.32 * n  # 0.25 of the 80 % that did not expire
    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    errored = [r for r in results.values() if r.type == "errored"]
    assert errored[0].error.type == "error" and errored[0].error.error.type == "api_error"
    # Deterministic per custom_id and submission: a second endpoint with the same seed fails the same ones;
    # a resubmission on the same endpoint is a fresh draw.
    _, again = make(expire_rate=0.2, error_rate=0.25)
    same = {r.custom_id: r.result.type for r in again.messages.batches.results(
        _wait(again, again.messages.batches.create(requests=reqs).id).id)}
    assert same == {k: r.type for k, r in results.items()}
    redo = {r.custom_id: r.result.type for r in client.messages.batches.results(
        _wait(client, client.messages.batches.create(requests=reqs).id).id)}
    assert redo != same


def test_a_request_outside_the_protocol_ends_errored(make):
    _, client = make()
    body, headers = _judge_call(1)
    bad = {**body, "messages": [{"role": "user", "content": "no rubric here"}]}
    batch = client.messages.batches.create(requests=[{"custom_id": "ok", "params": _batched(body, headers)},
                                                     {"custom_id": "bad", "params": _batched(bad, headers)}])
    results = {r.custom_id: r.result for r in client.messages.batches.results(_wait(client, batch.id).id)}
    assert results["ok"].type == "succeeded"
    assert results["bad"].type == "errored" and results["bad"].error.error.type == "invalid_request_error"


@pytest.mark.parametrize(("requests", "field"), [
    ([], "requests"),
    ([{"custom_id": "has space", "params": {"model": JUDGE, "max_tokens": 5, "messages": []}}], "custom_id"),
    ([{"custom_id": "x" * 65, "params": {"model": JUDGE, "max_tokens": 5, "messages": []}}], "custom_id"),
    ([{"custom_id": "a", "params": {"model": JUDGE, "max_tokens": 5, "messages": []}}] * 2, "duplicate"),
    ([{"custom_id": "a", "params": {"max_tokens": 5, "messages": []}}], "params.model"),
    ([{"custom_id": "a", "params": {"model": JUDGE, "messages": []}}], "params.max_tokens"),
    ([{"custom_id": "a"}], "params"),
])
def test_create_is_validated_like_the_api(make, requests, field):
    _, client = make()
    with pytest.raises(anthropic.BadRequestError) as err:
        client.messages.batches.create(requests=requests)
    assert err.value.status_code == 400 and err.value.body["type"] == "error"
    assert err.value.body["error"]["type"] == "invalid_request_error" and field in err.value.body["error"]["message"]


def test_polling_resumes_from_a_new_client_and_unknown_ids_are_404(make):
    server, client = make(delay_s=0.3)
    body, headers = _judge_call(1)
    batch_id = client.messages.batches.create(requests=[{"custom_id": "k", "params": _batched(body, headers)}]).id
    client.close()  # the client is gone; the endpoint keeps the batch
    fresh = anthropic.Anthropic(base_url=server.base_url, api_key=SIM_API_KEY, max_retries=0)
    assert _wait(fresh, batch_id).request_counts.succeeded == 1
    raw = httpx.get(f"{server.base_url}/v1/messages/batches/{batch_id}/results", headers={"x-api-key": SIM_API_KEY})
    assert [json.loads(line)["custom_id"] for line in raw.text.splitlines()] == ["k"]
    with pytest.raises(anthropic.NotFoundError):
        fresh.messages.batches.retrieve("msgbatch_nope")


def test_batched_requests_honour_cache_control_like_synchronous_ones(make):
    _, client = make()
    body, headers = _judge_call(1)
    long_answer = build_judge_request(PROMPT, ANSWER * 40, ITEMS, shuffle_seed=1)["messages"][0]["content"]
    cached = {**body, "messages": [{"role": "user", "content": [
        {"type": "text", "text": long_answer, "cache_control": {"type": "ephemeral"}}]}]}
    batch = client.messages.batches.create(requests=[
        {"custom_id": "w", "params": _batched(cached, headers)},
        {"custom_id": "r", "params": _batched(cached, judge_headers(2, run_id="judge-r1", attempt=1))}])
    use = {r.custom_id: r.result.message.usage for r in client.messages.batches.results(_wait(client, batch.id).id)}
    assert use["w"].cache_creation_input_tokens > 1024 and use["w"].cache_read_input_tokens == 0
    assert use["r"].cache_read_input_tokens == use["w"].cache_creation_input_tokens  # processed in order
