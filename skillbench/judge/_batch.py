"""Batched judging: the same judge code, its calls answered by Message Batches (half the price).

:class:`BatchClient` stands in for :class:`~skillbench.judge._client.JudgeClient` (``model``, ``create``,
``snapshot``, ``close``), so the rubric judge, the pairwise judge and calibration run **unchanged**: evidence
verification, the one re-ask, the retry-once rule of :func:`~skillbench.judge._client.ask_validated` and
``ungraded``. :meth:`BatchClient.run` runs one worker thread per run (or pair); each ``create`` call parks its
request, and when every live worker is parked the round is sent as one batch
(``client.messages.batches.create``), its id written to ``judge-batches.json``
(:mod:`skillbench.judge._batch_store`) before it is polled, and each reply handed back to the worker that asked.
What a worker asks next (a re-ask, a retry, the next sample) is the next round's batch.

A request whose ``custom_id`` the store already holds is never sent again: its batch is polled and its result
read (the resume of a killed pass). A request that ends ``errored``, ``expired`` or ``canceled`` raises
:class:`~skillbench.judge._client.JudgeCallError` in its worker, so the ordinary retry-once rule resends it (a new
attempt, a new id) in the next round, then leaves its items ``ungraded``. Replies are priced at the batch price
(:meth:`skillbench.prices.Price.batch`).

The simulated judge seeds its draws on the run id, sample and attempt headers, which a batch cannot carry: on
the simulated endpoint only, each request's ``params.metadata.user_id`` is ``skillbench:`` and the compact JSON
of those headers (the sim maps it back; :mod:`skillbench.sim._batches`). The real API gets no metadata.

``wait_s`` bounds the wait for a batch: past it the pass stops with :class:`JudgePending` (nothing partial is
written; the weekly chain does not hold a kernel for hours) and a rerun continues.

Every Batches call (the create, each poll's retrieve, the results' two requests) waits its turn in the budget of
the endpoint's batch routes and reports its answer's headers back (:class:`~skillbench.judge._batch_api.BatchPacing`),
so a pass, its polls included, sends only what the Batches limit allows; :attr:`BatchClient.pacing` counts what
happened (``judge.json``'s ``batch.pacing``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from skillbench.judge._batch_api import (
    METADATA_PREFIX,
    RESULTS_SENDS,
    BatchPacing,
    batch_params,
    batches_budget,
    call_result,
)
from skillbench.judge._batch_store import BatchStore, RequestInfo, custom_id
from skillbench.judge._client import CallResult, JudgeCallError, JudgeClient, Log
from skillbench.wire import ATTEMPT_HEADER, SAMPLE_HEADER

__all__ = ["METADATA_PREFIX", "BatchClient", "BatchPacing", "JudgePending", "batch_params"]

POLL_S_SIMULATED = 0.1
POLL_S_REAL = 30.0
PROGRESS_EVERY_S = 30.0
MAX_BATCH_REQUESTS = 10_000  # well under the API's 100,000 (and its 256 MB)
POLL_ERRORS = 5  # consecutive failed polls before the round's requests count as errored
T = TypeVar("T")
U = TypeVar("U")


class JudgePending(RuntimeError):
    """The pass stopped while batches were still processing; a rerun continues with the same batches."""

    def __init__(self, batch_ids: Sequence[str]):
        self.batch_ids = list(batch_ids)
        super().__init__(f"judge pending (batch ids {', '.join(self.batch_ids)}) — rerun the same command (or run "
                         "key) to continue; nothing accepted is submitted again")


class _Abandoned(Exception):  # noqa: N818 - raised in a worker when its pass stops pending; never caught by judges
    pass


@dataclass
class _Slot:
    cid: str
    params: dict[str, Any]
    info: RequestInfo
    done: threading.Event = field(default_factory=threading.Event)
    result: CallResult | None = None
    error: BaseException | None = None


class BatchClient:
    """A judge client whose calls are answered by Message Batches (see the module docstring).

    Args:
        client: the synchronous client of the judge model (its SDK client sends the batches).
        store: the run directory's ``judge-batches.json``.
        pass_kind: ``rubric``, ``pairs`` or ``calibration``.
        simulated: the endpoint is the simulated one (send the draw keys as metadata).
        wait_s: the longest wait for one round's batches (None: as long as it takes).
        pacing: how the Batches calls are sent (None: paced by the endpoint's batch budget, shared by the
            process; :meth:`BatchPacing.unpaced` for the benchmark's baseline) and the poll interval.
        log: where progress lines go.
        request_kind: ``sample -> kind`` recorded with each request (the pairwise judge's order), instead of the
            kind :meth:`run`'s ``context`` gives.
    """

    def __init__(self, client: JudgeClient, store: BatchStore, pass_kind: str, *, simulated: bool,
                 wait_s: float | None = None, pacing: BatchPacing | None = None, log: Log | None = None,
                 request_kind: Callable[[int], str] | None = None):
        self.client, self.store, self.pass_kind, self.simulated = client, store, pass_kind, simulated
        self.request_kind = request_kind
        self.model = client.model
        self.wait_s = wait_s
        self.pacing = pacing or BatchPacing()
        if self.pacing.paced and self.pacing.budget is None:
            self.pacing.budget = batches_budget(client)
        given = self.pacing.poll_s
        self.poll_s = given if given is not None else (POLL_S_SIMULATED if simulated else POLL_S_REAL)
        self.log = log or (lambda _m: None)
        self._cond = threading.Condition()
        self._parked: list[_Slot] = []
        self._live = 0
        self._local = threading.local()
        self._results: dict[str, dict[str, Any]] = {}  # batch id -> custom_id -> result (read once)
        self.snapshots: set[str] = set()
        self.submitted = 0  # requests sent in this pass
        self.reused = 0  # requests answered by a batch an earlier (killed) pass submitted
        self.counts = {"succeeded": 0, "errored": 0, "expired": 0, "canceled": 0}
        self.batch_ids: list[str] = []  # every batch this pass read from

    @property
    def snapshot(self) -> str:
        with self._cond:
            return ", ".join(sorted(self.snapshots))

    def close(self) -> None:
        self.client.close()

    # -- the worker side ---------------------------------------------------------------------------------------

    def create(self, request: Mapping[str, Any], headers: Mapping[str, str]) -> CallResult:
        """Park one request until its round's batch has answered it (called by the judge, in a worker thread).

        Raises:
            JudgeCallError: the request ended errored, expired or canceled, or its batch could not be read.
        """
        kind, label = getattr(self._local, "context", (self.pass_kind, ""))
        sample = int(headers.get(SAMPLE_HEADER, 0) or 0)
        attempt = int(headers.get(ATTEMPT_HEADER, 0) or 0)
        if self.request_kind is not None:
            kind = self.request_kind(sample)
        params = batch_params(self.model, request, headers, simulated=self.simulated)
        slot = _Slot(custom_id(kind, self.model, label, sample, attempt, params), params,
                     RequestInfo(kind, label, sample, attempt))
        with self._cond:
            self._parked.append(slot)
            self._cond.notify_all()
        slot.done.wait()
        if slot.error is not None:
            raise slot.error
        assert slot.result is not None
        return slot.result

    def run(self, items: Sequence[T], work: Callable[[T], U], context: Callable[[T], tuple[str, str]]) -> list[U]:
        """``work`` on every item, one thread each, their judge calls batched round by round.

        Args:
            items: runs, pairs, …
            work: what the synchronous pass does per item (it calls :meth:`create` through the judge).
            context: ``item -> (request kind, run id)`` recorded with each of its requests.

        Returns:
            ``work``'s results in item order.

        Raises:
            JudgePending: ``wait_s`` passed with batches still processing (no item's ``work`` completed
                after that point; the finished ones have been committed by ``work`` itself).
        """
        if not items:
            return []
        with self._cond:
            self._live = len(items)

        def one(item: T) -> U:
            self._local.context = context(item)
            try:
                return work(item)
            finally:
                with self._cond:
                    self._live -= 1
                    self._cond.notify_all()

        stop: BaseException | None = None
        inflight: list[_Slot] = []
        with ThreadPoolExecutor(max_workers=len(items), thread_name_prefix="judge-batch") as pool:
            futures = [pool.submit(one, item) for item in items]
            while True:
                try:
                    with self._cond:
                        self._cond.wait_for(lambda: self._live == 0
                                            or (self._parked and len(self._parked) >= self._live))
                        if self._live == 0:
                            break
                        inflight, self._parked = self._parked, []
                    if stop is None:
                        self._round(inflight)
                    else:  # stopping: every later request is abandoned unsent
                        _fail(inflight, _Abandoned())
                except BaseException as exc:  # JudgePending, Ctrl-C or a bug: no worker may stay parked
                    stop = stop or exc
                    with self._cond:
                        inflight, self._parked = inflight + self._parked, []
                    _fail([s for s in inflight if not s.done.is_set()], _Abandoned())
            results = []
            for f in futures:
                try:
                    results.append(f.result())
                except _Abandoned:
                    results.append(None)  # type: ignore[arg-type]
        if stop is not None:
            raise stop
        return results

    # -- the round ---------------------------------------------------------------------------------------------

    def _round(self, slots: list[_Slot]) -> None:
        """Send the parked requests the store does not know, poll their batches, hand each reply back."""
        fresh = [s for s in slots if self.store.batch_of(s.cid) is None]
        self.reused += len(slots) - len(fresh)
        for start in range(0, len(fresh), MAX_BATCH_REQUESTS):
            chunk = fresh[start:start + MAX_BATCH_REQUESTS]
            try:
                batch = self.pacing.call(self.client, lambda c=chunk: self.client.sdk.messages.batches
                                         .with_raw_response.create(requests=[{"custom_id": s.cid, "params": s.params}
                                                                             for s in c]))
            except Exception as exc:  # noqa: BLE001 - any refusal fails these requests; the judge retries once
                _fail(chunk, JudgeCallError(f"batch not accepted ({type(exc).__name__}: {str(exc)[:160]})"))
                slots = [s for s in slots if s not in chunk]
                continue
            # Persisted before the first poll: a kill from here on resumes by polling this batch.
            self.store.add_batch(batch.id, self.pass_kind, self.model, {s.cid: s.info for s in chunk})
            self.submitted += len(chunk)
            self.log(f"judge batch {batch.id}: {len(chunk)} request(s) submitted ({self.pass_kind})")
        by_batch: dict[str, list[_Slot]] = {}
        for s in slots:
            by_batch.setdefault(self.store.batch_of(s.cid) or "", []).append(s)
        self._wait_ended([b for b in by_batch if b and b not in self._results])
        for batch_id, group in by_batch.items():
            results = self._results.get(batch_id, {})
            for s in group:
                self._deliver(s, results.get(s.cid))

    def _wait_ended(self, batch_ids: Iterable[str]) -> None:
        waiting = list(batch_ids)
        for b in waiting:
            if b not in self.batch_ids:
                self.batch_ids.append(b)
        start = last_log = time.monotonic()
        errors = 0
        while waiting:
            counts = {"succeeded": 0, "errored": 0, "pending": 0}
            still = []
            for b in waiting:
                try:
                    batch = self.pacing.call(self.client, lambda b=b: self.client.sdk.messages.batches
                                             .with_raw_response.retrieve(b))
                    if batch.processing_status == "ended":
                        lines = self.pacing.call(self.client, lambda b=b: self.client.sdk.messages.batches
                                                 .with_raw_response.results(b), sends=RESULTS_SENDS)
                        self._results[b] = {r.custom_id: r.result for r in lines}
                    errors = 0
                except Exception as exc:  # noqa: BLE001 - a failed poll is retried; a batch gone is errored
                    errors += 1
                    if errors >= POLL_ERRORS or getattr(exc, "status_code", None) == 404:
                        self._results[b] = {}  # its requests read as missing: errored, retried once
                        self.log(f"judge batch {b}: cannot be read ({type(exc).__name__}: {str(exc)[:120]}); its "
                                 "requests count as errored and are sent once more")
                    else:
                        still.append(b)
                    continue
                rc = batch.request_counts
                counts["succeeded"] += rc.succeeded
                counts["errored"] += rc.errored + rc.expired + rc.canceled
                counts["pending"] += rc.processing
                self.store.note_status(b, batch.processing_status, rc.model_dump())
                if batch.processing_status != "ended":
                    still.append(b)
            waiting = still
            now = time.monotonic()
            if not waiting or now - last_log >= PROGRESS_EVERY_S:
                self.log(f"judge batch: {counts['succeeded']} succeeded, {counts['errored']} errored, "
                         f"{counts['pending']} pending")
                last_log = now
            if waiting and self.wait_s is not None and now - start >= self.wait_s:
                raise JudgePending(self.store.open_batches(self.pass_kind))
            if waiting:
                time.sleep(self.poll_s)

    def _deliver(self, slot: _Slot, result: Any) -> None:
        kind = getattr(result, "type", "missing")
        with self._cond:
            self.counts[kind] = self.counts.get(kind, 0) + 1
        try:
            slot.result = call_result(self.model, result)
        except JudgeCallError as exc:
            slot.error = exc
        if slot.result is not None and slot.result.snapshot:
            with self._cond:
                self.snapshots.add(slot.result.snapshot)
        slot.done.set()


def _fail(slots: Iterable[_Slot], error: BaseException) -> None:
    for s in slots:
        s.error = error
        s.done.set()
