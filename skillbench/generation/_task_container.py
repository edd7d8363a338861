"""A run in one Docker container: a keeper process, then every step as an ``exec``, each as its own user.

The container's main process only keeps it alive (behind Docker's init, which reaps orphans, and after the
sealed relay's entry when the network is sealed); keeper and relay run as root, which no other user can signal.
Every run, with a task or without, goes through the same steps in that one container:

1. **prepare** (root): unpack the skills and the workspace from a tar on stdin (the root filesystem is
   read-only and ``docker cp`` cannot write into a tmpfs mount), make ``~/.claude`` and everything in it
   root-owned (``~/.claude`` itself sticky and world-writable, so the CLI can add its own files but never
   replace the skills or the settings), HOME private to the runner, the workspace the setup user's.
2. **setup** (the setup user, its own HOME, in the workspace): the task's commands.
3. **handover** (root): end every process of the setup user (``kill(-1)`` as that user: one atomic sweep a
   fork bomb cannot outrun), check that none is left, empty ``/tmp``, give the workspace to the runner.
4. **CLI** (the runner): the only exec whose environment holds the key.
5. **handover** again before probes: end every process of the runner (the agent's), empty ``/tmp`` and the setup
   user's HOME, give the workspace to the setup user; then the **probes** run as the setup user, so nothing the
   agent left can rewrite their output or plant files in their HOME.
6. **account** (root): which limits the container hit (:mod:`skillbench.generation._limits`).

Every exec is wrapped in coreutils ``timeout -k 5 T`` inside the container, so its own timeout holds whatever
the host does; a host-side watchdog kills the container if even that does not end it. Output is read as a
stream into a :class:`~skillbench.generation._limits.Capture`, so a command that prints without end costs the
host at most the cap.
"""

from __future__ import annotations

import dataclasses
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from skillbench.checktypes import ProbeResult
from skillbench.generation._image import RUNNER_HOME, RUNNER_UID, SETUP_HOME, SETUP_UID, WORKSPACE
from skillbench.generation._limits import ACCOUNT_SCRIPT, Capture, ContainerLimits, cut_record, limits_hit
from skillbench.generation._workspace import SetupOutcome, TaskRun, command_failure, tool_env

KILL_AFTER_S = 5  # timeout's -k: a command that ignores TERM gets KILL this much later
WATCHDOG_GRACE_S = 30.0  # the host kills the container if an exec outlives its in-container timeout by this
ROOT_STEP_TIMEOUT_S = 120.0  # prepare, handover, account: a chown of a large workspace, never minutes
KEEPER = ("sleep", "infinity")
ROOT = "0"
TMPFS_OPTIONS = "rw,nosuid,nodev,exec"
HANDOVER_FAILED = 3  # the handover's exit when a process of the ended user survived
TMP = "/tmp"
SWEEP_TRIES = 40  # × 50 ms: a fork bomb frees a process slot within milliseconds

# The prepare step (root; the tar on stdin): $1 is the uid the workspace goes to first.
PREPARE_SCRIPT = f"""\
set -e
tar -x --no-same-owner -C /
mkdir -p {RUNNER_HOME}/.claude/skills
[ -e {RUNNER_HOME}/.claude/settings.json ] || printf '{{}}\\n' > {RUNNER_HOME}/.claude/settings.json
chown -hR 0:0 {RUNNER_HOME}/.claude
chmod -R go-w {RUNNER_HOME}/.claude/skills
chmod 0644 {RUNNER_HOME}/.claude/settings.json
chmod 1777 {RUNNER_HOME}/.claude
chown {RUNNER_UID}:{RUNNER_UID} {RUNNER_HOME}
chmod 0700 {RUNNER_HOME}
chown {SETUP_UID}:{SETUP_UID} {SETUP_HOME}
chmod 0700 {SETUP_HOME}
chown -hR "$1:$1" {WORKSPACE}
"""

# The CLI's exec, started by root (for a run with no setup commands, most runs, the prepare step is in it too): root
# unpacks the tar (PREPARE_SCRIPT, in its own shell so its ``set -e`` holds; what it prints is kept only when it
# fails), says so on stderr — the first bytes there, before anything the command can print, so nothing the agent
# does can fake it — and becomes the runner for the command, with nothing on stdin. That saves a runtime exec per
# run (tens of milliseconds of wall, and of CPU on the engine's side), and the exec's pipes are root's: a process of
# the runner cannot reopen the CLI's stdout through /proc to write into its transcript (its own inherited pipes are
# the CLI's to give). setpriv gives the identity docker's exec as the runner gives: its uid, gid and groups (``id``
# prints the same), no capabilities (a uid change from root clears them; no-new-privileges holds).
PREPARED = b"skillbench: prepared\n"
PREPARED_RUN = f"""\
prepare=$1; shift
if ! why=$(sh -c "$prepare" skillbench {RUNNER_UID} 2>&1 >/dev/null); then
  printf '%s\\n' "$why" >&2
  exit 1
fi
printf 'skillbench: prepared\\n' >&2
exec setpriv --reuid={RUNNER_UID} --regid={RUNNER_UID} --init-groups --inh-caps=-all -- "$@" </dev/null
"""
NOTHING_TO_PREPARE = ":"  # the prepare step of a run whose tar went in before its setup

# The handover (root): end every process of uid $1, check none is left, empty /tmp (and the setup user's HOME
# when $3 says so), give the workspace to uid $2. kill(-1) from a process of that uid signals all of its
# processes in one pass under the kernel's task-list lock, so none can fork its way out; zombies are skipped
# (Docker's init reaps them). ``left`` fails closed: a ps that cannot even run counts as processes left, and its
# output is read without a pipeline (a pipe's failing first command would read as "none").
HANDOVER_SCRIPT = f"""\
end=$1 to=$2 wipe_home=$3
left() {{
  procs=$(ps -e -o uid=,stat=) || return 0
  set -- $procs
  while [ $# -ge 2 ]; do
    if [ "$1" = "$end" ]; then case $2 in Z*) ;; *) return 0 ;; esac; fi
    shift 2
  done
  return 1
}}
tries=0
while left; do
  if [ "$tries" -ge 50 ]; then
    echo "skillbench: processes of uid $end survived the handover" >&2
    exit {HANDOVER_FAILED}
  fi
  setpriv --reuid="$end" --regid="$end" --clear-groups kill -KILL -1 2>/dev/null
  tries=$((tries + 1))
  sleep 0.02
done
find {TMP} -mindepth 1 -delete
[ "$wipe_home" = 1 ] && find {SETUP_HOME} -mindepth 1 -delete
chown -hR "$to:$to" {WORKSPACE}
"""


@dataclass(frozen=True)
class ExecOutcome:
    """How one exec ended; ``error`` says why it could not run at all (container gone)."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    seconds: float
    error: str = ""
    cut: dict[str, int] = field(default_factory=dict)  # stream → bytes cut by the cap


def container_options(limits: ContainerLimits) -> dict[str, Any]:
    """The docker SDK's ``containers.create`` arguments that confine one run's container."""
    mb = limits.memory_mb
    return {
        "user": ROOT, "init": True, "read_only": True,
        "tmpfs": {
            WORKSPACE: f"{TMPFS_OPTIONS},size={limits.workspace_mb}m,mode=0755",
            RUNNER_HOME: f"{TMPFS_OPTIONS},size={limits.home_mb}m,mode=0700,uid={RUNNER_UID},gid={RUNNER_UID}",
            SETUP_HOME: f"{TMPFS_OPTIONS},size={limits.home_mb}m,mode=0700,uid={SETUP_UID},gid={SETUP_UID}",
            TMP: f"{TMPFS_OPTIONS},size={limits.tmp_mb}m,mode=1777",
        },
        "mem_limit": f"{mb}m", "memswap_limit": f"{mb}m",  # no swap: the limit is the limit
        "pids_limit": limits.pids, "nano_cpus": int(limits.cpus * 1e9),
        # root here only unpacks, chowns, kills and reads counters; no other user gains a privilege (no setuid)
        "cap_drop": ["ALL"], "cap_add": ["CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETUID", "SETGID"],
        "security_opt": ["no-new-privileges"],
    }


def exec_in(container: Any, argv: Sequence[str], *, env: Mapping[str, str], timeout_s: float,
            user: int | str = RUNNER_UID, caps: tuple[int, int] = (1 << 20, 1 << 20), wrap: bool = True,
            stdin: bytes | None = None) -> ExecOutcome:
    """Run ``argv`` in the container as ``user`` in the workspace, under ``timeout -k 5 T`` (unless not ``wrap``).

    ``caps`` bound what is kept of stdout and stderr (:class:`Capture`); the rest is read and dropped. ``stdin``:
    bytes the command reads before it prints anything (a tar), sent whole, then end of file.
    """
    import docker
    from docker.utils.socket import STDOUT, frames_iter

    api = container.client.api
    command = ["timeout", "-k", str(KILL_AFTER_S), f"{timeout_s:g}", *argv] if wrap else list(argv)
    fired = threading.Event()
    watchdog = threading.Timer(timeout_s + KILL_AFTER_S + WATCHDOG_GRACE_S, _kill, args=(container, fired))
    watchdog.daemon = True
    out, err = Capture(caps[0]), Capture(caps[1])
    started = time.monotonic()
    try:
        exec_id = api.exec_create(container.id, command, user=str(user), workdir=WORKSPACE,
                                  environment=dict(env), stdin=stdin is not None)["Id"]
        watchdog.start()
        if stdin is None:
            for chunk_out, chunk_err in api.exec_start(exec_id, stream=True, demux=True):
                out.add(chunk_out)
                err.add(chunk_err)
        else:
            sock = api.exec_start(exec_id, socket=True)
            raw = getattr(sock, "_sock", sock)
            raw.settimeout(timeout_s + KILL_AFTER_S + 2 * WATCHDOG_GRACE_S)  # the watchdog ends it first
            try:
                raw.sendall(stdin)
                raw.shutdown(socket.SHUT_WR)
                for stream, chunk in frames_iter(raw, tty=False):
                    (out if stream == STDOUT else err).add(chunk)
            finally:
                sock.close()
        code = _exit_code(api, exec_id)
    except (docker.errors.APIError, OSError) as exc:
        line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return ExecOutcome(None, b"", b"", False, time.monotonic() - started, f"the container is gone ({line})")
    finally:
        watchdog.cancel()
    seconds = time.monotonic() - started
    cut = {name: c.cut for name, c in (("stdout", out), ("stderr", err)) if c.cut}
    if fired.is_set():  # the in-container timeout did not hold: the container is killed, the exec timed out
        return ExecOutcome(None, out.value(), err.value(), True, seconds, cut=cut)
    # timeout exits 124 after TERM, 137 when it had to KILL; a command's own 124 ends before its deadline
    timed_out = code in (124, 137) and seconds >= timeout_s - 0.05
    return ExecOutcome(code, out.value(), err.value(), timed_out, seconds, cut=cut)


def _exit_code(api: Any, exec_id: str) -> int | None:
    """The exec's exit code; its stream can end a moment before the engine marks it finished."""
    deadline = time.monotonic() + 1.0
    wait = 0.001  # on every run's path: the engine usually catches up within a millisecond or two
    while True:
        info = api.exec_inspect(exec_id)
        if not info.get("Running"):
            return info.get("ExitCode")
        if time.monotonic() >= deadline:
            return None
        time.sleep(wait)
        wait = min(wait * 2, 0.01)


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


def _root_step(container: Any, script: str, *args: str) -> ExecOutcome:
    return exec_in(container, ["sh", "-c", script, "skillbench", *args], env={"PATH": "/usr/bin:/bin"},
                   timeout_s=ROOT_STEP_TIMEOUT_S, user=ROOT)


def _failed(step: str, out: ExecOutcome) -> str:
    """Why a root step failed, in one line ("" when it did not)."""
    if out.error:
        return f"{step}: {out.error}"
    if out.exit_code != 0:
        why = (out.stderr or out.stdout).decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return f"{step} failed (exit {out.exit_code}{': ' + why[0] if why[0] else ''})"
    return ""


def prepare(container: Any, tar: bytes, first_owner: int) -> str:
    """Unpack ``tar`` (rooted at /) and set every owner (PREPARE_SCRIPT); "" or why it failed."""
    out = exec_in(container, ["sh", "-c", PREPARE_SCRIPT, "skillbench", str(first_owner)],
                  env={"PATH": "/usr/bin:/bin"}, timeout_s=ROOT_STEP_TIMEOUT_S, user=ROOT, stdin=tar)
    return _failed("preparing the container", out)


def prepare_and_run(container: Any, tar: bytes | None, argv: Sequence[str], *, env: Mapping[str, str],
                    timeout_s: float, caps: tuple[int, int]) -> tuple[str, ExecOutcome]:
    """:func:`prepare` (unless ``tar`` is None: unpacked already), then ``argv`` as the runner, in one exec.

    Returns why the prepare step failed ("" when it did not; the command then never ran) and the command's outcome.
    """
    script = PREPARE_SCRIPT if tar is not None else NOTHING_TO_PREPARE
    out = exec_in(container, ["sh", "-c", PREPARED_RUN, "skillbench", script, *argv], env=env,
                  timeout_s=timeout_s, user=ROOT, caps=(caps[0], caps[1] + len(PREPARED)), stdin=tar)
    if out.stderr.startswith(PREPARED):
        return "", dataclasses.replace(out, stderr=out.stderr[len(PREPARED):])
    if out.error:  # the exec never ran (the container is gone): the caller says the CLI could not run
        return "", out
    return _failed("preparing the container", out) or "preparing the container failed", out


def sweep(container: Any, uid: int) -> None:
    """``kill -KILL -1`` as ``uid``: every process of that user ends in one atomic pass.

    It is one process and forks none (no ``timeout`` around it), so it starts even while a fork bomb holds
    every process slot but the ones its failing forks free a moment later: it is tried until it runs.
    """
    for _ in range(SWEEP_TRIES):
        out = exec_in(container, ["kill", "-KILL", "-1"], env={"PATH": "/usr/bin:/bin"}, timeout_s=10, user=uid,
                      wrap=False)
        if out.exit_code in (0, 1) or (out.error and not container_running(container)):
            return  # it ran (1: nothing was left to signal), or the container is gone
        time.sleep(0.05)


def handover(container: Any, end: int, to: int, *, wipe_setup_home: bool) -> str:
    """End every process of uid ``end`` and give the workspace to uid ``to``; "" or why it failed.

    The script alone does it in one exec; when it cannot even fork (a fork bomb holds the process slots) the
    bare :func:`sweep` ends the bomb first and the script runs again.
    """
    args = (str(end), str(to), "1" if wipe_setup_home else "0")
    out = _root_step(container, HANDOVER_SCRIPT, *args)
    if out.exit_code != 0 and out.exit_code != HANDOVER_FAILED:
        sweep(container, end)
        out = _root_step(container, HANDOVER_SCRIPT, *args)
    return _failed(f"ending the processes of uid {end}", out)


def account(container: Any, limits: ContainerLimits) -> list[str]:
    """The limits the container hit so far; when not even a root exec can start, what the engine reports."""
    out = _root_step(container, ACCOUNT_SCRIPT, WORKSPACE, RUNNER_HOME, SETUP_HOME, TMP)
    if out.exit_code == 0:
        return limits_hit(out.stdout.decode("utf-8", "replace"), limits)
    pids_hit = [f"pids ({limits.pids} processes)"]
    if out.exit_code is None or out.exit_code in (126, 127) or b"fork" in out.stderr.lower():
        return pids_hit  # not even root could start a process: the process table is full
    try:  # a fork bomb holds every process slot: the engine's own count still answers
        pids = container.stats(stream=False, one_shot=True).get("pids_stats") or {}
    except Exception:  # noqa: BLE001 - the container is gone: nothing more to learn
        return []
    return pids_hit if pids.get("current", 0) >= limits.pids - 1 else []


def setup_env(env: Mapping[str, str]) -> dict[str, str]:
    """What setup commands and probes see: the tool environment (never the key) with the setup user's HOME."""
    return {**tool_env(env), "HOME": SETUP_HOME}


def run_setup(container: Any, task: TaskRun, env: Mapping[str, str], cap: int) -> tuple[SetupOutcome, bytes, int]:
    """Run each setup command (``sh -c``) as the setup user in the workspace; stops at the first failure.

    Returns the outcome, the commands' output (capped at ``cap`` in all) and how many bytes the cap cut.
    """
    logs = Capture(cap)
    for command in task.setup:
        out = exec_in(container, ["sh", "-c", command], env=setup_env(env), timeout_s=task.setup_timeout_s,
                      user=SETUP_UID, caps=(cap, cap))
        logs.add(out.stdout + out.stderr)
        logs.total += sum(out.cut.values())  # what this command's own capture dropped is cut from the logs too
        if out.error:
            return SetupOutcome(False, f"{command}: {out.error}"), logs.value(), logs.cut
        if out.timed_out or out.exit_code != 0:
            return SetupOutcome(False, command_failure(command, out.exit_code, out.stderr or out.stdout,
                                                       timed_out=out.timed_out, timeout_s=task.setup_timeout_s)), \
                logs.value(), logs.cut
    return SetupOutcome(), logs.value(), logs.cut


def run_probes(container: Any, task: TaskRun, env: Mapping[str, str],
               cap: int) -> tuple[dict[str, ProbeResult], dict[str, dict[str, int]]]:
    """Take every probe as the setup user in the workspace after the CLI exited, each with its own timeout.

    Returns the results by check id and, per probe whose output the cap cut, what it cut.
    """
    results: dict[str, ProbeResult] = {}
    cuts: dict[str, dict[str, int]] = {}
    for probe in task.probes:
        out = exec_in(container, probe.argv, env=setup_env(env), timeout_s=probe.timeout_s, user=SETUP_UID,
                      caps=(cap, cap))
        results[probe.check_id] = probe.result(out.exit_code, out.stdout, out.stderr, timed_out=out.timed_out,
                                               error=out.error)
        if out.cut:
            cuts[f"probe {probe.check_id}"] = cut_record(cap, sum(out.cut.values()))
    return results, cuts
