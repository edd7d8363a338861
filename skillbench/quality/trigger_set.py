"""The trigger set of one skill family: should-trigger and should-not queries, split 60/40 train/test with a seed.

Contract of :func:`build_trigger_set`:

* **should trigger** — every prompt of the family (scored, held-out and trigger-only; a held-out prompt is never
  run weekly, so reading it here costs the week nothing), then the ``should_trigger: true`` queries of the family's
  trigger eval set (below).
* **should not trigger** — *near-misses* first: every dormancy prompt of the suite (the family's own and the
  others': a dormancy prompt is written to share a family's vocabulary and need none) and the family's
  ``should_trigger: false`` queries; then *other families' prompts* (scored, held-out, trigger-only, and their
  trigger eval sets' should-trigger queries), drawn with the seed round-robin across those families until the
  should-not side has as many queries as the should side, and at least :data:`MIN_SHOULD_NOT` when there are
  that many. The balance keeps F1 readable (skill-creator's trigger sets are balanced too) and the runs few.
  Near-misses are the suite's own, never generated: a generated near-miss would make the set depend on a model
  and its cost, and the sim could only make them up from word lists, which no real user writes.
* **trigger eval set** — skill-creator's format (``[{"query": …, "should_trigger": true|false}]``,
  :func:`skillbench.suite.skill_creator.evals.read_trigger_set`) at ``SUITE_DIR/trigger-evals/<family>.json``
  (:data:`TRIGGER_EVALS_DIR`), or ``--trigger-set FILE`` (for a suite that is read-only). A skill-creator suite's
  trigger sets are already prompts of the suite (trigger-only and dormancy prompts) and count above.
* **split** — per side (stratified), the queries are shuffled with ``numpy.random.default_rng(seed)`` and the
  first ``floor(0.4 × n + 0.5)`` go to test, the rest to train. Same suite and seed → same split.
* **refusal** — a test split with fewer than :data:`MIN_TEST_PER_SIDE` should-trigger or should-not queries is
  refused (:class:`TriggerSetError`, one line with the counts and how to add queries): F1 on fewer held-out
  queries is noise.

Query ids are ``s-<8 hex>`` / ``n-<8 hex>`` of the query text (stable when files are reordered).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from skillbench.suite.format import Suite
from skillbench.suite.skill_creator.evals import EvalFileError, read_json, read_trigger_set

TEST_SHARE = 0.4
MIN_TEST_PER_SIDE = 4
MIN_SHOULD_NOT = 10
TRIGGER_EVALS_DIR = "trigger-evals"
TRAIN, TEST = "train", "test"


class TriggerSetError(ValueError):
    """A family whose trigger set cannot be built or split (the message is one line naming the fix)."""


@dataclass(frozen=True)
class Query:
    """One query of the trigger set."""

    id: str
    text: str
    should_trigger: bool
    source: str  # prompt:<name> | trigger-eval:<file>[i] | dormancy:<name> | other-family:<family>:<name>
    split: str = ""


@dataclass(frozen=True)
class TriggerSet:
    """The family's queries with their split, and what made it."""

    family: str
    seed: int
    queries: tuple[Query, ...]

    def part(self, split: str, should: bool | None = None) -> list[Query]:
        return [q for q in self.queries if q.split == split and (should is None or q.should_trigger == should)]

    def counts(self) -> dict[str, int]:
        return {f"{s}_{side}": len(self.part(s, b)) for s in (TRAIN, TEST) for side, b in (("should", True),
                                                                                           ("should_not", False))}

    def as_json(self) -> dict[str, Any]:
        return {"family": self.family, "seed": self.seed, "test_share": TEST_SHARE, "counts": self.counts(),
                "queries": [asdict(q) for q in self.queries]}


def query_id(text: str, should: bool) -> str:
    digest = hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:8]
    return f"{'s' if should else 'n'}-{digest}"


def _eval_queries(path: Path) -> list[tuple[str, bool, str]]:
    """``(query, should_trigger, source)`` of a trigger eval set file.

    Raises:
        TriggerSetError: unreadable, or a query with an error (the first defect named).
    """
    try:
        items, defects = read_trigger_set(read_json(path))
    except EvalFileError as exc:
        raise TriggerSetError(f"{path}: {exc.problem} — {exc.fix}") from exc
    errors = [d for d in defects if d[0] == "error"]
    if errors:
        _, where, problem, fix = errors[0]
        raise TriggerSetError(f"{path}: {where}: {problem} — {fix}")
    return [(i.prompt, bool(i.should_trigger), f"trigger-eval:{path.name}{i.where}") for i in items]


def family_eval_queries(suite: Suite, family: str, extra: Path | None = None) -> list[tuple[str, bool, str]]:
    """The family's trigger eval queries: ``SUITE_DIR/trigger-evals/<family>.json`` and ``extra``."""
    paths = [p for p in (suite.suite_dir / TRIGGER_EVALS_DIR / f"{family}.json", extra) if p is not None]
    out: list[tuple[str, bool, str]] = []
    for path in paths:
        if not Path(path).is_file():
            if path is extra:
                raise TriggerSetError(f"--trigger-set {path}: not a file")
            continue
        out += _eval_queries(Path(path))
    return out


def _split(queries: list[Query], rng: np.random.Generator) -> list[Query]:
    order = rng.permutation(len(queries))
    n_test = math.floor(TEST_SHARE * len(queries) + 0.5)
    return [Query(**{**asdict(queries[i]), "split": TEST if rank < n_test else TRAIN}) for rank, i in enumerate(order)]


def build_trigger_set(suite: Suite, family: str, seed: int = 0, extra: Path | None = None) -> TriggerSet:
    """The family's trigger set (module docstring).

    Raises:
        TriggerSetError: an unknown family, a bad trigger eval file, or a test split below 4/4.
    """
    if family not in suite.families:
        raise TriggerSetError(f"{family}: not a skill family of {suite.suite_dir} (families: "
                              f"{', '.join(suite.families)})")
    should: dict[str, Query] = {}
    near: dict[str, Query] = {}
    others: dict[str, list[Query]] = {}

    def add(into: dict[str, Query], text: str, flag: bool, source: str) -> None:
        qid = query_id(text, flag)
        if qid not in should and qid not in near and qid not in query_id_set(others):
            into[qid] = Query(qid, text, flag, source)

    for spec in suite.prompts:
        if spec.family == family and not spec.dormancy:
            add(should, spec.test.prompt, True, f"prompt:{spec.name}")
    for text, flag, source in family_eval_queries(suite, family, extra):
        add(should if flag else near, text, flag, source)
    for spec in suite.prompts:
        if spec.dormancy:
            add(near, spec.test.prompt, False, f"dormancy:{spec.name}")
    for other in suite.families:
        if other == family:
            continue
        pool: dict[str, Query] = {}
        for spec in suite.prompts:
            if spec.family == other and not spec.dormancy:
                add(pool, spec.test.prompt, False, f"other-family:{other}:{spec.name}")
        for text, flag, source in family_eval_queries(suite, other):
            if flag:
                add(pool, text, False, f"other-family:{other}:{source}")
        others[other] = list(pool.values())
    rng = np.random.default_rng(seed)
    want = max(len(should), MIN_SHOULD_NOT)
    negatives = list(near.values())
    pools = [[p[i] for i in rng.permutation(len(p))] for _, p in sorted(others.items()) if p]
    while len(negatives) < want and any(pools):
        for pool in pools:
            if pool and len(negatives) < want:
                negatives.append(pool.pop(0))
    queries = _split(list(should.values()), rng) + _split(negatives, rng)
    tset = TriggerSet(family, seed, tuple(queries))
    counts = tset.counts()
    if counts["test_should"] < MIN_TEST_PER_SIDE or counts["test_should_not"] < MIN_TEST_PER_SIDE:
        raise TriggerSetError(
            f"{family}: too few queries to split — {len(should)} should-trigger and {len(negatives)} should-not give "
            f"a test split of {counts['test_should']} and {counts['test_should_not']} (at least "
            f"{MIN_TEST_PER_SIDE} each: about {math.ceil((MIN_TEST_PER_SIDE - 0.5) / TEST_SHARE)} per side) — add "
            f"queries to {suite.suite_dir / TRIGGER_EVALS_DIR / (family + '.json')} or pass --trigger-set FILE "
            "([{\"query\": …, \"should_trigger\": true}, …])")
    return tset


def query_id_set(others: dict[str, list[Query]]) -> set[str]:
    return {q.id for pool in others.values() for q in pool}


def write_trigger_set(tset: TriggerSet, path: Path) -> None:
    """``trigger-set.json``: the queries, their side and split, the seed and the counts (never overwrites)."""
    with path.open("x", encoding="utf-8") as fh:
        json.dump(tset.as_json(), fh, indent=2, ensure_ascii=False)
        fh.write("\n")


__all__ = ["MIN_TEST_PER_SIDE", "Query", "TriggerSet", "TriggerSetError", "build_trigger_set", "write_trigger_set"]
