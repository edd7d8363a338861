"""What runs on a Dask worker: one sandbox run, one HTTP request, a pass's clean-up and the readiness check.

The client ships these functions (by reference: the worker imports ``skillbench``) with everything they need as
arguments, and they return plain data — nothing here writes a file of the week. A worker process keeps one
:class:`~skillbench.generation._sandbox.DockerSandbox` per (image tag, sealed endpoint, week) and one ``httpx2`` client,
so a pass pays the engine's connection once per worker, not once per run. A failure of the sandbox itself (engine
gone, image missing) is raised as :class:`~skillbench.generation._sandbox.SandboxFailure` naming the worker: the
client stops the pass, as it does for its own sandbox.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillbench.generation import DockerSandbox, RelayPlan, SandboxFailure, SandboxResult, TaskRun

FIX_IMAGE = "run `skillbench image build` on it"
FIX_ENGINE = "start its Docker engine (`make setup` starts dockerd)"
MAX_SANDBOXES = 4  # a long-lived worker serves pass after pass (a new sealed port each): keep the newest few
_sandboxes: OrderedDict[tuple[str, str, str], DockerSandbox] = OrderedDict()
_sandboxes_lock = threading.Lock()
_http: Any = None
_http_lock = threading.Lock()


def worker_address() -> str:
    """This worker's address ("" outside a Dask worker)."""
    from distributed import get_worker

    try:
        return str(get_worker().address)
    except ValueError:
        return ""


@dataclass(frozen=True)
class SandboxJob:
    """One sandbox run as the client prepared it: argv, environment, the skills' tar, the task, where to run."""

    argv: tuple[str, ...]
    env: dict[str, str]
    skills_tar: bytes | None
    timeout: float
    label: str  # the run id (labels the container)
    task: TaskRun | None
    image: str  # the runner image's tag the client expects
    relay: RelayPlan  # the run's relay (the endpoint, its key, the run's token and identity): served on the worker
    out_dir: str  # the week's folder on the client (labels the containers; never opened here)


def _sandbox(job: SandboxJob) -> DockerSandbox:
    """This process's sandbox for the job's image, endpoint and week (made once, newest few kept)."""
    import docker

    key = (job.image, job.out_dir)
    with _sandboxes_lock:
        if key in _sandboxes:
            _sandboxes.move_to_end(key)
            return _sandboxes[key]
        try:
            sandbox = DockerSandbox(job.image, out_dir=Path(job.out_dir))
        except docker.errors.ImageNotFound as exc:
            raise SandboxFailure(f"worker {worker_address()}: the runner image {job.image} is missing — "
                                 f"{FIX_IMAGE}") from exc
        except docker.errors.DockerException as exc:
            raise SandboxFailure(f"worker {worker_address()}: the Docker engine does not answer "
                                 f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}) — "
                                 f"{FIX_ENGINE}") from exc
        _sandboxes[key] = sandbox
        while len(_sandboxes) > MAX_SANDBOXES:
            _, old = _sandboxes.popitem(last=False)
            old.client.close()
        return sandbox


def run_sandbox_job(job: SandboxJob) -> SandboxResult:
    """Run one sandbox run here; the result names this worker and how its sandbox treated the network."""
    sandbox = _sandbox(job)
    result = sandbox.run_prepared(list(job.argv), job.env, job.skills_tar, job.timeout, job.label, job.task,
                                  relay=job.relay)
    result.worker, result.network = worker_address(), sandbox.network
    return result


def prepare_pass(out_dir: str) -> int:
    """Before a pass starts: remove the containers an interrupted pass of this week left on this worker's engine
    and the relay folders of dead processes; returns how many containers went.

    Several workers may share one engine and run this at once, so a container another one removed is no error.
    """
    import docker

    from skillbench.generation import LABEL, remove_stale_relays

    client = docker.from_env(timeout=60)
    removed = 0
    try:
        for container in client.containers.list(all=True, filters={"label": f"{LABEL}={out_dir}"}):
            try:
                container.remove(force=True)
                removed += 1
            except docker.errors.APIError:  # NotFound, or "removal already in progress" by a sibling worker
                pass
    finally:
        client.close()
    remove_stale_relays()
    return removed


# -- one HTTP request (a judge call's, through cluster.transport) -------------------------------------------------


@dataclass(frozen=True)
class HttpReply:
    """An HTTP answer as received (raw body, every header), or why there was none (``error``: timeout/connect)."""

    status: int = 0
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    error: str = ""  # "" | "timeout" | "connect" | "transport"
    message: str = ""
    worker: str = ""


def _http_client() -> Any:
    """This process's ``httpx2`` client (thread-safe; keeps connections to the endpoint between calls)."""
    global _http
    import httpx2

    with _http_lock:
        if _http is None:
            _http = httpx2.Client(follow_redirects=False)  # the client's own follows redirects, not us
        return _http


def send_http(method: str, url: str, headers: list[tuple[str, str]], body: bytes,
              timeout: dict[str, float | None] | None) -> HttpReply:
    """Send one request from this worker and return the answer with its body undecoded (the client decodes)."""
    import httpx2

    client, here = _http_client(), worker_address()
    request = client.build_request(method, url, headers=headers, content=body,
                                   timeout=httpx2.Timeout(**timeout) if timeout else httpx2.Timeout(None))
    try:
        response = client.send(request, stream=True)
        try:
            raw = b"".join(response.iter_raw())
        finally:
            response.close()
    except httpx2.TimeoutException as exc:
        return HttpReply(error="timeout", message=f"{type(exc).__name__} on worker {here}: {exc}", worker=here)
    except (httpx2.ConnectError, httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError) as exc:
        return HttpReply(error="connect", message=f"{type(exc).__name__} on worker {here}: {exc}", worker=here)
    except httpx2.TransportError as exc:
        return HttpReply(error="transport", message=f"{type(exc).__name__} on worker {here}: {exc}", worker=here)
    return HttpReply(response.status_code, list(response.headers.multi_items()), raw, worker=here)


# -- readiness (skillbench worker check) -------------------------------------------------------------------------


def worker_readiness(image: str, *, socat: bool = True) -> dict[str, Any]:
    """Whether this worker can run the client's runs: the engine answers, the image ``image`` is present, and
    (for sealed runs) socat is in it. ``problem`` says what is wrong and how to fix it ("" when ready)."""
    import socket

    import docker

    out: dict[str, Any] = {"address": worker_address(), "host": socket.gethostname(), "image": image,
                           "engine": "", "image_id": "", "socat": None, "problem": ""}
    try:
        client = docker.from_env(timeout=30)
        out["engine"] = str(client.version().get("Version", ""))
    except Exception as exc:  # noqa: BLE001 - any failure means "no engine"
        out["problem"] = f"the Docker engine does not answer ({str(exc).splitlines()[0][:160]}) — {FIX_ENGINE}"
        return out
    try:
        try:
            out["image_id"] = client.images.get(image).id
        except docker.errors.ImageNotFound:
            out["problem"] = f"the runner image {image} is missing — {FIX_IMAGE}"
            return out
        if socat:
            probe = client.containers.run(image, ["sh", "-c", "command -v socat"], network_mode="none",
                                          remove=True, stdout=True, stderr=True, user="0")
            out["socat"] = bool(probe.strip())
            if not out["socat"]:
                out["problem"] = f"socat is missing from {image} (sealed runs need it) — {FIX_IMAGE}"
    except docker.errors.ContainerError:
        out["socat"] = False
        out["problem"] = f"socat is missing from {image} (sealed runs need it) — {FIX_IMAGE}"
    except docker.errors.DockerException as exc:
        out["problem"] = f"the Docker engine failed a probe container ({str(exc).splitlines()[0][:160]})"
    finally:
        client.close()
    return out
