"""Load a suite for a run: preflight it, and refuse it when it has errors (warnings do not stop a run)."""

from __future__ import annotations

from pathlib import Path

from skillbench.suite.format import Suite
from skillbench.suite.validation import SuiteError, preflight


def load_suite(suite_dir: str | Path = "evals", **overrides) -> Suite:
    """Read a suite for a run: preflight it and refuse it when it has errors.

    Raises:
        SuiteError: the suite has preflight errors (warnings do not stop a run).
    """
    report = preflight(suite_dir, **overrides)
    if report.errors:
        raise SuiteError(report)
    return report.suite
