"""The grades of judge legs: every gradeable run of the week graded in exactly the one leg that owns it.

Each judge leg ran ``skillbench judge RUN_DIR_COPY --shard i/N`` on a copy of the generation. Its folder is held
against the generation it is merged into (``RUN_DIR``) and against its own summary:

* blocking — the leg's ``manifest.csv`` or ``plan.csv`` is not the one its summary hashed; a ledger the merge reads
  (``scores.csv``, ``judge-skips.csv``, ``judge.json``, ``judge-batches.json``) cut mid-row, or not the file its
  summary recorded (``files``: changed or cut after the leg finished); a symbolic link among them or in its own run
  folders (:func:`skillbench.consolidate._leg_ledgers.link_problems`); its summary's
  ``expected_runs`` is not its slice of ``RUN_DIR``'s gradeable runs (:func:`skillbench.judge._answers.select_runs`);
  ``scores.csv`` rows or a run's ``judge.json`` for a run of another leg's slice (a run graded in two legs); a
  ledger the judge itself would refuse; a summary whose ``observed_runs`` is not what its ``scores.csv`` holds;
* incomplete — a leg whose own gradeable runs are not all fully graded (``--limit``, a judge outage, ungraded
  items): merged, labelled INCOMPLETE.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillbench.consolidate._generation_checks import first_ids
from skillbench.consolidate._inputs import Leg
from skillbench.consolidate._leg_ledgers import link_problems
from skillbench.consolidate._problems import Problem
from skillbench.judge import ScoresLedger, select_runs
from skillbench.ledgers import (
    JUDGE_LEG_FILES,
    JUDGE_SKIPS_FILE,
    MANIFEST_FILE,
    PLAN_FILE,
    RUN_JUDGE_FILE,
    SCORES_FILE,
    LedgerConflict,
    LedgerError,
    file_sha,
    is_cut,
    leg_file_problems,
    read_judge_skips,
)
from skillbench.vocab import UNGRADED


@dataclass
class LegGrades:
    """What one judge leg contributes: its own runs' rows, skips and run folders with a judge record."""

    leg: Leg
    expected: list[str] = field(default_factory=list)
    rows: list[dict[str, str]] = field(default_factory=list)
    graded: list[str] = field(default_factory=list)
    skips: list[tuple[str, str]] = field(default_factory=list)
    judged: list[str] = field(default_factory=list)  # own run folders holding a judge.json


def gradeable_runs(run_dir: Path, *, include_plugin: bool) -> dict[str, int]:
    """The week's gradeable runs with an answer, and the number of rubric items each has."""
    runs, _ = select_runs(run_dir, include_plugin=include_plugin)
    return {r.run_id: len(r.items) for r in runs}


def check_judge_legs(legs: Sequence[Leg], items: dict[str, int]) -> tuple[list[LegGrades], list[Problem]]:
    """Hold every judge leg against the week's gradeable runs (``items``) and its own summary."""
    problems: list[Problem] = []
    parts: list[LegGrades] = []
    graded_in: dict[str, list[Leg]] = {}
    for leg in legs:
        shard, folder = leg.shard, leg.folder
        for name, key in ((MANIFEST_FILE, "manifest_sha"), (PLAN_FILE, "plan_sha")):
            if file_sha(folder / name) != leg.field(key):
                problems.append(Problem(leg.label, f"{name} is not the one its summary hashed ({key}) — the folder "
                                                   "was changed after the leg finished; rerun the leg"))
        expected = shard.select(sorted(items))
        if sorted(leg.field("expected_runs") or []) != expected:
            problems.append(Problem(leg.label, "the summary's expected_runs are not this shard's slice of the week's "
                                               "gradeable runs (graded with --prompts/--families, or another week?) "
                                               "— rerun the leg on a copy of the generation, without a selection"))
        linked = link_problems(folder, [r for r in expected if (folder / r).exists() or (folder / r).is_symlink()],
                               JUDGE_LEG_FILES)
        if linked:  # nothing under the leg is read through a link
            problems += [Problem(leg.label, f"{what} — rerun the leg") for what in linked]
            parts.append(LegGrades(leg, expected))
            continue
        # A finished leg's ledgers are whole: the judge's resume drops a torn last row, a merge must not.
        torn = [name for name in (SCORES_FILE, JUDGE_SKIPS_FILE) if is_cut(folder / name)]
        try:
            ledger = ScoresLedger(folder)
            rows = ledger.read()
            ledger.check(rows)
            skips = _skips(folder)
        except (LedgerConflict, LedgerError) as exc:
            torn.append(str(exc))
        if torn:
            problems += [Problem(leg.label, f"{what} is cut mid-row (its last line has no line end) — rerun the leg"
                                 if what in (SCORES_FILE, JUDGE_SKIPS_FILE) else f"{what} — rerun the leg")
                         for what in torn]
            parts.append(LegGrades(leg, expected))
            continue
        changed = leg_file_problems(folder, leg.field("files"), JUDGE_LEG_FILES)
        if changed:  # what the leg's files hold now is not what it graded: that is the one thing to say
            problems += [Problem(leg.label, f"{name}: {what} — rerun the leg") for name, what in changed.items()]
            parts.append(LegGrades(leg, expected))
            continue
        groups: dict[str, list[dict[str, str]]] = {}
        for row in rows:
            groups.setdefault(row["run_id"], []).append(row)
        for run_id in groups:
            graded_in.setdefault(run_id, []).append(leg)
        foreign = sorted({r for r in groups if not shard.holds(r) or r not in items} |
                         {r for r, _ in skips if not shard.holds(r)})
        judged_runs = sorted(p.parent.name for p in folder.glob(f"*/{RUN_JUDGE_FILE}"))
        foreign_files = sorted(r for r in judged_runs if not shard.holds(r))
        if foreign or foreign_files:
            problems.append(Problem(leg.label, f"grades of {len(set(foreign) | set(foreign_files))} run(s) it does not "
                                               f"own: {first_ids(sorted(set(foreign) | set(foreign_files)))} — a run "
                                               "is graded in exactly the one leg that owns it; rerun the leg on a "
                                               "fresh copy of the generation"))
        own = set(expected)
        graded = sorted(r for r, group in groups.items() if r in own and _fully_graded(group, items[r]))
        if set(leg.field("observed_runs") or []) != set(graded):
            problems.append(Problem(leg.label, "the summary disagrees with its folder: its observed_runs are not the "
                                               f"runs {_scores_name(folder)} grades fully — the folder was changed "
                                               "after the leg finished; rerun the leg"))
        lacking = sorted(own - set(graded))
        if lacking:
            problems.append(Problem(leg.label, f"{len(lacking)} of its {len(expected)} gradeable runs are not fully "
                                               f"graded (first: {first_ids(lacking)}) — rerun the leg "
                                               "(--retry-ungraded for ungraded items), then consolidate again",
                                    blocking=False))
        parts.append(LegGrades(leg, expected, [r for r in rows if r["run_id"] in own], graded,
                               [(r, why) for r, why in skips if r in own], [r for r in judged_runs if r in own]))
    for run_id, holders in sorted(graded_in.items()):
        if len(holders) > 1:
            problems.append(Problem(", ".join(h.label for h in holders),
                                    f"run {run_id} is graded in {len(holders)} legs — a run is graded in exactly one"))
    return parts, problems


def _fully_graded(group: list[dict[str, str]], n_items: int) -> bool:
    indexes = sorted(int(r["item_index"]) for r in group if str(r["item_index"]).isdigit())
    return indexes == list(range(n_items)) and all(r["verdict"] != UNGRADED for r in group)


def _skips(folder: Path) -> list[tuple[str, str]]:
    frame = read_judge_skips(folder / JUDGE_SKIPS_FILE)  # an absent file is empty; a malformed one, one line
    return list(zip(frame["run_id"].astype(str), frame["reason"].astype(str), strict=True))


def _scores_name(folder: Path) -> str:
    return str(Path(folder.name) / "scores.csv")
