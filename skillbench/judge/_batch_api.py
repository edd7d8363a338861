"""What a batched judge call sends and how its result is read: the request's ``params``, a Batches API call with
its own retries, paced by the budget of the endpoint's batch routes, and one result line turned into the
synchronous call's :class:`~skillbench.judge._client.CallResult` (or the
:class:`~skillbench.judge._client.JudgeCallError` the retry-once rule acts on).

Pacing. The API limits the Message Batches endpoints' HTTP requests with a requests-per-minute limit of its own,
shared by every batch endpoint and every model and apart from the Messages limit (its rate-limits page), and
answers an excess with 429 and ``retry-after``. So every Batches call (create, retrieve, the results' two requests)
first takes its turn in one :class:`~skillbench.limiter.RateBudget` schedule: the process's budget of the key
``(endpoint URL + /v1/messages/batches, the API key's digest)`` (:func:`batches_budget`), schedule
:data:`BATCHES_BUCKET`, which every batched pass of the process (rubric, pairs, calibration) shares and which the
Messages budget never touches. Each answer's status and ``anthropic-ratelimit-requests-*`` headers go back into it,
so polling sends no faster than the limit allows. A 429 that still comes is counted and honoured: its
``retry-after`` holds the schedule (capped, as every wait is: a hostile header slows a call by the budget's cap at
most). Where the batch routes state no limit the budget lets everything through and only a 429 slows a pass.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from skillbench.judge._client import CallResult, JudgeCallError, JudgeClient, stderr_log
from skillbench.limiter import RateBudget, Ticket, endpoint_budget, retry_after_s
from skillbench.prices import usage_cost
from skillbench.wire import BATCHES_ROUTE

METADATA_PREFIX = "skillbench:"  # params.metadata.user_id on the simulated endpoint (skillbench.sim._batches)
MAX_SDK_WAIT_S = 60.0
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
BATCHES_BUCKET = "message-batches"  # the one schedule of the batch routes in their budget: all models share it
RESULTS_SENDS = 2  # the SDK's batches.results() retrieves the batch, then reads its results_url
MIN_WAIT_S = 0.001  # a shorter "wait" is the budget's lock, not the schedule: not counted as waiting for a turn
U = TypeVar("U")
U_co = TypeVar("U_co", covariant=True)


class RawAnswer(Protocol[U_co]):
    """What the SDK's ``with_raw_response`` calls return: the status and headers, and the parsed object."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Any: ...

    def parse(self) -> U_co: ...


def batch_params(model: str, request: Mapping[str, Any], headers: Mapping[str, str], *, simulated: bool,
                 ) -> dict[str, Any]:
    """A batched request's ``params``: the synchronous call's keyword arguments and model; on the simulated
    endpoint only, ``metadata.user_id`` = ``skillbench:`` + the compact JSON of the headers it would have sent."""
    params: dict[str, Any] = {"model": model, **request}
    if simulated:
        compact = json.dumps(dict(headers), separators=(",", ":"), sort_keys=True)
        params["metadata"] = {"user_id": METADATA_PREFIX + compact}
    return params


def batches_budget(client: JudgeClient) -> RateBudget:
    """This process's budget of the endpoint's batch routes (their own limit, keyed apart from Messages)."""
    base = str(client.sdk.base_url).rstrip("/")
    return endpoint_budget(base + BATCHES_ROUTE, str(client.sdk.api_key or ""), log=stderr_log)


@dataclass
class BatchPacing:
    """How a batch client's Batches calls are sent, and what happened to them in its pass.

    Attributes:
        budget: the schedule every call waits its turn in (None from :meth:`unpaced`: calls go at once and only a
            429 slows them; the benchmark's baseline). :class:`~skillbench.judge.BatchClient` fills in the
            endpoint's shared budget when none is given.
        paced: False for :meth:`unpaced`.
        poll_s: seconds between polls (None: 0.1 on the simulated endpoint, 30 on the real one).
        counts: this pass's HTTP requests to the batch routes, 429s among them, requests that waited for their
            turn, seconds waited, waits cut at the budget's cap, and calls sent again (a 429, a 5xx, a dropped
            connection): ``judge.json``'s ``batch.pacing``.
    """

    budget: RateBudget | None = None
    paced: bool = True
    poll_s: float | None = None
    counts: dict[str, Any] = field(default_factory=lambda: {"requests": 0, "rate_limited": 0, "waited": 0,
                                                             "waited_s": 0.0, "capped": 0, "retries": 0})
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def unpaced(cls, poll_s: float | None = None) -> BatchPacing:
        """Calls sent at once, a 429 waited out after the fact (the path before the budget)."""
        return cls(None, paced=False, poll_s=poll_s)

    def summary(self) -> dict[str, Any]:
        """``paced`` (the flag) and the counts, as ``judge.json`` records them."""
        with self._lock:
            return {"paced": self.paced, **self.counts, "waited_s": round(self.counts["waited_s"], 3)}

    def _count(self, **add: float) -> None:
        with self._lock:
            for key, value in add.items():
                self.counts[key] += value

    def _turns(self, sends: int) -> list[Ticket]:
        if self.budget is None:
            return []
        tickets: list[Ticket] = []
        for _ in range(sends):
            tickets.append(self.budget.acquire(BATCHES_BUCKET))
            if tickets[0].probe:  # the limit is unknown until this call's answer: a second turn would wait for it
                break
        waited = [t.wait for t in tickets if t.wait >= MIN_WAIT_S]
        self._count(waited=len(waited), waited_s=sum(waited), capped=sum(t.capped for t in tickets))
        return tickets

    def _answered(self, tickets: list[Ticket], sent: int, status: int, headers: Mapping[str, str]) -> None:
        """``sent`` of the call's requests went out; the last of them was answered ``status`` with ``headers``."""
        self._count(requests=sent, rate_limited=int(status == 429))
        if self.budget is None:
            return
        answered = min(sent, len(tickets)) - 1  # a probe's call took one turn for all its requests
        for n, ticket in enumerate(tickets):
            if n == answered:
                self.budget.observe(ticket, status, headers)
            self.budget.finish(ticket)

    def call(self, client: JudgeClient, call: Callable[[], RawAnswer[U]], sends: int = 1) -> U:
        """A Batches API call (``sends`` HTTP requests, each in its turn), retried up to the client's
        ``max_retries`` on a rate limit, an overload, a 5xx or a dropped connection (the judge client turns the
        SDK's own retries off), honouring ``retry-after``."""
        import anthropic

        for retry in range(client.max_retries + 1):
            last = retry == client.max_retries
            if retry:
                self._count(retries=1)
            tickets = self._turns(sends)
            try:
                raw = call()
            except (anthropic.RateLimitError, anthropic.InternalServerError) as exc:
                headers = exc.response.headers
                self._answered(tickets, _sent(exc, sends), exc.status_code, headers)
                if last:
                    raise
                after = retry_after_s(headers)
                # Paced, the budget holds every next turn for the retry-after (capped there): no second wait here.
                if self.budget is None or after is None or exc.status_code != 429:
                    time.sleep(min(after if after is not None else 2.0 ** retry, MAX_SDK_WAIT_S))
                continue
            except anthropic.APIStatusError as exc:  # refused for good (400, 404, …): counted, then raised
                self._answered(tickets, _sent(exc, sends), exc.status_code, exc.response.headers)
                raise
            except anthropic.APIConnectionError:
                self._answered(tickets, 0, 0, {})
                if last:
                    raise
                time.sleep(min(2.0 ** retry, MAX_SDK_WAIT_S))
                continue
            self._answered(tickets, sends, raw.status_code, raw.headers)
            return raw.parse()
        raise AssertionError("unreachable")  # pragma: no cover


def _sent(exc: Any, sends: int) -> int:
    """How many of a call's requests went out when one was refused: results() fails at its first request (the
    retrieve) unless the refused URL is the results one."""
    url = str(getattr(getattr(exc.response, "request", None), "url", "") or "")
    return sends if sends == 1 or url.rstrip("/").endswith("/results") else 1


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
