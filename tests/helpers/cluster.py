"""Helpers of the cluster tests (no tests here): the generate command line, Docker's presence, the clean-up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillbench.generation import docker_available
from tests.helpers.shared import IN_CI, ROOT

RUN_KEY = "ct"
GENERATE = ["--run-key", RUN_KEY, "--backend", "sim", "--seed", "7", "--models", "sonnet",
            "--conditions", "no-skill,with-skill", "--reps", "2", "--timeout", "180"]


def require_docker() -> None:
    if not docker_available():
        if IN_CI:
            pytest.fail("CI must have a Docker engine: `make setup` starts dockerd")
        pytest.skip("no Docker engine answers (run `make setup` as root to start dockerd)")


def generate_argv(suite: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "skillbench.cli", "generate", str(suite), "--out-dir", str(out), *GENERATE, *extra]


def generate_cli(suite: Path, out: Path, *extra: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``skillbench generate`` of the 8-run matrix in a subprocess (the real console entry point)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(generate_argv(suite, out, *extra), capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, env=env)


def remove_week_containers(out: Path) -> None:
    """Remove the containers labelled with this week (a killed worker's run keeps its container)."""
    import docker

    from skillbench.generation import LABEL

    client = docker.from_env()
    try:
        for container in client.containers.list(all=True, filters={"label": f"{LABEL}={out.resolve()}"}):
            container.remove(force=True)
    finally:
        client.close()
