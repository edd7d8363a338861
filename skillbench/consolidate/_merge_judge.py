"""Merge judge legs into the generation they graded: each run's grades from the one leg that owns it.

The staging folder starts as a copy of ``RUN_DIR`` without the rubric judge's files of an earlier judge merge
(which the new one replaces); then, from the legs:

* ``scores.csv``: each leg's rows of its own runs, in shard order (checked as the judge checks its ledger);
* ``judge-skips.csv``: each leg's rows of its own runs;
* per run folder: ``judge.json`` from the owner leg, and its judge spend — the leg's parts of ``judge_cost.json``
  replace those parts of the run's (another judge's part, e.g. ``pairs`` graded on ``RUN_DIR``, is kept), and
  ``judge_cost.txt`` is their sum again (:func:`skillbench.judge._costs.record_judge_cost`);
* ``judge.json``: the legs' common settings, counts summed, evidence rates recomputed from the merged runs'
  ``judge.json`` (:func:`skillbench.judge._evidence.evidence_summary`), and every leg's passes, each with its
  ``shard``; ``RUN_DIR``'s own ``pairs_passes`` are kept;
* ``judge-batches.json``: the union of the legs' batches and requests, when a leg has one;
* ``slugs.json``: the union of ``RUN_DIR``'s and the legs' short ids (a conflicting mapping was refused before).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillbench.consolidate._judge_checks import LegGrades
from skillbench.consolidate._merge_generate import read_object
from skillbench.judge import (
    PAIRS_PASSES,
    STORE_VERSION,
    ScoresLedger,
    Skip,
    clear_judge_cost,
    evidence_summary,
    record_judge_cost,
    write_skips,
)
from skillbench.ledgers import (
    COST_PARTS_FILE,
    JUDGE_BATCHES_FILE,
    JUDGE_COST_FILE,
    LOCK_FILE,
    PASS_FILE,
    RUN_JUDGE_FILE,
    SLUGS_FILE,
    atomic_write_json,
    read_judge_costs,
    run_folder_ids,
)

RUBRIC_PART = "rubric"


def copy_generation(run_dir: Path, staging: Path, *, replace_judge: bool) -> None:
    """Copy ``RUN_DIR`` into the (empty) staging folder; without the rubric judge's files when they are replaced."""
    from skillbench.consolidate._output import JUDGE_FILES

    shutil.rmtree(staging)
    skip_top = {LOCK_FILE, *(JUDGE_FILES if replace_judge else ())}
    shutil.copytree(run_dir, staging, symlinks=True,
                    ignore=lambda folder, names: [n for n in names if Path(folder) == run_dir and n in skip_top])
    if replace_judge:
        for run_id in run_folder_ids(staging):
            (staging / run_id / RUN_JUDGE_FILE).unlink(missing_ok=True)
            clear_judge_cost(staging / run_id, RUBRIC_PART)


def build_judge(staging: Path, parts: Sequence[LegGrades], *, previous_pass: dict[str, Any]) -> dict[str, Any]:
    """Write the legs' grades into ``staging``; returns the merged ``judge.json``."""
    parts = sorted(parts, key=lambda p: p.leg.shard.index)
    ScoresLedger(staging).rewrite([row for part in parts for row in part.rows])
    ScoresLedger(staging).check(ScoresLedger(staging).read())
    write_skips(staging, [Skip(r, why) for part in parts for r, why in part.skips])
    for part in parts:
        for run_id in part.judged:
            source, target = part.leg.folder / run_id, staging / run_id
            if not target.is_dir():
                continue
            shutil.copy2(source / RUN_JUDGE_FILE, target / RUN_JUDGE_FILE)
            for name, usd in _cost_parts(source).items():
                record_judge_cost(target, name, usd)
    merged = _merge_pass(staging, parts, previous_pass)
    atomic_write_json(staging / PASS_FILE, merged)
    _merge_batches(staging, parts)
    _merge_short_ids(staging, parts)
    return merged


def _cost_parts(folder: Path) -> dict[str, float]:
    parts = read_object(folder / COST_PARTS_FILE)
    if parts:
        return {k: float(v) for k, v in parts.items()}
    try:  # an older run folder: only the total, which is the rubric judge's
        return {RUBRIC_PART: float((folder / JUDGE_COST_FILE).read_text(encoding="utf-8").strip() or 0)}
    except (OSError, ValueError):
        return {}


def _merge_pass(staging: Path, parts: Sequence[LegGrades], previous: dict[str, Any]) -> dict[str, Any]:
    records = [(part, read_object(part.leg.folder / PASS_FILE)) for part in parts]
    first = next((record for _, record in records if record), {})
    rubric: dict[str, str] = {}
    passes: list[dict[str, Any]] = []
    for part, record in records:
        rubric.update(dict(record.get("rubric_sha") or {}))
        passes += [{**entry, "shard": str(part.leg.shard)} for entry in record.get("passes", [])]
    costs = read_judge_costs(staging).reindex(run_folder_ids(staging)).dropna()  # the run folders' spend
    evidence = evidence_summary(staging)
    snapshots = sorted({str(r.get("judge_snapshot") or "") for _, r in records} - {""})
    pairs = [*previous.get(PAIRS_PASSES, []), *(p for _, r in records for p in r.get(PAIRS_PASSES, []))]
    return {
        "judge_model": first.get("judge_model", ""), "judge_prompt_sha": first.get("judge_prompt_sha", ""),
        "samples": first.get("samples"), "include_plugin": bool(first.get("include_plugin")),
        "order": first.get("order", ""), "rubric_sha": dict(sorted(rubric.items())),
        "runs_gradeable": sum(len(p.expected) for p in parts),
        "ungraded_items": sum(1 for p in parts for row in p.rows if row["verdict"] == "ungraded"),
        "skipped_runs": len({r for p in parts for r, _ in p.skips}),
        "evidence": {row.judge_model: {k: (None if isinstance(v, float) and v != v else v)
                                       for k, v in row._asdict().items() if k != "judge_model"}
                     for row in evidence.itertuples(index=False)},
        "judge_cost_usd": round(float(costs.sum()), 8), "judge_snapshot": snapshots[-1] if snapshots else "",
        "passes": passes, "consolidated_from": [{"shard": str(p.leg.shard), "folder": str(p.leg.folder)}
                                                for p in parts],
        **({PAIRS_PASSES: pairs} if pairs else {}),
    }


def _merge_batches(staging: Path, parts: Sequence[LegGrades]) -> None:
    found = [read_object(part.leg.folder / JUDGE_BATCHES_FILE) for part in parts]
    if not any(found):
        return
    merged: dict[str, Any] = {"version": STORE_VERSION, "batches": {}, "requests": {}}
    for data in found:
        merged["batches"].update(dict(data.get("batches") or {}))
        merged["requests"].update(dict(data.get("requests") or {}))
    atomic_write_json(staging / JUDGE_BATCHES_FILE, merged)


def _merge_short_ids(staging: Path, parts: Sequence[LegGrades]) -> None:
    merged = read_object(staging / SLUGS_FILE) or {}
    tables = {"slugs": dict(merged.get("slugs") or {}), "short_ids": dict(merged.get("short_ids") or {})}
    changed = False
    for part in parts:
        data = read_object(part.leg.folder / SLUGS_FILE)
        for table, entries in tables.items():
            for key, name in dict(data.get(table) or {}).items():
                changed = changed or key not in entries
                entries.setdefault(key, name)
    if changed:
        atomic_write_json(staging / SLUGS_FILE, tables)
