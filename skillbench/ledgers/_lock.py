"""One pass per run directory: an OS file lock, held for the whole pass and released on any exit.

Every stage that writes a week's ledgers (generation, the rubric judge, the pairwise judge, calibration, the
scorecard, ``skillbench signals``) runs inside :func:`run_dir_lock`. The lock is ``fcntl.flock`` on
:data:`LOCK_FILE` in the run directory, so the kernel releases it when the holder exits however it exits
(``kill -9`` included) — a stale file never blocks anyone. The holder writes its PID, command and start time
into the file; a second pass refuses at once with one line naming them (:class:`RunDirBusy`; the CLI exits 2),
or, with ``wait``, blocks until the lock is free.

The holder removes the file before it lets go, so an idle week has no lock file. A pass that was waiting on
the removed file notices that the path no longer names the file it locked and locks the new one instead, so two
passes can never both believe they hold the week.

Nested use in one thread (the chain's judging stage runs the rubric and the pairwise judge) re-enters the lock
it already holds. The weekly chain itself never holds it: each stage runs in its own kernel process and takes
the lock there.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shlex
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillbench.ledgers._files import LOCK_FILE

_HOLDER_READ_S = 1.0  # a holder writes its line right after it locks: wait this long for it

_held: dict[tuple[Path, int], int] = {}  # (run dir, thread) → nesting depth
_held_guard = threading.Lock()
_process_command: str | None = None


class RunDirBusy(RuntimeError):
    """Another pass holds the run directory; the message names its PID and command."""

    def __init__(self, run_dir: Path, holder: dict[str, Any]):
        self.run_dir, self.holder = run_dir, holder
        pid = holder.get("pid", "unknown")
        command = holder.get("command") or "command unknown"
        host = holder.get("host")
        where = f" on {host}" if host and host != socket.gethostname() else ""
        since = f", since {holder['since']}" if holder.get("since") else ""
        super().__init__(f"{run_dir}: in use by PID {pid}{where} ({command}{since}) — wait for it to finish, or "
                         "rerun with --wait to start when it does")


def set_process_command(command: str) -> None:
    """Name this process in the lock files it writes (the CLI sets ``skillbench <args>``)."""
    global _process_command
    _process_command = command


def process_command() -> str:
    """How this process is named in a lock file: what :func:`set_process_command` set, else its argv (a notebook
    kernel's argv names only its connection file, so a kernel says what it is instead)."""
    if _process_command:
        return _process_command
    if "ipykernel" in sys.modules:
        return "a notebook kernel (a stage of skillbench weekly, or a notebook open in Jupyter)"
    return shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv else "python"


def read_holder(run_dir: str | Path) -> dict[str, Any]:
    """What the lock file of ``run_dir`` says about its holder (``{}`` when there is none or it is unreadable)."""
    try:
        data = json.loads((Path(run_dir) / LOCK_FILE).read_text(encoding="utf-8") or "{}")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _holder_of_busy(run_dir: Path) -> dict[str, Any]:
    deadline = time.monotonic() + _HOLDER_READ_S
    while True:
        holder = read_holder(run_dir)
        if holder.get("pid") or time.monotonic() > deadline:
            return holder
        time.sleep(0.05)


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def _acquire(run_dir: Path, *, command: str, wait: bool, log: Callable[[str], None] | None) -> int:
    path = run_dir / LOCK_FILE
    told = False
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise
                if not wait:
                    raise RunDirBusy(run_dir, _holder_of_busy(run_dir)) from None
                if log and not told:
                    holder = _holder_of_busy(run_dir)
                    log(f"{run_dir}: waiting for PID {holder.get('pid', 'unknown')} "
                        f"({holder.get('command') or 'command unknown'}) to finish")
                    told = True
                fcntl.flock(fd, fcntl.LOCK_EX)
            if not _same_file(fd, path):  # the previous holder removed the file as it let go: lock the new one
                os.close(fd)
                continue
            line = json.dumps({"pid": os.getpid(), "command": command, "host": socket.gethostname(),
                               "since": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")})
            os.ftruncate(fd, 0)
            os.pwrite(fd, (line + "\n").encode("utf-8"), 0)
            return fd
        except BaseException:
            with contextlib.suppress(OSError):
                os.close(fd)
            raise


@contextlib.contextmanager
def run_dir_lock(run_dir: str | Path, *, command: str | None = None, wait: bool = False,
                 log: Callable[[str], None] | None = None) -> Iterator[Path]:
    """Hold ``run_dir``'s lock for the block (creating the folder if needed).

    Args:
        run_dir: the week's folder.
        command: how the holder is named to a refused pass (default: this process's command line).
        wait: block until the lock is free instead of refusing.
        log: told once when the pass starts waiting.

    Yields:
        The resolved run directory.

    Raises:
        RunDirBusy: another pass holds it and ``wait`` is false.
    """
    folder = Path(run_dir).resolve()
    key = (folder, threading.get_ident())
    with _held_guard:
        nested = key in _held
        if nested:
            _held[key] += 1
    if nested:
        try:
            yield folder
        finally:
            with _held_guard:
                _held[key] -= 1
        return
    folder.mkdir(parents=True, exist_ok=True)
    fd = _acquire(folder, command=command or process_command(), wait=wait, log=log)
    with _held_guard:
        _held[key] = 1
    try:
        yield folder
    finally:
        with _held_guard:
            del _held[key]
        with contextlib.suppress(OSError):
            os.unlink(folder / LOCK_FILE)  # while still locked: a waiter then sees the path is gone and retries
        os.close(fd)
