"""Where the third-party datasets live at test time (../shared beside the repo; never copied into it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
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
