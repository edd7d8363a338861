"""Where and how a pass runs: :class:`PassContext`, the one runtime argument of every pass.

A pass (generate, judge, judge-pairs, calibrate, the sentinel, the quality judges, compare) takes two things: a
frozen options object (*what* to do: models, reps, the selection, budgets, the judge model …) and a
:class:`PassContext` (*where and how*: the Messages endpoint, the executor, the log, the run directory's lock).
The context lives at the bottom of the import graph so generation and the judges can take one without knowing who
built it: the caller (``weekly``, ``commands``, ``compare``) opens the Dask executor with
:func:`skillbench.cluster.open_executor`; a pass sees only the :class:`Executor` protocol below, never
:mod:`skillbench.cluster` (which sits above them: it builds on generation's sandbox and the judge's transport).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import httpx2

    Transport = httpx2.BaseTransport  # what the judge's SDK client sends through (the SDK's httpx fork)
else:
    Transport = Any

Log = Callable[[str], None]


def stderr_log(message: str) -> None:
    """The default log: one line on stderr (stdout stays the command's output)."""
    print(message, file=sys.stderr)


@runtime_checkable
class Endpoint(Protocol):
    """A Messages endpoint ready to use (:class:`skillbench.generation._backend.Endpoint` is the one there is)."""

    base_url: str
    api_key: str
    kind: str  # ``simulated`` or ``real``

    @property
    def simulated(self) -> bool: ...


class Executor(Protocol):
    """Where a pass's work runs: this process's threads, or the workers of a cluster.

    ``sandbox`` is what a generate pass runs each run in; ``width`` turns ``--jobs`` 0 (unset) into the executor's
    own width; ``http_transport`` is what a judge pass's SDK client sends through (None: the SDK's own).
    """

    kind: str

    def sandbox(self, requested: str | None, endpoint: Any, out_dir: Path) -> Any: ...

    def width(self, jobs: int) -> int: ...

    def http_transport(self, *, simulated: bool) -> Transport | None: ...


EndpointOpener = Callable[[], AbstractContextManager[Endpoint]]
ExecutorOpener = Callable[[], AbstractContextManager[Executor]]


@dataclass(frozen=True)
class PassContext:
    """The runtime of one pass: where it sends its requests, where its work runs, where it logs, how it locks.

    Attributes:
        endpoint: the Messages endpoint, open — or how to open it (called when the pass has work, so a pass with
            nothing to do starts no simulation and needs no key). None: a pass that sends nothing.
        executor: how to open the executor (called when the pass has work: a resumed pass with nothing to do
            connects to no cluster); None: this process's threads.
        log: where progress lines go.
        wait: another pass holds the run directory: wait for it instead of refusing.
        holder: how this pass names itself in the run directory's lock (None: the process's command line).
    """

    endpoint: Endpoint | EndpointOpener | None = None
    executor: ExecutorOpener | None = None
    log: Log = stderr_log
    wait: bool = False
    holder: str | None = None

    def open_endpoint(self) -> AbstractContextManager[Endpoint]:
        """The endpoint for a ``with`` block (an open one is not closed by it).

        Raises:
            ValueError: the context has no endpoint (a pass that must send requests was given none).
        """
        if self.endpoint is None:
            raise ValueError("this pass sends requests: its context needs an endpoint")
        if isinstance(self.endpoint, Endpoint):
            return contextlib.nullcontext(self.endpoint)
        return self.endpoint()

    def open_executor(self, *, needed: bool = True) -> AbstractContextManager[Executor | None]:
        """The executor for a ``with`` block; None for this process's threads (or when not ``needed``)."""
        if self.executor is None or not needed:
            return contextlib.nullcontext(None)
        return self.executor()

    @contextlib.contextmanager
    def judge_transport(self, *, needed: bool, simulated: bool):
        """A judge pass's transport for a ``with`` block: None (the SDK's own) on this process's threads or when
        the pass has nothing to send; the executor's otherwise (one cluster connection for the block)."""
        with self.open_executor(needed=needed) as executor:
            yield None if executor is None else executor.http_transport(simulated=simulated)
