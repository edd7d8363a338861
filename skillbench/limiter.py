"""One adaptive concurrency limiter (AIMD) for every stage that calls a model: generation and the judges.

``--jobs N`` is the ceiling. A rate-limit signal (a 429 or 529 the judge saw, a CLI ``api_retry`` event that
says ``rate_limit`` or ``overloaded``) cuts the limit multiplicatively, never below the floor, and holds new
slots until its ``retry-after`` has passed; after a run of successes the limit rises additively, one step per
window of ``limit`` successes, so it climbs back slowly. A worker that already holds a slot when the limit drops
finishes; only new acquisitions wait.

Two rules keep one burst of 429s from collapsing the limit to the floor, and a ceiling nobody reached from
hiding a cut (the same ideas as TCP's congestion window):

* a cut halves what is *in use* (``min(limit, slots in flight)``), not a ceiling no worker reached;
* a signal from a slot acquired before the latest cut belongs to the episode that cut already, so it holds new
  slots for its ``retry-after`` but does not cut again; a success from such a slot does not count toward a rise.

``decrease = 1`` never cuts and ``increase = 0`` never rises: :meth:`AdaptiveLimiter.fixed` is a fixed pool.
Every change is logged and kept in :attr:`AdaptiveLimiter.events`; :meth:`AdaptiveLimiter.summary` is what
``retries.json`` records under ``concurrency``. :func:`retry_after_s` and :func:`quota_hold_s` read the signals
an endpoint's response headers carry (the judge sees them; the CLI hides them from generation).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

Log = Callable[[str], None]
MAX_HOLD_S = 120.0  # a retry-after beyond this is capped: a misconfigured endpoint must not stall a pass for hours
RATELIMIT_PREFIX = "anthropic-ratelimit-"
QUOTA_BUCKETS = ("requests", "tokens", "input-tokens", "output-tokens")
LOW_QUOTA_SHARE = 0.05  # below this share of a quota left, new slots wait until it has refilled back to it


def _quiet(message: str) -> None:
    del message


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class Slot:
    """One held slot: when it was acquired and how many cuts had happened by then (its episode)."""

    acquired: float
    epoch: int


class AdaptiveLimiter:
    """An AIMD concurrency limit shared by every worker of a pass; thread-safe.

    Args:
        ceiling: the most slots at once (``--jobs``); the limit starts there.
        floor: the fewest slots a cut leaves (≥ 1).
        increase: slots added per rise (0: never rises).
        decrease: the factor a cut multiplies the slots in use by (1: never cuts).
        log: where each change is said (one line).
        name: the stage, in log lines (``generate``, ``judge``).
        clock: monotonic seconds (tests pass their own).

    Raises:
        ValueError: a parameter out of range (one line naming it).
    """

    def __init__(self, ceiling: int, floor: int = 1, increase: int = 1, decrease: float = 0.5, log: Log = _quiet,
                 *, name: str = "limiter", clock: Callable[[], float] = time.monotonic):
        if int(floor) < 1:
            raise ValueError(f"limiter floor: {floor} — must be ≥ 1")
        if int(ceiling) < int(floor):
            raise ValueError(f"limiter ceiling: {ceiling} — must be ≥ the floor ({floor})")
        if int(increase) < 0:
            raise ValueError(f"limiter increase: {increase} — must be ≥ 0")
        if not 0 < float(decrease) <= 1:
            raise ValueError(f"limiter decrease: {decrease} — must be in (0, 1]")
        self.ceiling, self.floor = int(ceiling), int(floor)
        self.increase, self.decrease = int(increase), float(decrease)
        self.log, self.name, self.clock = log, name, clock
        self._cond = threading.Condition()
        self._limit = self.ceiling
        self._in_flight = 0
        self._epoch = 0  # cuts so far
        self._successes = 0  # counted toward the next rise
        self._hold_until = 0.0
        self.events: list[dict[str, Any]] = []
        self.min_reached = self.ceiling
        self.max_in_flight = 0
        self.signals = 0  # rate-limit signals seen (cutting or not)
        self.holds = 0  # times new slots were held (a retry-after, or a quota about to run out)

    @classmethod
    def fixed(cls, jobs: int, log: Log = _quiet, *, name: str = "limiter") -> AdaptiveLimiter:
        """A fixed pool of ``jobs`` slots that still honours retry-after (increase 0, decrease 1)."""
        return cls(jobs, floor=max(1, int(jobs)), increase=0, decrease=1.0, log=log, name=name)

    @property
    def limit(self) -> int:
        """The current number of slots."""
        with self._cond:
            return self._limit

    @property
    def in_flight(self) -> int:
        with self._cond:
            return self._in_flight

    @contextmanager
    def slot(self) -> Iterator[Slot]:
        """Hold one slot for the body; waits while every slot is taken or a retry-after is being waited out."""
        with self._cond:
            while True:
                wait = self._hold_until - self.clock()
                if wait <= 0 and self._in_flight < self._limit:
                    break
                self._cond.wait(timeout=wait if wait > 0 else None)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            held = Slot(self.clock(), self._epoch)
        try:
            yield held
        finally:
            with self._cond:
                self._in_flight -= 1
                self._cond.notify_all()

    def hold(self, seconds: float | None, reason: str = "") -> None:
        """Keep new slots waiting ``seconds`` from now (no cut): a retry-after, or a quota about to run out."""
        if not seconds or seconds <= 0:
            return
        seconds = min(float(seconds), MAX_HOLD_S)
        with self._cond:
            until = self.clock() + seconds
            if until <= self._hold_until:
                return
            self._hold_until = until
            self.holds += 1
            self._cond.notify_all()
        if reason:
            self.log(f"{self.name}: new slots wait {seconds:g} s ({reason})")

    def on_rate_limited(self, retry_after: float | None = None, *, slot: Slot | None = None,
                        reason: str = "rate_limit") -> None:
        """A rate-limit signal: hold new slots for ``retry_after`` and cut the limit (once per episode).

        Args:
            retry_after: seconds the endpoint asked for (None: no hold).
            slot: the slot that saw the signal; one acquired before the latest cut does not cut again.
            reason: what was seen (``rate_limit``, ``overloaded``, ``HTTP 429``), recorded with the change.
        """
        self.hold(retry_after, "")
        with self._cond:
            self.signals += 1
            self._successes = 0
            if self.decrease >= 1 or (slot is not None and slot.epoch < self._epoch):
                return
            in_use = min(self._limit, max(self._in_flight, 1))
            new = max(self.floor, int(in_use * self.decrease))
            if new >= self._limit:
                return
            self._epoch += 1
            old, self._limit = self._limit, new
            self.min_reached = min(self.min_reached, new)
            text = reason + (f", retry-after {retry_after:g} s" if retry_after else "")
            event = self._event(old, new, text)
        self._say(event)

    def on_success(self, *, slot: Slot | None = None) -> None:
        """A call or run that saw no rate limit; ``limit`` of them in a row (this episode) raise the limit."""
        with self._cond:
            if slot is not None and slot.epoch < self._epoch:
                return  # launched under the old limit: it says nothing about the new one
            if self.increase == 0 or self._limit >= self.ceiling:
                self._successes = 0
                return
            self._successes += 1
            if self._successes < self._limit:
                return
            old, self._limit = self._limit, min(self.ceiling, self._limit + self.increase)
            self._successes = 0
            event = self._event(old, self._limit, f"{old} successes in a row")
            self._cond.notify_all()
        self._say(event)

    def _event(self, old: int, new: int, reason: str) -> dict[str, Any]:
        event = {"time": _utc_now(), "from": old, "to": new, "reason": reason}
        self.events.append(event)
        return event

    def _say(self, event: dict[str, Any]) -> None:
        self.log(f"{self.name}: concurrency {event['from']} → {event['to']} ({event['reason']})")

    def summary(self) -> dict[str, Any]:
        """The limiter's parameters, extremes and every change: ``retries.json``'s ``concurrency`` section."""
        with self._cond:
            return {"ceiling": self.ceiling, "floor": self.floor, "increase": self.increase,
                    "decrease": self.decrease, "limit": self._limit, "min_reached": self.min_reached,
                    "max_in_flight": self.max_in_flight, "rate_limit_signals": self.signals, "holds": self.holds,
                    "changes": [dict(e) for e in self.events]}


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """The seconds a response asks the caller to wait (``retry-after-ms``, else ``retry-after``), capped; or None."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name, "")) * scale
        except (TypeError, ValueError):
            continue
        if value > 0:
            return min(value, MAX_HOLD_S)
    return None


def _epoch(stamp: str) -> float | None:
    try:
        return datetime.fromisoformat(stamp.strip().replace("Z", "+00:00")).timestamp()
    except (AttributeError, ValueError):
        return None


def quota_hold_s(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """How long new calls should wait because an ``anthropic-ratelimit-*`` quota is nearly used up, or None.

    A bucket with less than :data:`LOW_QUOTA_SHARE` of its ``-limit`` ``-remaining`` refills (the API's token
    bucket) linearly until ``-reset``; the wait is the time until it is back to that share, so a pass slows down
    before the 429 instead of after it.
    """
    now = time.time() if now is None else now
    waits = []
    for bucket in QUOTA_BUCKETS:
        try:
            limit = float(headers.get(f"{RATELIMIT_PREFIX}{bucket}-limit", ""))
            remaining = float(headers.get(f"{RATELIMIT_PREFIX}{bucket}-remaining", ""))
        except (TypeError, ValueError):
            continue
        reset = _epoch(str(headers.get(f"{RATELIMIT_PREFIX}{bucket}-reset", "")))
        if limit <= 0 or reset is None or remaining / limit >= LOW_QUOTA_SHARE:
            continue
        share = max(0.0, remaining / limit)
        waits.append(max(0.0, reset - now) * (LOW_QUOTA_SHARE - share) / (1 - share))
    wait = max(waits, default=0.0)
    return min(wait, MAX_HOLD_S) if wait > 0 else None
