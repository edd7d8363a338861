"""Skill versions: ``skillbench compare --base REF`` — the changed families run at two commits, head against base,
and the merge report (``compare.md``, ``results.json``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("Changes", "discover_changes", "prompt_inputs"), "changes"),
    **dict.fromkeys(("Comparison", "CompareError", "plan_comparison", "run_key_for", "COMPARE_DIR"), "comparison"),
    **dict.fromkeys(("compare_verdicts", "commit_mismatches", "preference_loss", "exit_code", "FAIL_ON"),
                    "verdicts"),
    **dict.fromkeys(("CompareResults", "json_schema", "shipped_schema", "SCHEMA_VERSION"), "results"),
    **dict.fromkeys(("render_compare",), "report"),
    **dict.fromkeys(("compare", "CompareOutcome", "COMPARE_REPORT_FILE", "RESULTS_FILE"), "run"),
    **dict.fromkeys(("comparison_frames", "execute_compare_notebook"), "notebook"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.compare.changes import Changes, discover_changes, prompt_inputs
    from skillbench.compare.comparison import COMPARE_DIR, CompareError, Comparison, plan_comparison, run_key_for
    from skillbench.compare.notebook import comparison_frames, execute_compare_notebook
    from skillbench.compare.report import render_compare
    from skillbench.compare.results import SCHEMA_VERSION, CompareResults, json_schema, shipped_schema
    from skillbench.compare.run import COMPARE_REPORT_FILE, RESULTS_FILE, CompareOutcome, compare
    from skillbench.compare.verdicts import FAIL_ON, commit_mismatches, compare_verdicts, exit_code, preference_loss
