"""Merge generate legs into one run directory: every ledger of the week, from the leg that owns each run.

Written into the staging folder (:func:`skillbench.consolidate._output.staging_dir`), in this order:

* ``plan.csv`` and ``run.json``: the lowest shard's (the checks made them identical; ``run.json`` never names a
  shard, so the merged week reads like an unsharded one);
* the run folders: each leg's own folders (any state, so the manifest says what happened to an unfinished run);
* ``truth.csv``: the union of the legs' rows of their own runs, every attempt kept (readers keep each run's last
  attempt, :func:`skillbench.ledgers._truth.final_truth`; one leg per run keeps that rule valid);
* ``checks.csv``: rebuilt from the runs' ``checks.json`` (:func:`skillbench.checks.write_checks_ledger`);
* ``retries.json``: the legs' retried runs of their own slice, the model × condition legs summed (``retried``)
  and or-ed (``stopped``), each leg's ``concurrency`` section under ``concurrency_by_shard``;
* ``slugs.json``: the union (a conflicting mapping was refused before); ``_placebo/`` and ``_versions/``: the
  union (identical where two legs have the same folder);
* ``manifest.csv``: :func:`skillbench.signals._manifest.write_manifest`; ``reconciliation.json``:
  :func:`skillbench.generation._reconciliation.reconcile`, with each leg's own ``capped``/``limited``/``not_started``
  runs, the stopped legs, and ``consolidated_from`` (each shard and its folder).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.consolidate._generation_checks import LegRuns
from skillbench.generation import MAX_RETRIED_GROUPS, rebuild_checks_ledger, reconcile
from skillbench.ledgers import (
    PLACEBO_DIR,
    PLAN_FILE,
    RECONCILIATION_FILE,
    RETRIES_FILE,
    RUN_FILE,
    SLUGS_FILE,
    TRUTH_FILE,
    VERSIONS_DIR,
    atomic_write_json,
    atomic_write_text,
    json_object_or_none,
    read_cells,
    read_run_json,
)
from skillbench.signals import write_manifest


def build_generation(staging: Path, contributions: Sequence[LegRuns]) -> dict[str, Any]:
    """Write the merged week into ``staging``; returns its reconciliation report."""
    first = min(contributions, key=lambda c: c.leg.shard.index).leg.folder
    shutil.copy2(first / PLAN_FILE, staging / PLAN_FILE)
    shutil.copy2(first / RUN_FILE, staging / RUN_FILE)
    for part in contributions:
        for run_id in part.folders:
            shutil.copytree(part.leg.folder / run_id, staging / run_id, symlinks=True)
    _merge_folders(staging, contributions)
    _merge_truth(staging, contributions)
    rebuild_checks_ledger(staging)
    legs = _merge_retries(staging, contributions)
    _merge_slugs(staging, contributions)
    write_manifest(staging)
    return _reconcile(staging, contributions, stopped=[k for k, v in legs.items() if v["stopped"]])


def _merge_folders(staging: Path, contributions: Sequence[LegRuns]) -> None:
    for sub in (PLACEBO_DIR, VERSIONS_DIR):
        for part in contributions:
            source = part.leg.folder / sub
            for entry in sorted(source.iterdir()) if source.is_dir() else []:
                target = staging / sub / entry.name
                if not target.exists():  # identical in every leg that has it (checked before)
                    target.parent.mkdir(exist_ok=True)
                    if entry.is_dir():
                        shutil.copytree(entry, target, symlinks=True)
                    else:
                        shutil.copy2(entry, target)


def _merge_truth(staging: Path, contributions: Sequence[LegRuns]) -> None:
    frames = []
    for part in contributions:
        path = part.leg.folder / TRUTH_FILE
        if path.is_file():
            frame = read_cells(path, ("run_id",))
            frames.append(frame[frame["run_id"].map(part.leg.shard.holds).astype(bool)])
    if frames:
        atomic_write_text(staging / TRUTH_FILE, pd.concat(frames, ignore_index=True).to_csv(index=False))


def _merge_retries(staging: Path, contributions: Sequence[LegRuns]) -> dict[str, dict[str, Any]]:
    retried: list[dict[str, Any]] = []
    legs: dict[str, dict[str, Any]] = {}
    concurrency: dict[str, Any] = {}
    for part in sorted(contributions, key=lambda c: c.leg.shard.index):
        data = read_object(part.leg.folder / RETRIES_FILE)
        retried += [r for r in data.get("retried_runs", []) if part.leg.shard.holds(str(r.get("run_id", "")))]
        for name, state in dict(data.get("legs") or {}).items():
            merged = legs.setdefault(name, {"retried": 0, "stopped": False})
            merged["retried"] += int(state.get("retried", 0))
            merged["stopped"] = merged["stopped"] or bool(state.get("stopped"))
        if data.get("concurrency"):
            concurrency[str(part.leg.shard)] = data["concurrency"]
    if any((part.leg.folder / RETRIES_FILE).is_file() for part in contributions):
        atomic_write_json(staging / RETRIES_FILE, {
            "max_retried_groups": MAX_RETRIED_GROUPS, "retried_runs": retried, "legs": legs,
            **({"concurrency_by_shard": concurrency} if concurrency else {})})
    return legs


def _merge_slugs(staging: Path, contributions: Sequence[LegRuns]) -> None:
    merged: dict[str, dict[str, str]] = {"slugs": {}, "short_ids": {}}
    found = False
    for part in contributions:
        data = read_object(part.leg.folder / SLUGS_FILE)
        found = found or bool(data)
        for table in merged:
            merged[table].update(dict(data.get(table) or {}))  # a conflicting mapping was refused before
    if found:
        atomic_write_json(staging / SLUGS_FILE, merged)


def _reconcile(staging: Path, contributions: Sequence[LegRuns], *, stopped: list[str]) -> dict[str, Any]:
    kept: dict[str, list[str]] = {"capped": [], "limited": [], "not_started": []}
    failures: dict[str, str] = {}
    for part in contributions:
        own = set(part.expected)
        report = read_object(part.leg.folder / RECONCILIATION_FILE)
        for key, runs in kept.items():
            runs += [r for r in report.get(key, []) if r in own]
        if part.leg.field("sandbox_failure"):
            failures[str(part.leg.shard)] = str(part.leg.field("sandbox_failure"))
    selection = read_run_json(staging).get("selection")
    extra: dict[str, Any] = {
        **({"selection": selection} if selection else {}),
        **({"sandbox_failure": failures} if failures else {}),
        "consolidated_from": [{"shard": str(p.leg.shard), "folder": str(p.leg.folder)}
                              for p in sorted(contributions, key=lambda c: c.leg.shard.index)],
    }
    invalid = read_run_json(staging).get("invalid_families")  # the legs' suite left these out: still invalid
    return reconcile(staging, capped=kept["capped"], limited=kept["limited"], not_started=kept["not_started"],
                     stopped_legs=stopped, invalid_families=invalid if isinstance(invalid, dict) else None,
                     extra=extra)


def read_object(path: Path) -> dict[str, Any]:
    """A leg's JSON object file ({} when it is absent, unreadable or not an object: the merge's checks refuse a
    damaged one first, :func:`skillbench.consolidate._generation_checks.generation_problems`)."""
    return json_object_or_none(path) or {}
