"""Live progress of a running stage: the stage's kernel rewrites a file with its progress bars, the chain relays it."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

PROGRESS_POLL_S = 0.5


PROGRESS_EVERY_S = 2.0  # relay a changed progress line at most this often (the last one always)


class ProgressRelay:
    """Relay a running stage's progress file to ``emit`` (a thread polling it).

    The file holds the latest redraw of each of the stage's bars, one line per bar. A changed bar is relayed at
    most every ``every`` seconds; a bar that a later bar followed, and every bar when the stage ends, is relayed in
    its last state, so the terminal always sees each bar finish.

    Args:
        path: the file the stage's kernel rewrites.
        emit: called with ``prefix`` + a bar's line.
        prefix: e.g. ``"weekly 20261130: 01_generate: "``.
    """

    def __init__(self, path: Path, emit: Callable[[str], None], prefix: str, every: float = PROGRESS_EVERY_S):
        self.path, self.emit, self.prefix, self.every = path, emit, prefix, every
        self._stop = threading.Event()
        self._relayed: dict[str, str] = {}
        self._at: dict[str, float] = {}
        self._thread = threading.Thread(target=self._watch, name="skillbench-progress", daemon=True)

    def __enter__(self) -> ProgressRelay:
        self.path.unlink(missing_ok=True)  # a previous stage's last lines are not this stage's progress
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._relay(final=True)
        self.path.unlink(missing_ok=True)

    def _watch(self) -> None:
        while not self._stop.wait(PROGRESS_POLL_S):
            self._relay(final=False)

    def _relay(self, *, final: bool) -> None:
        from skillbench.weekly._notebook import progress_key

        try:
            lines = [line.strip() for line in self.path.read_text(encoding="utf-8").splitlines() if line.strip()]
        except OSError:
            return
        now = time.monotonic()
        for index, line in enumerate(lines):
            key = progress_key(line)
            if line == self._relayed.get(key):
                continue
            superseded = index < len(lines) - 1  # a later bar started: this one is over
            if final or superseded or now - self._at.get(key, float("-inf")) >= self.every:
                self._relayed[key], self._at[key] = line, now
                self.emit(self.prefix + line)


@contextlib.contextmanager
def _stage_environment(**values: str) -> Iterator[None]:
    """Environment variables the stage's kernel inherits (the kernel is started with this process's environment)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, old in saved.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old
