"""A temporary git repository for the tests of version arms and ``skillbench compare``."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(repo: Path, *args: str) -> str:
    """``git -C repo ARGS``' output, stripped; a failing command fails the test."""
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    """Commit everything in the tree (as a throwaway author); the new commit."""
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")
