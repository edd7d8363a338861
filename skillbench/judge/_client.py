"""The judge's client: the real ``anthropic`` SDK, its own retries through the limiter, and the retry-once rule.

Every judge (rubric, pairwise, calibration) calls a model through :class:`JudgeClient` and retries a failed or
invalid reply exactly once through :func:`ask_validated`, so a judge failure is handled the same way everywhere
and is never read as a skill loss. The SDK's own retries are off (``max_retries=0``) so every 429 and 529 reaches
the client: it retries them itself (the same budget, exponential backoff with jitter, honouring ``retry-after``),
each attempt through a slot of the pass's :class:`skillbench.limiter.AdaptiveLimiter`, which cuts concurrency on a
rate limit and holds new slots for its ``retry-after``. Before a 429 can happen, each attempt also waits its turn in
the endpoint's :class:`skillbench.limiter.RateBudget` (one per endpoint in the process, whichever judge calls: the
rubric, pairs, calibration, quality), paced from the ``anthropic-ratelimit-*`` headers of every answer.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError

from skillbench.judge._protocol import ProtocolError
from skillbench.limiter import MAX_HOLD_S, AdaptiveLimiter, Slot, Ticket, endpoint_budget, retry_after_s
from skillbench.prices import usage_cost

DEFAULT_JUDGE_MODEL = "claude-opus-5-5"


def resolve_judge_model(asked: str | None = None, recorded: str | None = None) -> str:
    """The judge model a pass uses: the one asked for (``--judge-model``), else the one the week's ledger records
    (a calibration or a sentinel measures the judge that graded the week), else :data:`DEFAULT_JUDGE_MODEL`."""
    return asked or recorded or DEFAULT_JUDGE_MODEL
MAX_RETRY_AFTER_S = MAX_HOLD_S
# A client made without a limiter gets its own, this wide: the pass's worker pool is then the real ceiling, and a
# cut halves the slots in use (skillbench.limiter), so the two agree. Pass ``limiter=AdaptiveLimiter(jobs)``.
DEFAULT_CEILING = 16
# The SDK's backoff, which these retries replace: 0.5 s doubling up to 8 s, minus up to 25 % jitter.
INITIAL_RETRY_DELAY_S = 0.5
MAX_RETRY_DELAY_S = 8.0
RETRY_STATUSES = frozenset({408, 409, 429})  # and every 5xx (529 included), as the SDK retries them
RATE_LIMIT_STATUSES = frozenset({429, 529})
Log = Callable[[str], None]
T = TypeVar("T")


def stderr_log(message: str) -> None:
    print(message, file=sys.stderr)


class JudgeCallError(RuntimeError):
    """A judge call that failed after the client's retries; the message is the reason recorded."""

    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.retry_after = retry_after


@dataclass
class CallResult:
    """A successful call: the reply, what it cost, and the model snapshot that answered (the reply's ``model``)."""

    message: Any
    usage: dict[str, int]
    cost_usd: float
    snapshot: str = ""


class JudgeClient:
    """The ``anthropic`` SDK client of one judge model; every worker's calls go through one limiter.

    The client retries 408/409/429/5xx/529, timeouts and connection errors itself (``max_retries`` times, with
    the SDK's backoff or the ``retry-after`` the endpoint asked for); a 429 or 529 cuts the limiter and holds
    every worker's next call for its ``retry-after``; every attempt first waits its turn in the endpoint's
    :class:`~skillbench.limiter.RateBudget` (:attr:`budget`), so concurrent slots send only what the limit allows.

    Args:
        base_url: the Messages endpoint (``Endpoint.base_url``).
        api_key: its key.
        model: the judge model name.
        max_retries: retries per call (the client's; the SDK's own are off).
        timeout: seconds per request (a stalled response ends as a timeout, then a retry).
        limiter: the pass's limiter (``AdaptiveLimiter(jobs)``); None: one of :data:`DEFAULT_CEILING` slots.
        transport: an ``httpx2`` transport (the SDK's httpx) for every request (``--executor dask``:
            :class:`skillbench.cluster._transport.DaskTransport`); None: the SDK's own.
    """

    def __init__(self, base_url: str, api_key: str, model: str, *, max_retries: int = 4, timeout: float = 120.0,
                 limiter: AdaptiveLimiter | None = None, transport: Any = None):
        import anthropic

        self.model = model
        self.max_retries = max_retries
        # trust_env off: a proxy from the environment would be mounted ahead of the transport and bypass it
        http = anthropic.DefaultHttpxClient(transport=transport, trust_env=False) if transport is not None else None
        # max_retries=0: the SDK would otherwise absorb 429/529 and the limiter would never see them
        self.sdk = anthropic.Anthropic(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout,
                                       http_client=http)
        self.limiter = limiter or AdaptiveLimiter(DEFAULT_CEILING, log=stderr_log, name=f"judge {model}")
        # the endpoint's one schedule in this process: every judge client (and every run's relay) of it shares it
        self.budget = endpoint_budget(base_url, api_key, log=stderr_log)
        self._lock = threading.Lock()
        # The snapshots that answered (each reply's ``model``): an alias resolves to a dated build on the real API,
        # and a pass records which one graded, so a silent upgrade between weeks can be seen.
        self.snapshots: set[str] = set()

    def close(self) -> None:
        self.sdk.close()

    def create(self, request: Mapping[str, Any], headers: Mapping[str, str]) -> CallResult:
        """One ``messages.create`` call, retried up to ``max_retries`` times, each attempt in a limiter slot.

        Raises:
            JudgeCallError: the call failed after the client's retries (reason and any ``retry-after`` attached).
        """
        for retry in range(self.max_retries + 1):
            with self.limiter.slot() as slot:
                outcome = self._attempt(request, headers, retry, slot)
            if isinstance(outcome, CallResult):
                return outcome
            time.sleep(outcome)  # outside the slot: a backoff never holds one
        raise AssertionError("unreachable: the last attempt raises")  # pragma: no cover

    def _attempt(self, request: Mapping[str, Any], headers: Mapping[str, str], retry: int,
                 slot: Slot) -> CallResult | float:
        """One HTTP attempt: the result, or the seconds to wait before the next; raises when it was the last."""
        import anthropic

        last = retry >= self.max_retries
        ticket = self._turn(request)
        try:
            raw = self.sdk.messages.with_raw_response.create(model=self.model, extra_headers=dict(headers), **request)
            self.budget.observe(ticket, raw.status_code, raw.headers)
            message = raw.parse()
        except anthropic.APIStatusError as exc:
            status, answer = exc.status_code, exc.response.headers
            self.budget.observe(ticket, status, answer)
            self.budget.finish(ticket)
            retry_after = retry_after_s(answer)
            if status in RATE_LIMIT_STATUSES:
                self.limiter.on_rate_limited(retry_after, slot=slot, reason=f"HTTP {status}")
            body = exc.body if isinstance(exc.body, dict) else {}
            kind = (body.get("error") or {}).get("type") or type(exc).__name__
            should = answer.get("x-should-retry")
            retryable = should == "true" or (should != "false" and (status in RETRY_STATUSES or status >= 500))
            if last or not retryable:
                raise JudgeCallError(f"HTTP {status} {kind} after {retry} retries", retry_after) from exc
            return retry_after or _backoff(retry)
        except anthropic.APITimeoutError as exc:
            self.budget.finish(ticket)
            if last:
                raise JudgeCallError(f"timeout after {retry} retries") from exc
            return _backoff(retry)
        except anthropic.APIConnectionError as exc:
            self.budget.finish(ticket)
            if last:
                raise JudgeCallError(f"connection error after {retry} retries ({exc.__cause__ or exc})") from exc
            return _backoff(retry)
        except (anthropic.APIError, ValueError) as exc:  # e.g. a body that is not a message
            self.budget.finish(ticket)
            raise JudgeCallError(f"unreadable reply ({type(exc).__name__}: {str(exc)[:120]})") from exc
        self.limiter.on_success(slot=slot)
        use = getattr(message, "usage", None)
        usage = {k: int(getattr(use, k, 0) or 0) for k in ("input_tokens", "output_tokens",
                                                           "cache_read_input_tokens", "cache_creation_input_tokens")}
        self.budget.finish(ticket, usage)
        snapshot = str(getattr(message, "model", "") or "")
        if snapshot:
            with self._lock:
                self.snapshots.add(snapshot)
        return CallResult(message, usage, usage_cost(self.model, usage), snapshot)

    def _turn(self, request: Mapping[str, Any]) -> Ticket:
        """Wait for this call's turn in the endpoint's schedule (its tokens estimated from the request's size)."""
        size = len(json.dumps(request, default=str, ensure_ascii=False).encode())
        max_tokens = request.get("max_tokens")
        return self.budget.acquire(self.model, self.budget.estimate(self.model, size, max_tokens
                                                                     if isinstance(max_tokens, int) else None))

    @property
    def snapshot(self) -> str:
        """The resolved snapshot(s) that answered so far, comma-joined ("" before the first reply)."""
        with self._lock:
            return ", ".join(sorted(self.snapshots))


def _backoff(retry: int) -> float:
    """The SDK's exponential backoff with jitter, for the ``retry``-th retry (0-based)."""
    return min(INITIAL_RETRY_DELAY_S * 2.0 ** retry, MAX_RETRY_DELAY_S) * (1 - 0.25 * random.random())


def opaque_run_id(run_id: str) -> str:
    """A stable id for the run-id header that names neither model, arm nor skill (keys the sim's draws)."""
    return "judge-" + hashlib.sha256(run_id.encode()).hexdigest()[:16]


def shuffle_seed(seed: int, run_id: str, sample: int, attempt: int) -> int:
    """The rubric-order seed of one call (recorded with the call)."""
    digest = hashlib.sha256(f"{seed}|{run_id}|{sample}|{attempt}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


class SlotFailed(RuntimeError):
    """A slot (one sample of one run, one order of one pair, or a re-ask) failed twice; the message is the reason."""


def reply_error(exc: ProtocolError | ValidationError) -> str:
    """One line saying why a reply did not validate."""
    first = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc).splitlines()[0]
    return f"invalid reply: {first}"[:300]


def ask_validated(
    client: JudgeClient,
    build: Callable[[int], tuple[Mapping[str, Any], Mapping[str, str]]],
    parse: Callable[[Any], T],
    *,
    next_attempt: Callable[[], int],
    observe: Callable[[int, CallResult | None, str], None] | None = None,
    tries: int = 2,
) -> T:
    """One judge slot: a call whose reply must validate, retried once when the call fails or the reply is invalid.

    Args:
        client: the judge client (it has already retried transport errors and rate limits inside each call).
        build: ``attempt -> (request, headers)``; the attempt number seeds the rubric order.
        parse: validates the reply message and returns what it says; raises ProtocolError or ValidationError.
        next_attempt: the slot's next attempt number (a re-ask continues the count of its sample).
        observe: called once per attempt with ``(attempt, result or None, error or "")`` — for call records and
            spend (an invalid reply was still paid for).
        tries: attempts in all.

    Raises:
        SlotFailed: every attempt failed; the message joins their reasons.
    """
    errors: list[str] = []
    for _ in range(tries):
        attempt = next_attempt()
        request, headers = build(attempt)
        try:
            result = client.create(request, headers)
        except JudgeCallError as exc:  # a rate limit's Retry-After is waited out by the client before the next call
            errors.append(str(exc))
            if observe:
                observe(attempt, None, str(exc))
            continue
        try:
            value = parse(result.message)
        except (ProtocolError, ValidationError) as exc:
            errors.append(reply_error(exc))
            if observe:
                observe(attempt, result, errors[-1])
            continue
        if observe:
            observe(attempt, result, "")
        return value
    raise SlotFailed("; ".join(errors))
