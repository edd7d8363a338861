"""The simulated endpoint's HTTP handler: routes a request to :class:`skillbench.sim.server.SimServer`.

Every route of the endpoint (see :mod:`skillbench.sim.server`) is parsed and answered here: the Messages route
(whole or streamed, with injected faults cut where their spec says), the batches routes, the published site, the
info and truth routes. What to answer is the server object's (``self.server.sim``); this module only speaks HTTP.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from skillbench.generation.cli_call import ATTEMPT_HEADER, ROLE_HEADER, RUN_ID_HEADER, SAMPLE_HEADER
from skillbench.judge.protocol import PREFERENCE_TOOL, VERDICTS_TOOL, ProtocolError
from skillbench.sim import batches, roles, usage, wire
from skillbench.sim.profiles import FaultSpec
from skillbench.sim.ratelimit import retry_after_header
from skillbench.sim.truth import TRUTH_ROUTE, truth_csv
from skillbench.sim.wire import SIM_API_KEY

if TYPE_CHECKING:
    from skillbench.sim.server import _HTTPServer

SESSION_HEADER = "X-Claude-Code-Session-Id"
_JUDGE_TOOLS = {VERDICTS_TOOL, PREFERENCE_TOOL}


def request_role(lower_headers: Mapping[str, str], body: Mapping[str, Any]) -> str:
    """``judge`` for ``X-Skillbench-Role: judge`` or a forced judge tool, a skill-quality role for its forced tool
    (:mod:`skillbench.sim.roles`), else ``agent``."""
    choice = body.get("tool_choice")
    forced = choice.get("name") if isinstance(choice, Mapping) else None
    if lower_headers.get(ROLE_HEADER.lower()) == "judge" or forced in _JUDGE_TOOLS:
        return "judge"
    return roles.forced_role(body) or "agent"


class _Abort(Exception):
    """The response was cut on purpose (a fault) or the client went away."""


def _int(value: str | None, default: int) -> int:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return default


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes; do not wait for ACKs
    server: _HTTPServer
    rate_model: str | None = None  # the model whose anthropic-ratelimit-* headers this response carries

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return  # one line per request is written by _log instead

    def _log(self, text: str) -> None:
        if self.server.sim.log is not None:
            self.server.sim.log(text)

    # -- plain responses --------------------------------------------------------------------------
    def _send_bytes(self, status: int, data: bytes, content_type: str,
                    extra: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_sim")
        for k, v in {**self._rate_headers(), **(extra or {})}.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _rate_headers(self) -> dict[str, str]:
        limiter = self.server.sim.rate_limits
        return limiter.headers(self.rate_model) if limiter is not None and self.rate_model is not None else {}

    def _batches(self, method: str, raw: bytes = b"") -> None:
        parts = urlsplit(self.path)
        status, content_type, data = batches.handle(self.server.sim.batches, method, parts.path, parts.query, raw)
        self._send_bytes(status, data, content_type)
        self._log(f"{method} {parts.path} -> {status}")

    def _send_json(self, status: int, obj: Any, extra: Mapping[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(obj).encode(), "application/json", extra)

    def _error(self, status: int, text: str, extra: Mapping[str, str] | None = None) -> None:
        self._send_json(status, wire.error_body(status, text), extra)

    # -- GET --------------------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        sim = self.server.sim
        path = urlsplit(self.path).path
        self.rate_model = None
        if path.startswith(batches.ROUTE):
            self._batches("GET")
            return
        if path == "/skillbench/info":
            self._send_json(200, sim.info())
        elif path == TRUTH_ROUTE:
            run_ids = parse_qs(urlsplit(self.path).query).get("run_id", [])
            self._send_bytes(200, truth_csv(sim.truth.rows_for(run_ids)).encode(), "text/csv; charset=utf-8")
        elif path.startswith("/site/"):
            self._site(unquote(path[len("/site/"):]))
        elif path in ("/", ""):
            self._send_bytes(200, b"skillbench simulated Messages endpoint\n", "text/plain; charset=utf-8")
        else:
            self._error(404, f"no route {path}")
        self._log(f"GET {path}")

    def _site(self, rel: str) -> None:
        suite = self.server.sim.suite
        if suite is None:
            self._send_bytes(404, b"no suite loaded\n", "text/plain; charset=utf-8")
            return
        # <family>/<sub…>: a family's own folder (a dotnet tree keeps each skill under plugins/<p>/skills/).
        family, _, sub = rel.partition("/")
        known = family in suite.families or family in suite.family_dirs  # never a path outside the skills
        root = suite.family_dir(family).resolve() if known else suite.skills_root.resolve()
        target = (root / sub).resolve() if known else root
        if not known or not target.is_relative_to(root) or not target.is_file():
            self._send_bytes(404, b"not found\n", "text/plain; charset=utf-8")
            return
        self._send_bytes(200, target.read_bytes(), "text/markdown; charset=utf-8")

    # -- POST -------------------------------------------------------------------------------------
    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        t0 = time.perf_counter()
        sim = self.server.sim
        path = urlsplit(self.path).path
        length = _int(self.headers.get("Content-Length"), 0)
        raw = self.rfile.read(length) if length > 0 else b""
        self.rate_model = None
        if path.startswith(batches.ROUTE):
            self._batches("POST", raw)
            return
        if path.rstrip("/") != "/v1/messages":
            self._error(404, f"no route {path}")
            return
        try:
            body = json.loads(raw or b"null")
        except (json.JSONDecodeError, UnicodeDecodeError):
            self._error(400, "request body is not JSON")
            return
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._error(400, "messages: field required")
            return
        headers = {k: v for k, v in self.headers.items()}
        h = {k.lower(): v for k, v in headers.items()}
        model = str(body.get("model") or "")
        role = request_role(h, body)
        self.rate_model = model if sim.rate_limits is not None else None
        run_id = h.get(RUN_ID_HEADER.lower()) or h.get(SESSION_HEADER.lower()) or "anonymous"
        attempt = _int(h.get(ATTEMPT_HEADER.lower()), 1)
        counter = sim.next_count("request", run_id, attempt)
        chosen = sim.faults.choose(model=model, role=role, headers=headers, run_id=run_id, attempt=attempt,
                                   counter=counter)
        fault = chosen[1] if chosen else None
        record = {"run_id": h.get(RUN_ID_HEADER.lower()), "attempt": h.get(ATTEMPT_HEADER.lower()),
                  "role": role, "sample": h.get(SAMPLE_HEADER.lower()), "model": model, "counter": counter,
                  "stream": bool(body.get("stream")), "fault": fault.kind if fault else None,
                  "session": h.get(SESSION_HEADER.lower()), "t": time.time(),
                  # whether the caller sent the simulation's key (never the key itself: no secret is kept)
                  "sim_key": SIM_API_KEY in (h.get("x-api-key"), h.get("authorization", "").removeprefix("Bearer "))}
        sim.received.append(record)
        self._log(f"POST {path} run={run_id} attempt={attempt} n={counter} model={model}"
                  + (f" fault={fault.kind}" if fault else ""))
        try:
            if sim.rate_limits is not None:
                wait = sim.rate_limits.admit(model)
                if wait is not None:  # the API's gate comes before anything the request would do
                    record["rate_limited"] = True
                    self._error(429, "simulated rate limit: this model's per-minute bucket is empty",
                                {"retry-after": retry_after_header(wait)})
                    return
            if fault is not None and self._fault_before(fault, body):
                return
            try:
                msg, reply = sim.answer(body, headers, len(raw))
            except ProtocolError as exc:
                self._error(400, f"judge request does not follow the protocol: {exc}")
                return
            except usage.CacheRequestError as exc:
                self._error(400, str(exc))
                return
            if sim.rate_limits is not None:
                use = msg["usage"]
                sim.rate_limits.charge(model, use["input_tokens"] + use["cache_creation_input_tokens"],
                                       use["output_tokens"])
            def delivered() -> None:
                # Called before the last bytes go out: a client that has the answer also finds its truth.
                sim.truth.record(reply.truth)

            if body.get("stream"):
                self._stream(msg, fault, delivered)
            else:
                self._whole(msg, fault, delivered)
            sim.timings.append((run_id, time.perf_counter() - t0))
        except (_Abort, BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def do_DELETE(self) -> None:  # noqa: N802 - http.server's naming
        self.rate_model = None
        if urlsplit(self.path).path.startswith(batches.ROUTE):
            self._batches("DELETE")
        else:
            self._error(404, f"no route {urlsplit(self.path).path}")

    # -- faults -----------------------------------------------------------------------------------
    def _fault_before(self, fault: FaultSpec, body: dict[str, Any]) -> bool:
        """Apply a fault that acts before the response; True when the request is fully handled."""
        sim = self.server.sim
        if fault.kind == "rate_limit":
            self._error(429, "simulated rate limit", {"retry-after": f"{fault.retry_after:g}"})
        elif fault.kind == "server_error":
            self._error(500, "simulated server error")
        elif fault.kind == "overloaded":
            self._error(529, "simulated overload")
        elif fault.kind == "slow_first_byte":
            if sim.stopping.wait(fault.delay_s):
                raise _Abort
            return False
        elif fault.kind == "stall" and not body.get("stream"):
            sim.stopping.wait(fault.stall_s)  # no headers at all: a hang before the response
            raise _Abort
        else:
            return False
        return True

    def _whole(self, msg: dict[str, Any], fault: FaultSpec | None, delivered: Callable[[], None]) -> None:
        data = json.dumps(msg).encode()
        if fault is not None and fault.kind == "malformed":
            self._send_bytes(200, data[: len(data) // 2] + b"<<not json", "application/json")
            return
        if fault is not None and fault.kind == "truncated":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self._cut()
        delivered()
        self._send_bytes(200, data, "application/json")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _cut(self) -> None:
        """Close the connection mid-response, without the terminating chunk."""
        self.wfile.flush()
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        raise _Abort

    def _stream(self, msg: dict[str, Any], fault: FaultSpec | None, delivered: Callable[[], None]) -> None:
        sim = self.server.sim
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", "req_sim")
        for k, v in self._rate_headers().items():
            self.send_header(k, v)
        self.end_headers()
        events = list(wire.sse_events(msg))
        kind = fault.kind if fault is not None else None
        for n, event in enumerate(events):
            if n == 1 and kind == "malformed":
                self._chunk(b'event: content_block_start\ndata: {"type":"content_block_start","index":0,\n\n')
            if n == 1 and kind == "stream_error":
                self._chunk(wire.sse("error", wire.error_body(529, "simulated overload mid-stream")))
                break
            if n == 3 and kind == "stall":
                sim.stopping.wait(fault.stall_s)  # type: ignore[union-attr]
                self._cut()
            if n == len(events) // 2 and kind == "truncated":
                self._cut()
            if n == len(events) - 1:
                delivered()
            self._chunk(event)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
