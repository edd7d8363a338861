"""Helpers of the judge and calibration tests (no tests here): the generated sim week, endpoints, answer keys.

The week is made once per test run (one xdist worker builds it for all: :mod:`tests.helpers.once`) by the
real ``skillbench generate`` (real Claude Code CLI against the simulated endpoint; Docker when the engine
answers, else the local sandbox) on the tiny suite, with the plugin arm, so there are 24 gradeable runs. The
``sim_week`` fixture (``tests/conftest.py``) gives every test its own copy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from skillbench.generation import Endpoint, ToolMissing, claude_path
from skillbench.vocab import ITEM_TYPES
from skillbench.weekly import model_endpoint
from tests.helpers.shared import IN_CI, ROOT, TINY_SUITE

CLI = [sys.executable, "-c", "import sys; from skillbench.cli import main; sys.exit(main())"]
RUN_KEY = "jt1"


def generate_week(out: Path) -> Path:
    """Generate the week into ``out`` (skips outside CI, fails in CI, when the pinned CLI is missing)."""
    try:
        claude_path()
    except ToolMissing as exc:
        if IN_CI:
            pytest.fail(f"CI must have the pinned CLI (make setup installs it): {exc}")
        pytest.skip(f"needs the Claude Code CLI to generate a run directory: {exc}")
    proc = subprocess.run(
        [*CLI, "generate", str(TINY_SUITE), "--run-key", RUN_KEY,
         "--out-dir", str(out), "--backend", "sim", "--jobs", "3"],
        capture_output=True, text=True, timeout=900, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@contextmanager
def judge_endpoint(*, flip_rate: float = 0.0, fabricated_quote_rate: float = 0.0, position_bias: float = 0.0,
                   tie_margin: float = 0.0, faults: Sequence[Mapping[str, Any]] = (),
                   judges: Mapping[str, Mapping[str, float]] | None = None) -> Iterator[Endpoint]:
    """A simulated endpoint whose judges have exactly these error knobs (and these faults).

    ``judges`` adds profiles by model-name key (``{"haiku": {"flip_rate": 0.2}}``) beside the default one.
    """
    judge = {"flip_rate": flip_rate, "fabricated_quote_rate": fabricated_quote_rate,
             "position_bias": position_bias, "tie_margin": tie_margin}
    profiles = {"judges": {"default": judge, **{k: {**judge, **v} for k, v in (judges or {}).items()}},
                "faults": list(faults)}
    with model_endpoint("sim", profiles=profiles) as ep:
        yield ep


def truth(run_dir: Path) -> pd.DataFrame:
    """The simulation's answer key for each run's final attempt: ``run_id, item_index, item_type, positive``."""
    t = pd.read_csv(run_dir / "truth.csv")
    final = {}
    for meta in run_dir.glob("*/metadata.json"):
        data = json.loads(meta.read_text())
        final[data["run_id"]] = max(a["attempt"] for a in data["attempts"])
    t = t[t["attempt"] == t["run_id"].map(final)]
    t = t[t["item_type"].isin(ITEM_TYPES)]  # rubric rows only: a task's check rows are graded by checks.csv
    t = t.assign(positive=t["decided"].isin(["covered", "violated"]).astype(int))
    return t[["run_id", "item_index", "item_type", "positive"]].reset_index(drop=True)


def scores(run_dir: Path) -> pd.DataFrame:
    return pd.read_csv(run_dir / "scores.csv", dtype=str, keep_default_na=False)


def run_cli(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``skillbench ARGV`` in a subprocess (the real console entry point)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run([*CLI, *argv], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)
