"""The summary a generate leg of a CI matrix writes: ``shard-i-of-N.json`` (:mod:`skillbench.ledgers._shards`).

Besides the counts and run lists, it records what the leg ran with (:func:`~skillbench.generation._provenance.
pass_provenance`) and, from its complete runs' metadata, the sandboxes and endpoint kinds they ran in
(``sandboxes``, ``endpoints``): a leg that fell back to the local sandbox, or ran on another backend, did not run
the same thing as its siblings, and ``skillbench consolidate`` refuses to merge it.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.generation._provenance import pass_provenance
from skillbench.generation._retries import RetryLog
from skillbench.ledgers import GENERATE_LEG_FILES, Shard, leg_files, metadata_or_none, write_summary
from skillbench.signals import run_dirs, run_state
from skillbench.suite import Suite
from skillbench.vocab import COMPLETE_STATES


def write_generate_summary(out_dir: Path, shard: Shard, suite: Suite, plan: pd.DataFrame, *,
                           written: Sequence[str], retry_log: RetryLog, failure: str = "") -> Path:
    """Write what the leg owns (expected), has complete (observed), committed this pass (written) and retried.

    ``observed`` counts complete run folders of the leg's own slice only; a folder of another leg's slice in this
    directory is listed under ``foreign`` (consolidate refuses it: a run must come from exactly one leg).
    """
    expected = shard.select(plan.run_id)
    states = {d.name: run_state(d) for d in run_dirs(out_dir)}
    complete = {run_id for run_id, state in states.items() if state in COMPLETE_STATES}
    own = set(expected)
    retried = [r for r in retry_log.old + retry_log.new if r.get("run_id") in own]
    metas = _metadata(out_dir, sorted(complete & own))
    images = sorted({str(m.get("image_id", "")) for m in metas} - {""})
    fields: dict[str, Any] = {
        "expected": len(expected), "observed": len(complete & own), "written": len(set(written) & own),
        "retries": len(retried), "expected_runs": expected, "observed_runs": sorted(complete & own),
        "foreign_runs": sorted(set(states) - own), "image_ids": images, "sandbox_failure": failure,
        "sandboxes": sorted({str(m.get("sandbox", "")) for m in metas} - {""}),
        "endpoints": sorted({str(m.get("endpoint", "")) for m in metas} - {""}),
        # what the leg wrote (the pass has reconciled: its ledgers are final); consolidate holds its files to it
        "files": leg_files(out_dir, GENERATE_LEG_FILES),
        "host": socket.gethostname(), "finished": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        **pass_provenance(out_dir, suite.suite_dir),
    }
    return write_summary(out_dir, shard, "generate", fields)


def _metadata(out_dir: Path, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The readable ``metadata.json`` of each run (a complete run has one; an unreadable one is skipped)."""
    return [meta for run_id in run_ids if (meta := metadata_or_none(out_dir / run_id)) is not None]
