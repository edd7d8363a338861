"""The Messages endpoint a model-calling pass talks to (:class:`Endpoint`), and how a running one is found.

Every command that calls a model (``generate``, ``judge``, ``judge-pairs``, ``calibrate``) takes
``--backend sim|anthropic`` and ``--endpoint URL``. The default is ``anthropic`` when ``ANTHROPIC_API_KEY`` is set,
else ``sim`` (with a one-line notice). A given endpoint is probed once before the first use (a dead one is one line,
at once), and its kind comes from the endpoint itself: one that says it is simulated (``GET /skillbench/info``) is
used as the simulation, whatever ``--backend`` says, and the real API key is never sent to it.

This module only finds endpoints that already run (:func:`existing_endpoint`); a simulation started for the pass
is the caller's (:func:`skillbench.weekly.model_endpoint`), so generation never imports the simulator. It speaks
to a simulation through :mod:`skillbench.wire`: the info route, the read-only truth route (which needs the key).
"""

from __future__ import annotations

import http.client
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from skillbench.ledgers import TruthRow, parse_truth_csv
from skillbench.wire import INFO_ROUTE, SIM_API_KEY, SIM_KEY_ENV, TRUTH_ROUTE

BACKENDS = ("sim", "anthropic")
ANTHROPIC_BASE_URL = "https://api.anthropic.com"


class BackendError(RuntimeError):
    """The chosen backend cannot be used; the message says what to do."""


def resolve_backend(backend: str | None, *, environ: Mapping[str, str] | None = None) -> str:
    """The backend to use: the one asked for, else ``anthropic`` with a key in the environment, else ``sim``.

    Raises:
        BackendError: an unknown backend name.
    """
    env = os.environ if environ is None else environ
    if backend is not None:
        if backend not in BACKENDS:
            raise BackendError(f"unknown backend {backend!r} (one of: {', '.join(BACKENDS)})")
        return backend
    if env.get("ANTHROPIC_API_KEY"):
        return "anthropic"
    print("skillbench: no ANTHROPIC_API_KEY set; using the simulated endpoint (--backend sim)", file=sys.stderr)
    return "sim"


@dataclass(frozen=True)
class Endpoint:
    """A Messages endpoint ready to use.

    Attributes:
        base_url: for ``ANTHROPIC_BASE_URL`` and ``anthropic.Anthropic(base_url=…)``.
        api_key: the key to send (a dummy for the simulation); never log or store it.
        kind: ``simulated`` or ``real``, for run metadata.
        site_base: the simulated published site (``http://127.0.0.1:PORT/site``), None for the real API.
        truth: the simulation's default truth file when this process started it.
    """

    base_url: str
    api_key: str = field(repr=False)
    kind: Literal["simulated", "real"]
    site_base: str | None = None
    truth: Path | None = None

    @property
    def simulated(self) -> bool:
        return self.kind == "simulated"

    def fetch_truth(self, run_ids: Sequence[str], *, timeout: float = 30.0, batch: int = 100) -> list[TruthRow]:
        """The simulation's truth rows of these runs, read over ``GET /skillbench/truth`` (empty for the real API).

        Raises:
            BackendError: the simulated endpoint did not answer the truth route.
        """
        if not self.simulated:
            return []
        from urllib.parse import urlencode

        rows: list[TruthRow] = []
        ids = list(run_ids)
        for start in range(0, len(ids), batch):
            url = f"{self.base_url}{TRUTH_ROUTE}?{urlencode([('run_id', r) for r in ids[start:start + batch]])}"
            request = urllib.request.Request(url, headers={"x-api-key": self.api_key})  # the answer key needs the key
            try:
                with urllib.request.urlopen(request, timeout=timeout) as resp:  # noqa: S310 - loopback only
                    rows += parse_truth_csv(resp.read().decode("utf-8"))
            except (OSError, ValueError) as exc:
                raise BackendError(f"{self.base_url}: the simulated endpoint did not return truth rows ({exc})"
                                   ) from exc
        return rows


def is_loopback_host(host: str) -> bool:
    """True when every address ``host`` resolves to is on loopback (127.0.0.0/8 or ::1)."""
    import ipaddress
    import socket

    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos)


def require_loopback(url: str) -> None:
    """A simulated run talks to loopback only; refuse any other endpoint before connecting to it.

    Raises:
        BackendError: the URL's host is not a loopback address.
    """
    from urllib.parse import urlsplit

    host = urlsplit(url).hostname or ""
    if not is_loopback_host(host):
        raise BackendError(f"{url}: a simulated endpoint must be on loopback (127.0.0.1 or ::1), not {host!r}")


PROBE_TIMEOUT = 5.0  # seconds: a live endpoint answers at once; a dead one must not cost 2 × --timeout per run


def _opener(url: str) -> urllib.request.OpenerDirector:
    """urllib without proxies for a loopback URL (a proxy cannot reach this machine's loopback)."""
    from urllib.parse import urlsplit

    if is_loopback_host(urlsplit(url).hostname or ""):
        return urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener()


def probe_endpoint(endpoint: str, *, timeout: float = PROBE_TIMEOUT, fix: str = "") -> dict[str, Any] | None:
    """Ask an endpoint once, quickly, whether it is alive and what it is: ``GET <endpoint>/skillbench/info``.

    The request carries no key. Any HTTP answer, whatever its status, means the server is alive; a simulated
    endpoint answers ``{"kind": "simulated", …}`` there.

    Args:
        endpoint: the base URL.
        timeout: seconds to wait for the connection and the answer.
        fix: how to fix a dead endpoint, appended to the error.

    Returns:
        The simulation's description when the endpoint says it is simulated, else None (another live server).

    Raises:
        BackendError: nothing answered (refused, timed out, unknown host, TLS failure), in one line naming
            the URL.
    """
    url = endpoint.rstrip("/") + INFO_ROUTE
    try:
        with _opener(url).open(url, timeout=timeout) as resp:
            body = resp.read(1 << 16)
    except urllib.error.HTTPError:  # an HTTP status: alive, and not a simulation
        return None
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", exc)  # refused, unknown host, TLS, not HTTP at all, or silence
        if isinstance(reason, TimeoutError) or str(reason) == "timed out":
            reason = f"no answer within {timeout:g} s"
        raise BackendError(f"{endpoint}: the endpoint does not answer ({reason or type(exc).__name__})"
                           + (f" — {fix}" if fix else "")) from exc
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("kind") == "simulated" else None


def sim_info(endpoint: str, timeout: float = PROBE_TIMEOUT) -> dict[str, Any] | None:
    """``GET <endpoint>/skillbench/info``: the running simulation's description, or None if it is not one."""
    try:
        return probe_endpoint(endpoint, timeout=timeout)
    except BackendError:
        return None


def sim_api_key() -> str:
    """The key of a simulation this machine serves: ``SKILLBENCH_SIM_KEY``, else the default. Every command that
    starts one and every command given its URL read it by this one rule, so they always agree."""
    return os.environ.get(SIM_KEY_ENV) or SIM_API_KEY


def simulation_at(endpoint: str, info: Mapping[str, Any]) -> Endpoint:
    """A running simulation found at ``endpoint`` (its :func:`sim_info`): its key, kind, site and truth come from it.

    Raises:
        BackendError: the endpoint is not on loopback.
    """
    require_loopback(endpoint)
    return Endpoint(base_url=endpoint.rstrip("/"), api_key=sim_api_key(), kind="simulated",
                    site_base=info.get("site_base"), truth=Path(info["truth"]) if info.get("truth") else None)


def existing_endpoint(backend: str | None, *, endpoint: str | None = None,
                      probe_timeout: float = PROBE_TIMEOUT) -> Endpoint | None:
    """The running endpoint a pass uses, or None when it is a simulation the caller must start.

    A given endpoint (``endpoint``, or ``ANTHROPIC_BASE_URL`` with ``anthropic``) is probed once before it is
    used (:func:`probe_endpoint`): a dead one fails here, in one line, instead of costing every run its
    timeout. Its kind comes from the endpoint, never from the flag: an endpoint that says it is simulated is
    used as one (the simulation's key, site and truth; the real API key is never sent to it), with a notice.

    Args:
        backend: ``sim``, ``anthropic``, or None for the default (see :func:`resolve_backend`).
        endpoint: a running endpoint's base URL; with ``sim`` it must answer ``/skillbench/info``.
        probe_timeout: seconds the probe of a given endpoint may take.

    Returns:
        The endpoint, or None for ``sim`` without ``endpoint`` (start one: :func:`skillbench.weekly.model_endpoint`).

    Raises:
        BackendError: no API key for a real endpoint, a given endpoint does not answer, ``endpoint`` is not a
            running simulation for ``sim``, or a simulated endpoint is not on loopback.
    """
    backend = resolve_backend(backend)  # --endpoint only says where; the key decides the default
    endpoint = endpoint or None
    if backend == "anthropic":
        key = os.environ.get("ANTHROPIC_API_KEY", "")
        base = (endpoint or os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_BASE_URL).rstrip("/")
        if not key and base == ANTHROPIC_BASE_URL:
            raise BackendError("--backend anthropic needs ANTHROPIC_API_KEY in the environment")
        fix = ("check --endpoint" if endpoint else "check ANTHROPIC_BASE_URL" if base != ANTHROPIC_BASE_URL
               else "check this machine's network (or set ANTHROPIC_BASE_URL)")
        info = probe_endpoint(base, timeout=probe_timeout, fix=fix)
        if info is not None:
            print(f"skillbench: {base} says it is a simulated endpoint (/skillbench/info): its runs are recorded "
                  "as simulated and ANTHROPIC_API_KEY is not sent to it", file=sys.stderr)
            return simulation_at(base, info)
        if not key:
            raise BackendError("--backend anthropic needs ANTHROPIC_API_KEY in the environment")
        return Endpoint(base_url=base, api_key=key, kind="real")
    if backend != "sim":
        raise BackendError(f"unknown backend {backend!r} (one of: {', '.join(BACKENDS)})")
    if not endpoint:
        return None
    require_loopback(endpoint)
    info = probe_endpoint(endpoint, timeout=probe_timeout,
                          fix="not a running simulated endpoint: start one with `skillbench sim serve`, "
                          "or drop --endpoint to start one for this command")
    if info is None:
        raise BackendError(f"{endpoint} answers but is not a running simulated endpoint (no /skillbench/info); "
                           "start one with `skillbench sim serve`, or use --backend anthropic")
    return simulation_at(endpoint, info)
