"""A task run in one Docker container: a keeper process, then setup, the CLI and the probes as ``exec``s.

For a run with a task the container's main process only keeps it alive (after the sealed relay's entry when
the network is sealed), so setup commands, the CLI and the workspace checks' probes all run in the *same*
container, one after the other, as the runner user in the workspace, before it is removed.

Every exec is wrapped in coreutils ``timeout -k 5 T`` inside the container, so its own timeout holds whatever
the host does; a host-side watchdog kills the container if even that does not end it. The docker SDK reads an
exec's output with ``poll()`` and no timeout, so the client's socket timeout never cuts a long CLI run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skillbench.checktypes import ProbeResult
from skillbench.generation._image import RUNNER_UID, WORKSPACE
from skillbench.generation._workspace import SetupOutcome, TaskRun, command_failure, tool_env

KILL_AFTER_S = 5  # timeout's -k: a command that ignores TERM gets KILL this much later
WATCHDOG_GRACE_S = 30.0  # the host kills the container if an exec outlives its in-container timeout by this
READY_TIMEOUT_S = 15.0  # the sealed relay listens within milliseconds
KEEPER = ("sleep", "infinity")
READY_SCRIPT = 'until grep -q " $1 00000000:0000 0A " /proc/net/tcp; do sleep 0.01; done'


@dataclass(frozen=True)
class ExecOutcome:
    """How one exec ended; ``error`` says why it could not run at all (container gone)."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    seconds: float
    error: str = ""


def exec_in(container: Any, argv: Sequence[str], *, env: Mapping[str, str], timeout_s: float) -> ExecOutcome:
    """Run ``argv`` in the container as the runner user in the workspace, under ``timeout -k 5 T``."""
    import docker

    api = container.client.api
    command = ["timeout", "-k", str(KILL_AFTER_S), f"{timeout_s:g}", *argv]
    fired = threading.Event()
    watchdog = threading.Timer(timeout_s + KILL_AFTER_S + WATCHDOG_GRACE_S, _kill, args=(container, fired))
    watchdog.daemon = True
    started = time.monotonic()
    try:
        exec_id = api.exec_create(container.id, command, user=str(RUNNER_UID), workdir=WORKSPACE,
                                  environment=dict(env))["Id"]
        watchdog.start()
        stdout, stderr = api.exec_start(exec_id, demux=True)
        code = api.exec_inspect(exec_id).get("ExitCode")
    except (docker.errors.APIError, OSError) as exc:
        line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return ExecOutcome(None, b"", b"", False, time.monotonic() - started, f"the container is gone ({line})")
    finally:
        watchdog.cancel()
    seconds = time.monotonic() - started
    if fired.is_set():  # the in-container timeout did not hold: the container is killed, the exec timed out
        return ExecOutcome(None, stdout or b"", stderr or b"", True, seconds)
    # timeout exits 124 after TERM, 137 when it had to KILL; a command's own 124 ends before its deadline
    timed_out = code in (124, 137) and seconds >= timeout_s - 0.05
    return ExecOutcome(code, stdout or b"", stderr or b"", timed_out, seconds)


def _kill(container: Any, fired: threading.Event) -> None:
    fired.set()
    try:
        container.kill()
    except Exception:  # noqa: BLE001 - the container may be gone already; removal follows anyway
        pass


def container_running(container: Any) -> bool:
    try:
        container.reload()
    except Exception:  # noqa: BLE001 - gone
        return False
    return container.status == "running"


def wait_until_sealed(container: Any, proc_key: str) -> bool:
    """Wait until the sealed relay listens inside the container; False when the keeper died instead."""
    outcome = exec_in(container, ["sh", "-c", READY_SCRIPT, "ready", proc_key], env={}, timeout_s=READY_TIMEOUT_S)
    return outcome.exit_code == 0 and container_running(container)


def run_setup(container: Any, task: TaskRun, env: Mapping[str, str]) -> tuple[SetupOutcome, bytes]:
    """Run each setup command (``sh -c``) in the workspace; stops at the first failure."""
    logs = b""
    for command in task.setup:
        out = exec_in(container, ["sh", "-c", command], env=tool_env(env), timeout_s=task.setup_timeout_s)
        logs += out.stdout + out.stderr
        if out.error:
            return SetupOutcome(False, f"{command}: {out.error}"), logs
        if out.timed_out or out.exit_code != 0:
            return SetupOutcome(False, command_failure(command, out.exit_code, out.stderr or out.stdout,
                                                       timed_out=out.timed_out, timeout_s=task.setup_timeout_s)), logs
    return SetupOutcome(), logs


def run_probes(container: Any, task: TaskRun, env: Mapping[str, str]) -> dict[str, ProbeResult]:
    """Take every probe in the workspace after the CLI exited, each with its own timeout."""
    results: dict[str, ProbeResult] = {}
    for probe in task.probes:
        out = exec_in(container, probe.argv, env=tool_env(env), timeout_s=probe.timeout_s)
        results[probe.check_id] = probe.result(out.exit_code, out.stdout, out.stderr, timed_out=out.timed_out,
                                               error=out.error)
    return results
