"""The ``rate_limit`` profile: token buckets per requested model in front of ``POST /v1/messages``.

Each limit the profile sets (``requests_per_minute``, ``tokens_per_minute`` = input + output,
``input_tokens_per_minute`` = input + cache writes, cache reads being free as on the API for current models,
``output_tokens_per_minute``) is a bucket per requested model name that starts full and refills continuously at
limit/60 per second, the API's token-bucket rule; it holds ``burst_s`` seconds of refill (60 by default: the
minute's whole limit, as on the API). A request is admitted when every bucket holds at least 1; its
request is taken then, and its tokens once the answer's usage is known (so a bucket may go below zero and the
next requests wait for it to refill). An empty bucket answers 429 ``rate_limit_error`` with ``retry-after``
(whole seconds until every bucket holds 1 again, or the profile's fixed ``retry_after_s``).

While the section is on, every ``/v1/messages`` response to a well-formed request (200, 429, faults) carries the
API's headers for each limit that is set: ``anthropic-ratelimit-<bucket>-limit`` (the per-minute limit),
``-remaining`` (whole units left, never negative) and ``-reset`` (RFC 3339 UTC time at which the bucket is full
again), where ``<bucket>`` is ``requests``, ``tokens``, ``input-tokens`` or ``output-tokens``.
The CLI calls the same route: generation's relays pace from these headers, and a relay that forwards at once
(unpaced) lets the CLI meet the 429s.

The Message Batches routes have a limit of their own (the API's rule: one requests-per-minute limit over all its
endpoints, apart from Messages): ``batches.rate_limit`` is a second :class:`RateLimiter` whose one ``requests``
bucket is keyed :data:`BATCHES_KEY` whatever model a batch asks, with the same 429 and the
``anthropic-ratelimit-requests-*`` headers on every batch route's answer.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from skillbench.sim._profiles import BatchRateLimitSpec, RateLimitSpec

HEADER_PREFIX = "anthropic-ratelimit-"
BATCHES_KEY = "message-batches"  # the batch routes' one bucket: all models share it, as on the API


def rfc3339(at_epoch: float) -> str:
    """``2026-12-01T19:05:07Z``: the API's reset format (UTC, whole seconds, rounded up)."""
    when = datetime.fromtimestamp(math.ceil(at_epoch), tz=UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


class _Bucket:
    def __init__(self, limit: float, burst_s: float, now: float):
        self.rate = limit / 60.0  # units per second
        self.capacity = self.rate * burst_s
        self.level = self.capacity
        self.at = now

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.at) * self.rate)
        self.at = now

    def wait_for(self, need: float) -> float:
        """Seconds until the level reaches ``need`` (0 when it already has)."""
        return max(0.0, (need - self.level) / self.rate)


class RateLimiter:
    """The buckets of one endpoint (thread-safe); ``clock`` and ``wall`` are injectable for tests.

    Args:
        spec: the profile's ``rate_limit`` section (or ``batches.rate_limit``).
        clock: monotonic seconds (refill).
        wall: epoch seconds (the ``-reset`` headers).
    """

    def __init__(self, spec: RateLimitSpec | BatchRateLimitSpec, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time):
        self.spec = spec
        self.limits = spec.limits()
        self.clock = clock
        self.wall = wall
        self._buckets: dict[tuple[str, str], _Bucket] = {}
        self._lock = threading.Lock()
        self.rejected = 0  # 429s sent, for tests and benchmarks

    def _bucket(self, model: str, name: str, now: float) -> _Bucket:
        key = (model.lower(), name)
        if key not in self._buckets:
            self._buckets[key] = _Bucket(self.limits[name], self.spec.burst_s, now)
        bucket = self._buckets[key]
        bucket.refill(now)
        return bucket

    def admit(self, model: str) -> float | None:
        """Take one request for ``model``; None when admitted, else the ``retry-after`` seconds of the 429."""
        with self._lock:
            now = self.clock()
            buckets = {name: self._bucket(model, name, now) for name in self.limits}
            wait = max(b.wait_for(1.0) for b in buckets.values())
            if wait > 0:
                self.rejected += 1
                fixed = self.spec.retry_after_s
                return fixed if fixed is not None else float(max(1, math.ceil(wait)))
            if "requests" in buckets:
                buckets["requests"].level -= 1
            return None

    def charge(self, model: str, input_tokens: int, output_tokens: int) -> None:
        """Take an admitted request's tokens (input = ``input_tokens`` + cache writes, as the API counts)."""
        spend = {"tokens": input_tokens + output_tokens, "input-tokens": input_tokens, "output-tokens": output_tokens}
        with self._lock:
            now = self.clock()
            for name in self.limits:
                if name in spend:
                    self._bucket(model, name, now).level -= spend[name]

    def headers(self, model: str) -> dict[str, str]:
        """The ``anthropic-ratelimit-*`` headers for ``model`` now."""
        out: dict[str, str] = {}
        with self._lock:
            now, wall = self.clock(), self.wall()
            for name, limit in self.limits.items():
                b = self._bucket(model, name, now)
                out[f"{HEADER_PREFIX}{name}-limit"] = f"{limit:g}"
                out[f"{HEADER_PREFIX}{name}-remaining"] = str(max(0, math.floor(b.level)))
                out[f"{HEADER_PREFIX}{name}-reset"] = rfc3339(wall + b.wait_for(b.capacity))
        return out


def retry_after_header(seconds: float) -> str:
    """The ``retry-after`` value: whole seconds when it is whole, else as given."""
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"
