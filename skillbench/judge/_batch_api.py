"""What a batched judge call sends and how its result is read: the request's ``params``, a Batches API call with
its own retries, and one result line turned into the synchronous call's :class:`~skillbench.judge._client.CallResult`
(or the :class:`~skillbench.judge._client.JudgeCallError` the retry-once rule acts on)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from skillbench.judge._client import CallResult, JudgeCallError, JudgeClient
from skillbench.prices import usage_cost

METADATA_PREFIX = "skillbench:"  # params.metadata.user_id on the simulated endpoint (skillbench.sim._batches)
MAX_SDK_WAIT_S = 60.0
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
U = TypeVar("U")


def batch_params(model: str, request: Mapping[str, Any], headers: Mapping[str, str], *, simulated: bool,
                 ) -> dict[str, Any]:
    """A batched request's ``params``: the synchronous call's keyword arguments and model; on the simulated
    endpoint only, ``metadata.user_id`` = ``skillbench:`` + the compact JSON of the headers it would have sent."""
    params: dict[str, Any] = {"model": model, **request}
    if simulated:
        compact = json.dumps(dict(headers), separators=(",", ":"), sort_keys=True)
        params["metadata"] = {"user_id": METADATA_PREFIX + compact}
    return params


def sdk_call(client: JudgeClient, call: Callable[[], U]) -> U:
    """A Batches API call, retried up to the client's ``max_retries`` on a rate limit, an overload, a 5xx or a
    dropped connection (the judge client turns the SDK's own retries off), honouring ``retry-after``."""
    import anthropic

    for retry in range(client.max_retries + 1):
        try:
            return call()
        except (anthropic.RateLimitError, anthropic.InternalServerError, anthropic.APIConnectionError) as exc:
            if retry == client.max_retries:
                raise
            response = getattr(exc, "response", None)
            after = response.headers.get("retry-after") if response is not None else None
            try:
                wait = float(after) if after else 2.0 ** retry
            except ValueError:
                wait = 2.0 ** retry
            time.sleep(min(wait, MAX_SDK_WAIT_S))
    raise AssertionError("unreachable")  # pragma: no cover


def call_result(model: str, result: Any) -> CallResult:
    """One request's result line as the synchronous call's result, priced at the batch price.

    Raises:
        JudgeCallError: the request ended ``errored``, ``expired`` or ``canceled``, or has no result (its batch is
            gone): the judge's retry-once rule sends it again.
    """
    kind = getattr(result, "type", "missing")
    if kind == "succeeded":
        message = result.message
        use = getattr(message, "usage", None)
        usage = {k: int(getattr(use, k, 0) or 0) for k in USAGE_KEYS}
        snapshot = str(getattr(message, "model", "") or "")
        return CallResult(message, usage, usage_cost(model, usage, batch=True), snapshot)
    if kind == "errored":
        err = getattr(getattr(result, "error", None), "error", None)
        raise JudgeCallError(f"batch request errored ({getattr(err, 'type', 'error')}: "
                             f"{str(getattr(err, 'message', ''))[:120]})")
    if kind in ("expired", "canceled"):
        raise JudgeCallError(f"batch request {kind}")
    raise JudgeCallError("batch result missing (the batch is gone or its results unreadable)")
