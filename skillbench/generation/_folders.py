"""The run folders of a week, as generation reads and keeps them: what is finished, what it cost, what moves aside,
the skills commit they ran on, and the answer key written beside them.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from skillbench.ledgers import ASIDE_DIR, TMP_PREFIX, TRANSCRIPT_FILE, TRUTH_FILE, atomic_write_text
from skillbench.signals import read_transcript, run_states
from skillbench.suite import Suite
from skillbench.vocab import COMPLETE_STATES


def skills_sha(suite: Suite) -> str:
    """The skills commit (short) when the tree is a clean git checkout, else a content hash ``tree-…``."""
    root = suite.skills_root
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "."], capture_output=True,
                               text=True, timeout=10).stdout.strip()
        if sha and not dirty:
            return sha
    except (OSError, subprocess.SubprocessError):
        pass
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return "tree-" + digest.hexdigest()[:7]


def finished_runs(out_dir: Path) -> set[str]:
    """Run ids whose folder is complete by :func:`run_state` (``finished`` or ``budget_hit``).

    Every other folder (an API error or the external timeout after its retry, a harness or sandbox failure)
    is rerun by the next call, so a week interrupted by an outage heals on resume; its folder is moved aside
    first, never overwritten.
    """
    return {run_id for run_id, state in run_states(out_dir).items() if state in COMPLETE_STATES}


def spent_so_far(out_dir: Path, run_ids: set[str]) -> float:
    """What the finished runs cost, every attempt included (for ``--max-total-usd`` across resumed calls)."""
    total = 0.0
    for run_id in run_ids:
        for path in (out_dir / run_id).glob(f"*{TRANSCRIPT_FILE}"):
            total += float((read_transcript(path).result or {}).get("total_cost_usd") or 0.0)
    return total


def move_partials_aside(out_dir: Path, done: set[str], planned: set[str]) -> list[str]:
    """Move interrupted or failed run folders to ``_aside/`` so they are rerun; returns the moved names.

    Only folders of this plan's runs (and ``.tmp-`` folders) move: nothing else in the folder is touched. ``_aside/``
    keeps the latest failed attempt of each run, never one per resume: a run whose setup fails every week would
    otherwise add its captured output again at every pass.
    """
    aside = out_dir / ASIDE_DIR
    moved = []
    for path in sorted(out_dir.iterdir()):
        if not path.is_dir() or path.name.startswith("_"):
            continue
        name = path.name.removeprefix(TMP_PREFIX)
        if path.name.startswith(TMP_PREFIX) or (name in planned and name not in done):
            aside.mkdir(exist_ok=True)
            older = re.compile(rf"{re.escape(name)}\.\d{{8}}T\d{{6}}\.\d+")
            for stale in [p for p in aside.iterdir() if older.fullmatch(p.name)]:
                shutil.rmtree(stale, ignore_errors=True)
            target = aside / f"{name}.{time.strftime('%Y%m%dT%H%M%S')}.{len(moved)}"
            os.replace(path, target)
            moved.append(name)
    return moved


_TRUTH_LOCK = threading.Lock()


def write_truth(out_dir: Path, endpoint: Any, run_ids: list[str]) -> None:
    """Merge the simulation's truth rows of ``run_ids`` into ``OUT_DIR/truth.csv`` (nothing for the real API).

    The endpoint keeps truth itself and serves it read-only; this process alone writes the run directory's file.
    """
    if not getattr(endpoint, "simulated", False):
        return
    from skillbench.ledgers import TruthWriter

    rows = endpoint.fetch_truth(run_ids)
    with _TRUTH_LOCK:  # one rewrite at a time across the pass's worker threads
        TruthWriter(out_dir / TRUTH_FILE).record(rows)


# -- the prompt as run -----------------------------------------------------------------------------------
# The prompt as run: the copy of a test prompt a run's folder keeps (``test-prompt.json``), which the judge reads.
#
# A JSON prompt file is copied byte for byte; an imported spec (a dotnet or skill-creator eval) is written as JSON
# with each must's grading decided (:mod:`skillbench.suite._absence`), once, when the run is made.


def write_test_prompt(spec: Any, path: Path) -> None:
    """The prompt as run: a JSON prompt file byte for byte; an imported spec as JSON, each must's grading decided.

    The judge reads this copy and honours explicit ``absence`` values only, so an imported spec's absence rule
    (:mod:`skillbench.suite._absence`) is decided here, once, for whoever grades the run later.
    """
    from skillbench.suite import resolve_absence

    if not spec.absence_rule:
        shutil.copy2(spec.path, path)
        return
    atomic_write_text(path, resolve_absence(spec.test, rule=True).model_dump_json(indent=2, exclude_none=True) + "\n")
