"""Gradeability: whether a run's answer can be graded, and if not, the one reason recorded.

Used by the judge (``judge-skips.csv``) and the scorecard's coverage, so both name the same reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skillbench.arms import lists_skill


def skip_reason(signals: Mapping[str, Any], answer: str | None = None) -> str | None:
    """Why a run cannot be graded (the judge's ``judge-skips.csv`` and the scorecard's coverage), else None.

    Budget-capped answers are truncated; a skilled-arm run (``with-skill``, ``plugin`` and their version arms
    ``with-skill@REF``) without its skill measures nothing, nor does a ``placebo`` run whose placebo is not listed
    (:func:`skillbench.arms.lists_skill`); an errored run has nothing to grade; nor has an empty answer (checked
    only when ``answer`` is given).
    """
    if signals.get("budget_hit") == 1:
        return "budget-capped (truncated)"
    if lists_skill(str(signals.get("condition") or "")) and signals.get("skill_available") != 1:
        return "invalid: skill unavailable"
    exit_code = signals.get("exit_code")
    if exit_code != 0:
        return f"errored (exit {'missing' if exit_code is None else exit_code})"
    if signals.get("is_error"):
        return "errored (API error)"
    if answer is not None and not answer.strip():
        return "no gradeable answer"
    return None
