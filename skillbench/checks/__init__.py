"""Deterministic checks: grading a run's checks (:mod:`~skillbench.checks.grade`) by their types' records
(:mod:`skillbench.checktypes`), the run's ``checks.json`` / the week's ``checks.csv``
(:mod:`~skillbench.checks.ledger`), and the docs' table of check types (:mod:`~skillbench.checks.table`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("CheckResult", "grade_check", "grade_checks", "run_facts"), "grade"),
    **dict.fromkeys(("write_checks_ledger", "write_run_checks", "read_run_checks", "checks_rows"), "ledger"),
    "check_types_table": "table",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.checks.grade import CheckResult, grade_check, grade_checks, run_facts
    from skillbench.checks.ledger import checks_rows, read_run_checks, write_checks_ledger, write_run_checks
    from skillbench.checks.table import check_types_table
