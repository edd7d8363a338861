"""The adaptive limiter: its AIMD arithmetic (data-driven cases), waits, events and thread-safety; the rate budget:
its send schedule on header sequences (data-driven, hostile ones included) and against the simulation's own buckets."""

from __future__ import annotations

import json
import random
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from skillbench.limiter import AdaptiveLimiter, RateBudget, Slot, Ticket, read_quotas, retry_after_s
from skillbench.sim._profiles import RateLimitSpec
from skillbench.sim._ratelimit import RateLimiter, rfc3339

CASES = json.loads((Path(__file__).parent / "data" / "limiter_cases.json").read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_aimd_arithmetic(case: dict) -> None:
    limiter = AdaptiveLimiter(**case["params"])
    held: list[tuple[ExitStack, Slot]] = []

    def pick(which: str) -> Slot | None:
        return None if which == "none" else held[-1][1] if which == "new" else held[0][1]

    for step in case["steps"]:
        if step["op"] == "acquire":
            for _ in range(step["n"]):
                stack = ExitStack()
                held.append((stack, stack.enter_context(limiter.slot())))
        elif step["op"] == "release":
            for _ in range(step["n"]):
                held.pop(0)[0].close()
        elif step["op"] == "rate_limited":
            limiter.on_rate_limited(slot=pick(step["slot"]))
        elif step["op"] == "success":
            for _ in range(step["n"]):
                limiter.on_success(slot=pick(step["slot"]))
        if "limit" in step:
            assert limiter.limit == step["limit"], step
    summary = limiter.summary()
    assert summary["min_reached"] == min([case["params"]["ceiling"], *(e["to"] for e in limiter.events)])
    for old, new in zip(limiter.events, limiter.events[1:], strict=False):
        assert old["to"] == new["from"]  # every change is recorded, none skipped


@pytest.mark.parametrize(("params", "message"), [
    ({"ceiling": 0}, "floor"), ({"ceiling": 4, "floor": 0}, "floor"), ({"ceiling": 2, "floor": 3}, "ceiling"),
    ({"ceiling": 4, "increase": -1}, "increase"), ({"ceiling": 4, "decrease": 0}, "decrease"),
    ({"ceiling": 4, "decrease": 1.5}, "decrease"),
])
def test_bad_parameters_are_one_line(params: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AdaptiveLimiter(**params)


def test_events_and_log_lines() -> None:
    lines: list[str] = []
    limiter = AdaptiveLimiter(4, log=lines.append, name="generate")
    with limiter.slot() as a, limiter.slot(), limiter.slot(), limiter.slot():
        limiter.on_rate_limited(0.01, slot=a, reason="rate_limit")
    assert limiter.events[0]["from"] == 4 and limiter.events[0]["to"] == 2
    assert limiter.events[0]["reason"] == "rate_limit, retry-after 0.01 s"
    assert limiter.events[0]["time"].endswith("Z")
    assert lines == ["generate: concurrency 4 → 2 (rate_limit, retry-after 0.01 s)"]
    summary = limiter.summary()
    assert (summary["ceiling"], summary["floor"], summary["min_reached"], summary["max_in_flight"]) == (4, 1, 2, 4)
    assert summary["rate_limit_signals"] == 1 and summary["changes"] == limiter.events


def test_new_slots_wait_out_retry_after_but_holders_finish() -> None:
    limiter = AdaptiveLimiter(2, floor=2)  # the cut cannot take the second slot: only the hold delays it
    with limiter.slot() as first:
        t0 = time.monotonic()
        limiter.on_rate_limited(0.3, slot=first)
        # the holder is not interrupted; a new acquisition waits for the retry-after
        with limiter.slot():
            waited = time.monotonic() - t0
    assert 0.28 <= waited < 2.0


def test_a_lowered_limit_blocks_new_slots_until_holders_leave() -> None:
    limiter = AdaptiveLimiter(4)
    stacks = [ExitStack() for _ in range(4)]
    slots = [s.enter_context(limiter.slot()) for s in stacks]
    limiter.on_rate_limited(slot=slots[-1])  # 4 → 2 while 4 are held
    assert limiter.limit == 2 and limiter.in_flight == 4
    got = threading.Event()

    def take() -> None:
        with limiter.slot():
            got.set()

    t = threading.Thread(target=take)
    t.start()
    for n in range(3):  # 4 → 1 held: only then is a slot (the second) free again
        assert not got.wait(0.05), f"acquired with {4 - n} held at limit 2"
        stacks[n].close()
    assert got.wait(2.0)
    t.join()
    stacks[3].close()


def test_thread_safety_never_more_in_flight_than_the_limit() -> None:
    limiter = AdaptiveLimiter(6)
    lock = threading.Lock()
    state = {"now": 0}
    rng = random.Random(7)
    plan = [rng.random() < 0.15 for _ in range(600)]

    def work(limited: bool) -> None:
        with limiter.slot() as slot:
            with lock:
                state["now"] += 1
                assert state["now"] <= 6  # never more than the ceiling, whatever the interleaving
            time.sleep(0.0005)
            with lock:
                state["now"] -= 1
            if limited:
                limiter.on_rate_limited(slot=slot)
            else:
                limiter.on_success(slot=slot)

    threads = [threading.Thread(target=lambda chunk=plan[i::12]: [work(x) for x in chunk]) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    assert limiter.in_flight == 0
    # a holder may outlive a cut (it finishes), so the excess over the limit is bounded by cuts, never by a race
    assert limiter.max_in_flight <= 6 and limiter.summary()["rate_limit_signals"] == sum(plan)
    assert 1 <= limiter.min_reached < 6
    for old, new in zip(limiter.events, limiter.events[1:], strict=False):
        assert old["to"] == new["from"]


def test_fixed_pool_honours_retry_after_but_never_moves() -> None:
    limiter = AdaptiveLimiter.fixed(3)
    with limiter.slot() as s:
        limiter.on_rate_limited(0.05, slot=s)
    assert limiter.limit == 3 and not limiter.events and limiter.summary()["holds"] == 1


@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after": "2"}, 2.0), ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5), ({"retry-after": "0"}, None),
    ({"retry-after": "soon"}, None), ({}, None), ({"retry-after": "9999"}, 120.0),
])
def test_retry_after_from_the_headers(headers: dict, expected: float | None) -> None:
    assert retry_after_s(headers) == expected


BUDGET_CASES = json.loads((Path(__file__).parent / "data" / "budget_cases.json").read_text(encoding="utf-8"))["cases"]
EPOCH = 1_700_000_000  # the fake wall clock's start, a whole second (as the API's resets are)


class FakeClock:
    """Monotonic seconds the test moves by hand."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t

    def wall(self) -> float:
        return EPOCH + self.t


def _headers(raw: dict[str, str], clock: FakeClock) -> dict[str, str]:
    """A case's headers with each ``+N`` reset made N seconds after the clock's wall time."""
    return {k: rfc3339(clock.wall() + float(v[1:])) if k.endswith("-reset") and v.startswith("+") else v
            for k, v in raw.items()}


@pytest.mark.parametrize("case", BUDGET_CASES, ids=[c["name"] for c in BUDGET_CASES])
def test_budget_schedule(case: dict) -> None:
    clock = FakeClock()
    # the waits are what the schedule asks: the clock does not move with them, so successive acquisitions are
    # callers arriving at once (a queue), and "advance" is time passing
    budget = RateBudget("case", clock=clock, wall=clock.wall, sleep=lambda s: None,
                        max_wait_s=case.get("max_wait_s", 60.0))
    tickets: list[Ticket] = []
    for step in case["steps"]:
        if step["op"] == "acquire":
            n = step.get("tokens")
            ticket = budget.acquire(step.get("model", "m"), {"tokens": n} if n else None)
            tickets.append(ticket)
            assert ticket.wait == pytest.approx(step["wait"], abs=1e-3), (step, ticket)
            assert ticket.probe == step.get("probe", ticket.probe) and ticket.capped == step.get("capped", False)
        elif step["op"] == "observe":
            budget.observe(tickets[-1], step.get("status", 200), _headers(step["headers"], clock))
        elif step["op"] == "advance":
            clock.t += step["s"]
        elif step["op"] == "finish":
            budget.finish(tickets[step["ticket"]], step["usage"])
    summary = budget.summary()
    for key, value in case.get("summary", {}).items():
        assert summary[key] == value, (key, summary)


@pytest.mark.parametrize(("spec", "tokens"), [
    ({"requests_per_minute": 40, "burst_s": 6}, 0),  # the benchmark's limit: 4 in the bucket, one per 1.5 s
    ({"requests_per_minute": 600, "burst_s": 0.3}, 0),  # whole-second resets far coarser than the refill
    ({"requests_per_minute": 120, "tokens_per_minute": 6000, "burst_s": 2}, 60),  # tokens bind before requests
])
def test_the_schedule_never_sends_into_an_empty_bucket(spec: dict, tokens: int) -> None:
    """Callers pace through the budget against the simulation's own buckets (the same fake clock): every
    request is admitted — the budget never sends more than the headers allow — and the pass is not slower than
    the limit makes it. Answers arrive late (three in flight), so the mirror runs on stale headers too."""
    clock = FakeClock()
    server = RateLimiter(RateLimitSpec(**spec), clock=clock, wall=clock.wall)

    def sleep(seconds: float) -> None:
        clock.t += seconds

    budget = RateBudget("sim", clock=clock, wall=clock.wall, sleep=sleep)
    in_flight: list[tuple[Ticket, dict[str, str]]] = []
    n = 60
    for i in range(n):
        est = budget.estimate("m", 400, 64)
        ticket = budget.acquire("m", est)
        assert server.admit("m") is None, f"request {i} met an empty bucket at t={clock.t:.3f}"
        if tokens:
            server.charge("m", tokens // 2, tokens // 2)
        in_flight.append((ticket, server.headers("m")))  # headers made at admission, read later
        if ticket.probe or len(in_flight) > 3 or i == n - 1:  # the others wait for the probe's answer
            last = i == n - 1 or ticket.probe
            for done, headers in in_flight[: len(in_flight) if last else 1]:
                budget.observe(done, 200, headers)
                budget.finish(done, {"input_tokens": tokens // 2, "output_tokens": tokens // 2})
            in_flight = [] if last else in_flight[1:]
        clock.t += 0.01  # a request's own time on the wire
    limits = RateLimitSpec(**spec).limits()
    # the fastest any client could go: the bucket's start, then the refill of the scarcest limit
    per_request = max(60 / limits["requests"], 60 * tokens / limits.get("tokens", float("inf")))
    floor = (n - spec["burst_s"] / per_request) * per_request
    assert clock.t <= floor * 1.25 + 3, (clock.t, floor)
    assert budget.summary()["rate_limited"] == 0


def test_read_quotas_checks_every_number() -> None:
    quotas, bad = read_quotas({"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining":
                               "49", "anthropic-ratelimit-requests-reset": "2026-12-01T19:05:07Z",
                               "anthropic-ratelimit-tokens-limit": "inf", "anthropic-ratelimit-tokens-remaining": "1"})
    assert bad == 1 and set(quotas) == {"requests"}
    assert quotas["requests"].limit == 50 and quotas["requests"].remaining == 49
    assert quotas["requests"].reset == pytest.approx(1796151907.0)
