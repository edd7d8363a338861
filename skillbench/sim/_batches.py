"""The simulated Message Batches API: create, retrieve, list, cancel, delete and the results JSONL.

Routes (the installed SDK's ``client.messages.batches``; shapes from the API reference):
    ``POST /v1/messages/batches`` ``{"requests": [{"custom_id", "params"}, …]}`` → a ``message_batch``.
    ``GET /v1/messages/batches/{id}`` → the batch; ``GET /v1/messages/batches?after_id&before_id&limit`` → a page
        ``{data, has_more, first_id, last_id}``, newest first (limit 1–1000, default 20).
    ``POST /v1/messages/batches/{id}/cancel`` → the batch, ``canceling`` until the worker stops, then ``ended``.
    ``DELETE /v1/messages/batches/{id}`` → ``{"id", "type": "message_batch_deleted"}``, only once ended.
    ``GET /v1/messages/batches/{id}/results`` (the batch's ``results_url``) → JSONL, one
        ``{"custom_id", "result": {"type": "succeeded", "message"} | {"type": "errored", "error"} |
        {"type": "canceled"} | {"type": "expired"}}`` per request.

A batch is ``in_progress`` for ``batches.delay_s``, then a thread answers its requests in order
(``per_request_s`` each) by the code path of ``POST /v1/messages`` (:meth:`SimServer.answer_batched`): the same
body and draw keys give the same reply. ``request_counts`` are all ``processing`` until the batch ends (the
API's rule). ``expire_rate`` / ``error_rate`` make a request ``expired`` / ``errored`` (``api_error``) by a draw on
(seed, custom_id, how many earlier batches carried it): the same submission fails alike every pass, a
resubmission is a fresh draw. A request the synchronous route refuses (e.g. a judge request outside the protocol)
ends ``errored`` with its ``invalid_request_error``. Batch requests take no faults; ``batches.rate_limit`` (off when
absent) limits every batch route's HTTP requests with one bucket of its own, apart from ``POST /v1/messages``
(the server's gate, :mod:`skillbench.sim._ratelimit`).

The Batches API has no per-request headers. The simulated judge's draw keys travel in
``params.metadata.user_id`` (a field the API accepts) as ``skillbench:<compact JSON {header name: value}>``
(:func:`encode_user_id`); the endpoint turns them back into those headers and drops the metadata before
answering, so the body matches the synchronous one. Send it only to a simulated endpoint.

Batches live in the server object's memory only, for the endpoint's one pass: a client killed mid-poll resumes
polling the same ids while the endpoint lives; a new endpoint knows none of them.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs

from skillbench import wire
from skillbench.sim import _draws as draws
from skillbench.sim._profiles import BatchSpec

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
USER_ID_PREFIX = "skillbench:"
MAX_REQUESTS = 100_000
EXPIRES_AFTER_S = 24 * 3600
Response = tuple[int, str, bytes]  # (status, content type, body)
Answer = Callable[[dict[str, Any], dict[str, str]], dict[str, Any]]


def encode_user_id(headers: Mapping[str, str]) -> str:
    """``metadata.user_id`` carrying the synchronous request's ``X-Skillbench-*`` headers."""
    return USER_ID_PREFIX + json.dumps(dict(headers), separators=(",", ":"), sort_keys=True)


def decode_params(params: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The request body without the skillbench metadata, and the headers it carried (none: ``{}``)."""
    body, meta = dict(params), params.get("metadata")
    user = meta.get("user_id") if isinstance(meta, Mapping) else None
    try:
        headers = json.loads(user[len(USER_ID_PREFIX):]) if str(user).startswith(USER_ID_PREFIX) else None
    except json.JSONDecodeError:
        headers = None
    if not isinstance(headers, dict) or not isinstance(meta, Mapping):
        return body, {}  # a user_id that is not ours is the caller's own: left as it is
    rest = {k: v for k, v in meta.items() if k != "user_id"}
    body.pop("metadata")
    body.update({"metadata": rest} if rest else {})
    return body, {str(k): str(v) for k, v in headers.items()}


class BatchRequestError(ValueError):
    """A create request the API refuses (400 invalid_request_error); the message names the field."""


def validate(body: Any) -> list[tuple[str, dict[str, Any]]]:
    """``(custom_id, params)`` per request of a create body.

    Raises:
        BatchRequestError: not an object with 1–100 000 requests, a malformed or repeated custom_id, or params
            that are not a Messages request (``model``, ``max_tokens`` ≥ 1, ``messages``; ``stream`` is refused).
    """
    reqs = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(reqs, list) or not reqs:
        raise BatchRequestError("requests: Field required (a list of 1 to 100000 requests)")
    if len(reqs) > MAX_REQUESTS:
        raise BatchRequestError(f"requests: at most {MAX_REQUESTS} requests per batch")
    out, seen = [], set()
    for i, req in enumerate(reqs):
        where = f"requests.{i}"
        if not isinstance(req, dict):
            raise BatchRequestError(f"{where}: Input should be an object")
        cid, params = req.get("custom_id"), req.get("params")
        if not isinstance(cid, str) or not CUSTOM_ID.match(cid):
            raise BatchRequestError(f"{where}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
        if cid in seen:
            raise BatchRequestError(f"{where}.custom_id: duplicate custom_id {cid!r}; each custom_id must be "
                                    "unique within a batch")
        seen.add(cid)
        if not isinstance(params, dict):
            raise BatchRequestError(f"{where}.params: Field required")
        for name, kind in (("model", str), ("max_tokens", int), ("messages", list)):
            if not isinstance(params.get(name), kind):
                raise BatchRequestError(f"{where}.params.{name}: Field required ({kind.__name__})")
        if not isinstance(params["max_tokens"], int) or params["max_tokens"] < 1:
            raise BatchRequestError(f"{where}.params.max_tokens: Input should be greater than or equal to 1")
        if params.get("stream"):
            raise BatchRequestError(f"{where}.params.stream: streaming is not supported in a batch")
        out.append((cid, params))
    return out


def rfc3339(epoch: float | None) -> str | None:
    """The API's timestamp format (UTC, microseconds), None for None."""
    return None if epoch is None else datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class _Batch:
    id: str
    created: float
    requests: list[tuple[str, dict[str, Any]]]
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    status: str = "in_progress"
    cancel_at: float | None = None
    ended: float | None = None
    cancel: threading.Event = field(default_factory=threading.Event)


class BatchStore:
    """Every batch of one endpoint, and the threads that process them.

    Args:
        spec: the profile's ``batches`` section.
        seed: the endpoint's seed (ids and the expire/error draws).
        base_url: the endpoint's URL (``results_url``).
        answer: ``(body, headers) → message``, the synchronous route's answer; raises ``ValueError`` (e.g. a
            ``ProtocolError``) for a request it refuses.
        stopping: set when the endpoint stops (wakes waiting workers).
        submissions: ``custom_id → how many earlier batches carried it`` (the server's counter).
    """

    def __init__(self, spec: BatchSpec, seed: int, base_url: str, answer: Answer, stopping: threading.Event,
                 submissions: Callable[[str], int]):
        self.spec, self.seed, self.base_url = spec, seed, base_url
        self.answer, self.stopping, self.submissions = answer, stopping, submissions
        self._batches: dict[str, _Batch] = {}  # insertion order = creation order
        self._lock = threading.RLock()  # view() is also taken inside cancel()'s change

    # -- the object -------------------------------------------------------------------------------
    def view(self, b: _Batch) -> dict[str, Any]:
        """The ``message_batch`` object."""
        with self._lock:
            counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
            if b.status == "ended":
                for result in b.results.values():
                    counts[result["type"]] += 1
            else:
                counts["processing"] = len(b.requests)
            return {"id": b.id, "type": "message_batch", "processing_status": b.status, "request_counts": counts,
                    "ended_at": rfc3339(b.ended), "created_at": rfc3339(b.created),
                    "expires_at": rfc3339(b.created + EXPIRES_AFTER_S), "archived_at": None,
                    "cancel_initiated_at": rfc3339(b.cancel_at),
                    "results_url": (f"{self.base_url}{wire.BATCHES_ROUTE}/{b.id}/results" if b.status == "ended"
                                    else None)}

    # -- lifecycle --------------------------------------------------------------------------------
    def create(self, body: Any) -> _Batch:
        requests = validate(body)
        n = len(self._batches)
        batch = _Batch("msgbatch_" + draws.short_id(self.seed, "batch", n, time.time_ns()), time.time(), requests)
        with self._lock:
            self._batches[batch.id] = batch
        # Drawn at submission, in request order: a resubmitted custom_id is a fresh draw whatever the threads do.
        fates = {cid: self._fate(cid, self.submissions(cid)) for cid, _ in requests}
        threading.Thread(target=self._process, args=(batch, fates), name=f"skillbench-sim-{batch.id}",
                         daemon=True).start()
        return batch

    def _fate(self, cid: str, n: int) -> str | None:
        if draws.uniform(self.seed, "batch-expire", cid, n) < self.spec.expire_rate:
            return "expired"
        if draws.uniform(self.seed, "batch-error", cid, n) < self.spec.error_rate:
            return "errored"
        return None

    def _process(self, batch: _Batch, fates: Mapping[str, str | None]) -> None:
        stop = self.stopping
        # Waits on the cancel event (a cancel ends the wait at once); the endpoint's stop also ends it.
        if not batch.cancel.wait(self.spec.delay_s) and not stop.is_set():
            for cid, params in batch.requests:
                if batch.cancel.is_set() or stop.is_set():
                    break
                result = self._run(cid, params, fates[cid])
                with self._lock:
                    batch.results[cid] = result
                if self.spec.per_request_s and batch.cancel.wait(self.spec.per_request_s):
                    break
        with self._lock:
            for cid, _ in batch.requests:
                batch.results.setdefault(cid, {"type": "canceled"})
            batch.status, batch.ended = "ended", time.time()

    def _run(self, cid: str, params: dict[str, Any], fate: str | None) -> dict[str, Any]:
        if fate == "expired":
            return {"type": "expired"}
        if fate == "errored":
            return {"type": "errored", "error": wire.error_body(500, "simulated batch request error")}
        body, headers = decode_params(params)
        try:
            return {"type": "succeeded", "message": self.answer(body, headers)}
        except ValueError as exc:
            return {"type": "errored", "error": wire.error_body(400, str(exc))}
        except Exception as exc:  # noqa: BLE001 - a sim bug must end this request, never hang the batch
            return {"type": "errored", "error": wire.error_body(500, f"{type(exc).__name__}: {exc}")}

    def cancel(self, batch: _Batch) -> dict[str, Any]:
        """Start cancelling (an ended batch is left as it is); the batch as the change left it."""
        with self._lock:
            if batch.status == "in_progress":
                batch.status, batch.cancel_at = "canceling", time.time()
                batch.cancel.set()
            return self.view(batch)

    # -- reading ----------------------------------------------------------------------------------
    def get(self, batch_id: str) -> _Batch | None:
        with self._lock:
            return self._batches.get(batch_id)

    def page(self, after_id: str | None, before_id: str | None, limit: int) -> dict[str, Any]:
        """One page of the list, newest first; ``after_id`` pages on to older, ``before_id`` back to newer."""
        with self._lock:
            newest = list(reversed(self._batches.values()))
        ids = [b.id for b in newest]
        if after_id is not None:
            start = ids.index(after_id) + 1 if after_id in ids else len(ids)
            chosen, more = newest[start:start + limit], start + limit < len(newest)
        elif before_id is not None:
            end = ids.index(before_id) if before_id in ids else 0
            chosen, more = newest[max(0, end - limit):end], end - limit > 0
        else:
            chosen, more = newest[:limit], limit < len(newest)
        data = [self.view(b) for b in chosen]
        return {"data": data, "has_more": more, "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None}

    def delete(self, batch: _Batch) -> bool:
        """Forget an ended batch; False (nothing done) while it is still processing."""
        with self._lock:
            ended = batch.status == "ended"
            if ended:
                del self._batches[batch.id]
            return ended

    def results(self, batch: _Batch) -> bytes:
        with self._lock:
            lines = [{"custom_id": cid, "result": batch.results[cid]} for cid, _ in batch.requests]
        return b"".join(json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in lines)


def _json(status: int, obj: Any) -> Response:
    return status, "application/json", json.dumps(obj).encode()


def _error(status: int, text: str) -> Response:  # the API's error shape
    return _json(status, wire.error_body(status, text))


def handle(store: BatchStore, method: str, path: str, query: str, raw: bytes) -> Response:
    """Answer one request on a batch route (``path`` without the query string)."""
    rest = path.rstrip("/")[len(wire.BATCHES_ROUTE):].strip("/")
    batch_id, _, action = rest.partition("/")
    if not batch_id:
        if method == "POST":
            try:
                return _json(200, store.view(store.create(json.loads(raw or b"null"))))
            except (json.JSONDecodeError, UnicodeDecodeError):
                return _error(400, "request body is not JSON")
            except BatchRequestError as exc:
                return _error(400, str(exc))
        if method == "GET":
            q = {k: v[-1] for k, v in parse_qs(query).items()}
            limit = q.get("limit", "20")
            if not limit.isdigit() or not 1 <= int(limit) <= 1000:
                return _error(400, "limit: Input should be an integer from 1 to 1000")
            return _json(200, store.page(q.get("after_id"), q.get("before_id"), int(limit)))
        return _error(405, f"{method} is not allowed on {wire.BATCHES_ROUTE}")
    batch = store.get(batch_id)
    if batch is None:
        return _error(404, f"message batch {batch_id!r} not found")
    if method == "GET" and not action:
        return _json(200, store.view(batch))
    if method == "POST" and action == "cancel":
        return _json(200, store.cancel(batch))
    if method == "DELETE" and not action:
        if not store.delete(batch):
            return _error(400, f"Batch {batch_id} cannot be deleted while it is still processing; cancel it "
                          "first and wait for it to end")
        return _json(200, {"id": batch_id, "type": "message_batch_deleted"})
    if method == "GET" and action == "results":
        if store.view(batch)["processing_status"] != "ended":
            return _error(400, f"Batch {batch_id} has not ended yet; its results are not available")
        return 200, "application/binary", store.results(batch)
    return _error(404, f"no route {method} {path}")
