"""Reconciliation: every planned run accounted for, or the week says what is missing.

``reconciliation.json`` compares three counts — expected (``plan.csv``), observed (finished run folders) and
written (``manifest.csv`` rows) — and lists every run that is missing, unexpected or duplicated, every run a
``--max-total-usd`` cap or ``--limit`` kept from starting, and every leg stopped as a systemic failure.
``complete`` is true only when all planned runs were run and written exactly once. Shape::

    {"run_key": str, "expected": int, "observed": int, "written": int,
     "missing": [run_id], "unexpected": [run_id], "duplicate": [run_id],
     "capped": [run_id], "limited": [run_id], "not_started": [run_id], "stopped_legs": ["model|condition"],
     "accounted": bool,   # nothing unexplained (missing runs are all capped/limited/not started)
     "complete": bool}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.fileio import atomic_write_text
from skillbench.ledgers import week_run_key
from skillbench.signals import TRANSCRIPT, run_dirs
from skillbench.transcript import read_transcript


def reconcile(
    out_dir: str | Path,
    *,
    capped: list[str] | None = None,
    limited: list[str] | None = None,
    not_started: list[str] | None = None,
    stopped_legs: list[str] | None = None,
) -> dict[str, Any]:
    """Write and return ``OUT_DIR/reconciliation.json``."""
    out_dir = Path(out_dir)
    plan = pd.read_csv(out_dir / "plan.csv", dtype={"run_id": str})
    expected = list(plan.run_id)
    observed = [d.name for d in run_dirs(out_dir) if read_transcript(d / TRANSCRIPT).complete]
    manifest_path = out_dir / "manifest.csv"
    written = list(pd.read_csv(manifest_path, dtype={"run_id": str}).run_id) if manifest_path.exists() else []
    explained = set(capped or []) | set(limited or []) | set(not_started or [])
    missing = sorted(set(expected) - set(observed))
    unexpected = sorted(set(observed) - set(expected))
    duplicate = sorted({r for r in written if written.count(r) > 1})
    unwritten = sorted(set(observed) - set(written))
    report = {
        "run_key": week_run_key(out_dir),
        "expected": len(expected),
        "observed": len(observed),
        "written": len(set(written)),
        "missing": missing,
        "unexpected": unexpected,
        "duplicate": duplicate,
        "unwritten": unwritten,
        "capped": sorted(capped or []),
        "limited": sorted(limited or []),
        "not_started": sorted(not_started or []),
        "stopped_legs": sorted(stopped_legs or []),
    }
    report["accounted"] = (set(missing) <= explained and not unexpected and not duplicate and not unwritten
                           and not report["stopped_legs"])
    report["complete"] = report["accounted"] and not missing
    atomic_write_text(out_dir / "reconciliation.json", json.dumps(report, indent=2) + "\n")
    return report
