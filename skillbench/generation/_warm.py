"""Container start off a run's critical path: sealed keeper containers made ready ahead, removed behind.

Every run still gets a fresh container, used once (the measurement's guarantee). What moves off the run's path is
the part that does not depend on the run: creating the container, starting it, and waiting until its sealed relay
listens — and, after the run, removing it. A warm container holds nothing of a run: its environment is the tool
environment every run shares (HOME, TMPDIR, PATH, LANG; never a token or a key), its relay folder is empty until
the run's :class:`~skillbench.generation._relay.Relay` binds its socket there, and nothing has run in it but the
keeper and the in-container half of the relay.

Each :meth:`WarmPool.take` asks one background thread for a replacement, so the pool holds about as many warm
containers as runs are in flight; a pass that ends wastes at most that many starts (:meth:`WarmPool.close`
removes them, and waits for the removals behind the runs, so nothing outlives the pass). A container that could
not be made ahead (the engine refused, the relay never listened) is made again on the run's path, where its error
is the run's sandbox failure.
"""

from __future__ import annotations

import queue
import shutil
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

THREADS = 2  # one makes the next containers while the other removes the last ones


@dataclass
class Warm:
    """A started, sealed container nobody has used, and the host folder its relay socket goes in."""

    container: Any
    folder: Path
    key: tuple[Any, ...]  # what it was made for (the sealed address and the tool environment)


class WarmPool:
    """Sealed containers made ahead of the runs that take them, and removed behind them.

    Args:
        make: makes one warm container for a key (on the calling thread; raises on failure).
        running: whether a container still runs (a warm one whose keeper died is never handed out).
    """

    def __init__(self, make: Callable[[tuple[Any, ...]], Warm], running: Callable[[Any], bool]):
        self._make = make
        self._running = running
        self._ready: dict[tuple[Any, ...], queue.SimpleQueue[Warm]] = {}
        self._lock = threading.RLock()  # a future that is done already calls _done on the submitting thread
        self._closed = False
        self._threads = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="skillbench-warm")
        self._pending: set[Future[Any]] = set()

    def take(self, key: tuple[Any, ...]) -> Warm:
        """A warm container for ``key`` (made now when none is ready); a replacement is made in the background."""
        with self._lock:
            ready = self._ready.setdefault(key, queue.SimpleQueue())
            self._submit(self._refill, key)
        while True:
            try:
                warm = ready.get_nowait()
            except queue.Empty:
                return self._make(key)
            if self._running(warm.container):
                return warm
            self.discard(warm)  # its keeper died while it waited: never a run's container

    def discard(self, warm: Warm) -> None:
        """Remove a used (or dead) container and its folder, off the caller's path."""
        with self._lock:
            if self._submit(remove_warm, warm):
                return
        remove_warm(warm)  # closed: remove it here

    def close(self) -> None:
        """Stop making containers, remove the warm ones, and wait for every removal."""
        with self._lock:
            self._closed = True
            pending = list(self._pending)
        for future in pending:
            future.exception()  # wait; a removal that failed leaves a labelled container the next pass removes
        self._threads.shutdown(wait=True)
        for ready in self._ready.values():
            while not ready.empty():
                remove_warm(ready.get_nowait())

    def _submit(self, fn: Callable[[Any], None], arg: Any) -> bool:
        """Run ``fn(arg)`` on the pool's threads (False once closed); the caller holds the lock."""
        if self._closed:
            return False
        future = self._threads.submit(fn, arg)
        self._pending.add(future)
        future.add_done_callback(self._done)
        return True

    def _done(self, future: Future[Any]) -> None:
        with self._lock:
            self._pending.discard(future)

    def _refill(self, key: tuple[Any, ...]) -> None:
        with self._lock:
            if self._closed:
                return
        try:
            warm = self._make(key)
        except Exception:  # noqa: BLE001 - the run that needs it makes it again, and reports the error itself
            return
        with self._lock:
            closed = self._closed
            if not closed:
                self._ready[key].put(warm)
        if closed:
            remove_warm(warm)


def remove_warm(warm: Warm) -> None:
    """Remove a container and its relay folder, here and now."""
    try:
        warm.container.remove(force=True)
    except Exception:  # noqa: BLE001 - already gone; a container left behind is labelled for the next pass
        pass
    shutil.rmtree(warm.folder, ignore_errors=True)
