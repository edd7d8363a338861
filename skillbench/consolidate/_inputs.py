"""Reading the legs of a matrix and checking that they are one matrix: one summary per declared shard, one kind,
one identity.

Every ``SHARD_DIR`` holds exactly one ``shard-i-of-N.json`` (:func:`skillbench.ledgers._shards.read_summary`).
The legs must declare the same ``N`` (``--expect N`` when given) and the same kind, and every shard ``1..N`` must
be present exactly once: a shard that is missing, or held by two folders, is named with the folders involved.
Then every leg must have run the same thing (:func:`identity_problems`): a field that differs is named with the
shards on each side. All of these block the merge (:mod:`skillbench.consolidate._problems`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillbench.consolidate._problems import Problem
from skillbench.ledgers import Shard, ShardError, read_summary, summaries_in

# What every generate leg must share. Image *tag*, not id: ids differ between machines that build the same inputs.
GENERATE_IDENTITY = ("run_key", "skillbench_commit", "suite_commit", "image_tag", "cli_version", "config_sha",
                     "plan_sha")
# Recorded from the leg's complete runs: a leg with no complete run says nothing, so it is left out of the check.
GENERATE_OBSERVED_IDENTITY = ("sandboxes", "endpoints")
JUDGE_IDENTITY = ("run_key", "judge_model", "samples", "judge_prompt_sha", "skillbench_commit", "plan_sha",
                  "manifest_sha", "include_plugin")
JUDGE_OBSERVED_IDENTITY = ("judge_snapshot",)  # a leg that graded nothing saw no reply
SHA_FIELDS = ("config_sha", "plan_sha", "manifest_sha", "judge_prompt_sha")


@dataclass(frozen=True)
class Leg:
    """One leg of the matrix: its folder and its summary."""

    folder: Path
    summary: Mapping[str, Any]

    @property
    def shard(self) -> Shard:
        return Shard(int(self.summary["index"]), int(self.summary["count"]))

    @property
    def kind(self) -> str:
        return str(self.summary["kind"])

    @property
    def label(self) -> str:
        """``shard 2/3 (FOLDER)``: how every problem names the leg."""
        return f"shard {self.shard} ({self.folder})"

    def field(self, name: str) -> Any:
        return self.summary.get(name)


def read_legs(folders: Iterable[str | Path]) -> tuple[list[Leg], list[Problem]]:
    """One :class:`Leg` per folder that holds exactly one readable summary; a problem for every other folder."""
    legs: list[Leg] = []
    problems: list[Problem] = []
    for folder in map(Path, folders):
        if not folder.is_dir():
            problems.append(Problem(str(folder), "not a folder (each SHARD_DIR is one leg's output folder)"))
            continue
        found = summaries_in(folder)
        if not found:
            problems.append(Problem(str(folder), "holds no shard-i-of-N.json — the leg did not finish (rerun it), "
                                                 "or this is not a leg's folder"))
            continue
        if len(found) > 1:
            names = ", ".join(p.name for p in found)
            problems.append(Problem(str(folder), f"holds {len(found)} shard summaries ({names}) — one leg per "
                                                 "folder: pass each leg's own folder"))
            continue
        try:
            legs.append(Leg(folder, read_summary(found[0])))
        except ShardError as exc:
            problems.append(Problem(str(folder), str(exc)))
    return legs, problems


def check_declared(legs: Sequence[Leg], *, expect: int | None = None) -> tuple[int | None, list[Problem]]:
    """Check the legs declare one ``N`` and one kind, and hold every shard ``1..N`` exactly once.

    Returns:
        The declared ``N`` (None when it cannot be told) and the problems.
    """
    problems: list[Problem] = []
    kinds = _groups(legs, lambda leg: leg.kind)
    if len(kinds) > 1:
        problems.append(Problem("shards", "the summaries disagree on kind: " + _sides(kinds)))
    counts = _groups(legs, lambda leg: leg.shard.count)
    if expect is not None:
        wrong = {n: group for n, group in counts.items() if n != expect}
        for n, group in wrong.items():
            problems.append(Problem(_names(group), f"declares N={n}, but --expect {expect}"))
        count: int | None = expect
    elif len(counts) > 1:
        problems.append(Problem("shards", "the summaries disagree on N: " + _sides(counts)))
        count = None
    else:
        count = next(iter(counts), None)
    if count is None:
        return None, problems
    by_index = _groups([leg for leg in legs if leg.shard.count == count], lambda leg: leg.shard.index)
    for index in range(1, count + 1):
        holders = by_index.get(index, [])
        name = Shard(index, count).summary_name
        if not holders:
            problems.append(Problem(f"shard {index}/{count}", f"missing — no folder given holds {name}; pass that "
                                                              "leg's folder, or rerun the leg"))
        elif len(holders) > 1:
            folders = " and ".join(str(leg.folder) for leg in holders)
            problems.append(Problem(f"shard {index}/{count}", f"duplicated — {folders} both hold {name}; pass "
                                                              "exactly one folder per shard"))
    return count, problems


def identity_problems(legs: Sequence[Leg], fields: Sequence[str], *, observed: Sequence[str] = ()) -> list[Problem]:
    """A problem for every field whose value is not the same in every leg (naming the shards on each side).

    ``observed`` fields are compared only among the legs that recorded a value (an empty list or string: the leg
    had nothing to observe, e.g. no complete run).
    """
    problems = []
    for name in (*fields, *observed):
        considered = [leg for leg in legs if name in fields or leg.field(name) not in (None, "", [])]
        groups = _groups(considered, lambda leg, name=name: _value(leg.field(name), name))
        if len(groups) > 1:
            problems.append(Problem("shards", f"field {name!r} differs: {_sides(groups)} — every leg must run the "
                                              "same code, suite, image, CLI and config; rerun the odd leg(s)"))
    return problems


def reference_problems(legs: Sequence[Leg], reference: Mapping[str, Any], *, what: str) -> list[Problem]:
    """A problem for every leg whose field differs from ``reference`` (e.g. the run directory's manifest hash)."""
    problems = []
    for name, expected in reference.items():
        for leg in legs:
            if leg.field(name) != expected:
                problems.append(Problem(leg.label, f"field {name!r} is {_value(leg.field(name), name)}, {what} has "
                                                   f"{_value(expected, name)} — the leg graded another week"))
    return problems


def _groups(legs: Iterable[Leg], key) -> dict[Any, list[Leg]]:
    groups: dict[Any, list[Leg]] = {}
    for leg in legs:
        groups.setdefault(key(leg), []).append(leg)
    return groups


def _value(value: Any, name: str) -> str:
    if isinstance(value, list | dict):
        return json.dumps(value, sort_keys=True)
    text = str(value) if value not in (None, "") else "(empty)"
    return text[:12] + "…" if name in SHA_FIELDS and len(text) > 16 else text


def _names(legs: Sequence[Leg]) -> str:
    shards = ", ".join(f"{leg.shard} ({leg.folder})" for leg in legs)
    return f"shard{'s' if len(legs) > 1 else ''} {shards}"


def _sides(groups: Mapping[Any, list[Leg]]) -> str:
    return "; ".join(f"{value} in {_names(group)}" for value, group in groups.items())
