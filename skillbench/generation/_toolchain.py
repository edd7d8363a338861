"""Where the external tools skillbench drives live: the pinned Claude Code CLI and the Docker engine.

``make setup`` installs the CLI into a project-local npm prefix (``.tools/claude-code``); nothing here
downloads anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from skillbench.paths import TOOLS_DIR

CLAUDE_CODE_VERSION = "2.1.328"  # the pin; the Makefile reads it from here
CLAUDE_PREFIX = TOOLS_DIR / "claude-code"


class ToolMissing(RuntimeError):
    """An external tool is not installed; the message says how to install it."""


def claude_path() -> Path:
    """The pinned ``claude`` binary: ``$SKILLBENCH_CLAUDE``, the project-local install, else ``PATH``.

    Raises:
        ToolMissing: no CLI found (run ``make setup``).
    """
    explicit = [os.environ.get("SKILLBENCH_CLAUDE"), CLAUDE_PREFIX / "node_modules" / ".bin" / "claude"]
    for cand in explicit:
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return Path(cand).resolve()
    on_path = shutil.which("claude")  # only the pinned version: a different CLI changes what is measured
    if on_path and _version_of(on_path) == CLAUDE_CODE_VERSION:
        return Path(on_path).resolve()
    raise ToolMissing(
        f"Claude Code CLI not found (looked in $SKILLBENCH_CLAUDE, {CLAUDE_PREFIX}, PATH) — run `make setup`"
    )


def _version_of(exe: str) -> str:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.split()[0] if out.split() else ""


@lru_cache(maxsize=8)
def claude_version(path: str | None = None) -> str:
    """``2.1.328`` for the installed CLI (``claude --version`` prints ``2.1.328 (Claude Code)``)."""
    exe = path or str(claude_path())
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60, check=True).stdout
    return out.split()[0]


def docker_available() -> bool:
    """True when a Docker engine answers a ping on the default socket."""
    try:
        import docker

        client = docker.from_env(timeout=5)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:  # noqa: BLE001 - any failure means "no engine"
        return False
