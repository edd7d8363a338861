"""The blind rubric judge: grades each run's final answer item by item into the ``scores.csv`` ledger.

What the judge sees is built by :mod:`skillbench.judge._protocol` (used unchanged): the prompt, the final
answer between content-derived delimiters, and the rubric lines in a shuffled order whose seed is recorded.
It never sees the model, the condition, the run id or the skill name; runs are graded in a shuffled order
too. The rules:

* **Evidence is verified.** Every met/violated verdict must quote the answer; a quote that is not in the
  answer (after :func:`~skillbench.judge._quotes.normalize_quote`) is asked again once, for that item only;
  still unverified → scored missing/clean and flagged (``evidence_verified`` = 0). Each judge's
  hallucinated-evidence rate is reported.
* **Judge failures are never skill losses.** A call is retried by the SDK (rate-limit aware: ``Retry-After``
  is honoured) and then once more for the failed slot only; a reply that does not validate is retried the
  same way. Still failing → the items are ``ungraded`` (empty credit) with the reason in the run's
  ``judge.json``, never ``missing``.
* **Absence items are hunted for.** A must whose requirement is an absence (``RunAnswer.absence``, decided by
  :mod:`skillbench.suite._absence`) is sent as an avoid line, so the judge must quote a violation; each vote is
  then mapped back to the must: ``clean`` → ``met`` (credit 1, no quote: nothing proves an absence),
  ``violated`` → ``missing`` with the violation's verified quote as evidence. The row reads as any must for
  qdrant's maths; its ``absence`` cell (``1``) says how it was graded.
* **Samples.** ``samples=2`` grades twice and asks a third sample only for the items the two disagree on;
  the majority wins and the item is ``contested``.
* **Durable and resumable.** One run's rows are appended in one write, then flushed and fsynced; a rerun
  skips runs whose rows are all present and first drops a run whose rows were cut by a kill, so every item
  is in the ledger exactly once. ``fresh`` starts over. A ledger the scorecard would refuse (an unknown
  verdict, a credit outside its item type's range, a rubric item twice: :func:`skillbench.ledgers.read_scores`'
  rules) is refused by resume too, naming the file and row — never kept as graded, never silently dropped.

A whole pass over a week is :func:`skillbench.judge.judge_run_dir` (:mod:`skillbench.judge._run`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.judge._answers import RunAnswer
from skillbench.judge._cache import with_cache_breakpoint
from skillbench.judge._client import CallResult, JudgeClient, SlotFailed, ask_validated, opaque_run_id, shuffle_seed
from skillbench.judge._evidence import REASK_FAILED
from skillbench.judge._protocol import (
    VERDICTS_TOOL,
    RubricLine,
    build_judge_request,
    judge_headers,
    judge_prompt_sha,
    parse_verdicts,
    tool_input,
)
from skillbench.judge._quotes import quote_in_answer
from skillbench.ledgers import SCORES_COLUMNS, SCORES_FILE, AppendLedger, LedgerConflict, LedgerError, read_scores_frame
from skillbench.vocab import ALLOWED_VERDICTS, POSITIVE_VERDICTS, UNGRADED


@dataclass
class Vote:
    """One sample's verdict on one item, after evidence verification."""

    verdict: str
    evidence: str = ""
    flagged: bool = False  # its first quote was not in the answer and no verified quote replaced it


@dataclass
class ItemGrade:
    """The final grade of one item."""

    index: int
    verdict: str  # a protocol verdict, or "ungraded"
    evidence: str
    contested: bool
    votes: int
    evidence_verified: str  # "1", "0" or ""
    reason: str = ""  # why it is ungraded

    @property
    def graded(self) -> bool:
        return self.verdict != UNGRADED


@dataclass
class RunGrading:
    """Everything one run's grading did (the per-run ``judge.json``)."""

    run_id: str
    judge_model: str
    samples: int
    seed: int
    rubric_sha: str
    judge_prompt_sha: str
    calls: list[dict[str, Any]] = field(default_factory=list)
    grades: list[ItemGrade] = field(default_factory=list)

    @property
    def cost_usd(self) -> float:
        return sum(c.get("cost_usd", 0.0) for c in self.calls)

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "judge_model": self.judge_model, "samples": self.samples, "seed": self.seed,
            "rubric_sha": self.rubric_sha, "judge_prompt_sha": self.judge_prompt_sha,
            "cost_usd": round(self.cost_usd, 8), "calls": self.calls,
            "items": [asdict(g) for g in self.grades],
            "ungraded": {str(g.index): g.reason for g in self.grades if not g.graded},
        }


def _negative(kind: str) -> str:
    return ALLOWED_VERDICTS[kind][1]


class RubricJudge:
    """Grades answers with one judge model, following the module's rules.

    Args:
        client: the judge client (or a :class:`~skillbench.judge._batch.BatchClient`: the same calls, batched).
        seed: seed of the rubric orders (each call's seed is derived from it and recorded).
        cache: put a prompt-cache breakpoint on sample 1's calls — the requests calibration's first repeat sends
            again byte for byte (same seed, run, sample and attempt), so its reads pay for the writes.
    """

    CACHED_SAMPLES = frozenset({1})

    def __init__(self, client: JudgeClient, *, seed: int = 0, cache: bool = False):
        self.client = client
        self.seed = seed
        self.cache = cache

    @property
    def model(self) -> str:
        return self.client.model

    def _ask(self, run: RunAnswer, items: list[RubricLine], sample: int, purpose: str, log: RunGrading,
             attempts: dict[int, int]) -> dict[int, Any]:
        """One slot (:func:`~skillbench.judge._client.ask_validated`); returns verdicts by item, each call recorded."""

        def next_attempt() -> int:
            attempts[sample] = attempts.get(sample, 0) + 1
            return attempts[sample]

        def build(attempt: int) -> tuple[dict[str, Any], dict[str, str]]:
            seed = shuffle_seed(self.seed, run.run_id, sample, attempt)
            log.calls.append({"purpose": purpose, "sample": sample, "attempt": attempt, "shuffle_seed": seed,
                              "items": [i for i, _, _ in items]})
            request = build_judge_request(run.prompt_text, run.answer, items, seed)
            if self.cache and sample in self.CACHED_SAMPLES:
                request = with_cache_breakpoint(request)
            return request, judge_headers(sample, run_id=opaque_run_id(run.run_id), attempt=attempt)

        def observe(_attempt: int, result: CallResult | None, error: str) -> None:
            if result is not None:
                log.calls[-1].update(usage=result.usage, cost_usd=round(result.cost_usd, 8))
            if error:
                log.calls[-1]["error"] = error

        verdicts = ask_validated(self.client, build,
                                 lambda message: parse_verdicts(tool_input(message, VERDICTS_TOOL), items).by_item(),
                                 next_attempt=next_attempt, observe=observe)
        log.calls[-1]["verdicts"] = {str(i): v.verdict for i, v in sorted(verdicts.items())}
        return verdicts

    def grade_sample(self, run: RunAnswer, items: list[RubricLine], sample: int, log: RunGrading,
                     attempts: dict[int, int], purpose: str = "grade") -> dict[int, Vote | str]:
        """One sample's votes on ``items`` with evidence verified; a failed item maps to its reason."""
        try:
            first = self._ask(run, items, sample, purpose, log, attempts)
        except SlotFailed as exc:
            return {i: str(exc) for i, _, _ in items}
        sent = {i: kind for i, kind, _ in items}
        out: dict[int, Vote | str] = {}
        unverified = []
        for index, v in first.items():
            if v.verdict in POSITIVE_VERDICTS and not quote_in_answer(v.evidence, run.answer):
                unverified.append(index)
            elif v.verdict in POSITIVE_VERDICTS:
                out[index] = Vote(v.verdict, " ".join(v.evidence.split()))
            else:
                out[index] = Vote(v.verdict)
        log.calls[-1].update(positives=sum(v.verdict in POSITIVE_VERDICTS for v in first.values()),
                             unverified=sorted(unverified))
        if not unverified:
            return _as_recorded(out, run.absence)
        try:
            again = self._ask(run, run.lines(unverified), sample, "re-ask", log, attempts)
        except SlotFailed as exc:
            out.update({i: f"{REASK_FAILED}: {exc}" for i in unverified})
            return _as_recorded(out, run.absence)
        still = []
        for index in unverified:
            v = again[index]
            if v.verdict in POSITIVE_VERDICTS and quote_in_answer(v.evidence, run.answer):
                out[index] = Vote(v.verdict, " ".join(v.evidence.split()))
            else:  # no verifiable quote: the protocol's rule is missing/clean, and the item is flagged
                out[index] = Vote(_negative(sent[index]), flagged=True)
                still.append(index)
        log.calls[-1].update(positives=sum(v.verdict in POSITIVE_VERDICTS for v in again.values()),
                             unverified=sorted(still))
        return _as_recorded(out, run.absence)

    def grade(self, run: RunAnswer, samples: int = 1) -> RunGrading:
        """Grade every rubric item of ``run`` with ``samples`` (1 or 2) samples, a third on disagreement."""
        if samples not in (1, 2):
            raise ValueError("samples must be 1 or 2")
        log = RunGrading(run.run_id, self.model, samples, self.seed, run.rubric_sha, judge_prompt_sha())
        attempts: dict[int, int] = {}
        votes: dict[int, list[Vote]] = {i: [] for i, _, _ in run.items}
        errors: dict[int, list[str]] = {i: [] for i, _, _ in run.items}

        def collect(result: Mapping[int, Vote | str]) -> None:
            for index, vote in result.items():
                (votes[index] if isinstance(vote, Vote) else errors[index]).append(vote)  # type: ignore[arg-type]

        for sample in range(1, samples + 1):
            collect(self.grade_sample(run, run.lines(), sample, log, attempts))
        if samples == 2:
            # A third sample only where two samples did not agree (a split, or a sample that failed).
            unsettled = [i for i, vs in votes.items() if not _settled(vs)]
            if unsettled:
                collect(self.grade_sample(run, run.lines(unsettled), 3, log, attempts, purpose="tie-break"))
        log.grades = [_decide(i, votes[i], errors[i], absence=i in run.absence) for i, _, _ in run.items]
        return log


def _as_recorded(votes: dict[int, Vote | str], absence: frozenset[int]) -> dict[int, Vote | str]:
    """Votes on absence items (sent as avoid lines) mapped back to their must: clean → met, violated → missing.

    A violation keeps its quote (the evidence of the miss); ``flagged`` survives (a violation that could not be
    quoted became clean, hence met, and is flagged like any unverified verdict).
    """
    for index in absence & votes.keys():
        vote = votes[index]
        if isinstance(vote, Vote):
            violated = vote.verdict == "violated"
            votes[index] = Vote("missing" if violated else "met", vote.evidence if violated else "", vote.flagged)
    return votes


def _settled(votes: list[Vote]) -> bool:
    verdicts = [v.verdict for v in votes]
    return any(verdicts.count(v) >= 2 for v in verdicts)


def _decide(index: int, votes: list[Vote], errors: list[str], *, absence: bool = False) -> ItemGrade:
    """The majority of the available votes; no vote, or a 1–1 split, is ``ungraded``.

    A quote is kept for a met/violated verdict, and for an absence item's ``missing`` (its violation).
    """
    flagged = any(v.flagged for v in votes)
    if not votes:
        return ItemGrade(index, UNGRADED, "", False, 0, "", "; ".join(dict.fromkeys(errors)) or "no verdict")
    counts = {v.verdict: sum(u.verdict == v.verdict for u in votes) for v in votes}
    best = max(counts.values())
    winners = [k for k, n in counts.items() if n == best]
    contested = len(counts) > 1
    if len(winners) > 1:
        reason = "two samples split 1–1 and no third verdict"  # a sample failed, so the tie-break was the 2nd vote
        if errors:
            reason += f" ({errors[-1]})"
        return ItemGrade(index, UNGRADED, "", True, len(votes), "0" if flagged else "", reason)
    verdict = winners[0]
    evidence = next((v.evidence for v in votes if v.verdict == verdict and v.evidence), "")
    quoted = verdict == "missing" if absence else verdict in POSITIVE_VERDICTS
    verified = "0" if flagged else ("1" if quoted else "")
    return ItemGrade(index, verdict, evidence if quoted else "", contested, len(votes), verified)


# -- the ledger -------------------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    """Cells never span lines, so a torn append is always a torn last line."""
    return text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


def score_rows(run: RunAnswer, grading: RunGrading) -> list[dict[str, str]]:
    """The ``scores.csv`` rows of a graded run, in rubric order, formatted as qdrant writes them."""
    rows = []
    for grade in grading.grades:
        _, kind, text = run.items[grade.index]
        credit = contribution = ""  # an ungraded item carries no credit
        if grade.graded:
            positive = grade.verdict in POSITIVE_VERDICTS
            credit = "1.0" if positive else "0.0"
            contribution = ("-1.0" if kind == "avoid" else "1.0") if positive else "0.0"  # avoid counts against
        rows.append({
            "prompt": run.prompt, "skill": run.skill, "model": run.model, "condition": run.condition,
            "rep": str(run.rep), "item_type": kind, "item_text": _one_line(text), "verdict": grade.verdict,
            "credit": credit, "contribution": contribution, "contested": "1" if grade.contested else "",
            "evidence_quote": _one_line(grade.evidence), "run_id": run.run_id, "item_index": str(grade.index),
            "judge_model": grading.judge_model, "samples": str(grade.votes) if grade.votes else "",
            "evidence_verified": grade.evidence_verified, "rubric_sha": grading.rubric_sha,
            "judge_prompt_sha": grading.judge_prompt_sha, "absence": "1" if grade.index in run.absence else "",
        })
    return rows


class ScoresLedger(AppendLedger):
    """``scores.csv``: qdrant's 12 columns, then ours; one group of rows per run."""

    def __init__(self, run_dir: Path):
        super().__init__(Path(run_dir) / SCORES_FILE, SCORES_COLUMNS, "run_id")

    def resume(self, expected: Mapping[str, int], *, drop: Iterable[str] = ()) -> dict[str, list[dict[str, str]]]:
        """Keep the runs whose rows are complete; rewrite the file without torn or dropped runs.

        Args:
            expected: number of rubric items per run id being graded.
            drop: run ids to grade again (e.g. those with ungraded items).

        Returns:
            The complete runs' rows, by run id.

        Raises:
            LedgerConflict: a row the scorecard would refuse (see :meth:`check`).
        """
        rows = self.read()
        self.check(rows)
        groups: dict[str, list[dict[str, str]]] = {}
        for row in rows:
            groups.setdefault(row["run_id"], []).append(row)
        drop = set(drop)
        keep: dict[str, list[dict[str, str]]] = {}
        for run_id, group in groups.items():
            indexes = sorted(int(r["item_index"]) for r in group if r["item_index"].isdigit())
            n = expected.get(run_id)
            complete = n is None or indexes == list(range(n))
            if complete and run_id not in drop:
                keep[run_id] = group
        kept = [r for g in keep.values() for r in g]
        torn = self.path.is_file() and not self.path.read_bytes().endswith(b"\n")
        if self.path.is_file() and (len(kept) != len(rows) or torn):
            self.rewrite(kept)
        return keep

    def check(self, rows: list[dict[str, str]]) -> None:
        """Refuse rows that the scorecard's reader refuses, with its one line (file, row, value) and ``--fresh``.

        A hand-edited or damaged row must not be kept as a grade (it would be scored), nor dropped and graded
        again without a word (its evidence would be lost silently).

        Raises:
            LedgerConflict: an unknown verdict, a verdict of another item type, a credit or contribution its
                verdict does not give, or a rubric item twice.
        """
        if not rows:
            return
        try:
            read_scores_frame(pd.DataFrame(rows, columns=self.columns), self.path)
        except LedgerError as exc:
            fix = "" if "--fresh" in str(exc) else " — the judge does not resume a damaged ledger: fix the row, or " \
                "pass --fresh to grade the week again"
            raise LedgerConflict(f"{exc}{fix}") from exc
