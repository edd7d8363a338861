"""The simulated Anthropic Messages endpoint: a threaded HTTP server on loopback.

Routes:
    ``POST /v1/messages`` (any query string): the simulated agent models (the CLI's requests, including
        the WebSearch server-tool sub-request) and the simulated judge (``X-Skillbench-Role: judge``, or a
        forced ``record_verdicts``/``record_preference`` tool), streaming or not.
    ``GET /site/<path>``: the suite's skills tree, as published at ``<site_base>/<path>``.
    ``GET /skillbench/info``: ``{"kind": "simulated", "site_base": …, …}`` for a harness that was given
        only the URL.
    ``GET /skillbench/truth?run_id=…&run_id=…``: those runs' truth rows as CSV (read-only; the endpoint keeps
        truth itself and writes no file a request names).
    ``/v1/messages/batches…``: the Message Batches API (:mod:`skillbench.sim.batches`), answered by the same
        code path as ``POST /v1/messages``; batches live in this object's memory for the endpoint's lifetime.

The usage honours ``cache_control`` for the profile's ``cache.roles`` (:class:`skillbench.sim.usage.PromptCache`),
and the profile's ``rate_limit`` section (off when absent) puts token buckets and the ``anthropic-ratelimit-*``
headers on ``POST /v1/messages`` (:mod:`skillbench.sim.ratelimit`).

Request headers it reads: ``X-Skillbench-Run-Id`` and ``X-Skillbench-Attempt`` (draw keys; without them the
CLI's ``X-Claude-Code-Session-Id`` stands in), ``X-Skillbench-Role``, ``X-Skillbench-Sample``,
and ``X-Skillbench-Fault`` (inject faults into this request).
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from skillbench.generation.cli_call import ATTEMPT_HEADER, RUN_ID_HEADER, SAMPLE_HEADER
from skillbench.sim import batches, draws, roles, usage, wire
from skillbench.sim.agent import Agent, Reply
from skillbench.sim.conversation import parse_request
from skillbench.sim.faults import FaultPlan
from skillbench.sim.handler import SESSION_HEADER as SESSION_HEADER
from skillbench.sim.handler import _Handler, _int
from skillbench.sim.handler import request_role as request_role
from skillbench.sim.judge import SimJudge
from skillbench.sim.profiles import FaultSpec, Profiles, load_profiles, parse_fault_option
from skillbench.sim.ratelimit import RateLimiter
from skillbench.sim.truth import TruthSink
from skillbench.sim.wire import SIM_API_KEY as SIM_API_KEY
from skillbench.suite.format import Suite


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    sim: SimServer


class SimServer:
    """The endpoint: bind in the constructor, serve after :meth:`start`, stop with :meth:`stop`.

    Args:
        suite: a suite folder or a loaded :class:`~skillbench.suite.Suite`; None answers generically.
        address: ``(host, port)`` to bind; keep the host on loopback; port 0 picks a free port.
        seed: seed of every behaviour, judge and fault draw.
        profiles: a profile file, mapping or :class:`Profiles`; None is the shipped file.
        truth: also write every truth row to this file (the operator's choice; None: keep truth in memory only).
        faults: more faults (``FaultSpec``, dicts, or ``"kind=rate"`` strings) on top of the profile file's.
        site_base: the published-site URL the simulated models fetch (default: this server's ``/site``).
        log: called with one line per request (None: silent).
    """

    def __init__(
        self,
        suite: str | Path | Suite | None = None,
        *,
        address: tuple[str, int] = ("127.0.0.1", 0),
        seed: int = 0,
        profiles: str | Path | Mapping[str, Any] | Profiles | None = None,
        truth: str | Path | None = None,
        faults: Sequence[FaultSpec | Mapping[str, Any] | str] | None = None,
        site_base: str | None = None,
        log: Callable[[str], None] | None = None,
    ):
        if suite is not None and not isinstance(suite, Suite):
            from skillbench.suite.load import load_suite

            # Lenient on missing workspace files: a suite generation refuses is never run, and one it runs
            # with --skip-missing is answered as run (the same trimmed prompts).
            suite = load_suite(suite, skip_missing=True)
        self.suite: Suite | None = suite
        self.seed = seed
        self.profiles = load_profiles(profiles)
        extra = [f if isinstance(f, FaultSpec) else parse_fault_option(f) if isinstance(f, str)
                 else FaultSpec.model_validate(f) for f in faults or []]
        self.httpd = _HTTPServer(address, _Handler)
        self.httpd.sim = self
        self.host, self.port = self.httpd.server_address[:2]
        self.base_url = f"http://{self.host}:{self.port}"
        self.site_base = (site_base or f"{self.base_url}/site").rstrip("/")
        self.agent = Agent(self.suite, seed, self.site_base, versions=self.profiles.skill_versions)
        self.judge = SimJudge(seed)
        self.faults = FaultPlan(seed, [*self.profiles.faults, *extra])
        self.truth = TruthSink(truth)
        self.log = log
        self.stopping = threading.Event()
        self.received: deque[dict[str, Any]] = deque(maxlen=100_000)  # one record per request, for tests
        self.timings: deque[tuple[str, float]] = deque(maxlen=100_000)  # (run id, server seconds) per answer
        self._counters: Counter[tuple[Any, ...]] = Counter()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.cache = usage.PromptCache(self.profiles.cache)
        self.rate_limits = RateLimiter(self.profiles.rate_limit) if self.profiles.rate_limit else None
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
    server = SimServer(suite_dir, address=(host, port), seed=seed, profiles=profiles, truth=truth,
                       faults=faults, site_base=site_base)
    with server:
        yield server.base_url


def serve_forever(server: SimServer, out: Any = sys.stdout) -> None:
    """Block until Ctrl-C (the ``skillbench sim serve`` loop)."""
    server.start()
    try:
        while not server.stopping.wait(0.5):
            pass
    except KeyboardInterrupt:
        print("stopping", file=out)
    finally:
        server.stop()
