"""Where a merge goes: what ``--out`` may already hold, and the one step that puts a merge in place.

A merge is built whole in a temporary sibling of ``RUN_DIR`` (:func:`staging_dir`) and committed by
:func:`commit`: on Linux one ``renameat2(RENAME_EXCHANGE)`` swaps the two folders atomically, so a kill leaves
either the old ``RUN_DIR`` (nothing, or the previous merge) or the complete new one, never a mix. Where the kernel
or file system cannot exchange, the old folder is renamed aside and the new one renamed into place (a kill between
the two leaves no ``RUN_DIR`` — still never a partial merge — and the old one beside it). The run directory's
lock file is hard-linked into the new folder first, so the lock the pass holds stays the lock of ``RUN_DIR``.

``--out`` may be empty (or absent), or hold an earlier consolidation of the same plan, which the new merge
replaces. Anything else is refused in one line (:class:`OutputRefused`), before anything is written:

* a generation merge refuses a folder that is not a generation consolidation of this plan (a week of another
  plan, a leg's own folder, files a consolidation does not write) and a consolidation that already holds a judge
  merge (its grades would be orphaned: use a new ``--out``);
* a judge merge needs the generation the legs graded (``plan.csv`` and ``manifest.csv``) and refuses rubric
  judge files that no judge consolidation wrote (the week was judged in place: merging legs over it would mix two
  passes).
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from skillbench.consolidate._problems import OutputRefused
from skillbench.ledgers import (
    CHECKS_FILE,
    CONSOLIDATION_FILE,
    JUDGE_BATCHES_FILE,
    JUDGE_SKIPS_FILE,
    LOCK_FILE,
    MANIFEST_FILE,
    PASS_FILE,
    PLACEBO_DIR,
    PLAN_FILE,
    RECONCILIATION_FILE,
    RETRIES_FILE,
    RUN_FILE,
    RUN_JUDGE_FILE,
    SCORECARD_COMMENT_FILE,
    SCORECARD_FILE,
    SCORES_FILE,
    SLUGS_FILE,
    TRUTH_FILE,
    VERSIONS_DIR,
    read_consolidation,
)

# What a generation merge writes at the top of RUN_DIR (besides the run folders), and what may be derived from it.
GENERATION_FILES = frozenset({PLAN_FILE, RUN_FILE, TRUTH_FILE, CHECKS_FILE, RETRIES_FILE, SLUGS_FILE, MANIFEST_FILE,
                              RECONCILIATION_FILE, CONSOLIDATION_FILE, PLACEBO_DIR, VERSIONS_DIR, LOCK_FILE,
                              SCORECARD_FILE, SCORECARD_COMMENT_FILE})
JUDGE_FILES = (SCORES_FILE, JUDGE_SKIPS_FILE, PASS_FILE, JUDGE_BATCHES_FILE)  # the rubric judge's, top level
RENAME_EXCHANGE = 2  # linux/fs.h


def check_generation_out(run_dir: Path, *, plan_sha: str, run_ids: Iterable[str]) -> dict[str, Any] | None:
    """What ``--out`` holds before a generation merge: None (empty) or the earlier consolidation it replaces.

    Raises:
        OutputRefused: ``RUN_DIR`` holds anything else (one line naming it and the fix).
    """
    entries = sorted(e.name for e in run_dir.iterdir() if e.name != LOCK_FILE) if run_dir.is_dir() else []
    if not entries:
        return None
    record = read_consolidation(run_dir)
    previous = (record or {}).get("generate") or {}
    if not previous or (record or {}).get("plan_sha") != plan_sha:
        what = "a consolidation of another plan" if previous else f"{', '.join(entries[:3])}{' …' * (len(entries) > 3)}"
        raise OutputRefused(f"{run_dir}: holds {what} — not a consolidation of this plan; pass an empty or new --out "
                            "(or remove it)")
    if (record or {}).get("judge"):
        raise OutputRefused(f"{run_dir}: holds a judge merge of this generation; a new generation merge would orphan "
                            "its grades — pass a new --out (or remove it), then consolidate the judge legs again")
    runs = set(run_ids)
    other = [name for name in entries if name not in GENERATION_FILES and name not in runs]
    if other:
        raise OutputRefused(f"{run_dir}: holds {', '.join(other[:3])}, which a generation merge does not write — "
                            "move it away (a new merge replaces the folder whole), or pass a new --out")
    return record


def check_judge_out(run_dir: Path) -> dict[str, Any]:
    """What ``RUN_DIR`` holds before a judge merge: its consolidation record ({} when it is a plain week).

    Raises:
        OutputRefused: no generated week there, or rubric judge files that no judge consolidation wrote.
    """
    for name in (PLAN_FILE, MANIFEST_FILE):
        if not (run_dir / name).is_file():
            raise OutputRefused(f"{run_dir}: no {name} — a judge merge goes into the generation the legs graded "
                                "(the consolidated generation)")
    record = read_consolidation(run_dir) or {}
    if not record.get("judge"):
        present = [n for n in JUDGE_FILES if (run_dir / n).exists()]
        present += [f"{p.parent.name}/{RUN_JUDGE_FILE}" for p in sorted(run_dir.glob(f"*/{RUN_JUDGE_FILE}"))][:1]
        if present:
            raise OutputRefused(f"{run_dir}: already holds rubric judge results ({', '.join(present[:3])}) that no "
                                "judge consolidation wrote — merge the legs into a fresh copy of the generation")
    return record


def staging_dir(run_dir: Path) -> Path:
    """A fresh, empty temporary sibling of ``RUN_DIR`` (a leftover of a killed merge is removed first)."""
    staging = run_dir.parent / f".{run_dir.name}.consolidating"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    return staging


def commit(staging: Path, run_dir: Path) -> None:
    """Put the merge built in ``staging`` at ``run_dir`` in one step (see the module docstring); removes the old."""
    lock = run_dir / LOCK_FILE
    if lock.exists() and not (staging / LOCK_FILE).exists():
        os.link(lock, staging / LOCK_FILE)  # the same inode: the lock held on RUN_DIR stays held
    if _exchange(staging, run_dir):
        shutil.rmtree(staging)
        return
    aside = run_dir.parent / f".{run_dir.name}.replaced"
    if aside.exists():
        shutil.rmtree(aside)
    os.rename(run_dir, aside)
    os.rename(staging, run_dir)
    shutil.rmtree(aside)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders atomically (Linux renameat2); False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(err, f"cannot put the merge in place: {os.strerror(err)}", str(b))
