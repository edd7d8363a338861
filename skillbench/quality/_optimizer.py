"""optimize-description's loop: measure the original, ask for rewrites from train failures, keep the best on train.

Contract of :func:`optimize`:

1. The family's trigger set (:func:`skillbench.quality._trigger_set.build_trigger_set`; a family below 4/4 test
   queries is refused before anything is written or run).
2. The original description is measured on train and test (:func:`skillbench.quality._trigger_runs.
   measure_description`: k real CLI runs per query, only the description changed).
3. For each of ``iterations``: the rewriter gets the current best description and **only its train failures**
   (missed should-trigger and false-trigger train queries; :mod:`skillbench.quality._rewriter`), and the candidate
   it proposes is measured on train. A candidate equal to one already measured is not run again.
4. The selected candidate is the best train F1 among complete measurements (ties: the shorter description, then
   the earlier); it is then measured on test, once — selection never sees a test result. Its test F1 is reported
   against the original's, and the two are compared query by query with McNemar's exact test
   (:func:`skillbench.quality._trigger_stats.paired_test`): the selection is **called the winner** only when it
   classifies more test queries right with p ≤ 0.05 — never below :data:`~skillbench.quality._trigger_stats.
   MIN_TEST_QUERIES` test queries measured by both (fewer cannot reach p ≤ 0.05), and the report says which in one
   line (:func:`skillbench.quality._trigger_stats.winner_call`). The files still carry the selection (``winner`` in
   candidates.csv is the train selection).
5. ``max_total_usd`` caps the spend (the near-miss generator's call, ``spent_usd`` on entry, plus the runs'
   ``total_cost_usd`` plus the rewriter calls' cost): each pass gets
   what is left as generate's ``--max-total-usd`` (which stops starting runs), no pass starts once it is spent,
   and a pass cut short is marked capped and cannot win.

The original SKILL.md is read once and never written (its SHA-256 is checked again at the end).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from skillbench.ledgers import SKILL_FILE, file_sha
from skillbench.quality._rewriter import MAX_DESCRIPTION_CHARS, rewrite_payload
from skillbench.quality._trigger_runs import Measurement, RunSpec, TriggerRuns, measure_description, split_scores
from skillbench.quality._trigger_set import TEST, TRAIN, TriggerSet
from skillbench.quality._trigger_stats import PairedTest, paired_test, winner_call
from skillbench.suite import Suite

Rewriter = Callable[[dict], tuple[str, float]]  # payload -> (proposed description, cost in USD)
Log = Callable[[str], None]


@dataclass
class Candidate:
    """One description and what was measured of it."""

    index: int  # 0: the original
    description: str
    train: dict = field(default_factory=dict)
    test: dict = field(default_factory=dict)
    cost_usd: float = 0.0
    capped: bool = False
    note: str = ""

    @property
    def train_f1(self) -> float:
        f1 = self.train.get("f1")
        return -1.0 if f1 is None or self.capped else float(f1)


@dataclass
class OptimizeResult:
    """The loop's outcome: every candidate, the winner, the spend and whether the cap stopped it."""

    family: str
    trigger_set: TriggerSet
    candidates: list[Candidate]
    winner: Candidate
    spent_usd: float
    max_total_usd: float | None
    capped: bool
    original_sha256: str
    spec: RunSpec
    iterations: int
    near_miss_usd: float = 0.0  # the near-miss generator's call, part of spent_usd
    rewriter_model: str = ""  # the model that proposed the near-misses and the rewrites
    paired: PairedTest | None = None  # the selection against the original on test (None: the original kept)
    called: bool = False  # the selection is called the winner (McNemar, p ≤ 0.05, enough test queries)
    call: str = ""  # the one line that says whether a winner is called, and why


def failures(m: Measurement, tset: TriggerSet) -> tuple[list[str], list[str]]:
    """The train queries a description missed (should trigger, rate < 0.5) and fired on (should not, ≥ 0.5)."""
    triggered = dict(zip(m.rates["query_id"], m.rates["triggered"], strict=True))
    runs = dict(zip(m.rates["query_id"], m.rates["runs"], strict=True))
    missed = [q.text for q in tset.part(TRAIN, True) if runs.get(q.id, 0) and not triggered[q.id]]
    false = [q.text for q in tset.part(TRAIN, False) if runs.get(q.id, 0) and triggered[q.id]]
    return missed, false




@dataclass(frozen=True)
class LoopBudget:
    """How long the loop runs and what it may spend."""

    iterations: int
    max_total_usd: float | None = None  # the cap (None: none)
    spent_usd: float = 0.0  # spent before the loop (the near-miss generator's call): it counts toward the cap


def optimize(suite: Suite, tset: TriggerSet, work: Path, *, budget: LoopBudget, spec: RunSpec, rewriter: Rewriter,
             runs: TriggerRuns, log: Log = print) -> OptimizeResult:
    """Run the loop (module docstring) within ``budget``; runs go under ``work`` (must not exist), made by ``runs``."""
    iterations, max_total_usd, spent_usd = budget.iterations, budget.max_total_usd, budget.spent_usd
    family = tset.family
    hub = suite.family_dir(family) / SKILL_FILE
    before = file_sha(hub)
    original = suite.skills[f"{family}/{SKILL_FILE}"].description
    spent, capped = spent_usd, False

    def left() -> float | None:
        return None if max_total_usd is None else max_total_usd - spent

    def measure(c: Candidate, split: str | None) -> Measurement | None:
        nonlocal spent, capped
        if left() is not None and left() <= 0:
            capped = True
            c.note = c.note or "not measured: --max-total-usd spent"
            return None
        queries = [q for q in tset.queries if split is None or q.split == split]
        m = measure_description(suite, family, c.description, queries,
                                work / f"c{c.index}-{split or 'all'}", spec=spec, runs=runs, max_total_usd=left())
        spent += m.cost_usd
        c.cost_usd += m.cost_usd
        if m.capped:
            capped = c.capped = True
            c.note = f"capped: {m.ran} of {m.planned} runs"
        if split in (None, TRAIN):
            c.train = split_scores(m.rates, tset.queries, TRAIN)
        if split in (None, TEST):
            c.test = split_scores(m.rates, tset.queries, TEST)
        return m

    first = Candidate(0, original)
    best_m = measure(first, None)
    candidates, best = [first], first
    for i in range(1, iterations + 1):
        if best_m is None or capped:
            break
        if left() is not None and left() <= 0:  # no rewriter call either once the cap is spent
            capped = True
            break
        missed, false = failures(best_m, tset)
        if not missed and not false:
            log(f"optimize-description: iteration {i}: no train failures left — stopping")
            break
        description, cost = rewriter(rewrite_payload(family, best.description, missed, false,
                                                     MAX_DESCRIPTION_CHARS))
        spent += cost
        cand = Candidate(i, description, cost_usd=cost)
        candidates.append(cand)
        if any(c.description == description for c in candidates[:-1]):
            cand.note = "same as an earlier candidate: not run again"
            continue
        m = measure(cand, TRAIN)
        log(f"optimize-description: candidate {i}: train F1 {score_text(cand.train.get('f1'))}")
        if m is not None and _better(cand, best):
            best, best_m = cand, m
    winner = best
    if winner is not first and not winner.test:
        measure(winner, TEST)
    assert file_sha(hub) == before, f"{hub}: the original SKILL.md changed during the run"
    result = OptimizeResult(family, tset, candidates, winner, spent, max_total_usd, capped, before, spec, iterations,
                            near_miss_usd=spent_usd)
    result.paired, result.called, result.call = _call(first, winner)
    log(f"optimize-description: {result.call}")
    return result


def _call(first: Candidate, winner: Candidate) -> tuple[PairedTest | None, bool, str]:
    """McNemar's test of the selection against the original on test, and whether it is called the winner."""
    if winner is first:
        return None, False, "no winner called: the original kept the best train F1 (no change proposed)"
    if not winner.test or not first.test:
        return None, False, "no winner called: the selection was not measured on test (the cap was hit)"
    paired = paired_test(first.test.get("correct", {}), winner.test.get("correct", {}))
    called, line = winner_call(paired)
    return paired, called, line


def _better(c: Candidate, best: Candidate) -> bool:
    """Higher train F1; a tie goes to the shorter description, then to the earlier (``best``)."""
    if c.train_f1 != best.train_f1:
        return c.train_f1 > best.train_f1
    return len(c.description) < len(best.description)


__all__ = ["Candidate", "OptimizeResult", "Rewriter", "failures", "optimize"]


def score_text(value: object) -> str:
    """A score as the pages and the log print it: three decimals, "—" when not measured or undefined."""
    if value is None or (isinstance(value, float) and value != value):
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
