"""Build an expensive, read-only test artefact once per test run, even when pytest-xdist runs several workers.

Each xdist worker is a pytest session of its own, so a ``scope="session"`` fixture would be built once per worker
(a generated week costs a minute of real-CLI runs on both cores). :func:`build_once` makes the first worker that
needs the artefact build it in the directory every worker of the run shares (the parent of their base temps),
under an ``fcntl`` lock (the same primitive as the run-directory lock in :mod:`skillbench.ledgers._lock`); the
others wait on the lock and load the pickled result. Without xdist it is a plain build in the session's temp.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def shared_temp(factory: pytest.TempPathFactory) -> Path:
    """The temp directory every worker of this run sees (the session's own when xdist is not running)."""
    base = factory.getbasetemp()
    # xdist gives worker gwN the base temp <run's base>/popen-gwN; the run's base is unique to this run
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]) -> T:
    """``build(directory)``'s result, computed by one worker of the run; the result must pickle.

    The artefact is shared: tests read it and copy what they change. A failed build is not retried by the
    other workers (it would fail the same way, after as long): they fail with its message. A skip (the CLI
    missing outside CI) is cheap and leaves nothing, so each worker reaches it itself.
    """
    root = shared_temp(factory)
    directory, result, failure = root / name, root / f"{name}.pickle", root / f"{name}.failed"
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when build raises
        if result.exists():
            return pickle.loads(result.read_bytes())
        if failure.exists():
            pytest.fail(f"{name} failed to build in another worker: {failure.read_text()}")
        if directory.exists():  # a skipped attempt's leftovers
            shutil.rmtree(directory)
        directory.mkdir()
        try:
            value = build(directory)
        except pytest.skip.Exception:
            raise
        except BaseException as exc:
            failure.write_text(f"{type(exc).__name__}: {exc}"[-3000:])
            raise
        result.write_bytes(pickle.dumps(value))
        return value
