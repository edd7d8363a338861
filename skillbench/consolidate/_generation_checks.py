"""The runs of generate legs: every planned run present exactly once, from the leg that owns it.

Each leg's folder is held against ``plan.csv`` and against its own summary:

* blocking — a run folder that is not in the plan; a run folder of another leg's slice (a run must come from
  exactly one leg: the owner, :meth:`skillbench.ledgers._shards.Shard.holds`); a run complete in two legs; a
  summary whose ``expected_runs`` is not the leg's slice of the plan, or whose ``observed_runs`` is not what the
  folder holds (the folder was changed after the leg finished: which one is right cannot be told); a leg whose
  ``plan.csv`` or ``run.json`` is not the one its summary hashed; side files that conflict (``slugs.json`` mapping a
  name two ways, a ``_placebo/`` or ``_versions/`` folder with other content, ``truth.csv`` with other columns);
* incomplete — a leg whose own runs are not all complete (``finished`` or ``budget_hit``), or that stopped on a
  sandbox failure: merged, labelled INCOMPLETE.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillbench.consolidate._inputs import Leg
from skillbench.consolidate._problems import Problem
from skillbench.generation import config_sha
from skillbench.ledgers import (
    PLACEBO_DIR,
    PLAN_FILE,
    RECONCILIATION_FILE,
    RETRIES_FILE,
    RUN_FILE,
    SLUGS_FILE,
    TRUTH_FILE,
    VERSIONS_DIR,
    file_sha,
    json_object_or_none,
    owner,
    read_slugs,
    run_folder_ids,
)
from skillbench.signals import run_state
from skillbench.vocab import COMPLETE_STATES

SHOWN = 3  # run ids named per problem line (the count says how many there are)


@dataclass
class LegRuns:
    """What one leg contributes: its own run folders (any state) and which of them are complete."""

    leg: Leg
    folders: list[str] = field(default_factory=list)
    complete: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)


def check_generation_runs(legs: Sequence[Leg], plan_ids: Sequence[str]) -> tuple[list[LegRuns], list[Problem]]:
    """Hold every leg's folder against the plan and its summary (see the module docstring)."""
    problems: list[Problem] = []
    planned = set(plan_ids)
    contributions: list[LegRuns] = []
    complete_in: dict[str, list[Leg]] = {}
    for leg in legs:
        shard, folder = leg.shard, leg.folder
        if file_sha(folder / PLAN_FILE) != leg.field("plan_sha"):
            problems.append(Problem(leg.label, f"{PLAN_FILE} is not the plan its summary hashed (plan_sha) — the "
                                               "folder was changed after the leg finished; rerun the leg"))
        if _config_sha(folder) != leg.field("config_sha"):
            problems.append(Problem(leg.label, f"{RUN_FILE} is not the config its summary hashed (config_sha) — the "
                                               "folder was changed after the leg finished; rerun the leg"))
        expected = shard.select(plan_ids)
        if sorted(leg.field("expected_runs") or []) != sorted(expected):
            problems.append(Problem(leg.label, "the summary's expected_runs are not this shard's slice of plan.csv "
                                               "(a leg of another skillbench?) — rerun the leg"))
        names = run_folder_ids(folder)
        stray = sorted(set(names) - planned)
        if stray:
            problems.append(Problem(leg.label, f"{len(stray)} run folder(s) not in plan.csv: {first_ids(stray)} — "
                                               "remove them, or rerun the leg in a fresh folder"))
        foreign = sorted(r for r in names if r in planned and owner(r, shard.count) != shard.index)
        if foreign:
            whose = ", ".join(f"{r} (shard {owner(r, shard.count)}/{shard.count})" for r in foreign[:SHOWN])
            problems.append(Problem(leg.label, f"{len(foreign)} run folder(s) of another leg's slice: {whose} — a "
                                               "run must come from the one leg that owns it; rerun the leg in a "
                                               "fresh folder"))
        own = [r for r in names if r in planned and shard.holds(r)]
        states = {r: run_state(folder / r) for r in names if r in planned}
        complete = [r for r in own if states[r] in COMPLETE_STATES]
        for run_id in (r for r in names if r in planned and states[r] in COMPLETE_STATES):
            complete_in.setdefault(run_id, []).append(leg)
        listed = set(leg.field("observed_runs") or [])
        if listed != set(complete):
            lost, unlisted = sorted(listed - set(complete)), sorted(set(complete) - listed)
            parts = ([f"lists {len(lost)} complete run(s) the folder lacks ({first_ids(lost)})"] if lost else []) + \
                    ([f"omits {len(unlisted)} complete run(s) the folder holds ({first_ids(unlisted)})"] if unlisted
                     else [])
            problems.append(Problem(leg.label, f"the summary disagrees with its folder: it {' and '.join(parts)} — "
                                               "the folder was changed after the leg finished; rerun the leg"))
        contributions.append(LegRuns(leg, own, complete, expected))
        problems += _incomplete(leg, expected, complete, states)
    for run_id, holders in sorted(complete_in.items()):
        if len(holders) > 1:
            where = ", ".join(h.label for h in holders)
            problems.append(Problem(where, f"run {run_id} is complete in {len(holders)} legs — a run must come from "
                                           "exactly one leg"))
    return contributions, problems


def _incomplete(leg: Leg, expected: Sequence[str], complete: Sequence[str], states: dict[str, str]) -> list[Problem]:
    problems = []
    if leg.field("sandbox_failure"):
        problems.append(Problem(leg.label, f"the leg stopped on a sandbox failure ({leg.field('sandbox_failure')}) "
                                           "— rerun the leg, then consolidate again", blocking=False))
    lacking = sorted(set(expected) - set(complete))
    if lacking:
        why = Counter(states.get(r, "no run folder") for r in lacking)
        tally = ", ".join(f"{n} {state}" for state, n in sorted(why.items()))
        problems.append(Problem(leg.label, f"{len(lacking)} of its {len(expected)} runs are not complete ({tally}; "
                                           f"first: {first_ids(lacking)}) — rerun the leg with the same command, then "
                                           "consolidate again", blocking=False))
    return problems


def check_side_files(legs: Sequence[Leg]) -> list[Problem]:
    """Conflicts between the legs' side files: ``slugs.json``, ``_placebo/``, ``_versions/``, ``truth.csv``'s header;
    and a ``retries.json`` or ``reconciliation.json`` that is there but not a JSON object (its retried, capped and
    limited runs would otherwise vanish from the merge)."""
    problems = slug_problems(legs)
    for leg in legs:
        for name in (RETRIES_FILE, RECONCILIATION_FILE):
            path = leg.folder / name
            if path.is_file() and json_object_or_none(path) is None:
                problems.append(Problem(leg.label, f"{name} is not a readable JSON object — rerun the leg"))
    for sub in (PLACEBO_DIR, VERSIONS_DIR):
        hashes: dict[str, tuple[str, Leg]] = {}
        for leg in legs:
            for entry in sorted((leg.folder / sub).glob("*")) if (leg.folder / sub).is_dir() else []:
                known = hashes.setdefault(entry.name, (tree_digest(entry), leg))
                if known[1] is not leg and known[0] != tree_digest(entry):
                    problems.append(Problem(f"{known[1].label}, {leg.label}",
                                            f"{sub}/{entry.name} differs between the legs (it must be identical)"))
    headers: dict[str, list[Leg]] = {}
    for leg in legs:
        path = leg.folder / TRUTH_FILE
        if path.is_file():
            with path.open(encoding="utf-8") as fh:
                headers.setdefault(fh.readline().strip(), []).append(leg)
    if len(headers) > 1:
        problems.append(Problem("shards", f"{TRUTH_FILE} has other columns in " +
                                "; ".join(", ".join(g.label for g in group) for group in headers.values())))
    return problems


def slug_problems(legs: Sequence[Leg]) -> list[Problem]:
    """A problem for every name two legs' ``slugs.json`` map two ways (and for an unreadable one)."""
    problems: list[Problem] = []
    seen: dict[tuple[str, str], tuple[str, Leg]] = {}
    for leg in legs:
        try:
            data = read_slugs(leg.folder)
        except (OSError, ValueError):
            problems.append(Problem(leg.label, f"{SLUGS_FILE} is not readable JSON — rerun the leg"))
            continue
        for table in ("slugs", "short_ids"):
            for key, name in dict(data.get(table) or {}).items():
                known = seen.setdefault((table, key), (name, leg))
                if known[0] != name:
                    problems.append(Problem(f"{known[1].label}, {leg.label}",
                                            f"{SLUGS_FILE} maps {key!r} to {known[0]!r} and to {name!r}"))
    return problems


def tree_digest(path: Path) -> str:
    """SHA-256 over a folder's relative file paths and bytes (a file: its bytes)."""
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        digest.update(str(file.relative_to(path) if file != path else file.name).encode() + b"\0")
        digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()


def _config_sha(folder: Path) -> str:
    run_json = json_object_or_none(folder / RUN_FILE)
    return "" if run_json is None else config_sha(run_json)


def first_ids(run_ids: Sequence[str]) -> str:
    """The first few run ids, and how many more there are."""
    more = f", … (+{len(run_ids) - SHOWN})" if len(run_ids) > SHOWN else ""
    return ", ".join(run_ids[:SHOWN]) + more
