"""The judge's calls on a Dask cluster: an HTTP transport whose every request is one Dask task.

The ``anthropic`` SDK sends through ``httpx2`` (its fork of httpx, same API; it refuses ``httpx`` objects), so
:class:`DaskTransport` is an ``httpx2.BaseTransport``, handed to the SDK's client in
:class:`skillbench.judge._client.JudgeClient`. ``handle_request`` ships the request's method, URL, headers, body
and timeout to :func:`skillbench.cluster._worker.send_http` on a worker, which sends it with a plain ``httpx2``
client and returns the status, the headers and the body as received; the SDK parses the answer here, so the judge
client's retries, its limiter and the retry-once rule work unchanged, and Message Batches (the same SDK client) go
through it too. A worker lost under a request, or a connection error there, is an ``httpx2.ConnectError`` and a
timeout there an ``httpx2.ReadTimeout``: the judge client retries them as its own.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx2

from skillbench.cluster._sandbox import lost_worker_errors
from skillbench.cluster._worker import send_http
from skillbench.wire import ATTEMPT_HEADER, RUN_ID_HEADER


class DaskTransport(httpx2.BaseTransport):
    """An httpx2 transport that sends each request from a worker of ``client`` (a ``distributed.Client``)."""

    def __init__(self, client: Any):
        self.client = client

    def _key(self, request: httpx2.Request) -> str:
        """The Dask key: the judge's opaque run id and attempt when the call sends them, else the path; unique."""
        run_id, attempt = request.headers.get(RUN_ID_HEADER, ""), request.headers.get(ATTEMPT_HEADER, "")
        name = f"{run_id}-attempt{attempt}" if run_id else request.url.path.strip("/").replace("/", "-")
        return f"skillbench-http-{name}-{uuid.uuid4().hex[:12]}"

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        body = request.read()
        timeout = request.extensions.get("timeout")
        future = self.client.submit(send_http, request.method, str(request.url), list(request.headers.multi_items()),
                                    body, dict(timeout) if timeout else None, key=self._key(request), pure=False)
        try:
            reply = future.result()
        except lost_worker_errors() as exc:
            raise httpx2.ConnectError(f"the Dask worker sending this request was lost ({type(exc).__name__})",
                                     request=request) from exc
        finally:
            future.release()
        if reply.error == "timeout":
            raise httpx2.ReadTimeout(reply.message, request=request)
        if reply.error:
            raise httpx2.ConnectError(reply.message, request=request)
        # the body as the endpoint sent it (still content-encoded): httpx2 decodes it as it would its own
        return httpx2.Response(reply.status, headers=reply.headers, stream=httpx2.ByteStream(reply.body),
                              request=request)
