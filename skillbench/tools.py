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

CLAUDE_CODE_VERSION = "2.1.328"  # keep in sync with the Makefile's CLAUDE_CODE_VERSION
PROJECT_ROOT = Path(__file__).resolve().parent.parent
CLAUDE_PREFIX = PROJECT_ROOT / ".tools" / "claude-code"


class ToolMissing(RuntimeError):
    """An external tool is not installed; the message says how to install it."""


def claude_path() -> Path:
    """The pinned ``claude`` binary: ``$SKILLBENCH_CLAUDE``, the project-local install, else ``PATH``.

    Raises:
        ToolMissing: no CLI found (run ``make setup``).
    """
    candidates = [os.environ.get("SKILLBENCH_CLAUDE"), CLAUDE_PREFIX / "node_modules" / ".bin" / "claude",
                  shutil.which("claude")]
    for cand in candidates:
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return Path(cand).resolve()
    raise ToolMissing(
        f"Claude Code CLI not found (looked in $SKILLBENCH_CLAUDE, {CLAUDE_PREFIX}, PATH) — run `make setup`"
    )


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
