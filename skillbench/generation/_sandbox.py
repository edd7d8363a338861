"""Sandboxes: where one CLI run happens, fresh every time, with only its arm's skills installed.

* ``docker``: one container per run from the local runner image (see :mod:`skillbench.generation._image`),
  removed after. The arm's skill families are copied, root-owned, to ``~/.claude/skills/<family>/`` before the
  CLI starts. The container is confined (:func:`~skillbench.generation._task_container.container_options`): a
  read-only root filesystem with sized tmpfs mounts for the workspace, both HOMEs and ``/tmp``, memory, process
  and CPU limits (:class:`~skillbench.generation._limits.ContainerLimits`), every capability dropped but the few
  root's own steps need, no new privileges; setup and probes run as a second user, ended before the CLI starts.
  Every container is *sealed*, whatever the endpoint: it has no network at all (``network_mode="none"``: only
  its own loopback), and reaches the endpoint only through its run's relay (:mod:`skillbench.generation._relay`):
  a Unix socket bind-mounted read-only at ``/run/skillbench/``, which ``socat`` inside serves on the loopback
  address the CLI is given (the simulation's own ``127.0.0.1:PORT``, so its site's URLs work unchanged). The
  container holds the run's token, never the endpoint's key.
* ``local``: a fresh HOME, TMPDIR and cwd per run on this machine, for machines without Docker. It guarantees no
  isolation (the run is this user, on this network), says so, and is refused for a real endpoint on content
  skillbench did not write (:func:`refuse_local_real`).

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
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from skillbench.checktypes import ProbeResult
from skillbench.generation._image import RUNNER_HOME, RUNNER_UID, SETUP_UID, WORKSPACE
from skillbench.generation._limits import ContainerLimits, cut_record
from skillbench.generation._relay import (
    RELAY_SOCKET,
    Relay,
    RelayError,
    RelayPlan,
    relay_folder,
    remove_stale_relays,
)
from skillbench.generation._warm import Warm, WarmPool, remove_warm
from skillbench.generation._workspace import SetupOutcome, TaskRun, run_setup_locally, tool_env
from skillbench.ledgers import SKILL_EVALS_DIR

TIMEOUT_EXIT = 124  # what coreutils' timeout returns; recorded when the external timeout fires
SETUP_FAILED_EXIT = -1  # a task whose setup failed: the CLI never ran
CONTAINER_PATH = "/usr/local/bin:/usr/bin:/bin"
LABEL = "skillbench.out_dir"
RELAY_DIR = "/run/skillbench"  # where a sealed container finds the relay's socket (mounted read-only)
RELAY_FAILED = "skillbench-sealed: the loopback relay did not start"
RELAY_READY = "skillbench-sealed: the loopback relay listens"  # the entry's one line on stdout, read by _warm_up
# × 10 ms at least: socat listens within milliseconds, but a 2-core machine running many containers can stall a
# fresh one for seconds; a minute means it never will
RELAY_START_TRIES = 6000

# The sealed container's first process: start the in-container half of the relay on the endpoint's own
# loopback address, wait until the kernel lists its listening socket (reading /proc/net/tcp opens no
# connection), say so on stdout (the host reads that line from the container's log stream: no exec, no process
# started in the container), then exec the command, so the CLI's first request never races the listener. When the
# command exits the kernel ends socat with the container, so nothing is left behind.
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
echo "{RELAY_READY}"
exec "$@"
"""

# How each sandbox treats the network, for logs and run metadata.
NETWORK_SEALED = "sealed"  # docker, network_mode none + the run's relay: the Messages API (and the sim's site) only
NETWORK_UNSEALED = "unsealed"  # local: no container, this machine's network
LOCAL_NOT_SEALED = ("the local sandbox guarantees no isolation: runs share this machine's network, files and user, "
                    "so content under evaluation can read what this user can (only --sandbox docker seals a run)")


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
    exchanges: list[dict[str, Any]] | None = None  # the run's relay record (None: the run never reached a relay)
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

    ``network`` says how the sandbox treats the network: ``sealed`` or ``unsealed``. Every run goes through its
    own relay (``relay``: the endpoint, the key it swaps in, the run's identity); ``ANTHROPIC_BASE_URL`` and
    ``ANTHROPIC_API_KEY`` in ``env`` are the relay's address and the run's token, never the endpoint's key.
    """

    name: str
    network: str

    def run(self, argv: Sequence[str], env: Mapping[str, str], families: Sequence[Path], timeout: float,
            label: str, task: TaskRun | None = None, *, relay: RelayPlan) -> SandboxResult: ...

    def close(self) -> None:
        """End the pass: nothing the sandbox started outlives it."""


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

    Every container is sealed: no network but its run's relay (``network_mode="none"``; see
    :mod:`skillbench.generation._relay`), whatever the endpoint.

    Args:
        image: the runner image's tag.
        out_dir: the week's folder (labels the containers, so leftovers of this week can be removed).
        prefix: a command put before ``claude`` (e.g. strace, to check what the CLI connects to).
        limits: each run container's memory, processes, CPUs, tmpfs sizes and output caps.
        warm: start the next runs' containers while these run, and remove them after (:mod:`skillbench.generation.
            _warm`); the pass must :meth:`close` the sandbox. False: each run's container is made and removed on
            its own path (what a Dask worker does: it has no end of pass to close at).
    """

    name = "docker"
    network = NETWORK_SEALED

    def __init__(self, image: str, *, out_dir: Path, prefix: Sequence[str] = (), limits: ContainerLimits | None = None,
                 warm: bool = False):
        import docker

        from skillbench.generation._task_container import container_running

        self.client = docker.from_env(timeout=120)
        self.image = self.client.images.get(image)
        self.out_dir = str(out_dir.resolve())
        self.prefix = list(prefix)
        self.limits = limits or ContainerLimits()
        self._tars: dict[tuple[str, ...], bytes] = {}
        self._pool = WarmPool(self._warm_up, container_running) if warm else None
        if self._pool is not None:  # a caller that never closes still leaves nothing running when it exits
            weakref.finalize(self, self._pool.close)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()

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

    @staticmethod
    def _entry(command: Sequence[str], address: tuple[str, int]) -> list[str]:
        """The container's main process: the sealed relay's entry, then ``command``."""
        host, port = address
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
            label: str, task: TaskRun | None = None, *, relay: RelayPlan) -> SandboxResult:
        tar = self._tar(families) if families else None  # a bad skill link refuses the run before a container
        return self.run_prepared(argv, env, tar, timeout, label, task, relay=relay)

    def run_prepared(self, argv: Sequence[str], env: Mapping[str, str], tar: bytes | None, timeout: float,
                     label: str, task: TaskRun | None = None, *, relay: RelayPlan) -> SandboxResult:
        """:meth:`run` with the skills packed by the caller (:func:`skills_tar`): what a Dask worker runs."""
        env = {**env, **relay.sandbox_env(relay.inside)}
        # the keeper's environment has no API key (setup commands and probes inherit it, only the CLI gets `env`),
        # so a container made before its run holds nothing of it
        key = (sealed_address(relay.inside), tuple(sorted(tool_env(env).items())))
        warm = self._pool.take(key) if self._pool is not None else self._warm_up(key, label)
        try:
            try:
                served = Relay(relay, folder=warm.folder)
            except RelayError as exc:
                raise SandboxFailure(str(exc)) from exc
            with served:
                result = self._run_task(argv, env, tar, task or TaskRun(), timeout, warm.container)
        finally:
            if self._pool is not None:
                self._pool.discard(warm)  # removed behind the run, off its path
            else:
                remove_warm(warm)
        result.exchanges = list(served.exchanges)
        return result

    def _warm_up(self, key: tuple[Any, ...], label: str = "warm") -> Warm:
        """A started container whose sealed relay listens, and the (empty) folder its run's relay socket goes in."""
        from skillbench.generation._task_container import KEEPER

        address, keeper_env = key
        folder = relay_folder()
        network = {"network_mode": "none", "volumes": {str(folder): {"bind": RELAY_DIR, "mode": "ro"}}}
        try:
            container = self._create(self._entry(KEEPER, address), dict(keeper_env), label, network)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        warm = Warm(container, folder, key)
        try:
            container.start()
            if not _said_ready(container):
                self._relay_check(container.logs(stdout=False, stderr=True))
                raise SandboxFailure(f"{RELAY_FAILED}: the sealed container stopped before its relay listened")
        except BaseException:
            remove_warm(warm)
            raise
        return warm

    def _run_task(self, argv: Sequence[str], env: Mapping[str, str], skills: bytes | None, task: TaskRun,
                  timeout: float, container: Any) -> SandboxResult:
        """One run in a started, sealed keeper container: skills and workspace in, setup, CLI, probes.

        Each step is an exec as its own user (:mod:`skillbench.generation._task_container`); a run without a
        task is the same with an empty one (no setup, no probes).
        """
        from skillbench.generation._task_container import (
            account,
            handover,
            prepare,
            prepare_and_run,
            run_probes,
            run_setup,
        )

        limits = self.limits
        record: dict[str, Any] = {"limits": limits.to_json(), "cut": {}}
        started = time.time()
        tar = _rooted_tar(skills, task.tar(RUNNER_UID) if task.items else None)
        command = [*self.prefix, "claude", *argv[1:]]
        caps = (limits.output_bytes, limits.log_bytes)
        setup = None
        if not task.setup:  # the prepare step and the CLI in one exec: nothing has to run between them
            why, cli = prepare_and_run(container, tar, command, env=env, timeout_s=timeout, caps=caps)
            if why:
                raise SandboxFailure(why)
        else:
            why = prepare(container, tar, SETUP_UID)
            if why:
                raise SandboxFailure(why)
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
            why, cli = prepare_and_run(container, None, command, env=env, timeout_s=timeout, caps=caps)
            if why:
                raise SandboxFailure(why)
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
        # which limits a run hit is read when it can matter: a task with checks, or a CLI that did not end
        # well (an answer-only run that ended well is graded on its answer alone: one exec less per run)
        if task.probes or cli.timed_out or cli.exit_code != 0 or cli.cut:
            record["hit"] = account(container, limits)
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

    def close(self) -> None:
        """Nothing outlives a local run."""

    def run(self, argv: Sequence[str], env: Mapping[str, str], families: Sequence[Path], timeout: float,
            label: str, task: TaskRun | None = None, *, relay: RelayPlan) -> SandboxResult:
        # The relay still swaps the token for the key and records the answers, but it cannot keep anything on this
        # machine from the run: the run shares this user, its files and its network.
        with Relay(relay, unix=False) as served:
            result = self._run_here(argv, {**env, **relay.sandbox_env(served.url)}, families, timeout, label, task)
        result.exchanges = list(served.exchanges)
        return result

    def _run_here(self, argv: Sequence[str], env: Mapping[str, str], families: Sequence[Path], timeout: float,
                  label: str, task: TaskRun | None) -> SandboxResult:
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

    Every container is sealed (no network but its run's relay); the local sandbox guarantees no isolation, and the
    log says so (generation refuses it for a real endpoint on content skillbench did not write:
    :func:`refuse_local_real`).
    """
    from skillbench.generation._toolchain import claude_path, docker_available

    if requested in (None, "docker") and docker_available():
        from skillbench.generation._image import build_image

        tag = build_image(log=log)
        sandbox = DockerSandbox(tag, out_dir=out_dir, limits=limits, warm=True)
        removed = sandbox.remove_leftovers()
        if removed:
            log(f"generate: removed {removed} container(s) left by an interrupted run")
        remove_stale_relays()
        return sandbox
    if requested == "docker":
        raise SandboxFailure("--sandbox docker: the Docker engine does not answer — run `make setup` (starts dockerd)")
    if requested is None:
        log("generate: Docker engine not available; using the local sandbox (fresh HOME/TMPDIR/cwd per run)")
    log(f"generate: no container isolation: {LOCAL_NOT_SEALED}")
    return LocalSandbox(claude_path())


def refuse_local_real(sandbox: Sandbox, endpoint: Any, suite_dir: Path) -> None:
    """The local sandbox with a real endpoint, on content skillbench did not write: refused before any run.

    On this machine a run is this user: a skill, a setup command or the agent's own Bash can read this process's
    environment (the API key) and every file the user can. Only skillbench's own bundled suite may run that way.

    Raises:
        SandboxFailure: the sandbox is local, the endpoint real, and the suite is not the bundled one.
    """
    from skillbench.paths import DEFAULT_SUITE

    if sandbox.name != "local" or getattr(endpoint, "kind", None) != "real":
        return
    if Path(suite_dir).resolve() == DEFAULT_SUITE.resolve():
        return
    raise SandboxFailure(f"--sandbox local with --backend anthropic: {suite_dir} is content skillbench did not write, "
                         "and the local sandbox cannot keep it from the API key or this machine's files — use "
                         "--sandbox docker (every run sealed behind its relay)")


# -- a sealed container's address for its relay ---------------------------------------------------------------------
# Every container is sealed (network_mode="none"): it reaches the endpoint only through its run's relay
# (:class:`skillbench.generation._relay.Relay`), a Unix socket in a private folder bind-mounted read-only, which
# socat inside serves on the loopback address the CLI is given (:attr:`RelayPlan.inside`).


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


def _said_ready(container: Any) -> bool:
    """Whether the sealed entry said its relay listens, read from the container's log stream.

    Reading the stream costs the engine a file read, where an ``exec`` costs a runtime process in the container: this
    runs once per run. The stream ends when the container stops (the entry gives up after ``RELAY_START_TRIES``),
    so it never waits for ever; the docker client's own socket timeout bounds a stalled engine.
    """
    stream = container.logs(stdout=True, stderr=False, stream=True, follow=True)
    seen = b""
    try:
        for chunk in stream:
            seen = (seen + chunk)[-4096:]  # the keeper prints nothing else; a bound all the same
            if RELAY_READY.encode() in seen:
                return True
        return False
    finally:
        stream.close()  # a followed stream stays open until the container ends: one connection per container


def _proc_net_tcp_key(host: str, port: int) -> str:
    """How ``/proc/net/tcp`` writes ``host:port`` (little-endian hex), e.g. ``0100007F:1F90``."""
    return f"{socket.inet_aton(host)[::-1].hex().upper()}:{port:04X}"
