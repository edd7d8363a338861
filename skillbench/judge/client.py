"""The judge's client: the real ``anthropic`` SDK, a cooldown shared by every worker, and the retry-once rule.

Every judge (rubric, pairwise, calibration) calls a model through :class:`JudgeClient` and retries a failed or
invalid reply exactly once through :func:`ask_validated`, so a judge failure is handled the same way everywhere
and is never read as a skill loss.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError

from skillbench.judge.protocol import ProtocolError
from skillbench.prices import usage_cost

DEFAULT_JUDGE_MODEL = "claude-opus-5-5"
MAX_RETRY_AFTER_S = 120.0
Log = Callable[[str], None]
T = TypeVar("T")


def stderr_log(message: str) -> None:
    print(message, file=sys.stderr)


class JudgeCallError(RuntimeError):
    """A judge call that failed after the SDK's retries; the message is the reason recorded."""

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
    """The ``anthropic`` SDK client of one judge model, with a cooldown shared by every worker.

    The SDK retries 429/5xx/529 and connection errors with backoff and honours ``Retry-After``; when a call
    still ends rate-limited, every worker waits out its ``Retry-After`` before the next call, so concurrent
    slots do not keep hitting the limit.

    Args:
        base_url: the Messages endpoint (``Endpoint.base_url``).
        api_key: its key.
        model: the judge model name.
        max_retries: SDK retries per call.
        timeout: seconds per request (a stalled response ends as a timeout, then a retry).
    """

    def __init__(self, base_url: str, api_key: str, model: str, *, max_retries: int = 4, timeout: float = 120.0):
        import anthropic

        self.model = model
        self.max_retries = max_retries
        self.sdk = anthropic.Anthropic(base_url=base_url, api_key=api_key, max_retries=max_retries, timeout=timeout)
        self._cool_until = 0.0
        self._lock = threading.Lock()
        # The snapshots that answered (each reply's ``model``): an alias resolves to a dated build on the real API,
        # and a pass records which one graded, so a silent upgrade between weeks can be seen.
        self.snapshots: set[str] = set()

    def close(self) -> None:
        self.sdk.close()

    def _wait_cooldown(self) -> None:
        with self._lock:
            wait = self._cool_until - time.monotonic()
        if wait > 0:
            time.sleep(wait)

    def create(self, request: Mapping[str, Any], headers: Mapping[str, str]) -> CallResult:
        """One ``messages.create`` call.

        Raises:
            JudgeCallError: the call failed after the SDK's retries (reason and any ``Retry-After`` attached).
        """
        import anthropic

        self._wait_cooldown()
        try:
            message = self.sdk.messages.create(model=self.model, extra_headers=dict(headers), **request)
        except anthropic.APIStatusError as exc:
            retry_after = _retry_after(exc.response.headers)
            if exc.status_code == 429 and retry_after:
                with self._lock:
                    self._cool_until = max(self._cool_until, time.monotonic() + retry_after)
            body = exc.body if isinstance(exc.body, dict) else {}
            kind = (body.get("error") or {}).get("type") or type(exc).__name__
            reason = f"HTTP {exc.status_code} {kind} after {self.max_retries} retries"
            raise JudgeCallError(reason, retry_after) from exc
        except anthropic.APITimeoutError as exc:
            raise JudgeCallError(f"timeout after {self.max_retries} retries") from exc
        except anthropic.APIConnectionError as exc:
            raise JudgeCallError(f"connection error after {self.max_retries} retries ({exc.__cause__ or exc})"
                                 ) from exc
        except (anthropic.APIError, ValueError) as exc:  # e.g. a body that is not a message
            raise JudgeCallError(f"unreadable reply ({type(exc).__name__}: {str(exc)[:120]})") from exc
        use = getattr(message, "usage", None)
        usage = {k: int(getattr(use, k, 0) or 0) for k in ("input_tokens", "output_tokens",
                                                           "cache_read_input_tokens", "cache_creation_input_tokens")}
        snapshot = str(getattr(message, "model", "") or "")
        if snapshot:
            with self._lock:
                self.snapshots.add(snapshot)
        return CallResult(message, usage, usage_cost(self.model, usage), snapshot)

    @property
    def snapshot(self) -> str:
        """The resolved snapshot(s) that answered so far, comma-joined ("" before the first reply)."""
        with self._lock:
            return ", ".join(sorted(self.snapshots))


def _retry_after(headers: Mapping[str, str]) -> float | None:
    try:
        value = float(headers.get("retry-after", ""))
    except (TypeError, ValueError):
        return None
    return min(value, MAX_RETRY_AFTER_S) if value > 0 else None


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
        client: the judge client (the SDK has already retried transport errors inside each call).
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
