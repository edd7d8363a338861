"""The host-side relay in front of every run: the only way out of a run's sandbox, and the record of what came back.

A run's CLI (and everything else in its sandbox) reaches the Messages endpoint only through one :class:`Relay`,
an HTTP reverse proxy on the host that serves that one run (plain HTTP in from the sandbox; plain HTTP to a
simulation on loopback, TLS out to Anthropic). For each request it:

* allows ``POST /v1/messages`` only (any query string), and ``GET /site/…`` when the endpoint is the simulation
  (its published copy of the suite's skills); every other method and path is refused with 403 — the simulation's
  answer key (``/skillbench/truth``), its description (``/skillbench/info``), the Batches API;
* requires the run's own token (:attr:`RelayPlan.token`, the only key the sandbox ever holds) and swaps it for the
  endpoint's key, which never enters the sandbox;
* drops every ``X-Skillbench-*`` header the sandbox sent and sets the run's own identity (run id, attempt) and the
  faults the harness chose, so a run can neither speak as another run, nor as the judge, nor choose its faults;
* waits, before forwarding a Messages request, for its turn in the endpoint's
  :class:`~skillbench.limiter.RateBudget` (one per endpoint in this process, shared by every run's relay and the
  judge), which it keeps in step with the ``anthropic-ratelimit-*`` and ``retry-after`` headers the CLI never
  shows: the CLI sees a slower answer, not a 429 it caused;
* asks for an uncompressed answer and passes it back as it streams (a cut upstream is a cut downstream), recording
  every exchange: status, the rate-limit headers, the seconds it waited for its turn (``paced_s``, and
  ``pace_capped`` when the schedule asked for more than the cap), and the message the endpoint answered (rebuilt
  from the stream).

The record is what the verdict is taken from (:func:`skillbench.signals.relay_disagreements`): a transcript that
disagrees with it is tampering. A sealed container reaches the relay through a Unix socket bind-mounted read-only
into it (``socat`` inside listens on the loopback address the CLI is given); the local sandbox reaches it on this
machine's loopback. The threat model is ARCHITECTURE.md's "Trust boundary".
"""

from __future__ import annotations

import hashlib
import http.client
import ipaddress
import json
import os
import re
import secrets
import shutil
import socket
import socketserver
import ssl
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from skillbench.limiter import RateBudget, Ticket, endpoint_budget
from skillbench.signals import relay_cost
from skillbench.wire import (
    ATTEMPT_HEADER,
    FAULT_HEADER,
    MESSAGES_ROUTE,
    RELAY_FLOODED,
    RUN_ID_HEADER,
    SITE_ROUTE,
    SKILLBENCH_HEADER_PREFIX,
    error_body,
    message_from_sse,
)

RELAY_SOCKET = "ep.sock"  # short: a Unix socket path must fit in 107 bytes, folder included
MAX_SOCKET_PATH = 107  # sun_path is 108 bytes on Linux, with its terminating NUL
RELAY_FOLDER_PREFIX = "skillbench-relay-"  # + the owner's PID + a random part, in the temporary folder
CONTAINER_PORT = 8742  # where a sealed container serves a real endpoint's relay (its own loopback; any free port)
TOKEN_PREFIX = "sk-skillbench-run-"
MAX_REQUEST_BYTES = 32 << 20  # the API's own request limit is 32 MB
MAX_RECORDED_BYTES = 16 << 20  # a response recorded beyond this is marked cut in the record (and still relayed)
MAX_CONNECTIONS = 16  # open sandbox connections per relay (the CLI keeps one or two alive)
MAX_IN_FLIGHT_BYTES = 64 << 20  # request bodies being read at once, all connections together
# A run's requests waiting for their turn in the shared rate budget at once: a sandbox that opens many connections
# queues behind its own requests here, and cannot fill the pass's schedule ahead of the other runs.
MAX_PACED_PER_RUN = 4
MAX_EXCHANGES = 2000  # requests per run (a week's longest runs send dozens): past it, refused and the run flagged
IDLE_TIMEOUT_S = 120.0  # a sandbox that stops sending mid-request (or never sends) loses its connection
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 600.0  # the CLI's own request timeout (X-Stainless-Timeout: 600)
# Hop-by-hop headers (RFC 9110 §7.6.1) and the ones the relay itself decides.
_NOT_FORWARDED = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te",
                  "trailer", "transfer-encoding", "upgrade", "host", "content-length", "accept-encoding",
                  "x-api-key", "authorization"}
_NOT_RETURNED = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
                 "content-length", "content-encoding"}
_RECORDED_HEADERS = ("request-id", "retry-after", "content-type")  # and every anthropic-ratelimit-* header
_CHUNK_SIZE = re.compile(rb"[0-9a-fA-F]{1,8}")  # a chunk's size line; "-1" or 1e9 digits are bad framing


class RelayError(RuntimeError):
    """The relay could not start (its socket folder, its port)."""


@dataclass(frozen=True)
class RelayPlan:
    """What one run's relay forwards, to where, with which key, as whom.

    Attributes:
        upstream: the endpoint's base URL (the simulation on loopback, or Anthropic's API).
        api_key: the endpoint's key; it stays on the host.
        token: the run's own token, the only key its sandbox holds (``ANTHROPIC_API_KEY`` there); worth nothing
            outside this relay, which accepts it for this run only.
        headers: the identity and fault headers every forwarded request carries, whatever the sandbox sent.
        site: also allow ``GET /site/…`` (the simulation's published copy of the suite's skills).
        inside: the base URL the sandbox's CLI is given (a sealed container serves the relay there on its own
            loopback; the simulation's own address, so the site URLs in its answers work unchanged).
        tunnels: ``host:443`` a sandbox may open a TLS tunnel to (``CONNECT``, its ``HTTPS_PROXY``): the suite's
            published site, with a real endpoint (the simulation serves its site itself). Nothing else.
        paced: Messages requests wait for their turn in the endpoint's rate budget (False: forwarded at once, the
            AIMD limiter alone reacting to the 429s, as a benchmark's baseline does).
    """

    upstream: str
    api_key: str = field(repr=False)
    token: str = field(repr=False)
    headers: Mapping[str, str]
    site: bool
    inside: str
    tunnels: frozenset[str] = frozenset()
    paced: bool = True

    @classmethod
    def for_run(cls, endpoint: Any, run_id: str, attempt: int, *, faults: Sequence[str] = (),
                site_base: str | None = None, paced: bool = True) -> RelayPlan:
        """The plan of one attempt of a run against ``endpoint`` (a fresh token per attempt).

        Args:
            endpoint: the pass's endpoint (its base URL, key, kind).
            run_id: the run's identity, forced on every request.
            attempt: the attempt's number, forced likewise.
            faults: faults the simulation injects into this run (ignored for a real endpoint).
            site_base: the suite's published site (``[suite].site_base``): with a real endpoint the sandbox may
                tunnel to its host on port 443, as qdrant's prompts ask the agent to read the published skill.
            paced: see the attribute.
        """
        headers = {RUN_ID_HEADER: run_id, ATTEMPT_HEADER: str(attempt)}
        if endpoint.simulated and faults:
            headers[FAULT_HEADER] = ",".join(faults)
        inside = endpoint.base_url if endpoint.simulated else f"http://127.0.0.1:{CONTAINER_PORT}"
        site = urlsplit(site_base or "")
        tunnels = frozenset({f"{site.hostname}:443"}) \
            if not endpoint.simulated and site.scheme == "https" and site.hostname else frozenset()
        return cls(upstream=endpoint.base_url.rstrip("/"), api_key=endpoint.api_key,
                   token=TOKEN_PREFIX + secrets.token_urlsafe(24), headers=headers, site=endpoint.simulated,
                   inside=inside, tunnels=tunnels, paced=paced)

    def sandbox_env(self, base_url: str) -> dict[str, str]:
        """What a sandbox's environment says of the relay: its address, the run's token, and its proxy for tunnels."""
        env = {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": self.token}
        if self.tunnels:  # curl and the CLI's tools reach the published site through the relay's CONNECT
            env.update(HTTPS_PROXY=base_url, https_proxy=base_url, NO_PROXY="127.0.0.1,localhost",
                       no_proxy="127.0.0.1,localhost")
        return env


def _route(plan: RelayPlan, method: str, path: str) -> str | None:
    """``messages``, ``site``, ``tunnel`` or None (refused) for a request line."""
    if method == "POST" and path.rstrip("/") == MESSAGES_ROUTE:
        return "messages"
    if method == "CONNECT" and path.lower() in plan.tunnels:
        return "tunnel"
    if plan.site and method == "GET" and path.startswith(SITE_ROUTE) and ".." not in path.split("/"):
        return "site"
    return None


def _token_of(headers: Any) -> str:
    bearer = str(headers.get("authorization") or "")
    return str(headers.get("x-api-key") or (bearer[7:] if bearer.lower().startswith("bearer ") else ""))


class _Quiet:
    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a sandbox that resets its connection is not the host's error: nothing reaches the host's stderr


class _Server(_Quiet, socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    block_on_close = True  # server_close() joins every handler (after stop() cut their sockets)
    relay: Relay


class _TcpServer(_Quiet, socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    block_on_close = True
    allow_reuse_address = True
    relay: Relay


def relay_folder(root: str | Path | None = None) -> Path:
    """A new private folder for a relay's socket (in ``root``, default the temporary folder)."""
    # the owner's PID in the name: a generate killed with -9 cannot stop its relays; the next one removes them
    folder = Path(tempfile.mkdtemp(prefix=f"{RELAY_FOLDER_PREFIX}{os.getpid()}-", dir=root))
    folder.chmod(0o755)  # the container's runner user must reach the socket inside
    return folder


class Relay:
    """One run's relay: serves from :meth:`start` to :meth:`stop`; :attr:`exchanges` is its record.

    Args:
        plan: what to forward, where, with which key.
        unix: listen on a Unix socket in a private folder (for a sealed container, which mounts the folder
            read-only); False: on this machine's loopback (the local sandbox), at :attr:`url`.
        root: where the socket's folder goes (default: the temporary folder).
        folder: the socket's folder, made already (:func:`relay_folder`: a warm container mounts it before its
            run has a relay); removed by :meth:`stop` like one made here.
    """

    def __init__(self, plan: RelayPlan, *, unix: bool = True, root: str | Path | None = None,
                 folder: Path | None = None):
        self.plan = plan
        self.exchanges: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._connections = 0
        self._in_flight = 0
        self.flooded = False
        self._stopping = threading.Event()
        # one schedule per endpoint for the whole process: every run's relay (a thread of the pass) shares it
        self.budget: RateBudget | None = endpoint_budget(plan.upstream, plan.api_key) if plan.paced else None
        self.pacing = threading.BoundedSemaphore(MAX_PACED_PER_RUN)
        self.folder: Path | None = None
        self.socket_path: Path | None = None
        self.url = ""
        server: socketserver.BaseServer
        if unix:
            self.folder = folder or relay_folder(root)
            self.socket_path = self.folder / RELAY_SOCKET
            if len(os.fsencode(self.socket_path)) > MAX_SOCKET_PATH:
                shutil.rmtree(self.folder, ignore_errors=True)
                raise RelayError(f"{self.socket_path}: a Unix socket path must fit in {MAX_SOCKET_PATH} bytes — "
                                 "set TMPDIR to a shorter folder (e.g. /tmp) for the run's relay")
            try:
                server = _Server(str(self.socket_path), _Handler)
                self.socket_path.chmod(0o666)  # connect() needs write permission; the runner is not root
            except OSError as exc:
                shutil.rmtree(self.folder, ignore_errors=True)
                raise RelayError(f"the run's relay could not listen on {self.socket_path} ({exc})") from exc
        else:
            server = _TcpServer(("127.0.0.1", 0), _Handler)
            self.url = f"http://127.0.0.1:{server.server_address[1]}"
        server.relay = self  # type: ignore[attr-defined]
        self._server = server
        # stop() waits for serve_forever to notice, up to one poll: after the CLI, on every run's path (10 ms)
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01},
                                        name="skillbench-relay", daemon=True)

    def start(self) -> Relay:
        self._thread.start()
        return self

    def __enter__(self) -> Relay:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def connections(self) -> int:
        """How many requests reached the relay (refused ones included)."""
        return len(self.exchanges)

    def track(self, sock: socket.socket, add: bool = True) -> bool:
        with self._lock:
            if add:
                if self._stopping.is_set():
                    return False
                self._open.add(sock)
            else:
                self._open.discard(sock)
        return True

    def connect(self, opened: bool) -> bool:
        """Count a sandbox connection in (False past :data:`MAX_CONNECTIONS`: close it at once) or out."""
        with self._lock:
            if opened and self._connections >= MAX_CONNECTIONS:
                return False
            self._connections += 1 if opened else -1
            return True

    def reserve(self, size: int) -> bool:
        """Room for a request body of ``size`` bytes among those being read (release with a negative size)."""
        with self._lock:
            if size > 0 and self._in_flight + size > MAX_IN_FLIGHT_BYTES:
                return False
            self._in_flight += size
            return True

    def record(self, exchange: dict[str, Any]) -> None:
        with self._lock:
            if len(self.exchanges) >= MAX_EXCHANGES:  # the record stays bounded; the run is flagged once
                if not self.flooded:
                    self.flooded = True
                    self.exchanges.append({"n": len(self.exchanges) + 1, "route": RELAY_FLOODED, "status": 429,
                                           "refused": f"more than {MAX_EXCHANGES} requests"})
                return
            exchange["n"] = len(self.exchanges) + 1
            self.exchanges.append(exchange)

    def stop(self) -> None:
        """Stop serving, cut every open connection (both sides), join every handler, remove the socket's folder."""
        with self._lock:
            self._stopping.set()
            open_now = list(self._open)
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(timeout=5)
        for sock in open_now:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._server.server_close()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


class _Cut(Exception):
    """The upstream answer ended early, or the sandbox went away: end this connection."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT_S  # the sandbox's socket: a request that stalls is cut, never a thread held forever
    server: Any
    _upstream: http.client.HTTPConnection | None = None
    _counted = False

    def setup(self) -> None:
        super().setup()
        self._counted = self.server.relay.connect(True)
        if not self._counted or not self.server.relay.track(self.connection):
            self.close_connection = True

    def handle(self) -> None:
        if self._counted:  # past the cap, the connection is closed without reading a byte
            super().handle()

    def finish(self) -> None:
        with suppress(OSError):
            super().finish()
        self.server.relay.track(self.connection, add=False)
        if self._counted:
            self.server.relay.connect(False)
        self._close_upstream()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return  # the record is the log

    def address_string(self) -> str:
        return "sandbox"

    # every method goes through one gate; only the routes of _route pass it
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._relay()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_CONNECT = do_GET  # noqa: N815

    # -- the gate ------------------------------------------------------------------------------------------------
    def _relay(self) -> None:
        relay: Relay = self.server.relay
        plan = relay.plan
        parts = urlsplit(self.path)
        target = self.path if self.command == "CONNECT" else parts.path
        route = _route(plan, self.command, target)
        exchange: dict[str, Any] = {"started": time.time(), "method": self.command, "path": target[:512],
                                    "route": route or "refused"}
        if route == "tunnel":
            try:
                self._tunnel(exchange)
            finally:
                exchange["ended"] = time.time()
                relay.record(exchange)
            return
        if relay.flooded:
            self.close_connection = True
            relay.record(exchange)
            return
        # refused before a byte of the body is read: a refused request never costs the host memory
        if route is None:
            exchange.update(status=403, refused="route not allowed")
            self.close_connection = True
            self._deny(403, exchange, f"{self.command} {parts.path}: the relay allows only POST {MESSAGES_ROUTE}"
                       + (f" and GET {SITE_ROUTE}…" if plan.site else ""))
            return
        if route == "messages" and not secrets.compare_digest(_token_of(self.headers).encode(), plan.token.encode()):
            exchange.update(status=401, refused="not this run's token")
            self.close_connection = True
            self._deny(401, exchange, "invalid x-api-key: not this run's token")
            return
        body = self._read_body()
        if body is None:
            exchange.update(status=413, refused="request body too large or badly framed")
            self.close_connection = True
            self._deny(413, exchange, f"the relay accepts request bodies up to {MAX_REQUEST_BYTES} bytes")
            return
        if route == "messages" and (why := _not_allowed(body)):
            exchange.update(status=403, refused=why)
            self._deny(403, exchange, why)
            return
        exchange["request"] = _request_summary(body, self.headers) if route == "messages" else {}
        try:
            self._forward(route, parts, body, exchange)
        finally:
            exchange["ended"] = time.time()
            relay.record(exchange)

    def _tunnel(self, exchange: dict[str, Any]) -> None:
        """``CONNECT host:443`` to an allowed host: bytes both ways (TLS end to end), counted, until one side ends."""
        relay: Relay = self.server.relay
        host, _, port = self.path.rpartition(":")
        try:
            address = _public_address(host, int(port))
            upstream = socket.create_connection((address, int(port)), timeout=CONNECT_TIMEOUT_S)
        except (OSError, ValueError) as exc:
            exchange.update(status=502, error=f"upstream: {type(exc).__name__}: {exc}"[:300])
            self._deny_after_record(502, f"the relay could not reach {self.path}")
            return
        upstream.settimeout(None)
        if not relay.track(upstream):
            upstream.close()
            return
        self.send_response(200, "Connection Established")
        self.end_headers()
        exchange["status"] = 200
        counts = {"up": 0, "down": 0}
        back = threading.Thread(target=_pump, args=(upstream, self.connection, counts, "down"), daemon=True,
                                name="skillbench-relay-tunnel")
        back.start()
        _pump(self.connection, upstream, counts, "up")
        back.join()
        relay.track(upstream, add=False)
        upstream.close()
        exchange.update(bytes=counts["down"], sent=counts["up"], complete=True)
        self.close_connection = True

    def _deny(self, status: int, exchange: dict[str, Any], text: str) -> None:
        exchange["ended"] = time.time()
        self.server.relay.record(exchange)
        self._deny_after_record(status, text)

    def _read_body(self) -> bytes | None:
        """The request's body (Content-Length or chunked), or None when it is too large or badly framed.

        Every body being read counts against one budget shared by the relay's connections, so a sandbox holding
        many bodies one byte short cannot make the host hold them all.
        """
        relay: Relay = self.server.relay
        if "chunked" in str(self.headers.get("Transfer-Encoding") or "").lower():
            out = bytearray()
            try:
                while True:
                    line = self.rfile.readline(1024).split(b";")[0].strip()
                    if not _CHUNK_SIZE.fullmatch(line):
                        return None
                    size = int(line, 16)
                    if size == 0:
                        while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                            pass
                        return bytes(out)
                    if len(out) + size > MAX_REQUEST_BYTES or not relay.reserve(size):
                        return None
                    try:
                        out += self.rfile.read(size)
                    finally:
                        relay.reserve(-size)
                    self.rfile.readline(16)
            except OSError:
                return None
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return None
        if length < 0 or length > MAX_REQUEST_BYTES:
            return None
        if not length:
            return b""
        if not relay.reserve(length):
            return None
        try:
            data = self.rfile.read(length)
        except OSError:
            return None
        finally:
            relay.reserve(-length)
        return data if len(data) == length else None

    # -- upstream -----------------------------------------------------------------------------------------------
    def _connection(self) -> http.client.HTTPConnection:
        if self._upstream is None:
            up = urlsplit(self.server.relay.plan.upstream)
            if up.scheme == "https":
                self._upstream = http.client.HTTPSConnection(up.hostname or "", up.port or 443,
                                                             timeout=CONNECT_TIMEOUT_S,
                                                             context=ssl.create_default_context())
            else:
                self._upstream = http.client.HTTPConnection(up.hostname or "", up.port or 80,
                                                            timeout=CONNECT_TIMEOUT_S)
        return self._upstream

    def _close_upstream(self) -> None:
        if self._upstream is not None:
            with suppress(OSError):
                self._upstream.close()
            self._upstream = None

    def _forward(self, route: str, parts: Any, body: bytes, exchange: dict[str, Any]) -> None:
        relay: Relay = self.server.relay
        plan = relay.plan
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in _NOT_FORWARDED and not k.lower().startswith(SKILLBENCH_HEADER_PREFIX)}
        headers.update(plan.headers)
        headers["Accept-Encoding"] = "identity"  # the relay reads what it records
        if route == "messages":
            headers["x-api-key"] = plan.api_key
        prefix = urlsplit(plan.upstream).path.rstrip("/")
        target = prefix + parts.path + (f"?{parts.query}" if parts.query else "")
        ticket = self._turn(body, exchange) if route == "messages" else None
        try:
            self._send(route, target, body, headers, exchange, ticket)
        finally:
            if ticket is not None and relay.budget is not None:
                msg = exchange.get("message")
                usage = msg.get("usage") if isinstance(msg, dict) else None
                relay.budget.finish(ticket, usage if isinstance(usage, dict) else None)

    def _turn(self, body: bytes, exchange: dict[str, Any]) -> Ticket | None:
        """Wait for this request's turn in the endpoint's schedule (recorded as ``paced_s``); None when unpaced."""
        relay: Relay = self.server.relay
        if relay.budget is None:
            return None
        summary = exchange.get("request") or {}
        model = str(summary.get("model") or "")
        tokens = relay.budget.estimate(model, len(body), summary.get("max_tokens"))
        t0 = time.monotonic()
        with relay.pacing:
            ticket = relay.budget.acquire(model, tokens, stop=relay._stopping)
        waited = time.monotonic() - t0  # the turn, and the run's own earlier requests ahead of it
        if waited >= 0.001:
            exchange["paced_s"] = round(waited, 3)
        if ticket.capped:
            exchange["pace_capped"] = True
        return ticket

    def _send(self, route: str, target: str, body: bytes, headers: dict[str, str], exchange: dict[str, Any],
              ticket: Ticket | None) -> None:
        relay: Relay = self.server.relay
        try:
            if relay._stopping.is_set():
                raise _Cut  # the relay stopped while this request waited its turn: it is not sent
            conn = self._connection()
            conn.request(self.command, target, body=body if body or self.command == "POST" else None,
                         headers=headers)
            if conn.sock is not None:
                conn.sock.settimeout(READ_TIMEOUT_S)
                if conn.sock not in relay._open and not relay.track(conn.sock):
                    raise _Cut
            response = conn.getresponse()
        except (OSError, http.client.HTTPException, _Cut) as exc:
            self._close_upstream()
            exchange.update(status=502, error=f"upstream: {type(exc).__name__}: {exc}"[:300])
            self._deny_after_record(502, "the relay could not reach the endpoint")
            return
        exchange["status"] = response.status
        exchange["response_headers"] = {k.lower(): v for k, v in response.getheaders() if _recorded(k)}
        if ticket is not None and relay.budget is not None:  # as soon as the headers are in, before the body
            relay.budget.observe(ticket, response.status, exchange["response_headers"])
        kept, complete = self._pass_back(response)
        exchange["complete"] = complete
        exchange["bytes"] = kept["bytes"]
        if route == "site":
            exchange["sha256"] = kept["sha256"]
        else:
            exchange.update(_response_record(response.status, kept["data"], kept["cut"],
                                             str(response.getheader("content-type") or "")))
        if not complete or response.will_close:
            self._close_upstream()
        else:  # read1 never closes a Content-Length answer read to its end: the next request would find it open
            response.close()

    def _deny_after_record(self, status: int, text: str) -> None:
        """Answer an error in the API's shape (the exchange is recorded by the caller)."""
        data = json.dumps(error_body(status, text)).encode()
        with suppress(OSError):
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

    def _pass_back(self, response: http.client.HTTPResponse) -> tuple[dict[str, Any], bool]:
        """Stream the answer back as it comes; a cut upstream cuts this connection too."""
        length = response.getheader("content-length")
        chunked = length is None
        self.send_response_only(response.status, response.reason)
        for key, value in response.getheaders():
            if key.lower() not in _NOT_RETURNED:
                self.send_header(key, value)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(length))
        self.end_headers()
        kept = bytearray()
        digest = hashlib.sha256()
        total, cut, complete = 0, False, True
        try:
            while True:
                try:
                    data = response.read1(65536)
                except (http.client.IncompleteRead, OSError, ValueError):
                    complete = False
                    break
                if not data:
                    break
                total += len(data)
                digest.update(data)
                if len(kept) + len(data) <= MAX_RECORDED_BYTES:
                    kept += data
                else:
                    cut = True
                if chunked:
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                else:
                    self.wfile.write(data)
            if length is not None and total < int(length):
                complete = False
            if complete and chunked:
                self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the sandbox went away mid-answer
            complete = False
        if not complete:
            self.close_connection = True
            with suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
        return {"data": bytes(kept), "bytes": total, "sha256": digest.hexdigest(), "cut": cut}, complete


def _public_address(host: str, port: int) -> str:
    """The address to tunnel to: ``host`` resolved, and refused unless every address is public.

    The allowed host comes from the suite's ``site_base``, which a pull request can change: resolved here, it may
    name no loopback, private, link-local or reserved address (this machine, the cluster around it), and the
    tunnel connects to the address checked, so a second lookup cannot answer otherwise.

    Raises:
        ValueError: an address that is not public.
    """
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses = [info[4][0] for info in infos]
    for address in addresses:
        if not ipaddress.ip_address(address.split("%")[0]).is_global:
            raise ValueError(f"{host} resolves to {address}, not a public address")
    if not addresses:
        raise ValueError(f"{host} does not resolve")
    return addresses[0]


def _pump(src: socket.socket, dst: socket.socket, counts: dict[str, int], key: str) -> None:
    """Copy ``src`` to ``dst`` until end of stream, then pass the end on (half-close)."""
    try:
        while data := src.recv(65536):
            dst.sendall(data)
            counts[key] += len(data)
    except OSError:
        pass
    finally:
        with suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


def _not_allowed(body: bytes) -> str:
    """Why a Messages request may not pass ("" when it may): the run's token spends the key, so no request may
    reach past the model — no MCP servers, no server tool but web search (the CLI's WebSearch)."""
    try:
        obj = json.loads(body or b"null")
    except ValueError:
        return ""  # the endpoint answers 400 itself
    if not isinstance(obj, dict):
        return ""
    if obj.get("mcp_servers"):
        return "mcp_servers: not allowed through a run's relay"
    for tool in obj.get("tools") or []:
        kind = str(tool.get("type") or "custom") if isinstance(tool, dict) else "custom"
        if kind != "custom" and not kind.startswith("web_search_"):
            return f"tools: the server tool {kind!r} is not allowed through a run's relay"
    return ""


def _recorded(header: str) -> bool:
    return header.lower() in _RECORDED_HEADERS or header.lower().startswith("anthropic-ratelimit")


def _request_summary(body: bytes, headers: Any) -> dict[str, Any]:
    """What the record keeps of a request: its model, whether it streamed, its size and session (never the text)."""
    try:
        obj = json.loads(body or b"null")
    except ValueError:
        obj = None
    obj = obj if isinstance(obj, dict) else {}
    max_tokens = obj.get("max_tokens")
    return {"model": str(obj.get("model") or ""), "stream": bool(obj.get("stream")), "bytes": len(body),
            "max_tokens": max_tokens if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) else None,
            "messages": len(obj["messages"]) if isinstance(obj.get("messages"), list) else None,
            "session": str(headers.get("X-Claude-Code-Session-Id") or "")}


def _response_record(status: int, data: bytes, cut: bool, content_type: str) -> dict[str, Any]:
    """The message (or the error) a Messages response carried."""
    if cut:
        return {"message": None, "recorded": "cut"}
    if "event-stream" in content_type:
        msg = message_from_sse(data)
        return {"message": msg}
    try:
        obj = json.loads(data or b"null")
    except ValueError:
        return {"message": None, "error": "not JSON"}
    if status == 200 and isinstance(obj, dict) and obj.get("type") == "message":
        return {"message": {**obj, "complete": True}}
    return {"message": None, "error": obj.get("error") if isinstance(obj, dict) else None}


def remove_stale_relays(root: str | Path | None = None) -> int:
    """Remove relay folders whose owner process is gone (a generate killed with -9); returns how many.

    A folder whose owner still runs is never touched, so concurrent passes keep their relays.
    """
    removed = 0
    for folder in Path(root or tempfile.gettempdir()).glob(f"{RELAY_FOLDER_PREFIX}*"):
        pid = folder.name.removeprefix(RELAY_FOLDER_PREFIX).split("-", 1)[0]
        if not pid.isdigit() or not folder.is_dir():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # the owner is alive
        except ProcessLookupError:
            pass
        except PermissionError:  # alive, and another user's
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    return removed


def write_relay_record(path: Path, exchanges: Sequence[Mapping[str, Any]] | None) -> None:
    """Write a run's record (``relay.jsonl``): one exchange per line, in the order the relay finished them."""
    if exchanges is None:
        return
    path.write_text("".join(json.dumps(ex, ensure_ascii=False, separators=(",", ":")) + "\n" for ex in exchanges),
                    encoding="utf-8")


def relay_summary(exchanges: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts of a run's record for its metadata: requests, refused ones, messages, and the usage they report."""
    usage_keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    totals = dict.fromkeys(usage_keys, 0)
    messages = 0
    for ex in exchanges:
        msg = ex.get("message")
        if isinstance(msg, dict):
            messages += 1
            for key in usage_keys:
                value = (msg.get("usage") or {}).get(key)
                totals[key] += int(value) if isinstance(value, int) and not isinstance(value, bool) else 0
    return {"requests": len(exchanges), "refused": sum(1 for ex in exchanges if ex.get("refused")),
            "messages": messages, "usage": totals,
            "list_cost_usd": round(relay_cost(exchanges), 6)}
