"""Where the test data lives: the committed ``tests/data`` and the third-party datasets at test time (../shared
beside the repo; never copied into it), and the skip-outside-CI rule for what is missing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = ROOT / "tests" / "data"
TINY_SUITE = DATA_DIR / "tiny-suite"
TINY_WEEK = DATA_DIR / "tiny-week"
SHARED = Path(os.environ.get("SKILLBENCH_SHARED", ROOT.parent / "shared"))
QDRANT = SHARED / "datasets" / "qdrant-skills"
DOTNET = SHARED / "datasets" / "dotnet-skills"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require(path: Path) -> Path:
    """Skip outside CI when a shared dataset is absent; in CI its absence is a failure."""
    if not path.exists():
        if IN_CI:
            pytest.fail(f"{path} is missing: CI lays shared/ beside the clone")
        pytest.skip(f"{path} is missing (shared datasets are not beside this checkout)")
    return path
