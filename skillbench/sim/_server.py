"""The simulated Anthropic Messages endpoint: a threaded HTTP server on loopback, and the handler of its routes.

Routes:
    ``POST /v1/messages`` (any query string): the simulated agent models (the CLI's requests, including
        the WebSearch server-tool sub-request) and the simulated judge (``X-Skillbench-Role: judge``, or a
        forced ``record_verdicts``/``record_preference`` tool), streaming or not.
    ``GET /site/<path>``: the suite's skills tree, as published at ``<site_base>/<path>``.
    ``GET /skillbench/info``: ``{"kind": "simulated", "site_base": …, …}`` for a harness that was given
        only the URL.
    ``GET /skillbench/truth?run_id=…&run_id=…``: those runs' truth rows as CSV (read-only; the endpoint keeps
        truth itself and writes no file a request names).
    ``/v1/messages/batches…``: the Message Batches API (:mod:`skillbench.sim._batches`), answered by the same
        code path as ``POST /v1/messages``; batches live in this object's memory for the endpoint's lifetime.

The usage honours ``cache_control`` for the profile's ``cache.roles`` (:class:`skillbench.sim._usage.PromptCache`),
and the profile's ``rate_limit`` section (off when absent) puts token buckets and the ``anthropic-ratelimit-*``
headers on ``POST /v1/messages`` (:mod:`skillbench.sim._ratelimit`); ``batches.rate_limit`` puts one requests
bucket and its headers on every batch route.

Request headers it reads: ``X-Skillbench-Run-Id`` and ``X-Skillbench-Attempt`` (draw keys; without them the
CLI's ``X-Claude-Code-Session-Id`` stands in), ``X-Skillbench-Role``, ``X-Skillbench-Sample``,
and ``X-Skillbench-Fault`` (inject faults into this request); the names and routes are :mod:`skillbench.wire`'s.

What to answer is the server object's (:class:`SimServer`); the handler (``_Handler``) only speaks HTTP: it parses
each route, cuts a response where an injected fault says, and hands the Messages route to :meth:`SimServer.answer`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from skillbench import wire
from skillbench.judge import PREFERENCE_TOOL, VERDICTS_TOOL, ProtocolError
from skillbench.ledgers import truth_csv
from skillbench.sim import _batches as batches, _draws as draws, _roles as roles, _usage as usage
from skillbench.sim._agent import Agent, Reply
from skillbench.sim._conversation import parse_request
from skillbench.sim._faults import FaultPlan
from skillbench.sim._judge import SimJudge
from skillbench.sim._profiles import FaultSpec, Profiles, load_profiles, parse_fault_option
from skillbench.sim._ratelimit import BATCHES_KEY, RateLimiter, retry_after_header
from skillbench.sim._truth import TruthSink
from skillbench.suite import Suite
from skillbench.wire import (
    ATTEMPT_HEADER,
    BATCHES_ROUTE,
    INFO_ROUTE,
    MESSAGES_ROUTE,
    ROLE_HEADER,
    RUN_ID_HEADER,
    SAMPLE_HEADER,
    SESSION_HEADER,
    SIM_API_KEY,
    SITE_ROUTE,
    TRUTH_ROUTE,
)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    sim: SimServer


@dataclass(frozen=True)
class Serving:
    """Where and how the endpoint listens — what it answers is the rest of :class:`SimServer`'s arguments.

    Attributes:
        address: ``(host, port)`` to bind; keep the host on loopback; port 0 picks a free port.
        site_base: the published-site URL the simulated models fetch (default: this server's ``/site``).
        api_key: the key every Messages, Batches and truth request must carry (``x-api-key`` or a bearer token),
            as the real API requires its own, so a canary key is meaningful (a sandbox that never holds it cannot
            use it).
        log: called with one line per request (None: silent).
    """

    address: tuple[str, int] = ("127.0.0.1", 0)
    site_base: str | None = None
    api_key: str = field(default=SIM_API_KEY, repr=False)
    log: Callable[[str], None] | None = None


class SimServer:
    """The endpoint: bind in the constructor, serve after :meth:`start`, stop with :meth:`stop`.

    Args:
        suite: a suite folder or a loaded :class:`~skillbench.suite.Suite`; None answers generically.
        seed: seed of every behaviour, judge and fault draw.
        profiles: a profile file, mapping or :class:`Profiles`; None is the shipped file.
        truth: also write every truth row to this file (the operator's choice; None: keep truth in memory only).
        faults: more faults (``FaultSpec``, dicts, or ``"kind=rate"`` strings) on top of the profile file's.
        serving: where and how it listens (:class:`Serving`: address, site, key, log).
    """

    def __init__(
        self,
        suite: str | Path | Suite | None = None,
        *,
        seed: int = 0,
        profiles: str | Path | Mapping[str, Any] | Profiles | None = None,
        truth: str | Path | None = None,
        faults: Sequence[FaultSpec | Mapping[str, Any] | str] | None = None,
        serving: Serving = Serving(),  # noqa: B008 - frozen, shared safely
    ):
        if suite is not None and not isinstance(suite, Suite):
            from skillbench.suite import SuiteOverrides, load_families

            # Lenient on missing workspace files: a suite generation refuses is never run, and one it runs
            # with --skip-missing is answered as run (the same trimmed prompts); a family with an invalid spec is
            # never run either, so the rest is served as the week runs it.
            suite = load_families(suite, SuiteOverrides(skip_missing=True))
        self.suite: Suite | None = suite
        self.seed = seed
        self.api_key = serving.api_key
        self.profiles = load_profiles(profiles)
        extra = [f if isinstance(f, FaultSpec) else parse_fault_option(f) if isinstance(f, str)
                 else FaultSpec.model_validate(f) for f in faults or []]
        self.httpd = _HTTPServer(serving.address, _Handler)
        self.httpd.sim = self
        self.host, self.port = self.httpd.server_address[:2]
        self.base_url = f"http://{self.host}:{self.port}"
        self.site_base = (serving.site_base or f"{self.base_url}/site").rstrip("/")
        self.agent = Agent(self.suite, seed, self.site_base, versions=self.profiles.skill_versions)
        self.judge = SimJudge(seed)
        self.faults = FaultPlan(seed, [*self.profiles.faults, *extra])
        self.truth = TruthSink(truth)
        self.log = serving.log
        self.stopping = threading.Event()
        self.received: deque[dict[str, Any]] = deque(maxlen=100_000)  # one record per request, for tests
        self.timings: deque[tuple[str, float]] = deque(maxlen=100_000)  # (run id, server seconds) per answer
        self._counters: Counter[tuple[Any, ...]] = Counter()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.cache = usage.PromptCache(self.profiles.cache)
        self.rate_limits = RateLimiter(self.profiles.rate_limit) if self.profiles.rate_limit else None
        batch_limit = self.profiles.batches.rate_limit
        self.batch_rate_limits = RateLimiter(batch_limit) if batch_limit is not None else None
        # (method, path, status) of every authorized batch-route request, 429s included: tests and benchmarks
        self.batch_received: deque[tuple[str, str, int]] = deque(maxlen=100_000)
        self.batches = batches.BatchStore(self.profiles.batches, seed, self.base_url, self.answer_batched,
                                          self.stopping, lambda cid: self.next_count("batch-custom-id", cid))

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> SimServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name=f"skillbench-sim-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()  # wakes stalled and slow responses
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join(timeout=5)
        self.httpd.server_close()

    def __enter__(self) -> SimServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def authorized(self, headers: Mapping[str, str]) -> bool:
        """Whether a request carries this endpoint's key."""
        h = {k.lower(): v for k, v in headers.items()}
        bearer = h.get("authorization", "")
        given = h.get("x-api-key") or (bearer[7:] if bearer.lower().startswith("bearer ") else "")
        return hmac.compare_digest(str(given).encode(), self.api_key.encode())

    def info(self) -> dict[str, Any]:
        return {"kind": "simulated", "name": "skillbench-sim", "base_url": self.base_url,
                "site_base": self.site_base, "seed": self.seed,
                "suite": str(self.suite.suite_dir) if self.suite else None,
                "truth": str(self.truth.default) if self.truth.default else None}

    def next_count(self, *key: Any) -> int:
        """How many requests with this key came before (0 for the first)."""
        with self._lock:
            n = self._counters[key]
            self._counters[key] = n + 1
            return n

    # -- answering --------------------------------------------------------------------------------
    def answer(self, body: dict[str, Any], headers: Mapping[str, str], raw_len: int) -> tuple[dict[str, Any], Reply]:
        """The message for a request (without faults), and the reply it came from."""
        h = {k.lower(): v for k, v in headers.items()}
        model = str(body.get("model") or "unknown-model")
        run_id = h.get(RUN_ID_HEADER.lower()) or h.get(SESSION_HEADER.lower()) or "anonymous"
        attempt = _int(h.get(ATTEMPT_HEADER.lower()), 1)
        role = request_role(h, body)
        if role == "judge":
            sample = _int(h.get(SAMPLE_HEADER.lower()), 1)
            digest = hashlib.blake2b(json.dumps(body.get("messages"), sort_keys=True).encode(),
                                     digest_size=8).hexdigest()
            ask = self.next_count("ask", run_id, sample, attempt, digest)
            name, data = self.judge.reply(body, self.profiles.judge(model), sample, attempt, ask)
            tool_id = "toolu_" + draws.short_id(self.seed, "judge", digest, sample, ask)
            reply = Reply([{"type": "tool_use", "id": tool_id, "name": name, "input": data}], "tool_use")
            texts: list[str] = []
        elif role in roles.ROLE_MODULES:  # lint-skills' anchored judge, optimize-description's rewriter
            reply, texts = roles.respond(role, self, body, headers), []
        else:
            conv = parse_request(body)
            texts = conv.texts
            if conv.web_search_subrequest:
                reply = self.agent.web_search(conv, run_id)
            else:
                reply = self.agent.reply(conv, self.profiles.agent(model), run_id, attempt)
        out_tokens = usage.tokens(len(json.dumps(reply.content)))
        in_tokens = usage.tokens(raw_len)
        if reply.cross_budget:
            in_tokens = usage.crossing_input_tokens(model, usage.budget_left(texts), out_tokens)
        use: dict[str, Any] = {"input_tokens": in_tokens, "output_tokens": out_tokens,
                               "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        # A forced budget crossing keeps its exact input count; a role outside cache.roles reports as before caching.
        if not reply.cross_budget and role in self.profiles.cache.roles:
            use.update(self.cache.usage(body, model, in_tokens) or {})
        if reply.web_search_requests:
            use["server_tool_use"] = {"web_search_requests": reply.web_search_requests}
        msg_id = "msg_" + draws.short_id(self.seed, "msg", run_id, attempt, time.monotonic_ns())
        return wire.message(msg_id, model, reply.content, reply.stop_reason, use), reply

    def answer_batched(self, body: dict[str, Any], headers: Mapping[str, str]) -> dict[str, Any]:
        """A batched request's message: :meth:`answer` on the body the SDK would have sent synchronously.

        Raises:
            ValueError: a request the synchronous route answers 400 (protocol or cache_control errors).
        """
        raw_len = len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())  # the SDK's encoding
        msg, reply = self.answer(body, headers, raw_len)
        self.truth.record(reply.truth)
        return msg


@contextmanager
def simulated_endpoint(
    suite_dir: str | Path | Suite | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    seed: int = 0,
    profiles: str | Path | Mapping[str, Any] | Profiles | None = None,
    truth: str | Path | None = None,
    faults: Sequence[FaultSpec | Mapping[str, Any] | str] | None = None,
    site_base: str | None = None,
) -> Iterator[str]:
    """Run the simulated endpoint for the duration of a ``with`` block; yields its base URL.

    Example::

        with simulated_endpoint("evals", truth="runs/truth.csv") as url:
            env["ANTHROPIC_BASE_URL"] = url   # the site is at f"{url}/site"
    """
    server = SimServer(suite_dir, seed=seed, profiles=profiles, truth=truth, faults=faults,
                       serving=Serving(address=(host, port), site_base=site_base))
    with server:
        yield server.base_url


def serve_forever(server: SimServer, out: Any = sys.stdout) -> None:
    """Block until Ctrl-C (the ``skillbench sim serve`` loop)."""
    try:
        # inside the try: a Ctrl-C that lands while the serving thread starts (it may answer before start() returns)
        # still stops cleanly, never a traceback
        server.start()
        while not server.stopping.wait(0.5):
            pass
    except KeyboardInterrupt:
        print("stopping", file=out)
    finally:
        server.stop()


# -- the HTTP handler --------------------------------------------------------------------------------------------------
_JUDGE_TOOLS = {VERDICTS_TOOL, PREFERENCE_TOOL}


def request_role(lower_headers: Mapping[str, str], body: Mapping[str, Any]) -> str:
    """``judge`` for ``X-Skillbench-Role: judge`` or a forced judge tool, a skill-quality role for its forced tool
    (:mod:`skillbench.sim._roles`), else ``agent``."""
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
        sim = self.server.sim
        parts = urlsplit(self.path)
        limiter, limits = sim.batch_rate_limits, {}
        if limiter is not None:  # the API's gate comes before anything the request would do
            wait = limiter.admit(BATCHES_KEY)
            limits = limiter.headers(BATCHES_KEY)
            if wait is not None:
                sim.batch_received.append((method, parts.path, 429))
                self._error(429, "simulated rate limit: the Message Batches requests bucket is empty",
                            {**limits, "retry-after": retry_after_header(wait)})
                self._log(f"{method} {parts.path} -> 429")
                return
        status, content_type, data = batches.handle(sim.batches, method, parts.path, parts.query, raw)
        sim.batch_received.append((method, parts.path, status))
        self._send_bytes(status, data, content_type, limits)
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
        if (path.startswith(BATCHES_ROUTE) or path == TRUTH_ROUTE) and not self._authorized():
            return
        if path.startswith(BATCHES_ROUTE):
            self._batches("GET")
            return
        if path == INFO_ROUTE:
            self._send_json(200, sim.info())
        elif path == TRUTH_ROUTE:
            run_ids = parse_qs(urlsplit(self.path).query).get("run_id", [])
            self._send_bytes(200, truth_csv(sim.truth.rows_for(run_ids)).encode(), "text/csv; charset=utf-8")
        elif path.startswith(SITE_ROUTE):
            self._site(unquote(path[len(SITE_ROUTE):]))
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
        if path.startswith(BATCHES_ROUTE) or path.rstrip("/") == MESSAGES_ROUTE:
            if not self._authorized():
                return
        if path.startswith(BATCHES_ROUTE):
            self._batches("POST", raw)
            return
        if path.rstrip("/") != MESSAGES_ROUTE:
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
                  # only a caller with the simulation's key gets here (the key itself is never kept)
                  "sim_key": True}
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

    def _authorized(self) -> bool:
        """True when the request carries the endpoint's key; else answers 401, as the real API does."""
        if self.server.sim.authorized(dict(self.headers.items())):
            return True
        self._error(401, "invalid x-api-key")
        self._log(f"{self.command} {urlsplit(self.path).path} -> 401")
        return False

    def do_DELETE(self) -> None:  # noqa: N802 - http.server's naming
        self.rate_model = None
        if urlsplit(self.path).path.startswith(BATCHES_ROUTE) and not self._authorized():
            return
        if urlsplit(self.path).path.startswith(BATCHES_ROUTE):
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
