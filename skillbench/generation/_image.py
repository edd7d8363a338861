"""The runner image: Debian minbase + the pinned Claude Code CLI, built locally (no registry is reachable).

The root filesystem comes from ``debootstrap --variant=minbase`` over Debian's package mirror, the CLI binary
from the project-local npm install, and ``docker import`` turns it into an image. The tag carries the CLI
version and a hash of every input, so the image is rebuilt only when an input changes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from skillbench.generation._toolchain import claude_path, claude_version
from skillbench.paths import TOOLS_DIR

IMAGE_REPO = "skillbench-runner"
DEBIAN_SUITE = "bookworm"
DEBIAN_MIRROR = "http://deb.debian.org/debian"
# The tools the CLI uses (Bash, Grep via ripgrep, curl for self-serving, git), strace for the safety check, and
# socat: the in-container half of a sealed run's relay to the simulated endpoint (see generation.sandbox).
# Python for what checks commonly call (`python`, `pytest`), and the analysis stack the bundled agentic tasks
# need. Debian bookworm's pandas is 1.5 and statsmodels 0.13: each bundled task's bug and fix are verified in
# this image, not in the project's venv (tests/suite/test_bundled_tasks.py).
PACKAGES = ("ca-certificates", "curl", "git", "ripgrep", "procps", "strace", "socat", "python3", "python-is-python3",
            "python3-pandas", "python3-statsmodels", "python3-pytest")
RUNNER_USER = "runner"
RUNNER_UID = 1000
RUNNER_HOME = f"/home/{RUNNER_USER}"
# Setup commands and the workspace checks' probes run as this second unprivileged user, never as the runner
# (the CLI's user): a process it leaves behind can neither read the CLI's environment nor write into its output,
# and root ends every one of them before the CLI starts (skillbench.generation._task_container).
SETUP_USER = "setup"
SETUP_UID = 1001
SETUP_HOME = f"/home/{SETUP_USER}"
WORKSPACE = "/workspace"
CACHE_DIR = TOOLS_DIR / "image"


class ImageBuildError(RuntimeError):
    """The image could not be built; the message says which step and why."""


@dataclass(frozen=True)
class ImageSpec:
    """Everything the image is made of; its hash names the image."""

    cli_version: str
    suite: str = DEBIAN_SUITE
    mirror: str = DEBIAN_MIRROR
    packages: tuple[str, ...] = PACKAGES
    user: str = RUNNER_USER
    uid: int = RUNNER_UID
    setup_user: str = SETUP_USER
    setup_uid: int = SETUP_UID
    layout_version: int = 2  # bump when the build steps below change

    @property
    def inputs_sha(self) -> str:
        payload = json.dumps(self.__dict__, sort_keys=True, default=list)
        return hashlib.sha256(payload.encode()).hexdigest()[:10]

    @property
    def tag(self) -> str:
        return f"{IMAGE_REPO}:{self.cli_version}-{self.inputs_sha}"


def current_spec() -> ImageSpec:
    """The spec for the installed CLI."""
    return ImageSpec(cli_version=claude_version())


def find_image(spec: ImageSpec | None = None):
    """The built image for ``spec`` (default: the installed CLI's), or None."""
    import docker

    spec = spec or current_spec()
    client = docker.from_env()
    try:
        return client.images.get(spec.tag)
    except docker.errors.ImageNotFound:
        return None


def _run(cmd: list[str], step: str, **kw) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise ImageBuildError(f"image build: {step} failed (exit {proc.returncode}): {' | '.join(tail)}")


def _make_rootfs(spec: ImageSpec, root: Path) -> None:
    if shutil.which("debootstrap") is None:
        raise ImageBuildError("image build: debootstrap is not installed — run `make setup` (as root)")
    _run(["debootstrap", "--variant=minbase", f"--include={','.join(spec.packages)}", spec.suite, str(root),
          spec.mirror], "debootstrap", timeout=1800)
    _run(["chroot", str(root), "useradd", "--create-home", "--uid", str(spec.uid), "--shell", "/bin/bash",
          spec.user], "useradd")
    # no home in the image: a run mounts a fresh tmpfs at SETUP_HOME (the root filesystem is read-only)
    _run(["chroot", str(root), "useradd", "--no-create-home", "--home-dir", SETUP_HOME, "--uid", str(spec.setup_uid),
          "--shell", "/bin/sh", spec.setup_user], "useradd")
    (root / SETUP_HOME.lstrip("/")).mkdir(mode=0o700)
    for sub in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for p in (root / sub).glob("*"):
            if p.is_file():
                p.unlink()
    (root / WORKSPACE.lstrip("/")).mkdir(mode=0o755, exist_ok=True)
    shutil.chown(root / WORKSPACE.lstrip("/"), spec.uid, spec.uid)
    target = root / "usr/local/bin/claude"
    shutil.copy2(claude_path(), target)
    target.chmod(0o755)


def build_image(force: bool = False, log=print) -> str:
    """Build the runner image unless an image with the same inputs exists.

    Args:
        force: rebuild even when the tag exists.
        log: where progress lines go.

    Returns:
        The image tag.

    Raises:
        ImageBuildError: a build step failed (debootstrap, useradd, import), named in the message.
    """
    import docker

    spec = current_spec()
    client = docker.from_env()
    if not force and find_image(spec) is not None:
        log(f"image {spec.tag} is up to date")
        return spec.tag
    started = time.monotonic()
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE_DIR, prefix="build-") as tmp:
        root = Path(tmp) / "rootfs"
        log(f"building {spec.tag}: debootstrap {spec.suite} minbase + {', '.join(spec.packages)}")
        _make_rootfs(spec, root)
        tarball = Path(tmp) / "rootfs.tar"
        _run(["tar", "-C", str(root), "--numeric-owner", "-cf", str(tarball), "."], "tar")
        changes = [
            f"USER {spec.user}",
            f"WORKDIR {WORKSPACE}",
            f"ENV HOME={RUNNER_HOME}",
            "ENV PATH=/usr/local/bin:/usr/bin:/bin",
            f"LABEL skillbench.inputs={spec.inputs_sha} skillbench.cli_version={spec.cli_version}",
        ]
        repo, tag = spec.tag.split(":")
        try:
            client.api.import_image_from_file(str(tarball), repository=repo, tag=tag, changes=changes)
        except docker.errors.APIError as exc:
            raise ImageBuildError(f"image build: docker import failed: {exc}") from exc
    image = client.images.get(spec.tag)
    log(f"built {spec.tag} in {time.monotonic() - started:.1f}s, size {image.attrs['Size'] / 1e6:.0f} MB")
    return spec.tag
