"""Deterministic checks: grading a run's checks (:mod:`~skillbench.checks.grade`), the tool alias table
(:mod:`~skillbench.checks.tools`), and the run's ``checks.json`` / the week's ``checks.csv``
(:mod:`~skillbench.checks.ledger`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("ProbeResult", "CheckResult", "grade_check", "grade_checks", "FILE_OK", "FILE_MISSING",
                     "FILE_NOT_REGULAR"), "grade"),
    **dict.fromkeys(("TOOL_ALIASES", "canonical_tool", "tools_used", "matching_uses"), "tools"),
    **dict.fromkeys(("write_checks_ledger", "write_run_checks", "read_run_checks", "checks_rows"), "ledger"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.checks.grade import (
        FILE_MISSING,
        FILE_NOT_REGULAR,
        FILE_OK,
        CheckResult,
        ProbeResult,
        grade_check,
        grade_checks,
    )
    from skillbench.checks.ledger import checks_rows, read_run_checks, write_checks_ledger, write_run_checks
    from skillbench.checks.tools import TOOL_ALIASES, canonical_tool, matching_uses, tools_used
