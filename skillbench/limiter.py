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
``retries.json`` records under ``concurrency``. :func:`retry_after_s` reads the wait a response asks for.

The limiter reacts to a 429; :class:`RateBudget` keeps it from happening. It mirrors the endpoint's own token
buckets, one set per model, from the ``anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,
remaining,reset}`` headers of every answer, and turns them into a send schedule: each request takes its place in
the schedule (one request, and an estimate of its tokens) and waits until the mirrored buckets hold enough, so a
pass sends only what the limit allows. :func:`endpoint_budget` hands every caller in this process the one budget
of an endpoint (its URL and key): the judge's client and every run's relay (threads of one process) pace against
the same numbers. Where an endpoint sends no such headers, the budget lets everything through and the AIMD
limiter stays the only control. Every wait is capped (:data:`MAX_PACE_WAIT_S`) and every header is checked, so a
skewed clock or a hostile endpoint slows a pass at most by the cap per request, never stalls it.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

Log = Callable[[str], None]
MAX_HOLD_S = 120.0  # a retry-after beyond this is capped: a misconfigured endpoint must not stall a pass for hours
RATELIMIT_PREFIX = "anthropic-ratelimit-"
QUOTA_BUCKETS = ("requests", "tokens", "input-tokens", "output-tokens")
# A per-minute bucket refills whole within a minute, so a longer wait for one request is a skewed or hostile header
# (or a queue deeper than the pass's workers): the request then goes at the cap, and a 429 is honoured as ever.
MAX_PACE_WAIT_S = 60.0
# Paced at the refill rate, requests reach the endpoint as the bucket reaches 1, and one that overtakes another on
# the way (a slower connection, a busy thread) finds it empty: the schedule leaves a unit (or 5 %) of the bucket
# unused, which costs one unit's refill once and absorbs that much jitter every time. A bucket of under 3 has no
# room for it.
HEADROOM_SHARE = 0.05
PACE_MARGIN_S = 0.05  # a turn that waits for a refill waits this much longer, so it never lands a hair early
# Before an endpoint's first answer its limits are unknown: one request goes first (the probe) and the others wait
# for its headers this long at most, so a pass's first burst does not meet an empty bucket together.
PROBE_WAIT_S = 10.0
RESET_SLACK_S = 2.0  # a reset this far in the past is clock skew within reason (read as "full now")
MAX_RESET_S = 3600.0  # a reset further out than this is not a per-minute bucket's: ignored
MAX_LIMIT = 1e12  # a per-minute limit beyond this is not a number an endpoint means: the header is ignored
BYTES_PER_TOKEN = 4.0  # a request's input tokens before this model's usage has been seen: its JSON bytes / 4
ESTIMATE_WEIGHT = 0.2  # weight of the newest usage in the running mean that estimates the next request's tokens


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
        self._cap = self.ceiling  # an outer cap set by cap_at (what an endpoint's advertised limit sustains)
        self._in_flight = 0
        self._epoch = 0  # cuts so far
        self._successes = 0  # counted toward the next rise
        self._hold_until = 0.0
        self.events: list[dict[str, Any]] = []
        self.cap_changes: list[dict[str, Any]] = []  # the outer cap's changes (cap_at), apart from the AIMD limit's
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
                if wait <= 0 and self._in_flight < min(self._limit, self._cap):
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

    def cap_at(self, slots: int, reason: str = "") -> None:
        """At most ``slots`` at once whatever the AIMD limit says (between 1 and the ceiling): generation's runs at once
        from the machine's idle CPUs and the endpoint's advertised request limit (:class:`skillbench.generation.RunsCap`
        computes it), so one limiter — one set of slots — holds both the cut after a 429 and the cap before one. Each
        change with a ``reason`` is recorded (the summary's ``cap_changes``); none is the pass's starting cap."""
        with self._cond:
            old, self._cap = self._cap, max(1, min(int(slots), self.ceiling))
            if self._cap != old and reason:
                self.cap_changes.append({"time": _utc_now(), "from": old, "to": self._cap, "reason": reason})
            self._cond.notify_all()

    @property
    def cap(self) -> int:
        """The outer cap (:meth:`cap_at`; the ceiling until set)."""
        with self._cond:
            return self._cap

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
                    "decrease": self.decrease, "limit": self._limit, "cap": self._cap, "min_reached": self.min_reached,
                    "max_in_flight": self.max_in_flight, "rate_limit_signals": self.signals, "holds": self.holds,
                    "changes": [dict(e) for e in self.events], "cap_changes": [dict(e) for e in self.cap_changes]}


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


@dataclass(frozen=True)
class Quota:
    """One bucket as an answer's headers state it: the per-minute ``limit``, whole units ``remaining``, and the
    epoch second it is full again (``reset``; None when absent or unreadable)."""

    limit: float
    remaining: float
    reset: float | None


def read_quotas(headers: Mapping[str, str]) -> tuple[dict[str, Quota], int]:
    """The buckets an answer's ``anthropic-ratelimit-*`` headers state, and how many were unreadable (ignored).

    A bucket needs a finite ``-limit`` in (0, :data:`MAX_LIMIT`] and a finite ``-remaining`` ≥ 0 (clamped to the
    limit); anything else is counted as unreadable and left out, so a hostile header can never be a number the
    schedule divides by or waits on.
    """
    quotas: dict[str, Quota] = {}
    bad = 0
    for bucket in QUOTA_BUCKETS:
        raw_limit = headers.get(f"{RATELIMIT_PREFIX}{bucket}-limit")
        raw_left = headers.get(f"{RATELIMIT_PREFIX}{bucket}-remaining")
        if raw_limit is None and raw_left is None:
            continue
        try:
            limit, left = float(str(raw_limit)), float(str(raw_left))
        except ValueError:
            bad += 1
            continue
        if not (math.isfinite(limit) and math.isfinite(left)) or not 0 < limit <= MAX_LIMIT or left < 0:
            bad += 1
            continue
        reset = _epoch(str(headers.get(f"{RATELIMIT_PREFIX}{bucket}-reset", "")))
        quotas[bucket] = Quota(limit, min(left, limit), reset)
    return quotas, bad


@dataclass
class Ticket:
    """One request's place in a :class:`RateBudget`'s schedule.

    Attributes:
        model: the model it asks (buckets are per model, as on the API).
        needs: what it takes from each mirrored bucket (1 request; its estimated tokens).
        wait: seconds it waited for its turn (capped at :data:`MAX_PACE_WAIT_S`).
        capped: the schedule wanted longer than the cap (it went at the cap).
        probe: the first request to an endpoint whose limits were unknown.
        send_at: the budget clock's time of its turn.
    """

    model: str
    needs: dict[str, float]
    wait: float = 0.0
    capped: bool = False
    probe: bool = False
    send_at: float = 0.0
    observed: bool = False


@dataclass
class _Mirror:
    """The local copy of one of the endpoint's buckets: refills at limit/60 a second up to ``capacity``."""

    limit: float
    capacity: float
    level: float
    at: float

    @property
    def rate(self) -> float:
        return self.limit / 60.0

    @property
    def headroom(self) -> float:
        """What the schedule leaves in the bucket (see :data:`HEADROOM_SHARE`)."""
        return max(HEADROOM_SHARE * self.capacity, 1.0 if self.capacity >= 3 else 0.0)

    def refill(self, now: float) -> None:
        if now > self.at:
            self.level = min(self.capacity, self.level + (now - self.at) * self.rate)
            self.at = now


@dataclass
class _ModelState:
    buckets: dict[str, _Mirror] = field(default_factory=dict)
    known: bool = False  # an answer has said whether (and how) this model is limited
    probe_until: float = 0.0  # time.monotonic(): while later, a probe is out and the others wait for its headers
    hold_until: float = 0.0  # a 429's retry-after
    scheduled: list[Ticket] = field(default_factory=list)  # tickets whose turn has not come yet
    mean_input: float | None = None
    mean_output: float | None = None


class RateBudget:
    """The send schedule of one endpoint, shared by every caller of a pass; thread-safe.

    A caller takes a :class:`Ticket` with :meth:`acquire` (it returns at the ticket's turn), reports the answer's
    status and headers with :meth:`observe`, and ends with :meth:`finish` (the usage the answer reported, or
    None), whatever happened.

    How the schedule is made. Each mirrored bucket refills continuously at ``limit/60`` a second (the API's token
    bucket), up to a capacity: the limit, lowered to what an answer's ``remaining`` and ``reset`` imply
    (``remaining + rate × (reset − now)``, the largest of these lower bounds seen; the simulation's short bursts,
    say). The endpoint admits a request while every bucket holds at least 1, takes the request then and its tokens
    once they are known: so a ticket's turn is when each bucket holds 1, and it takes 1 request and its estimated
    tokens at once, so the next ticket's turn is later — a first-come, first-served schedule with no burst of
    waiters. It leaves a little of each bucket unused (:data:`HEADROOM_SHARE`), so requests that overtake one
    another on the way still find it non-empty. Every answer brings the mirror down to what the endpoint says
    (``remaining``, less the tickets scheduled but not yet sent) when it is a whole unit or more above it; never
    up, since the endpoint has not yet counted what is in flight. A ticket's tokens are estimated from this
    model's answers so far (a running mean of input + cache-write tokens, and of output tokens:
    :data:`ESTIMATE_WEIGHT`); before the first, input from the request's size (:data:`BYTES_PER_TOKEN`) and output
    as a quarter of its ``max_tokens``. :meth:`finish` trues the estimate up with the real usage. The first
    request of a model whose limits are unknown is the probe; the others wait for its headers
    (:data:`PROBE_WAIT_S` at most).

    Args:
        name: the endpoint, in log lines.
        log: where a capped wait or an unreadable header is said (one line).
        clock: monotonic seconds; wall: epoch seconds (the ``-reset`` headers); sleep: how a turn is waited
            for when the caller gives no stop event (tests pass a clock and a sleep that moves it).
        max_wait_s: the cap on one ticket's wait.
    """

    def __init__(self, name: str = "endpoint", log: Log = _quiet, *, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep,
                 max_wait_s: float = MAX_PACE_WAIT_S):
        self.name, self.log = name, log
        self.clock, self.wall, self.sleep = clock, wall, sleep
        self.max_wait_s = max_wait_s
        self._cond = threading.Condition()
        self._models: dict[str, _ModelState] = {}
        self.counts = {"requests": 0, "paced": 0, "waited_s": 0.0, "capped": 0, "rate_limited": 0,
                       "unreadable_headers": 0, "skewed_resets": 0}

    def _state(self, model: str) -> _ModelState:
        return self._models.setdefault(model.lower(), _ModelState())

    def estimate(self, model: str, request_bytes: int, max_tokens: int | None) -> dict[str, float]:
        """The tokens a request will take from each token bucket (see the class's note)."""
        with self._cond:
            state = self._state(model)
            given = max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else 4096
            inp = state.mean_input if state.mean_input is not None else max(1, request_bytes) / BYTES_PER_TOKEN
            out = state.mean_output if state.mean_output is not None else given / 4
        out = min(out, float(given))
        return {"tokens": inp + out, "input-tokens": inp, "output-tokens": out}

    def acquire(self, model: str, tokens: Mapping[str, float] | None = None,
                stop: threading.Event | None = None) -> Ticket:
        """Take a place in ``model``'s schedule and wait for it; returns the ticket (``wait`` says how long).

        Args:
            model: the model the request asks.
            tokens: its estimated tokens per token bucket (:meth:`estimate`); None: none.
            stop: set when the caller is stopping: the wait ends at once (the caller decides not to send).
        """
        ticket = Ticket(model=model, needs={"requests": 1.0, **(tokens or {})})
        with self._cond:
            state = self._state(model)
            start = time.monotonic()
            # a probe is out: wait for its headers (in real time: only a real answer ends it)
            while not state.known and state.probe_until > time.monotonic():
                if stop is not None and stop.is_set():
                    break
                self._cond.wait(timeout=min(0.5, state.probe_until - time.monotonic()))
            waited = time.monotonic() - start
            if not state.known and state.probe_until <= time.monotonic():
                ticket.probe = True
                state.probe_until = time.monotonic() + PROBE_WAIT_S
            now = self.clock()
            turn = max(0.0, state.hold_until - now)
            for mirror in state.buckets.values():
                mirror.refill(now)
                need = 1 + mirror.headroom
                if mirror.level < need:  # the margin: the endpoint's arithmetic and clock are not this one's
                    turn = max(turn, (need - mirror.level) / mirror.rate + PACE_MARGIN_S)
            if waited + turn > self.max_wait_s:
                turn, ticket.capped = max(0.0, self.max_wait_s - waited), True
                self.counts["capped"] += 1
            for bucket, mirror in state.buckets.items():
                mirror.level -= ticket.needs.get(bucket, 0.0)
            ticket.send_at = now + turn
            ticket.wait = waited + turn
            if turn > 0:
                state.scheduled.append(ticket)
            self.counts["requests"] += 1
            if ticket.wait > 0:
                self.counts["paced"] += 1
                self.counts["waited_s"] += ticket.wait
        if ticket.capped:
            self.log(f"{self.name}: {model}'s schedule asked for more than {self.max_wait_s:g} s; sent at the cap")
        if turn > 0:
            if stop is not None:
                stop.wait(turn)
            else:
                self.sleep(turn)
        return ticket

    def observe(self, ticket: Ticket, status: int, headers: Mapping[str, str]) -> None:
        """An answer's status and headers (as soon as they arrive): bring the mirror down to what they state."""
        quotas, bad = read_quotas(headers)
        retry = retry_after_s(headers) if status == 429 else None
        with self._cond:
            state = self._state(ticket.model)
            now, wall = self.clock(), self.wall()
            ticket.observed = True
            self.counts["unreadable_headers"] += bad
            if status == 429:
                self.counts["rate_limited"] += 1
                if retry:
                    state.hold_until = max(state.hold_until, now + retry)
            if not quotas and not bad and status != 429:  # this endpoint states no limit: AIMD alone
                state.buckets.clear()
            state.scheduled = [t for t in state.scheduled if t.send_at > now]
            for bucket, quota in quotas.items():
                self._sync(state, bucket, quota, now, wall)
            state.known = True
            state.probe_until = 0.0
            self._cond.notify_all()

    def _sync(self, state: _ModelState, bucket: str, quota: Quota, now: float, wall: float) -> None:
        mirror = state.buckets.get(bucket)
        if mirror is None or mirror.limit != quota.limit:  # new, or the endpoint changed the limit: start over
            mirror = state.buckets[bucket] = _Mirror(quota.limit, 0.0, quota.remaining, now)
        mirror.refill(now)
        until = None if quota.reset is None else quota.reset - wall
        if until is not None and not -RESET_SLACK_S <= until <= MAX_RESET_S:
            self.counts["skewed_resets"] += 1  # a skewed clock or a hostile value: the capacity stays as it was
            until = None
        if until is not None:
            # The endpoint is full at reset: capacity = remaining + what refills by then. A reset in whole seconds
            # may have been rounded up by up to one, so a second's refill comes off; an answer that waited in
            # transit makes reset look nearer. Both only lower the figure, so each is a lower bound of the
            # capacity and the largest seen is kept.
            slack = 1.0 if float(quota.reset or 0).is_integer() else 0.0
            implied = quota.remaining + mirror.rate * max(0.0, until - slack)
            mirror.capacity = max(mirror.capacity, min(quota.limit, max(1.0, implied)))
        elif not mirror.capacity:
            mirror.capacity = quota.limit  # the API's own bucket holds a minute's limit
        # What the endpoint says is left, less what this budget has scheduled but not yet sent (not counted there).
        # remaining is whole units (the endpoint's level is below remaining + 1): a mirror within that agrees and
        # keeps its fraction; one above it missed spending elsewhere (another process, another client of the key)
        # and comes down to remaining.
        stated = quota.remaining - sum(t.needs.get(bucket, 0.0) for t in state.scheduled)
        mirror.level = min(mirror.capacity, stated if mirror.level >= stated + 1 else mirror.level)

    def finish(self, ticket: Ticket, usage: Mapping[str, int] | None = None) -> None:
        """The request is over: true its token estimate up with ``usage`` (None: no answer), end a probe."""
        with self._cond:
            state = self._state(ticket.model)
            if ticket.probe and not ticket.observed:  # no headers came: let the next request probe
                state.probe_until = 0.0
            if usage is not None:
                inp = float(usage.get("input_tokens", 0) or 0) + float(usage.get("cache_creation_input_tokens", 0) or 0)
                out = float(usage.get("output_tokens", 0) or 0)
                actual = {"tokens": inp + out, "input-tokens": inp, "output-tokens": out}
                for bucket, mirror in state.buckets.items():
                    if bucket in actual:
                        mirror.level += ticket.needs.get(bucket, 0.0) - actual[bucket]
                state.mean_input = inp if state.mean_input is None else \
                    (1 - ESTIMATE_WEIGHT) * state.mean_input + ESTIMATE_WEIGHT * inp
                state.mean_output = out if state.mean_output is None else \
                    (1 - ESTIMATE_WEIGHT) * state.mean_output + ESTIMATE_WEIGHT * out
            self._cond.notify_all()

    def summary(self) -> dict[str, Any]:
        """What the budget did: requests, how many waited and how long, capped waits, 429s seen, unreadable or
        skewed headers, and each model's mirrored limits."""
        with self._cond:
            out: dict[str, Any] = dict(self.counts)
            out["waited_s"] = round(out["waited_s"], 3)
            out["limits"] = {model: {b: {"limit": m.limit, "capacity": round(m.capacity, 3)}
                                     for b, m in st.buckets.items()} for model, st in self._models.items()}
            return out


_BUDGETS: dict[tuple[str, str], RateBudget] = {}
_BUDGETS_LOCK = threading.Lock()


def endpoint_budget(base_url: str, api_key: str, log: Log = _quiet) -> RateBudget:
    """This process's one :class:`RateBudget` for an endpoint (its URL and the key's digest, never the key).

    Every model-calling path of a process asks here, so the judge's workers and every run's relay share one
    schedule. A Dask worker is a process of its own: it paces its own runs from the same headers, which state the
    endpoint's whole remaining, so workers together can overshoot by what is in flight between two answers; the
    429s that causes are honoured and counted like any other.
    """
    key = (base_url.rstrip("/"), hashlib.sha256(api_key.encode()).hexdigest()[:16])
    with _BUDGETS_LOCK:
        if key not in _BUDGETS:
            _BUDGETS[key] = RateBudget(key[0], log)
        return _BUDGETS[key]
