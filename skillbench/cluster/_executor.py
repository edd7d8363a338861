"""The executor seam: where a pass's work runs — this process's threads, or the workers of a Dask cluster.

:func:`open_executor` owns a pass's ``distributed.Client``. The caller of a pass (``weekly``, ``commands``,
``compare``) hands :func:`executor_opener`'s result to the pass in its :class:`skillbench.runtime.PassContext`;
the pass opens it around its work, seeing only the :class:`skillbench.runtime.Executor` protocol. ``local`` is
this process's threads (:class:`skillbench.generation._run.LocalExecutor`).
``dask`` connects to ``--scheduler`` (or, without one, starts a ``LocalCluster`` of this machine's cores on
loopback for the pass) and refuses, in one line, what would break skillbench's guarantees:

* a scheduler that may re-run a task on another worker (``allowed-failures`` above 0): a run would be paid for
  twice behind skillbench's back — start it with ``DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=0``;
* with the simulated endpoint (loopback only), a worker on another host: with the sim the whole cluster is on one
  machine; a multi-host cluster uses the Anthropic backend;
* ``--sandbox local`` (a worker runs each run in its Docker), and a worker that is not ready (:mod:`.checks`).

A generate pass's executor hands the generator its sandbox (:meth:`DaskExecutor.sandbox`, a
:class:`~skillbench.cluster._sandbox.DaskSandbox`) and its default width (``--jobs`` unset: the cluster's worker
threads); a judge pass's hands the SDK client an ``httpx2`` transport
(:class:`~skillbench.cluster._transport.DaskTransport`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from skillbench.runtime import ExecutorOpener

EXECUTORS = ("local", "dask")
ALLOWED_FAILURES = "distributed.scheduler.allowed-failures"
START_SCHEDULER = "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=0 dask scheduler"
CONNECT_TIMEOUT_S = 20.0
WORKERS_TIMEOUT_S = 30.0  # a scheduler with no worker after this long cannot run the pass
Log = Callable[[str], None]


class ExecutorError(RuntimeError):
    """The executor cannot be used as asked; the message says what to do."""


def check_executor_args(executor: str, scheduler: str | None, sandbox: str | None = None) -> None:
    """Refuse flag combinations that cannot work, before anything runs.

    Raises:
        ExecutorError: an unknown executor, ``--scheduler`` without ``--executor dask``, or ``--sandbox local``
            with it.
    """
    if executor not in EXECUTORS:
        raise ExecutorError(f"unknown executor {executor!r} (one of: {', '.join(EXECUTORS)})")
    if scheduler and executor != "dask":
        raise ExecutorError("--scheduler needs --executor dask")
    if executor == "dask" and sandbox == "local":
        raise ExecutorError("--executor dask runs every run in Docker on a worker: drop --sandbox local")


# -- the refusals ------------------------------------------------------------------------------------------------


def _allowed_failures(dask_scheduler: Any) -> int:
    """(On the scheduler) how many times it re-runs a task whose worker died."""
    return int(dask_scheduler.allowed_failures)


def require_no_rescheduling(client: Any, address: str) -> None:
    """Refuse a scheduler that would re-run a task on another worker when its worker dies.

    Raises:
        ExecutorError: its ``allowed-failures`` is not 0 (one line: how to start it).
    """
    allowed = client.run_on_scheduler(_allowed_failures)
    if allowed != 0:
        raise ExecutorError(f"scheduler {address} re-runs a task up to {allowed} time(s) when its worker dies "
                            f"(allowed-failures {allowed}), so a run could be paid for twice behind skillbench's "
                            f"back — start it with `{START_SCHEDULER}`")


def this_host_addresses() -> set[str]:
    """Every address of this machine: its interfaces' and its name's."""
    import socket

    import psutil

    found = {a.address.split("%")[0] for addrs in psutil.net_if_addrs().values() for a in addrs
             if a.family in (socket.AF_INET, socket.AF_INET6)}
    name = socket.gethostname()
    found |= {name, socket.getfqdn(), "localhost"}
    try:
        found |= {info[4][0] for info in socket.getaddrinfo(name, None)}
    except OSError:
        pass
    return found


def remote_workers(addresses: Sequence[str], local: set[str] | None = None) -> list[str]:
    """The worker addresses whose host is not this machine (loopback, or one of ``local``: its addresses)."""
    import ipaddress

    from distributed.comm import get_address_host

    local = this_host_addresses() if local is None else local
    out = []
    for address in addresses:
        host = get_address_host(address).strip("[]")
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback and host not in local:
            out.append(address)
    return out


def refuse_remote_workers(addresses: Sequence[str], local: set[str] | None = None) -> None:
    """With the simulated endpoint (loopback only) every worker must be on this machine.

    Raises:
        ExecutorError: a worker is on another host (named), one line.
    """
    far = remote_workers(addresses, local)
    if far:
        raise ExecutorError(f"worker {', '.join(far)} is on another host, but the simulated endpoint is loopback-only: "
                            "with --backend sim the cluster must be on this machine (a multi-host cluster uses "
                            "--backend anthropic)")


# -- the executors -----------------------------------------------------------------------------------------------


class DaskExecutor:
    """The workers of a ``distributed.Client``: one Dask task per sandbox run or per judge request."""

    kind = "dask"

    def __init__(self, client: Any, log: Log):
        self.client, self.log = client, log

    def workers(self) -> list[str]:
        return sorted(self.client.nthreads())

    @property
    def threads(self) -> int:
        """Worker threads of the whole cluster (the default width of a generate pass)."""
        return int(sum(self.client.nthreads().values()))

    def sandbox(self, requested: str | None, endpoint: Any, out_dir: Path) -> Any:
        """A :class:`DaskSandbox` once every worker is ready (this machine's only, with the simulated endpoint).

        Raises:
            ExecutorError: ``--sandbox local``, or the sim with a worker on another host.
            SandboxFailure: a worker is not ready (named, with the fix); the pass fails closed.
        """
        from skillbench.cluster._checks import check_workers
        from skillbench.cluster._sandbox import DaskSandbox
        from skillbench.cluster._worker import prepare_pass
        from skillbench.generation import SandboxFailure, current_spec

        check_executor_args(self.kind, None, requested)
        simulated = getattr(endpoint, "kind", None) == "simulated"
        if simulated:
            refuse_remote_workers(self.workers())
        tag = current_spec().tag
        not_ready = [s for s in check_workers(self.client, tag, socat=True) if not s.ready]  # every run is sealed
        if not_ready:
            raise SandboxFailure("; ".join(f"worker {s.address}: {s.problem}" for s in not_ready))
        label = str(Path(out_dir).resolve())
        removed = sum(self.client.run(prepare_pass, label).values())
        if removed:
            self.log(f"generate: removed {removed} container(s) left on the workers by an interrupted run")
        return DaskSandbox(self.client, tag, out_dir=out_dir)

    def width(self, jobs: int) -> int:
        """``--jobs``, or for 0 (unset) the cluster's worker threads."""
        return jobs or max(1, self.threads)

    def http_transport(self, *, simulated: bool) -> Any:
        """The transport that sends each judge request from a worker (this machine's only, with the sim)."""
        from skillbench.cluster._transport import DaskTransport

        if simulated:
            refuse_remote_workers(self.workers())
        return DaskTransport(self.client)


def _local_cluster(stack: ExitStack) -> Any:
    """A LocalCluster of this machine's cores on loopback, worker processes of one thread, no re-runs."""
    import dask
    from distributed import LocalCluster

    with dask.config.set({ALLOWED_FAILURES: 0}):  # read by the scheduler when it starts
        return stack.enter_context(LocalCluster(n_workers=os.cpu_count() or 1, threads_per_worker=1, processes=True,
                                                host="127.0.0.1", dashboard_address=":0"))


@contextmanager
def open_executor(kind: str, scheduler: str | None = None, *, log: Log = print) -> Iterator[Any]:
    """The pass's executor; for ``dask`` a connected client (closed after), refused when it cannot be trusted.

    Args:
        kind: ``local`` or ``dask``.
        scheduler: the scheduler's address (``dask``); None starts a LocalCluster for the pass.
        log: where the connection line (workers, threads, dashboard) goes.

    Raises:
        ExecutorError: no scheduler answers, it has no worker, or it would re-run tasks (one line each).
    """
    check_executor_args(kind, scheduler)
    if kind == "local":
        from skillbench.generation import LocalExecutor

        yield LocalExecutor(log)
        return
    from distributed import Client

    with ExitStack() as stack:
        cluster = None if scheduler else _local_cluster(stack)
        try:
            client = stack.enter_context(Client(scheduler or cluster, timeout=CONNECT_TIMEOUT_S,
                                                set_as_default=False))
        except (OSError, TimeoutError) as exc:
            raise ExecutorError(f"--scheduler {scheduler}: no Dask scheduler answers ({exc}) — start one with "
                                f"`{START_SCHEDULER}`") from exc
        address = client.scheduler.address
        require_no_rescheduling(client, address)
        try:
            client.wait_for_workers(1, timeout=WORKERS_TIMEOUT_S)
        except TimeoutError as exc:
            raise ExecutorError(f"scheduler {address} has no worker after {WORKERS_TIMEOUT_S:g} s — start one with "
                                f"`dask worker {address}` on a machine with Docker and the runner image") from exc
        executor = DaskExecutor(client, log)
        try:
            dashboard = client.dashboard_link
        except (KeyError, AttributeError):
            dashboard = None
        log(f"executor dask: {'local cluster ' if cluster else ''}{address}, {len(executor.workers())} worker(s), "
            f"{executor.threads} thread(s)" + (f"; dashboard {dashboard}" if dashboard else ""))
        yield executor


def executor_opener(kind: str, scheduler: str | None = None, *, log: Log = print) -> ExecutorOpener | None:
    """How a pass opens its executor (:attr:`skillbench.runtime.PassContext.executor`): None for this process's
    threads, else :func:`open_executor` with these arguments, called when the pass has work (a resumed pass with
    nothing to do connects to no cluster)."""
    if kind == "local" and not scheduler:
        return None
    return functools.partial(open_executor, kind, scheduler, log=log)
