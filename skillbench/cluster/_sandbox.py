"""The sandbox of ``--executor dask``: each run's container starts on a Dask worker, its output comes back here.

:class:`DaskSandbox` implements :class:`~skillbench.generation._sandbox.Sandbox` on the client: it packs the arm's
skills (the files are on this machine), ships one :class:`~skillbench.cluster._worker.SandboxJob` per attempt as one
Dask task (``pure=False``, a key naming the run and attempt) and waits for its
:class:`~skillbench.generation._sandbox.SandboxResult`. The generator then does exactly what it does with a local
sandbox's result (folders, atomic writes, truth, checks, retries). When the worker dies under a run (the
scheduler's ``KilledWorker``, or its connection closing) the attempt comes back as ``worker_lost`` — no output,
retried once by :func:`skillbench.generation._retries.needs_retry` — never as a result; any other error (the
worker's engine or image, a :class:`~skillbench.generation._sandbox.SandboxFailure` raised there) is raised, and
the generator stops the pass as for a local sandbox failure.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from skillbench.cluster._worker import SandboxJob, run_sandbox_job
from skillbench.generation import NETWORK_SEALED, RUNNER_UID, RelayPlan, SandboxResult, TaskRun, skills_tar

WORKER_LOST_EXIT = -2  # the worker died mid-run: the CLI's exit is unknown (recorded as the attempt's exit code)


def lost_worker_errors() -> tuple[type[BaseException], ...]:
    """What ``future.result()`` raises when the worker running the task was lost."""
    from distributed import KilledWorker
    from distributed.comm.core import CommClosedError

    return KilledWorker, CommClosedError


def lost_worker_address(exc: BaseException) -> str:
    """The address of the worker a ``KilledWorker`` names ("" when it names none)."""
    last = getattr(exc, "last_worker", None)
    return str(getattr(last, "address", "") or "")


class DaskSandbox:
    """Runs each attempt in a :class:`~skillbench.generation._sandbox.DockerSandbox` on a worker of ``client``.

    Args:
        client: the pass's ``distributed.Client`` (:func:`skillbench.cluster.open_executor`).
        image: the runner image's tag every worker must have (the client's ``current_spec().tag``).
        out_dir: the week's folder (labels the workers' containers).
    """

    name = "docker"  # the sandbox is a container, as with --sandbox docker; the executor says where it ran
    executor = "dask"

    def __init__(self, client: Any, image: str, *, out_dir: Path):
        self.client, self.image = client, image
        self.out_dir = str(Path(out_dir).resolve())
        self.network = NETWORK_SEALED  # every container, on every worker, behind its run's relay
        self._tars: dict[tuple[str, ...], bytes] = {}
        self._attempts: dict[str, int] = {}
        self._lock = threading.Lock()

    def _tar(self, families: Sequence[Path]) -> bytes:
        key = tuple(str(f) for f in families)
        with self._lock:
            if key not in self._tars:  # the plugin arm installs every family: pack it once per pass
                self._tars[key] = skills_tar(families, RUNNER_UID)
            return self._tars[key]

    def close(self) -> None:
        """Each worker makes and removes its runs' containers itself: nothing to end here."""

    def task_key(self, label: str) -> str:
        """The Dask key of the run's next attempt: the run id, the attempt, and a unique tail (never reused)."""
        with self._lock:
            attempt = self._attempts[label] = self._attempts.get(label, 0) + 1
        return f"skillbench-run-{label}-attempt{attempt}-{uuid.uuid4().hex[:8]}"

    def run(self, argv: Sequence[str], env: Mapping[str, str], families: Sequence[Path], timeout: float,
            label: str, task: TaskRun | None = None, *, relay: RelayPlan) -> SandboxResult:
        tar = self._tar(families) if families else None  # a bad skill link refuses the run before any task
        job = SandboxJob(tuple(argv), dict(env), tar, timeout, label, task, self.image, relay, self.out_dir)
        started = time.time()
        future = self.client.submit(run_sandbox_job, job, key=self.task_key(label), pure=False)
        try:
            return future.result()
        except lost_worker_errors() as exc:
            worker = lost_worker_address(exc)
            why = f"the Dask worker{' ' + worker if worker else ''} was lost under this run ({type(exc).__name__})"
            return SandboxResult(WORKER_LOST_EXIT, False, b"", why.encode() + b"\n", started, time.time(),
                                 worker=worker, worker_lost=why)
        finally:
            future.release()
