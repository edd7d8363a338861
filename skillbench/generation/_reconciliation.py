"""Write ``reconciliation.json`` for a generated week (the rule is :func:`skillbench.ledgers.reconcile_runs`).

A run folder is observed only when :func:`skillbench.signals.run_state` says it is complete (``finished`` or
``budget_hit``): the same rule resume uses, so a run that ended in an API error after its retry is ``missing``
here and rerun by the next pass (ARCHITECTURE.md, "Run states").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skillbench.ledgers import (
    CHECKS_FILE,
    MANIFEST_FILE,
    RECONCILIATION_FILE,
    LedgerError,
    PassAccount,
    atomic_write_text,
    expected_check_rows,
    read_checks,
    read_manifest_ids,
    read_plan,
    read_plan_ids,
    reconcile_runs,
    week_run_key,
)
from skillbench.signals import run_dirs, run_state
from skillbench.vocab import COMPLETE_STATES


def reconcile(
    out_dir: str | Path,
    *,
    capped: list[str] | None = None,
    limited: list[str] | None = None,
    not_started: list[str] | None = None,
    stopped_legs: list[str] | None = None,
    invalid_families: Mapping[str, list[str]] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Reconcile the run folders of ``OUT_DIR`` against its plan and manifest; write and return the report.

    Args:
        out_dir: the week's folder (holds ``plan.csv``).
        capped, limited, not_started: planned runs this pass kept from starting, and why.
        stopped_legs: ``model|condition`` legs stopped as a systemic failure.
        invalid_families: families the suite left out for a broken spec, with the validator's lines
            (:attr:`skillbench.suite.Suite.invalid_families`).
        extra: more keys to record after the documented ones (e.g. ``selection``, ``sandbox_failure``).
    """
    out_dir = Path(out_dir)
    planned = _plan_families(out_dir) or read_plan_ids(out_dir) or []
    observed = [d.name for d in run_dirs(out_dir) if run_state(d) in COMPLETE_STATES]
    written = read_manifest_ids(out_dir / MANIFEST_FILE)
    owed = expected_check_rows(out_dir, observed)
    checks = read_checks(out_dir / CHECKS_FILE)
    report = reconcile_runs(planned, observed=observed, written=written, run_key=week_run_key(out_dir),
                            account=PassAccount(capped or (), limited or (), not_started or (), stopped_legs or (),
                                                invalid_families or {}),
                            checks_expected=owed or None,
                            checks_written=zip(checks["run_id"], checks["check_id"], strict=True)).to_json()
    report.update(extra or {})
    atomic_write_text(out_dir / RECONCILIATION_FILE, json.dumps(report, indent=2) + "\n")
    return report


def _plan_families(out_dir: Path) -> dict[str, str]:
    """Each planned run's skill family; {} when the plan does not say (then completeness is the whole week's)."""
    try:
        plan = read_plan(out_dir)
    except LedgerError:
        return {}
    return {} if plan is None else dict(zip(plan["run_id"], plan["skill_family"], strict=True))


def summary_line(report: Mapping[str, Any]) -> str:
    """One line for the end of a generate pass: planned, finished, kept out of the pass, missing, complete or not.

    ``missing`` counts only the runs nothing explains (an API error, a timeout, a failed sandbox, a run never
    started after a failure); ``limited``, ``capped`` and ``not started`` runs are listed in the file.
    """
    explained = set(report.get("capped", [])) | set(report.get("limited", [])) | set(report.get("not_started", []))
    unexplained = [r for r in report.get("missing", []) if r not in explained]
    parts = [f"{report.get('expected', 0)} planned", f"{report.get('observed', 0)} finished"]
    for key, label in (("limited", "limited"), ("capped", "capped"), ("not_started", "not started")):
        if report.get(key):
            parts.append(f"{len(report[key])} {label}")
    parts.append(f"{len(unexplained)} missing")
    if report.get("checks_missing"):
        parts.append(f"{len(report['checks_missing'])} check rows missing")
    for key in ("unexpected", "duplicate", "unwritten"):
        if report.get(key):
            parts.append(f"{len(report[key])} {key}")
    if report.get("stopped_legs"):
        parts.append(f"stopped legs {', '.join(report['stopped_legs'])}")
    verdict = ("complete" if report.get("complete") else
               "incomplete (every run accounted for)" if report.get("accounted") else
               "INCOMPLETE: planned runs unaccounted for")
    invalid = report.get("invalid_families") or {}
    if invalid:  # a week with a family left out for its spec is never complete, and says which
        verdict += f"; {len(invalid)} invalid famil{'y' if len(invalid) == 1 else 'ies'} ({', '.join(invalid)})"
    return f"{', '.join(parts)} — {verdict}"
