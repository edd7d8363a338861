"""Fixtures several test packages share: a copy of the session's generated sim week (judge, pairwise judge,
calibration) and the session's weekly chain on the tiny suite (weekly notebooks, report screenshots)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.judge import RUN_KEY, generate_week
from tests.helpers.weekly import run_tiny_chain


@pytest.fixture(scope="session")
def generated_sim_week(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's generated run directory (made on first use; read-only for tests — use ``sim_week``)."""
    return generate_week(tmp_path_factory.mktemp("judge-week") / RUN_KEY)


@pytest.fixture
def sim_week(generated_sim_week: Path, tmp_path: Path) -> Path:
    """A private copy of the session's generated sim week (24 gradeable runs of the tiny suite)."""
    return Path(shutil.copytree(generated_sim_week, tmp_path / "week"))


@pytest.fixture(scope="session")
def tiny_chain(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The weekly chain, run once per session on a copy of the tiny suite (skips without the CLI or the kernel)."""
    return run_tiny_chain(tmp_path_factory.mktemp("weekly-chain"))
