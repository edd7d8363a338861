"""Sandboxes: where one CLI run happens, fresh every time, with only its arm's skills installed.

* ``docker``: one container per run from the local runner image (see :mod:`skillbench.generation._image`),
  removed after. The arm's skill families are copied, root-owned, to ``~/.claude/skills/<family>/`` before the
  CLI starts. The container is confined (:func:`~skillbench.generation._task_container.container_options`): a
  read-only root filesystem with sized tmpfs mounts for the workspace, both HOMEs and ``/tmp``, memory, process
  and CPU limits (:class:`~skillbench.generation._limits.ContainerLimits`), every capability dropped but the few
  root's own steps need, no new privileges; setup and probes run as a second user, ended before the CLI starts.
  With the simulated endpoint the container is *sealed*: it has no network at all (``network_mode="none"``:
  only its own loopback), and reaches the endpoint through a relay — on the host an :class:`EndpointRelay`
  forwards a Unix socket, bind-mounted read-only at ``/run/skillbench/``, to the endpoint's loopback port;
  inside, ``socat`` listens on the endpoint's own ``127.0.0.1:PORT`` and forwards to that socket, so
  ``ANTHROPIC_BASE_URL`` and the simulated site's URLs work unchanged and nothing else is reachable. With
  Anthropic's API the container uses the engine's default network (the host's, when the engine runs with
  ``--bridge=none``). The relay is at the end of this module (:class:`EndpointRelay`, :func:`sealed_address`,
  :func:`remove_stale_relays`).
* ``local``: a fresh HOME, TMPDIR and cwd per run on this machine, for machines without Docker. It cannot
  seal the network: runs share this machine's network, and it says so.

Both take the same argv and environment (:mod:`skillbench.generation._cli_call`), so the arms differ only in
the skills that are installed. Neither follows a symlink out of a skill family's folder (:func:`skill_entries`).

A run with a task (:class:`~skillbench.generation._workspace.TaskRun`) gets its workspace files and setup
commands before the CLI; in Docker every run's main process is a keeper and setup, CLI and the workspace
checks' probes are ``exec``s in that one container, each as its own user (:mod:`skillbench.generation._task_container`).
The local sandbox copies the files and runs setup in its working directory, but takes no probes: it cannot
hide a check from an agent with Bash on the host, so generate refuses such tasks there.
"""

from __future__ import annotations

import io
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import nullcontext, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from skillbench.checktypes import ProbeResult
from skillbench.generation._image import RUNNER_HOME, RUNNER_UID, SETUP_UID, WORKSPACE
from skillbench.generation._limits import ContainerLimits, cut_record
from skillbench.generation._workspace import SetupOutcome, TaskRun, run_setup_locally, tool_env
from skillbench.ledgers import SKILL_EVALS_DIR

TIMEOUT_EXIT = 124  # what coreutils' timeout returns; recorded when the external timeout fires
SETUP_FAILED_EXIT = -1  # a task whose setup failed: the CLI never ran
CONTAINER_PATH = "/usr/local/bin:/usr/bin:/bin"
LABEL = "skillbench.out_dir"
RELAY_DIR = "/run/skillbench"  # where a sealed container finds the relay's socket (mounted read-only)
RELAY_SOCKET = "ep.sock"  # short: a Unix socket path must fit in 107 bytes, folder included
MAX_SOCKET_PATH = 107  # sun_path is 108 bytes on Linux, with its terminating NUL
RELAY_FOLDER_PREFIX = "skillbench-relay-"  # + the owner's PID + a random part, in the temporary folder
RELAY_FAILED = "skillbench-sealed: the loopback relay did not start"
RELAY_START_TRIES = 1000  # × 10 ms: socat listens within milliseconds; 10 s means it never will

# The sealed container's first process: start the in-container half of the relay on the endpoint's own
# loopback address, wait until the kernel lists its listening socket (reading /proc/net/tcp opens no
# connection), then exec the command, so the CLI's first request never races the listener. The CLI becomes
# PID 1; when it exits the kernel ends socat with the container, so nothing is left behind.
SEALED_ENTRY = f"""\
host=$1 port=$2 key=$3; shift 3
socat -lp skillbench-relay "TCP-LISTEN:$port,bind=$host,reuseaddr,fork" "UNIX-CONNECT:{RELAY_DIR}/{RELAY_SOCKET}" &
relay=$!
tries=0
until grep -q " $key 00000000:0000 0A " /proc/net/tcp; do
  if ! kill -0 "$relay" 2>/dev/null || [ "$tries" -ge {RELAY_START_TRIES} ]; then
    echo "{RELAY_FAILED} on $host:$port" >&2
    exit 125
  fi
  tries=$((tries + 1))
  sleep 0.01
done
exec "$@"
"""

# How each sandbox treats the network, for logs and run metadata.
NETWORK_SEALED = "sealed"  # docker, network_mode none + the endpoint relay: loopback to the endpoint only
NETWORK_HOST = "host"  # docker, the host's network namespace (real backend on a bridgeless engine)
NETWORK_DEFAULT = "default"  # docker, the engine's default bridge (real backend)
NETWORK_UNSEALED = "unsealed"  # local: no container, this machine's network
LOCAL_NOT_SEALED = ("the local sandbox cannot seal the network: runs share this machine's network, and "
                    "\"loopback only\" rests on the simulated models' behaviour (only --sandbox docker enforces it)")


@dataclass
class SandboxResult:
    """How the CLI process ended. ``stdout`` is the stream-json transcript.

    For a task run, ``setup`` says how its setup commands went (when they failed the CLI did not run:
    ``exit_code`` is ``SETUP_FAILED_EXIT``), and ``probes`` holds each workspace check's probe, by check id.
    """

    exit_code: int
    timed_out: bool
    stdout: bytes
    stderr: bytes
    started: float
    ended: float
    image_id: str = ""
    setup: SetupOutcome | None = None
    probes: dict[str, ProbeResult] = field(default_factory=dict)
    worker: str = ""  # the Dask worker that ran it ("" on this machine)
    network: str = ""  # how the worker's sandbox treated the network ("": the sandbox's own ``network``)
    worker_lost: str = ""  # the Dask worker was lost mid-run: why (no output; retried once, never read as a result)
    # the run container's limits, the ones it hit and the output its caps cut ({} for the local sandbox)
    confinement: dict[str, Any] = field(default_factory=dict)

    @property
    def setup_failed(self) -> bool:
        return self.setup is not None and not self.setup.ok

    def record(self) -> dict[str, Any]:
        """What the run's ``metadata.json`` records of its container: ``container_limits``, ``limits_hit``
        (one phrase per limit the container hit) and ``output_cut`` (per stream cut by its cap: the cap and the
        bytes cut), each only when there is something to say."""
        out: dict[str, Any] = {}
        if self.confinement.get("limits"):
            out["container_limits"] = self.confinement["limits"]
        if self.confinement.get("hit"):
            out["limits_hit"] = list(self.confinement["hit"])
        if self.confinement.get("cut"):
            out["output_cut"] = dict(self.confinement["cut"])
        return out


class Sandbox(Protocol):
    """Runs one CLI process in isolation; HOME and TMPDIR in ``env`` are the container's paths.

    ``network`` says how the sandbox treats the network: ``sealed``, ``host``, ``default`` or ``unsealed``.
    """

    name: str
    network: str

    def run(self, argv: Sequence[str], env: Mapping[str, str], families: Sequence[Path], timeout: float,
            label: str, task: TaskRun | None = None) -> SandboxResult: ...


class SandboxFailure(RuntimeError):
    """The sandbox could not run the CLI at all (engine gone, image missing); names the run."""


class SkillLinkError(SandboxFailure):
    """A skill family holds a symlink that leaves its folder (or a file that is not a regular file)."""


# -- skills: what is installed, never more ---------------------------------------------------------------


def skill_entries(family: Path) -> Iterator[tuple[str, str, str]]:
    """Every entry of a skill family as ``(relative path, kind, link target)``, links checked, none followed.

    ``kind`` is ``dir``, ``file`` or ``link``; a link's target is given relative to the link and stays inside
    the family's folder, so the copy is the family itself and nothing of the machine around it. The family's own
    top-level ``evals/`` folder (skill-creator keeps a skill's evals, expectations and expected answers there) is
    never installed: the agent must not read how it is graded.

    Raises:
        SkillLinkError: the family's folder, or a symlink in it, resolves outside the family (or the skills
            root, for the folder), or an entry is neither a file, a folder nor a symlink (a FIFO, a device).
    """
    try:
        root = family.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise SkillLinkError(f"skill family {family.name}: {family} cannot be resolved ({exc})") from exc
    if not root.is_relative_to(family.parent.resolve()):
        raise SkillLinkError(f"skill family {family.name}: {family} is a symlink to {root}, outside the skills "
                             "root — put the family's files in the suite instead")
    yield "", "dir", ""
    for here, dirs, files in os.walk(root, followlinks=False):
        base = Path(here)
        if base == root and SKILL_EVALS_DIR in dirs:
            dirs.remove(SKILL_EVALS_DIR)  # os.walk does not descend into a removed name
        if base == root and SKILL_EVALS_DIR in files:
            files.remove(SKILL_EVALS_DIR)  # a symlink named evals/ is left out too
        for name in sorted(dirs) + sorted(files):
            path = base / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                try:
                    target = path.resolve()
                except (OSError, RuntimeError):  # a loop never resolves
                    target = None
                if target is None or not target.is_relative_to(root):
                    raise SkillLinkError(
                        f"skill family {family.name}: {family.name}/{rel} is a symlink to {os.readlink(path)}, "
                        f"outside the family's folder — replace it with the file, or a link inside {family}")
                yield rel, "link", os.path.relpath(target, path.parent)
            elif path.is_dir():
                yield rel, "dir", ""
            elif path.is_file():
                yield rel, "file", ""
            else:
                raise SkillLinkError(f"skill family {family.name}: {family.name}/{rel} is not a regular file")


def install_skills(families: Sequence[Path], home: Path) -> None:
    """Copy each family to ``home/.claude/skills/<family>/`` (links as links, see :func:`skill_entries`)."""
    skills = home / ".claude" / "skills"
    for family in families:
        entries = list(skill_entries(family))  # refuse before anything is copied
        src, dest = family.resolve(), skills / family.name
        for rel, kind, target in entries:
            path = dest / rel if rel else dest
            if kind == "dir":
                path.mkdir(parents=True, exist_ok=True)
            elif kind == "file":
                shutil.copy2(src / rel, path)
            else:
                os.symlink(target, path)


def skills_tar(families: Sequence[Path], uid: int) -> bytes:
    """A tar of ``.claude/skills/<family>/…`` owned by ``uid``, to unpack into HOME (links as links)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        def add(info: tarfile.TarInfo, data: bytes | None = None) -> None:
            info.uid = info.gid = uid
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data) if data is not None else None)

        for prefix in (".claude", ".claude/skills"):
            info = tarfile.TarInfo(prefix)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            add(info)
        for family in families:
            src = family.resolve()
            for rel, kind, target in list(skill_entries(family)):
                info = tarfile.TarInfo(f".claude/skills/{family.name}" + (f"/{rel}" if rel else ""))
                stat = (src / rel).lstat()
                info.mtime = int(stat.st_mtime)
                if kind == "dir":
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    add(info)
                elif kind == "link":
                    info.type, info.linkname, info.mode = tarfile.SYMTYPE, target, 0o777
                    add(info)
                else:
                    data = (src / rel).read_bytes()
                    info.size, info.mode = len(data), stat.st_mode & 0o777
                    add(info, data)
    return buf.getvalue()


# -- the sandboxes ---------------------------------------------------------------------------------------


class DockerSandbox:
    """One fresh container per run, removed after (the docker SDK).

    Args:
        image: the runner image's tag.
        out_dir: the week's folder (labels the containers, so leftovers of this week can be removed).
        sealed_endpoint: the simulated endpoint's base URL: run with no network, reaching only this endpoint
            through an :class:`EndpointRelay` (see the module docstring). None: the engine's network.
        host_network: share the host's network namespace (only without ``sealed_endpoint``).
        prefix: a command put before ``claude`` (e.g. strace, to check what the CLI connects to).
        limits: each run container's memory, processes, CPUs, tmpfs sizes and output caps.
    """

    name = "docker"

    def __init__(self, image: str, *, out_dir: Path, sealed_endpoint: str | None = None, host_network: bool = False,
                 prefix: Sequence[str] = (), limits: ContainerLimits | None = None):
        import docker

        self.client = docker.from_env(timeout=120)
        self.image = self.client.images.get(image)
        self.sealed = sealed_address(sealed_endpoint) if sealed_endpoint else None
        if self.sealed:
            self.network = NETWORK_SEALED
        elif host_network or not self.client.networks.list(names=["bridge"]):
            # Anthropic's API needs a network; an engine started with --bridge=none has no default bridge, so
            # share the host's network instead of failing every run.
            self.network = NETWORK_HOST
        else:
            self.network = NETWORK_DEFAULT
        self.out_dir = str(out_dir.resolve())
        self.prefix = list(prefix)
        self.limits = limits or ContainerLimits()
        self._tars: dict[tuple[str, ...], bytes] = {}

    def _tar(self, families: Sequence[Path]) -> bytes:
        key = tuple(str(f) for f in families)
        if key not in self._tars:  # the plugin arm installs every family: build its tar once
            self._tars[key] = skills_tar(families, 0)  # root's: the runner may read the skills, never change them
        return self._tars[key]

    def remove_leftovers(self) -> int:
        """Remove containers an interrupted generate left behind for this output folder."""
        stale = self.client.containers.list(all=True, filters={"label": f"{LABEL}={self.out_dir}"})
        for container in stale:
            container.remove(force=True)
        return len(stale)

    def _entry(self, command: Sequence[str]) -> list[str]:
        """The container's main process: ``command``, behind the sealed relay's entry when sealed."""
        if not self.sealed:
            return list(command)
        host, port = self.sealed
        return ["sh", "-c", SEALED_ENTRY, "skillbench-sealed", host, str(port), _proc_net_tcp_key(host, port),
                *command]

    def _create(self, command: list[str], env: Mapping[str, str], label: str, network: dict[str, Any]) -> Any:
        from skillbench.generation._task_container import container_options

        return self.client.containers.create(
            self.image.id, command=command, environment=dict(env), working_dir=WORKSPACE,
            labels={LABEL: self.out_dir, "skillbench.run_id": label}, detach=True,
            **container_options(self.limits), **network)

    @staticmethod
    def _relay_check(stderr: bytes) -> None:
        """Raise :class:`SandboxFailure` when the container's stderr says the sealed relay never started."""
        if RELAY_FAILED.encode() in stderr:  # the sandbox failed, not the run
            line = next(x for x in stderr.decode("utf-8", "replace").splitlines() if RELAY_FAILED in x)
            raise SandboxFailure(f"{line} (is socat in the runner image? run `skillbench image build`)")

    def run(self, argv: Sequence[str], env: Mapping[str, str], families: Sequence[Path], timeout: float,
            label: str, task: TaskRun | None = None) -> SandboxResult:
        tar = self._tar(families) if families else None  # a bad skill link refuses the run before a container
        return self.run_prepared(argv, env, tar, timeout, label, task)

    def run_prepared(self, argv: Sequence[str], env: Mapping[str, str], tar: bytes | None, timeout: float,
                     label: str, task: TaskRun | None = None) -> SandboxResult:
        """:meth:`run` with the skills packed by the caller (:func:`skills_tar`): what a Dask worker runs."""
        relay = EndpointRelay(*self.sealed) if self.sealed else None
        network = {"network_mode": "none", "volumes": {str(relay.folder): {"bind": RELAY_DIR, "mode": "ro"}}} \
            if relay else {"network_mode": "host" if self.network == NETWORK_HOST else None}
        with relay or nullcontext():
            return self._run_task(argv, env, tar, task or TaskRun(), timeout, label, network)

    def _run_task(self, argv: Sequence[str], env: Mapping[str, str], skills: bytes | None, task: TaskRun,
                  timeout: float, label: str, network: dict[str, Any]) -> SandboxResult:
        """One run: keeper container, skills and workspace in, setup, CLI, probes — all in the one container.

        Each step is an exec as its own user (:mod:`skillbench.generation._task_container`); a run without a
        task is the same with an empty one (no setup, no probes).
        """
        from skillbench.generation._task_container import (
            KEEPER,
            account,
            exec_in,
            handover,
            prepare,
            run_probes,
            run_setup,
            wait_until_sealed,
        )

        limits = self.limits
        record: dict[str, Any] = {"limits": limits.to_json(), "cut": {}}
        # the keeper's environment has no API key: setup commands and probes inherit it, only the CLI gets `env`
        container = self._create(self._entry(KEEPER), tool_env(env), label, network)
        try:
            container.start()
            started = time.time()
            if self.sealed and not wait_until_sealed(container, _proc_net_tcp_key(*self.sealed)):
                self._relay_check(container.logs(stdout=False, stderr=True))
                raise SandboxFailure(f"{RELAY_FAILED}: the sealed container stopped before its relay listened")
            why = prepare(container, _rooted_tar(skills, task.tar(RUNNER_UID) if task.items else None),
                          SETUP_UID if task.setup else RUNNER_UID)
            if why:
                raise SandboxFailure(why)
            setup = None
            if task.setup:
                setup, setup_logs, cut = run_setup(container, task, env, limits.log_bytes)
                if cut:
                    record["cut"]["setup"] = cut_record(limits.log_bytes, cut)
                why = handover(container, SETUP_UID, RUNNER_UID, wipe_setup_home=False) if setup.ok else ""
                if why:  # a setup process that cannot be ended: the CLI never starts beside it
                    setup = SetupOutcome(False, why)
                if not setup.ok:
                    hit = record["hit"] = account(container, limits)
                    if hit:
                        setup = SetupOutcome(False, f"{setup.detail} (hit the container's {' and '.join(hit)} limit)")
                    return SandboxResult(SETUP_FAILED_EXIT, False, b"", setup_logs, started, time.time(),
                                         self.image.id, setup=setup, confinement=record)
            cli = exec_in(container, [*self.prefix, "claude", *argv[1:]], env=env, timeout_s=timeout,
                          caps=(limits.output_bytes, limits.log_bytes))
            if cli.error:
                raise SandboxFailure(f"the CLI could not run: {cli.error}")
            ended = time.time()
            record["cut"].update({stream: cut_record(limits.output_bytes if stream == "stdout" else limits.log_bytes,
                                                     n) for stream, n in cli.cut.items()})
            probes: dict[str, ProbeResult] = {}
            if task.probes:
                why = handover(container, RUNNER_UID, SETUP_UID, wipe_setup_home=True)
                if why:  # never probe a workspace the agent's processes may still be writing
                    probes = {p.check_id: p.result(None, b"", b"", error=why) for p in task.probes}
                else:
                    probes, cuts = run_probes(container, task, env, limits.output_bytes)
                    record["cut"].update(cuts)
            record["hit"] = account(container, limits)
        finally:
            container.remove(force=True)
        exit_code = TIMEOUT_EXIT if cli.timed_out or cli.exit_code is None else cli.exit_code
        return SandboxResult(exit_code, cli.timed_out, cli.stdout, cli.stderr, started, ended, self.image.id,
                             setup=setup, probes=probes, confinement=record)


def _rooted_tar(skills: bytes | None, workspace: bytes | None) -> bytes:
    """One tar rooted at ``/``: the skills' (``.claude/…``) under HOME, the workspace's under the workspace."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as dest:
        for data, prefix in ((skills, RUNNER_HOME), (workspace, WORKSPACE)):
            if not data:
                continue
            with tarfile.open(fileobj=io.BytesIO(data)) as src:
                for member in src.getmembers():
                    content = src.extractfile(member) if member.isfile() else None
                    member.name = f"{prefix.lstrip('/')}/{member.name}"
                    dest.addfile(member, content)
    return out.getvalue()


class LocalSandbox:
    """A fresh HOME, TMPDIR and cwd per run on this machine (no container, no sealed network).

    It guarantees none of the Docker sandbox's confinement: setup, the CLI and everything the agent starts run
    as this machine's user, with no second user, no process sweep before the CLI, no limit on memory,
    processes, CPU or disk, writable skills and settings, and output kept whole. Use it only for content you
    trust (``--sandbox docker`` is for content under evaluation).
    """

    name = "local"
    network = NETWORK_UNSEALED

    def __init__(self, claude: Path, root: Path | None = None):
        self.claude = str(claude)
        self.root = root

    def run(self, argv: Sequence[str], env: Mapping[str, str], families: Sequence[Path], timeout: float,
            label: str, task: TaskRun | None = None) -> SandboxResult:
        if task is not None and task.probes:  # generate refuses these before any run; never grade on the host
            raise SandboxFailure(f"run {label}: workspace checks need --sandbox docker (the local sandbox cannot "
                                 "hide them from an agent with Bash on this machine)")
        with tempfile.TemporaryDirectory(prefix="skillbench-run-", dir=self.root) as tmp:
            home, tmpdir, work = (Path(tmp) / d for d in ("home", "tmp", "work"))
            for d in (home, tmpdir, work):
                d.mkdir()
            install_skills(families, home)
            # the caller's HOME/TMPDIR are the container's; here every run gets its own folders
            run_env = {**env, "HOME": str(home), "TMPDIR": str(tmpdir)}
            run_env["PATH"] = f"{Path(self.claude).parent}:{os.environ.get('PATH', CONTAINER_PATH)}"
            out_path, err_path = Path(tmp) / "stdout", Path(tmp) / "stderr"
            setup = None
            if task is not None:
                task.write_into(work)
                setup = run_setup_locally(task, work, tool_env(run_env))
                if not setup.ok:
                    now = time.time()
                    return SandboxResult(SETUP_FAILED_EXIT, False, b"", b"", now, now, setup=setup)
            started = time.time()
            with open(out_path, "wb") as out, open(err_path, "wb") as err:
                proc = subprocess.Popen([self.claude, *argv[1:]], env=run_env, cwd=work, stdout=out, stderr=err,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
                timed_out = False
                try:
                    exit_code = proc.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    timed_out, exit_code = True, TIMEOUT_EXIT
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
            ended = time.time()
            return SandboxResult(exit_code, timed_out, out_path.read_bytes(), err_path.read_bytes(), started, ended,
                                 setup=setup)


def choose_sandbox(requested: str | None, endpoint, out_dir: Path, log=print,
                   limits: ContainerLimits | None = None) -> Sandbox:
    """The docker sandbox when the engine answers (default), else the local one.

    ``limits`` confine each Docker run's container (default :class:`ContainerLimits`); the local sandbox has none.

    A simulated endpoint's runs get a sealed container (no network but the relay to the endpoint); the local
    sandbox cannot seal, and the log says so.
    """
    from skillbench.generation._toolchain import claude_path, docker_available

    simulated = getattr(endpoint, "kind", None) == "simulated"
    if requested in (None, "docker") and docker_available():
        from skillbench.generation._image import build_image

        tag = build_image(log=log)
        sandbox = DockerSandbox(tag, out_dir=out_dir, sealed_endpoint=endpoint.base_url if simulated else None,
                                limits=limits)
        removed = sandbox.remove_leftovers()
        if removed:
            log(f"generate: removed {removed} container(s) left by an interrupted run")
        remove_stale_relays()
        return sandbox
    if requested == "docker":
        raise SandboxFailure("--sandbox docker: the Docker engine does not answer — run `make setup` (starts dockerd)")
    if requested is None:
        log("generate: Docker engine not available; using the local sandbox (fresh HOME/TMPDIR/cwd per run)")
    if simulated:
        log(f"generate: no container isolation: {LOCAL_NOT_SEALED}")
    return LocalSandbox(claude_path())


# -- the endpoint relay of a sealed container --------------------------------------------------------------------------
# A Unix socket on the host, forwarded to the endpoint on loopback.
#
# A sealed container (network_mode="none") reaches the simulated endpoint only through this relay: one
# :class:`EndpointRelay` per run listens on a Unix socket in a private folder (bind-mounted read-only into the
# container) and forwards each connection to the endpoint's loopback host:port. Folders of a killed pass carry
# their owner's PID and are removed by the next pass (:func:`remove_stale_relays`).


def sealed_address(base_url: str) -> tuple[str, int]:
    """The IPv4 loopback ``(host, port)`` a sealed container serves the endpoint on (the endpoint's own).

    Raises:
        SandboxFailure: the endpoint is not at an IPv4 loopback literal with a port.
    """
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    try:
        ok = ipaddress.ip_address(host).version == 4 and ipaddress.ip_address(host).is_loopback
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        ok, port = False, 0
    if not ok:
        raise SandboxFailure(f"{base_url}: a sealed container reaches a simulated endpoint at an IPv4 loopback "
                             "address — use http://127.0.0.1:PORT")
    return host, port


def _proc_net_tcp_key(host: str, port: int) -> str:
    """How ``/proc/net/tcp`` writes ``host:port`` (little-endian hex), e.g. ``0100007F:1F90``."""
    return f"{socket.inet_aton(host)[::-1].hex().upper()}:{port:04X}"


class EndpointRelay:
    """The host half of a sealed container's network: a Unix socket whose connections go to the endpoint.

    It listens on ``<folder>/ep.sock`` in a private temporary folder (the folder the container mounts
    read-only) and forwards each connection, byte for byte, to the endpoint's loopback ``host:port``. It
    serves one container and is stopped with it: :meth:`stop` closes every connection, joins every thread
    and removes the folder.
    """

    def __init__(self, host: str, port: int, *, root: str | Path | None = None):
        self.host, self.port = host, port
        # the owner's PID in the name: a generate killed with -9 cannot stop its relays; the next one removes them
        self.folder = Path(tempfile.mkdtemp(prefix=f"{RELAY_FOLDER_PREFIX}{os.getpid()}-", dir=root))
        self.folder.chmod(0o755)  # the container's runner user must reach the socket inside
        self.socket_path = self.folder / RELAY_SOCKET
        if len(os.fsencode(self.socket_path)) > MAX_SOCKET_PATH:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise SandboxFailure(f"{self.socket_path}: a Unix socket path must fit in {MAX_SOCKET_PATH} bytes — "
                                 "set TMPDIR to a shorter folder (e.g. /tmp) for the sealed-network relay")
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._listener.bind(str(self.socket_path))
            self.socket_path.chmod(0o666)  # connect() needs write permission; the runner is not root
            self._listener.listen(64)
        except OSError:
            self._listener.close()
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        self._listener.settimeout(0.1)  # accept() wakes to notice stop()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._accept, name=f"skillbench-relay-{port}", daemon=True)
        self.connections = 0  # how many connections it relayed (for tests and logs)

    def start(self) -> EndpointRelay:
        self._acceptor.start()
        return self

    def __enter__(self) -> EndpointRelay:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                inner, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            inner.settimeout(None)
            thread = threading.Thread(target=self._relay, args=(inner,), name=f"skillbench-relay-{self.port}-conn",
                                      daemon=True)
            with self._lock:
                self.connections += 1
                self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            thread.start()

    def _track(self, *socks: socket.socket) -> bool:
        with self._lock:
            if self._stopping.is_set():
                return False
            self._open.update(socks)
            return True

    def _relay(self, inner: socket.socket) -> None:
        outer = None
        try:
            try:
                outer = socket.create_connection((self.host, self.port), timeout=10)
            except OSError:
                return  # the container sees its connection close, as it would for a dead endpoint
            outer.settimeout(None)
            outer.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if not self._track(inner, outer):
                return
            back = threading.Thread(target=_pump, args=(outer, inner), name=f"skillbench-relay-{self.port}-back",
                                    daemon=True)
            back.start()
            _pump(inner, outer)
            back.join()
        finally:
            with self._lock:
                self._open.difference_update(s for s in (inner, outer) if s is not None)
            for s in (inner, outer):
                if s is not None:
                    s.close()

    def stop(self) -> None:
        """Stop accepting, cut every open connection, join every thread, remove the socket's folder."""
        with self._lock:
            self._stopping.set()
            open_now = list(self._open)
        if self._acceptor.is_alive():
            self._acceptor.join(timeout=5)
        self._listener.close()
        for s in open_now:
            with suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout=5)
        shutil.rmtree(self.folder, ignore_errors=True)


def remove_stale_relays(root: str | Path | None = None) -> int:
    """Remove relay folders whose owner process is gone (a generate killed with -9); returns how many.

    A folder whose owner still runs is never touched, so concurrent passes keep their relays.
    """
    removed = 0
    for folder in Path(root or tempfile.gettempdir()).glob(f"{RELAY_FOLDER_PREFIX}*"):
        pid = folder.name.removeprefix(RELAY_FOLDER_PREFIX).split("-", 1)[0]
        if not pid.isdigit() or not folder.is_dir():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # the owner is alive
        except ProcessLookupError:
            pass
        except PermissionError:  # alive, and another user's
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    return removed


def _pump(src: socket.socket, dst: socket.socket) -> None:
    """Copy ``src`` to ``dst`` until end of stream, then pass the end on (half-close)."""
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with suppress(OSError):
            dst.shutdown(socket.SHUT_WR)
