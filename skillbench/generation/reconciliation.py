"""Write ``reconciliation.json`` for a generated week (the rule is :func:`skillbench.ledgers.reconcile_runs`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.ledgers.atomic import atomic_write_text
from skillbench.ledgers.files import MANIFEST_FILE, PLAN_FILE, RECONCILIATION_FILE, TRANSCRIPT_FILE
from skillbench.ledgers.readers import week_run_key
from skillbench.ledgers.reconciliation import reconcile_runs
from skillbench.signals.manifest import run_dirs
from skillbench.signals.transcript import read_transcript


def reconcile(
    out_dir: str | Path,
    *,
    capped: list[str] | None = None,
    limited: list[str] | None = None,
    not_started: list[str] | None = None,
    stopped_legs: list[str] | None = None,
) -> dict[str, Any]:
    """Reconcile the run folders of ``OUT_DIR`` against its plan and manifest; write and return the report."""
    out_dir = Path(out_dir)
    plan = pd.read_csv(out_dir / PLAN_FILE, dtype={"run_id": str})
    observed = [d.name for d in run_dirs(out_dir) if read_transcript(d / TRANSCRIPT_FILE).complete]
    manifest_path = out_dir / MANIFEST_FILE
    written = list(pd.read_csv(manifest_path, dtype={"run_id": str}).run_id) if manifest_path.exists() else []
    report = reconcile_runs(plan.run_id, observed=observed, written=written, run_key=week_run_key(out_dir),
                            capped=capped or (), limited=limited or (), not_started=not_started or (),
                            stopped_legs=stopped_legs or ()).to_json()
    atomic_write_text(out_dir / RECONCILIATION_FILE, json.dumps(report, indent=2) + "\n")
    return report
