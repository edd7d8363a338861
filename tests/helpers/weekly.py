"""Helpers of the weekly-chain and report tests (no tests here): the kernel check and the tiny chain.

The chain runs once per session (the ``tiny_chain`` fixture in ``tests/conftest.py``): the tiny suite with one
model and one rep (8 runs) on the simulated endpoint, Docker when the engine answers, else the local sandbox.
It needs the pinned CLI and the ``skillbench`` kernel, which ``make setup`` installs; outside CI their absence
skips, in CI it fails.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from skillbench import weekly
from tests.helpers.shared import IN_CI, ROOT, TINY_SUITE
from tests.helpers.sim import require_cli

RUN_KEY = "t1"


def require_kernel() -> None:
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(weekly.KERNEL_NAME)
    except NoSuchKernel:
        if IN_CI:
            pytest.fail("CI must have the 'skillbench' Jupyter kernel: `make setup` registers it")
        pytest.skip("the 'skillbench' Jupyter kernel is not registered (run `make setup`)")


def declare_bundled_pandas(suite: Path) -> None:
    """Declare the bundled suite's pandas surface in a copy of a suite (its answers then carry code, and the chain's
    identifiers pass checks it: against the cache `make setup` fills, else every identifier reads unchecked)."""
    from skillbench.suite import load_config

    pandas = next(a for a in load_config(ROOT / "evals").api if a.package == "pandas")
    lines = ["", "[[api]]", f'package = "{pandas.package}"', f'version = "{pandas.version}"']
    if pandas.stubs:
        lines += [f'stubs = "{pandas.stubs}"', f'stubs_version = "{pandas.stubs_version}"']
    with (suite / "skillbench.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def run_tiny_chain(base: Path) -> dict[str, Any]:
    """Run the chain in ``base`` on a copy of the tiny suite (haiku × 3 conditions × 1 rep = 8 runs)."""
    require_cli()
    require_kernel()
    suite = base / "tiny-suite"
    shutil.copytree(TINY_SUITE, suite)
    declare_bundled_pandas(suite)
    opts = weekly.WeeklyOptions(suite_dir=suite, run_key=RUN_KEY, backend="sim", models=["haiku"], reps=1, jobs=2,
                                calibration_repeat=2, reports_dir=base / "reports")
    lines: list[str] = []
    result = weekly.run_weekly(opts, log=lines.append)
    return {"result": result, "base": base, "suite": suite, "run_dir": suite / "weekly" / RUN_KEY, "opts": opts,
            "log": lines, "reports": base / "reports"}
