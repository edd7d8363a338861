"""The adaptive limiter: its AIMD arithmetic (data-driven cases), waits, events and thread-safety."""

from __future__ import annotations

import json
import random
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from skillbench.limiter import AdaptiveLimiter, Slot, quota_hold_s, retry_after_s

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


NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z
IN_60 = "2023-11-14T22:14:20Z"


@pytest.mark.parametrize(("headers", "expected"), [
    # 2 % of the requests left, full again in 60 s: back to 5 % in 60 · (0.05 − 0.02) / 0.98 s
    ({"anthropic-ratelimit-requests-limit": "100", "anthropic-ratelimit-requests-remaining": "2",
      "anthropic-ratelimit-requests-reset": IN_60}, 60 * 0.03 / 0.98),
    # none left of the tokens: 5 % of the minute's refill
    ({"anthropic-ratelimit-tokens-limit": "1000", "anthropic-ratelimit-tokens-remaining": "0",
      "anthropic-ratelimit-tokens-reset": IN_60}, 3.0),
    # plenty left, or nothing to read: no wait
    ({"anthropic-ratelimit-requests-limit": "100", "anthropic-ratelimit-requests-remaining": "50",
      "anthropic-ratelimit-requests-reset": IN_60}, None),
    ({"anthropic-ratelimit-requests-limit": "100", "anthropic-ratelimit-requests-remaining": "0"}, None),
    ({}, None),
])
def test_a_quota_near_zero_holds_new_slots(headers: dict, expected: float | None) -> None:
    got = quota_hold_s(headers, now=NOW)
    assert got == pytest.approx(expected) if expected is not None else got is None
