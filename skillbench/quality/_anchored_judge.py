"""The anchored judge pass: every family scored on the four dimensions by K independent samples.

Rules (the rubric judge's, :mod:`skillbench.judge._rubric`, where they apply):

* **One client, the retry-once rule.** Every call goes through :class:`skillbench.judge._client.JudgeClient` (the
  pass's limiter, the client's own retries of 429/5xx) and :func:`~skillbench.judge._client.ask_validated` (a
  failed call or a reply that does not validate against the dimensions sent is asked once more). Still failing:
  the family's dimensions are ``ungraded`` for that sample (no score, the reason kept), never a low score.
* **Independent samples.** Sample ``k`` of ``K`` carries ``X-Skillbench-Sample: k``; the run-id header is an
  opaque hash of the family (:func:`~skillbench.judge._client.opaque_run_id`), the attempt header counts the
  sample's calls. No role header: the forced tool names the role.
* **Evidence is verified.** Each quote must occur in one of the documents sent
  (:func:`skillbench.judge._quotes.quote_in_answer`). The dimensions whose quote is not found are asked again once,
  alone; a verified re-ask replaces the score. Still unverified: the score is **kept and marked**
  (``evidence_verified`` 0) — unlike a rubric verdict there is no negative anchor to fall back to (0 would be a
  claim no judge made) — and the page counts them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from skillbench.judge import (
    CallResult,
    JudgeClient,
    JudgeOptions,
    SlotFailed,
    ask_validated,
    opaque_run_id,
    quote_in_answer,
    tool_input,
)
from skillbench.quality._anchored import DIMENSION_IDS, DimensionScore, build_request, parse_scores, rubric_sha
from skillbench.quality._payload import SKILL_QUALITY_TOOL
from skillbench.quality._units import SkillUnit
from skillbench.runtime import PassContext
from skillbench.wire import ATTEMPT_HEADER, RUN_ID_HEADER, SAMPLE_HEADER

UNGRADED = "ungraded"
Log = Callable[[str], None]


@dataclass
class JudgedScore:
    """One sample's score of one dimension of one family (``score`` None: ungraded, ``reason`` says why)."""

    family: str
    sample: int
    dimension: str
    score: float | None
    evidence: str = ""
    evidence_verified: str = ""  # "1", "0", or "" when ungraded
    reason: str = ""


@dataclass
class JudgePass:
    """Everything a pass did: the scores, every call, and what it cost."""

    judge_model: str
    samples: int
    scores: list[JudgedScore] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    snapshot: str = ""

    @property
    def cost_usd(self) -> float:
        return sum(c.get("cost_usd", 0.0) for c in self.calls)

    @property
    def usage(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for c in self.calls:
            for k, v in (c.get("usage") or {}).items():
                total[k] = total.get(k, 0) + int(v)
        return total


def skill_headers(family: str, sample: int, attempt: int) -> dict[str, str]:
    """The headers of one call: sample and attempt, and an opaque id of the family (draw keys of the simulation)."""
    return {SAMPLE_HEADER: str(sample), ATTEMPT_HEADER: str(attempt),
            RUN_ID_HEADER: opaque_run_id(f"skill-quality:{family}")}


class AnchoredJudge:
    """Scores families with one judge model (the module's rules)."""

    def __init__(self, client: JudgeClient):
        self.client = client

    def _ask(self, unit: SkillUnit, sample: int, dims: Sequence[str], purpose: str, calls: list[dict[str, Any]],
             attempts: list[int]) -> dict[str, DimensionScore]:
        docs = [(d.rel, d.text) for d in unit.docs]
        cat = unit.category

        def next_attempt() -> int:
            attempts[0] += 1
            return attempts[0]

        def build(attempt: int) -> tuple[dict[str, Any], dict[str, str]]:
            calls.append({"family": unit.family, "sample": sample, "attempt": attempt, "purpose": purpose,
                          "dimensions": list(dims)})
            return build_request(unit.family, cat.label, cat.target, docs, dims), \
                skill_headers(unit.family, sample, attempt)

        def observe(_attempt: int, result: CallResult | None, error: str) -> None:
            if result is not None:
                calls[-1].update(usage=result.usage, cost_usd=round(result.cost_usd, 8))
            if error:
                calls[-1]["error"] = error

        return ask_validated(self.client, build,
                             lambda message: parse_scores(tool_input(message, SKILL_QUALITY_TOOL), dims),
                             next_attempt=next_attempt, observe=observe)

    def score_sample(self, unit: SkillUnit, sample: int) -> tuple[list[JudgedScore], list[dict[str, Any]]]:
        """One sample's four scores of ``unit``, evidence verified (one re-ask of the unverified dimensions)."""
        calls: list[dict[str, Any]] = []
        attempts = [0]
        texts = [d.text for d in unit.docs]

        def verified(s: DimensionScore) -> bool:
            return any(quote_in_answer(s.evidence, t) for t in texts)

        try:
            first = self._ask(unit, sample, DIMENSION_IDS, "score", calls, attempts)
        except SlotFailed as exc:
            return [JudgedScore(unit.family, sample, d, None, reason=str(exc)) for d in DIMENSION_IDS], calls
        unverified = [d for d, s in first.items() if not verified(s)]
        calls[-1]["unverified"] = unverified
        final = dict(first)
        still = set(unverified)
        if unverified:
            try:
                again = self._ask(unit, sample, unverified, "re-ask", calls, attempts)
            except SlotFailed:
                again = {}
            for d, s in again.items():
                if verified(s):
                    final[d] = s
                    still.discard(d)
            if again:
                calls[-1]["unverified"] = sorted(still)
        out = [JudgedScore(unit.family, sample, d, final[d].score, " ".join(final[d].evidence.split()),
                           "0" if d in still else "1", final[d].reason) for d in DIMENSION_IDS]
        return out, calls

    def run(self, units: Sequence[SkillUnit], samples: int, *, jobs: int = 2, log: Log | None = None) -> JudgePass:
        """Every family × sample, ``jobs`` at once; results in family, sample, dimension order."""
        work = [(u, k) for u in units for k in range(1, samples + 1)]
        out = JudgePass(self.client.model, samples)
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            results = list(pool.map(lambda w: self.score_sample(*w), work))
        for (unit, k), (scores, calls) in zip(work, results, strict=True):
            out.scores += scores
            out.calls += calls
            if log and any(s.score is None for s in scores):
                log(f"lint-skills: {unit.family} sample {k}: ungraded ({scores[0].reason})")
        out.snapshot = self.client.snapshot
        return out


def judge_units(units: Sequence[SkillUnit], options: JudgeOptions, ctx: PassContext) -> JudgePass:
    """The anchored judge pass over ``units`` with a fresh :class:`JudgeClient` (closed at the end): the options'
    judge model, ``samples``, ``jobs`` and retries; the context's endpoint and log."""
    from skillbench.limiter import AdaptiveLimiter

    model, jobs = options.judge_model, options.jobs
    with ctx.open_endpoint() as ep:
        client = JudgeClient(ep.base_url, ep.api_key, model, max_retries=options.max_retries, timeout=options.timeout,
                             limiter=AdaptiveLimiter(jobs, log=ctx.log, name=f"lint-skills judge {model}"))
        try:
            return AnchoredJudge(client).run(units, options.samples, jobs=jobs, log=ctx.log)
        finally:
            client.close()


__all__ = ["UNGRADED", "AnchoredJudge", "JudgePass", "JudgedScore", "judge_units", "rubric_sha", "skill_headers"]
