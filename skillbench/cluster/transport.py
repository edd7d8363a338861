"""The judge's calls on a Dask cluster: an httpx transport whose every request is one Dask task.

:class:`DaskTransport` is handed to the ``anthropic`` SDK (``anthropic.Anthropic(http_client=httpx.Client(
transport=…))``, see :class:`skillbench.judge.client.JudgeClient`). ``handle_request`` ships the request's method,
URL, headers, body and timeout to :func:`skillbench.cluster.worker.send_http` on a worker, which sends it with a
plain httpx client and returns the status, the headers and the body as received; the SDK parses the answer here,
so the judge client's retries, its limiter and the retry-once rule work unchanged, and Message Batches (the same
SDK client) go through it too. A worker lost under a request, or a connection error there, is an
``httpx.ConnectError`` and a timeout there an ``httpx.ReadTimeout``: the judge client retries them as its own.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from skillbench.cluster.sandbox import lost_worker_errors
from skillbench.cluster.worker import send_http
from skillbench.generation.cli_call import ATTEMPT_HEADER, RUN_ID_HEADER


class DaskTransport(httpx.BaseTransport):
    """An httpx transport that sends each request from a worker of ``client`` (a ``distributed.Client``)."""

    def __init__(self, client: Any):
        self.client = client

    def _key(self, request: httpx.Request) -> str:
        """The Dask key: the judge's opaque run id and attempt when the call sends them, else the path; unique."""
        run_id, attempt = request.headers.get(RUN_ID_HEADER, ""), request.headers.get(ATTEMPT_HEADER, "")
        name = f"{run_id}-attempt{attempt}" if run_id else request.url.path.strip("/").replace("/", "-")
        return f"skillbench-http-{name}-{uuid.uuid4().hex[:12]}"

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        timeout = request.extensions.get("timeout")
        future = self.client.submit(send_http, request.method, str(request.url), list(request.headers.multi_items()),
                                    body, dict(timeout) if timeout else None, key=self._key(request), pure=False)
        try:
            reply = future.result()
        except lost_worker_errors() as exc:
            raise httpx.ConnectError(f"the Dask worker sending this request was lost ({type(exc).__name__})",
                                     request=request) from exc
        finally:
            future.release()
        if reply.error == "timeout":
            raise httpx.ReadTimeout(reply.message, request=request)
        if reply.error:
            raise httpx.ConnectError(reply.message, request=request)
        # the body as the endpoint sent it (still content-encoded): httpx decodes it as it would its own
        return httpx.Response(reply.status, headers=reply.headers, stream=httpx.ByteStream(reply.body),
                              request=request)
