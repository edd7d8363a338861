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
* **generated near-misses** — on top of that balance, the ``generated`` queries (``--near-misses N``: a model
  proposes them from the family's description and the other families' names and descriptions alone,
  :mod:`skillbench.quality._near_miss`; on the sim, the rule of :mod:`skillbench.sim._near_miss`), should not
  trigger, ``source: generated``. A generated query whose text (case and spacing aside) is already in the set is
  dropped. With none (``--near-misses 0``), the set is the suite's alone.
* **trigger eval set** — skill-creator's format (``[{"query": …, "should_trigger": true|false}]``,
  :func:`skillbench.suite.skill_creator._evals.read_trigger_set`) at ``SUITE_DIR/trigger-evals/<family>.json``
  (:data:`TRIGGER_EVALS_DIR`), or ``--trigger-set FILE`` (for a suite that is read-only). A skill-creator suite's
  trigger sets are already prompts of the suite (trigger-only and dormancy prompts) and count above.
* **split** — per stratum (should trigger; the suite's should-not; the generated should-not), the queries are
  shuffled with ``numpy.random.default_rng(seed)`` and the first ``ceil(0.4 × n)`` go to test, the rest to
  train. The held-out side is rounded **up** because the claim (the winner's test F1) rests on it: 8
  should-trigger queries split 4 train / 4 test, 7 give 3 test and are refused. Same suite, seed and generated
  queries → same split.
* **refusal** — a test split with fewer than :data:`MIN_TEST_PER_SIDE` should-trigger or should-not queries is
  refused (:class:`TriggerSetError`, one line with the counts and how to add queries): F1 on fewer held-out
  queries is noise.

Query ids are ``s-<8 hex>`` / ``n-<8 hex>`` of the query text (stable when files are reordered).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from skillbench.suite import Suite
from skillbench.suite.skill_creator import EvalFileError, read_json, read_trigger_set

TEST_SHARE = 0.4  # as the fraction TEST_NUM / TEST_DEN below, so the rounding is integer arithmetic
TEST_NUM, TEST_DEN = 2, 5
MIN_TEST_PER_SIDE = 4
MIN_SHOULD_NOT = 10
TRIGGER_EVALS_DIR = "trigger-evals"
TRAIN, TEST = "train", "test"
GENERATED = "generated"  # the source of a generated near-miss


class TriggerSetError(ValueError):
    """A family whose trigger set cannot be built or split (the message is one line naming the fix)."""


@dataclass(frozen=True)
class Query:
    """One query of the trigger set."""

    id: str
    text: str
    should_trigger: bool
    source: str  # prompt:<name> | trigger-eval:<file>[i] | dormancy:<name> | other-family:<family>:<name> | generated
    split: str = ""


@dataclass(frozen=True)
class TriggerSet:
    """The family's queries with their split, and what made it."""

    family: str
    seed: int
    queries: tuple[Query, ...]
    near_misses_requested: int = 0

    def part(self, split: str, should: bool | None = None) -> list[Query]:
        return [q for q in self.queries if q.split == split and (should is None or q.should_trigger == should)]

    def counts(self) -> dict[str, int]:
        """Queries per split and side; ``<split>_generated`` counts the generated near-misses among should-not."""
        out = {f"{s}_{side}": len(self.part(s, b)) for s in (TRAIN, TEST) for side, b in (("should", True),
                                                                                          ("should_not", False))}
        out.update({f"{s}_generated": sum(q.source == GENERATED for q in self.part(s, False)) for s in (TRAIN, TEST)})
        return out

    def as_json(self) -> dict[str, Any]:
        return {"family": self.family, "seed": self.seed, "test_share": TEST_SHARE, "test_rounding": "ceil",
                "near_misses_requested": self.near_misses_requested, "counts": self.counts(),
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


def held_out_size(n: int) -> int:
    """``ceil(0.4 × n)``: the test side of a stratum of ``n`` queries (rounded up: the claim rests on it)."""
    return -(-n * TEST_NUM // TEST_DEN)


def smallest_splittable() -> int:
    """The fewest queries of a side whose test split reaches :data:`MIN_TEST_PER_SIDE`."""
    n = MIN_TEST_PER_SIDE
    while held_out_size(n) < MIN_TEST_PER_SIDE:
        n += 1
    return n


def _split(queries: list[Query], rng: np.random.Generator) -> list[Query]:
    order = rng.permutation(len(queries))
    n_test = held_out_size(len(queries))
    return [Query(**{**asdict(queries[i]), "split": TEST if rank < n_test else TRAIN}) for rank, i in enumerate(order)]


def build_trigger_set(suite: Suite, family: str, seed: int = 0, extra: Path | None = None,
                      generated: Sequence[str] = (), near_misses_requested: int | None = None) -> TriggerSet:
    """The family's trigger set (module docstring); ``generated`` are the generated near-miss queries.

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
    known = {_norm(q.text) for q in [*should.values(), *negatives]}
    made: list[Query] = []
    for text in generated:
        if _norm(text) not in known:
            known.add(_norm(text))
            made.append(Query(query_id(text, False), text, False, GENERATED))
    queries = _split(list(should.values()), rng) + _split(negatives, rng) + _split(made, rng)
    requested = len(generated) if near_misses_requested is None else near_misses_requested
    tset = TriggerSet(family, seed, tuple(queries), requested)
    counts = tset.counts()
    if counts["test_should"] < MIN_TEST_PER_SIDE or counts["test_should_not"] < MIN_TEST_PER_SIDE:
        raise TriggerSetError(
            f"{family}: too few queries to split — {len(should)} should-trigger and {len(negatives) + len(made)} "
            f"should-not give a test split of {counts['test_should']} and {counts['test_should_not']} (at least "
            f"{MIN_TEST_PER_SIDE} each: {smallest_splittable()} per side, the test side rounded up) — add "
            f"queries to {suite.suite_dir / TRIGGER_EVALS_DIR / (family + '.json')} or pass --trigger-set FILE "
            "([{\"query\": …, \"should_trigger\": true}, …])")
    return tset


def check_splittable(suite: Suite, family: str, seed: int = 0, extra: Path | None = None,
                     near_misses: int = 0) -> None:
    """Refuse, before any model call, a family that ``near_misses`` new generated queries could not make splittable.

    The generated queries are stood in for by ``near_misses`` distinct placeholders (never run): the should side
    does not depend on them, and the should-not side can only grow by them.

    Raises:
        TriggerSetError: as :func:`build_trigger_set` would with that many new generated queries.
    """
    build_trigger_set(suite, family, seed, extra, [f"\x00placeholder {i}" for i in range(near_misses)])


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def query_id_set(others: dict[str, list[Query]]) -> set[str]:
    return {q.id for pool in others.values() for q in pool}


def write_trigger_set(tset: TriggerSet, path: Path) -> None:
    """``trigger-set.json``: the queries, their side and split, the seed and the counts (never overwrites)."""
    with path.open("x", encoding="utf-8") as fh:
        json.dump(tset.as_json(), fh, indent=2, ensure_ascii=False)
        fh.write("\n")


__all__ = ["GENERATED", "MIN_TEST_PER_SIDE", "Query", "TriggerSet", "TriggerSetError", "build_trigger_set",
           "check_splittable", "held_out_size", "write_trigger_set"]
