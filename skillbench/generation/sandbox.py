"""Sandboxes: where one CLI run happens, fresh every time, with only its arm's skills installed.

* ``docker``: one container per run from the local runner image (see :mod:`skillbench.image`), removed after.
  The arm's skill families are copied to ``~/.claude/skills/<family>/`` before the CLI starts. With the
  simulated endpoint the container uses the host's network namespace and talks to the endpoint on
  127.0.0.1 (the engine runs with ``--bridge=none``: no bridge address exists to leak through); with
  Anthropic's API it uses the engine's default network.
* ``local``: a fresh HOME, TMPDIR and cwd per run on this machine, for machines without Docker.

Both take the same argv and environment (:mod:`skillbench.claude_cli`), so the arms differ only in the
skills that are installed.
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from skillbench.generation.image import RUNNER_HOME, RUNNER_UID, WORKSPACE

TIMEOUT_EXIT = 124  # what coreutils' timeout returns; recorded when the external timeout fires
CONTAINER_PATH = "/usr/local/bin:/usr/bin:/bin"
LABEL = "skillbench.out_dir"


@dataclass
class SandboxResult:
    """How the CLI process ended. ``stdout`` is the stream-json transcript."""

    exit_code: int
    timed_out: bool
    stdout: bytes
    stderr: bytes
    started: float
    ended: float
    image_id: str = ""


class Sandbox(Protocol):
    """Runs one CLI process in isolation; HOME and TMPDIR in ``env`` are the container's paths."""

    name: str

    def run(self, argv: Sequence[str], env: Mapping[str, str], families: Sequence[Path], timeout: float,
            label: str) -> SandboxResult: ...


def _skills_tar(families: Sequence[Path], uid: int) -> bytes:
    """A tar of ``.claude/skills/<family>/…`` owned by ``uid``, to unpack into HOME."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        def owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
            info.uid = info.gid = uid
            info.uname = info.gname = ""
            return info

        for prefix in (".claude", ".claude/skills"):
            info = tarfile.TarInfo(prefix)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(owned(info))
        for family in families:
            tar.add(family, arcname=f".claude/skills/{family.name}", filter=owned)
    return buf.getvalue()


class DockerSandbox:
    """One fresh container per run, removed after (the docker SDK)."""

    name = "docker"

    def __init__(self, image: str, *, host_network: bool, out_dir: Path, prefix: Sequence[str] = ()):
        import docker

        self.client = docker.from_env(timeout=120)
        self.image = self.client.images.get(image)
        # Anthropic's API needs a network; an engine started with --bridge=none has no default bridge, so
        # share the host's network instead of failing every run.
        self.host_network = host_network or not self.client.networks.list(names=["bridge"])
        self.out_dir = str(out_dir.resolve())
        self.prefix = list(prefix)  # e.g. strace, to check what the CLI connects to
        self._tars: dict[tuple[str, ...], bytes] = {}

    def _tar(self, families: Sequence[Path]) -> bytes:
        key = tuple(str(f) for f in families)
        if key not in self._tars:  # the plugin arm installs every family: build its tar once
            self._tars[key] = _skills_tar(families, RUNNER_UID)
        return self._tars[key]

    def remove_leftovers(self) -> int:
        """Remove containers an interrupted generate left behind for this output folder."""
        stale = self.client.containers.list(all=True, filters={"label": f"{LABEL}={self.out_dir}"})
        for container in stale:
            container.remove(force=True)
        return len(stale)

    def run(self, argv: Sequence[str], env: Mapping[str, str], families: Sequence[Path], timeout: float,
            label: str) -> SandboxResult:
        import requests

        container = self.client.containers.create(
            self.image.id, command=[*self.prefix, "claude", *argv[1:]], environment=dict(env), user=str(RUNNER_UID),
            working_dir=WORKSPACE, network_mode="host" if self.host_network else None,
            labels={LABEL: self.out_dir, "skillbench.run_id": label}, detach=True,
        )
        try:
            if families:
                container.put_archive(RUNNER_HOME, self._tar(families))
            started = time.time()
            container.start()
            timed_out = False
            try:
                exit_code = int(container.wait(timeout=timeout)["StatusCode"])
            except requests.exceptions.ConnectionError:  # the SDK's read timeout
                timed_out, exit_code = True, TIMEOUT_EXIT
                container.kill()
            ended = time.time()
            stdout = container.logs(stdout=True, stderr=False)
            stderr = container.logs(stdout=False, stderr=True)
            return SandboxResult(exit_code, timed_out, stdout, stderr, started, ended, self.image.id)
        finally:
            container.remove(force=True)


class LocalSandbox:
    """A fresh HOME, TMPDIR and cwd per run on this machine (no container)."""

    name = "local"

    def __init__(self, claude: Path, root: Path | None = None):
        self.claude = str(claude)
        self.root = root

    def run(self, argv: Sequence[str], env: Mapping[str, str], families: Sequence[Path], timeout: float,
            label: str) -> SandboxResult:
        with tempfile.TemporaryDirectory(prefix="skillbench-run-", dir=self.root) as tmp:
            home, tmpdir, work = (Path(tmp) / d for d in ("home", "tmp", "work"))
            for d in (home, tmpdir, work):
                d.mkdir()
            for family in families:
                shutil.copytree(family, home / ".claude" / "skills" / family.name)
            # the caller's HOME/TMPDIR are the container's; here every run gets its own folders
            run_env = {**env, "HOME": str(home), "TMPDIR": str(tmpdir)}
            run_env["PATH"] = f"{Path(self.claude).parent}:{os.environ.get('PATH', CONTAINER_PATH)}"
            out_path, err_path = Path(tmp) / "stdout", Path(tmp) / "stderr"
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
            return SandboxResult(exit_code, timed_out, out_path.read_bytes(), err_path.read_bytes(), started, ended)


class SandboxFailure(RuntimeError):
    """The sandbox could not run the CLI at all (engine gone, image missing); names the run."""


def choose_sandbox(requested: str | None, endpoint, out_dir: Path, log=print) -> Sandbox:
    """The docker sandbox when the engine answers (default), else the local one."""
    from skillbench.generation.toolchain import claude_path, docker_available

    if requested in (None, "docker") and docker_available():
        from skillbench.generation.image import build_image

        tag = build_image(log=log)
        sandbox = DockerSandbox(tag, host_network=endpoint.kind == "simulated", out_dir=out_dir)
        removed = sandbox.remove_leftovers()
        if removed:
            log(f"generate: removed {removed} container(s) left by an interrupted run")
        return sandbox
    if requested == "docker":
        raise SandboxFailure("--sandbox docker: the Docker engine does not answer — run `make setup` (starts dockerd)")
    if requested is None:
        log("generate: Docker engine not available; using the local sandbox (fresh HOME/TMPDIR/cwd per run)")
    return LocalSandbox(claude_path())
