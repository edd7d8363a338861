"""``consolidation.json``: what a consolidation merged, what it found, and whether the merge is COMPLETE.

Shape::

    {"schema": 1, "kind": "generate" | "judge",        # the latest merge
     "status": "COMPLETE" | "INCOMPLETE",               # INCOMPLETE when any merge below is
     "run_key": str, "plan_sha": str,
     "generate": <record>, "judge": <record>}          # judge: only after a judge merge

    <record> = {"kind", "status", "count": N, "consolidated": "<UTC time>",
                "identity": {field: value, …},          # what every leg shared
                "shards": [{"shard": "i/N", "folder", "expected", "observed", "written", "retries", "host",
                            "finished", "image_ids" | "judge_snapshot", "sandbox_failure"}],
                "problems": [{"where", "what", "blocking": false}],   # why it is INCOMPLETE
                "runs": {"planned" | "gradeable": int, "complete" | "graded": int, "missing": [run_id]}}

A judge merge keeps the generation merge's record. The scorecard reads only ``status``
(:func:`skillbench.ledgers._shards.consolidation_status`): anything but ``COMPLETE`` keeps the week INCOMPLETE.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from skillbench.consolidate._inputs import Leg
from skillbench.consolidate._problems import Problem
from skillbench.ledgers import COMPLETE, INCOMPLETE

SCHEMA = 1
SHARD_FIELDS = {"generate": ("expected", "observed", "written", "retries", "host", "finished", "image_ids",
                             "sandbox_failure"),
                "judge": ("expected", "observed", "written", "retries", "judge_snapshot", "finished")}


def merge_record(kind: str, legs: Sequence[Leg], identity: Sequence[str], problems: Sequence[Problem],
                 runs: Mapping[str, Any]) -> dict[str, Any]:
    """The record of one merge (``problems``: the non-blocking ones; any makes it INCOMPLETE)."""
    legs = sorted(legs, key=lambda leg: leg.shard.index)
    return {
        "kind": kind, "status": INCOMPLETE if problems else COMPLETE, "count": legs[0].shard.count,
        "consolidated": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "identity": {name: legs[0].field(name) for name in identity},
        "shards": [{"shard": str(leg.shard), "folder": str(leg.folder),
                    **{name: leg.field(name) for name in SHARD_FIELDS[kind] if name in leg.summary}}
                   for leg in legs],
        "problems": [p.to_json() for p in problems],
        "runs": dict(runs),
    }


def consolidation(record: Mapping[str, Any], previous: Mapping[str, Any] | None) -> dict[str, Any]:
    """The file's content after a merge: the new record, the generation record kept under a judge merge."""
    kind = record["kind"]
    sections = {"generate": dict((previous or {}).get("generate") or {})} if kind == "judge" else {}
    sections = {k: v for k, v in sections.items() if v}
    sections[kind] = dict(record)
    status = COMPLETE if all(s.get("status") == COMPLETE for s in sections.values()) else INCOMPLETE
    identity = record["identity"]
    return {"schema": SCHEMA, "kind": kind, "status": status, "run_key": identity.get("run_key", ""),
            "plan_sha": identity.get("plan_sha", ""), **sections}


def report_lines(problems: Sequence[Problem], *, written: bool) -> list[str]:
    """The report: one line per problem, blocking ones first, and what was (not) written."""
    ordered = sorted(problems, key=lambda p: not p.blocking)
    lines = [("refused: " if p.blocking else "incomplete: ") + p.line() for p in ordered]
    if not written:
        lines.append("nothing written")
    return lines
