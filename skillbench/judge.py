"""The blind rubric judge: grades each run's final answer item by item into the ``scores.csv`` ledger.

What the judge sees is built by :mod:`skillbench.judge_protocol` (used unchanged): the prompt, the final
answer between content-derived delimiters, and the rubric lines in a shuffled order whose seed is recorded.
It never sees the model, the condition, the run id or the skill name; runs are graded in a shuffled order
too. The rules:

* **Evidence is verified.** Every met/violated verdict must quote the answer; a quote that is not in the
  answer (after :func:`~skillbench.judge_protocol.normalize_quote`) is asked again once, for that item only;
  still unverified → scored missing/clean and flagged (``evidence_verified`` = 0). Each judge's
  hallucinated-evidence rate is reported.
* **Judge failures are never skill losses.** A call is retried by the SDK (rate-limit aware: ``Retry-After``
  is honoured) and then once more for the failed slot only; a reply that does not validate is retried the
  same way. Still failing → the items are ``ungraded`` (empty credit) with the reason in the run's
  ``judge.json``, never ``missing``.
* **Samples.** ``samples=2`` grades twice and asks a third sample only for the items the two disagree on;
  the majority wins and the item is ``contested``.
* **Durable and resumable.** One run's rows are appended in one write, then flushed and fsynced; a rerun
  skips runs whose rows are all present and first drops a run whose rows were cut by a kill, so every item
  is in the ledger exactly once. ``fresh`` starts over.

Files written in ``RUN_DIR``: ``scores.csv`` (qdrant's 12 columns, then ours), ``judge-skips.csv``
(``run_id, reason`` for gradeable runs that were not graded), ``judge.json`` (the pass's provenance: judge
model, samples, seeds, rubric and judge-prompt hashes, evidence rates, cost), and per run folder
``judge.json`` (every call: seed, sample, attempt, items, usage, verification, errors) and
``judge_cost.txt`` (USD, from usage × :mod:`skillbench.prices`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import random
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError

from skillbench.fileio import atomic_write_json, atomic_write_text
from skillbench.judge_protocol import (
    ALLOWED_VERDICTS,
    POSITIVE_VERDICTS,
    VERDICTS_TOOL,
    ProtocolError,
    RubricLine,
    build_judge_request,
    judge_headers,
    judge_prompt_sha,
    parse_verdicts,
    quote_in_answer,
    tool_input,
)
from skillbench.ledgers import JUDGE_COST_FILE, JUDGE_SKIPS_COLUMNS, JUDGE_SKIPS_FILE, SCORES_COLUMNS, SCORES_FILE
from skillbench.ledgers import SCORES_OPTIONAL as OUR_SCORES_COLUMNS
from skillbench.prices import usage_cost
from skillbench.signals import METADATA, TEST_PROMPT, TRANSCRIPT, run_dirs, run_signals, skip_reason
from skillbench.suite import TestPrompt
from skillbench.transcript import read_transcript

DEFAULT_JUDGE_MODEL = "claude-opus-5-5"
SCORE_COLUMNS: list[str] = [*SCORES_COLUMNS, *OUR_SCORES_COLUMNS]
LIFT_ARMS = ("no-skill", "with-skill")
SKILLED_ARMS = ("with-skill", "plugin")
RUN_JUDGE_FILE = "judge.json"  # per run folder: every call of that run
PASS_FILE = "judge.json"  # in RUN_DIR: the judge pass's provenance
COST_PARTS_FILE = "judge_cost.json"  # per run folder: spend per judge (rubric, pairs), summed into judge_cost.txt
MAX_RETRY_AFTER_S = 120.0

Log = Callable[[str], None]


def stderr_log(message: str) -> None:
    print(message, file=sys.stderr)


# -- runs -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunAnswer:
    """One run as the judge needs it: identity, question, rubric and final answer.

    Only ``prompt_text``, ``answer`` and ``items`` ever reach the judge; the rest is for the ledger.
    """

    run_id: str
    prompt: str
    skill: str  # the skill family
    model: str
    condition: str
    rep: int
    dormancy: bool
    prompt_text: str
    items: tuple[RubricLine, ...]  # (index in the prompt file, type, text as written)
    answer: str
    rubric_sha: str
    folder: Path

    def lines(self, indexes: Iterable[int] | None = None) -> list[RubricLine]:
        """The rubric lines, all or those at ``indexes`` (file order)."""
        if indexes is None:
            return list(self.items)
        wanted = set(indexes)
        return [line for line in self.items if line[0] in wanted]

    def item_type(self, index: int) -> str:
        return self.items[index][1]


@dataclass(frozen=True)
class Skip:
    """A gradeable run that is not graded, and why (a ``judge-skips.csv`` row)."""

    run_id: str
    reason: str


def load_run(folder: Path) -> tuple[RunAnswer, dict[str, Any]]:
    """Read one run folder: its answer (from ``test-prompt.json`` and the transcript) and its signals.

    Raises:
        OSError, ValueError: the folder lacks a readable ``metadata.json`` or ``test-prompt.json``.
    """
    meta = json.loads((folder / METADATA).read_text(encoding="utf-8"))
    test = TestPrompt.model_validate_json((folder / TEST_PROMPT).read_text(encoding="utf-8"))
    answer = read_transcript(folder / TRANSCRIPT).final_answer()
    run = RunAnswer(
        run_id=str(meta["run_id"]), prompt=str(meta["prompt"]), skill=str(meta["skill_family"]),
        model=str(meta["model"]), condition=str(meta["condition"]), rep=int(meta["rep"]),
        dormancy=bool(meta.get("dormancy")), prompt_text=test.prompt,
        items=tuple((i, item.type, item.text) for i, item in enumerate(test.rubric)),
        answer=answer, rubric_sha=test.rubric_sha(), folder=folder,
    )
    return run, run_signals(folder)


def select_runs(run_dir: str | Path, *, include_plugin: bool = False) -> tuple[list[RunAnswer], list[Skip]]:
    """The runs to grade and the gradeable runs that cannot be.

    Gradeable: a preference-eligible prompt (dormancy prompts are for trigger health only) in the no-skill
    or with-skill arm, and the plugin arm with ``include_plugin``.

    Returns:
        ``(runs, skips)``, both sorted by run id.
    """
    arms = (*LIFT_ARMS, "plugin") if include_plugin else LIFT_ARMS
    runs, skips = [], []
    for folder in run_dirs(run_dir):
        try:
            run, signals = load_run(folder)
        except (OSError, ValueError, KeyError) as exc:
            skips.append(Skip(folder.name, f"unreadable run folder ({type(exc).__name__}: {exc})"[:200]))
            continue
        if run.dormancy or run.condition not in arms:
            continue
        reason = skip_reason(signals, run.answer)
        if reason:
            skips.append(Skip(run.run_id, reason))
        else:
            runs.append(run)
    return runs, skips


# -- the client -------------------------------------------------------------------------------------------


class JudgeCallError(RuntimeError):
    """A judge call that failed after the SDK's retries; the message is the reason recorded."""

    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.retry_after = retry_after


@dataclass
class CallResult:
    """A successful call: the reply and what it cost."""

    message: Any
    usage: dict[str, int]
    cost_usd: float


class JudgeClient:
    """The ``anthropic`` SDK client of one judge model, with a cooldown shared by every worker.

    The SDK retries 429/5xx/529 and connection errors with backoff and honours ``Retry-After``; when a call
    still ends rate-limited, every worker waits out its ``Retry-After`` before the next call, so concurrent
    slots do not keep hitting the limit.

    Args:
        base_url: the Messages endpoint (``Endpoint.base_url``).
        api_key: its key.
        model: the judge model name.
        max_retries: SDK retries per call.
        timeout: seconds per request (a stalled response ends as a timeout, then a retry).
    """

    def __init__(self, base_url: str, api_key: str, model: str, *, max_retries: int = 4, timeout: float = 120.0):
        import anthropic

        self.model = model
        self.max_retries = max_retries
        self.sdk = anthropic.Anthropic(base_url=base_url, api_key=api_key, max_retries=max_retries, timeout=timeout)
        self._cool_until = 0.0
        self._lock = threading.Lock()

    def close(self) -> None:
        self.sdk.close()

    def _wait_cooldown(self) -> None:
        with self._lock:
            wait = self._cool_until - time.monotonic()
        if wait > 0:
            time.sleep(wait)

    def create(self, request: Mapping[str, Any], headers: Mapping[str, str]) -> CallResult:
        """One ``messages.create`` call.

        Raises:
            JudgeCallError: the call failed after the SDK's retries (reason and any ``Retry-After`` attached).
        """
        import anthropic

        self._wait_cooldown()
        try:
            message = self.sdk.messages.create(model=self.model, extra_headers=dict(headers), **request)
        except anthropic.APIStatusError as exc:
            retry_after = _retry_after(exc.response.headers)
            if exc.status_code == 429 and retry_after:
                with self._lock:
                    self._cool_until = max(self._cool_until, time.monotonic() + retry_after)
            body = exc.body if isinstance(exc.body, dict) else {}
            kind = (body.get("error") or {}).get("type") or type(exc).__name__
            reason = f"HTTP {exc.status_code} {kind} after {self.max_retries} retries"
            raise JudgeCallError(reason, retry_after) from exc
        except anthropic.APITimeoutError as exc:
            raise JudgeCallError(f"timeout after {self.max_retries} retries") from exc
        except anthropic.APIConnectionError as exc:
            raise JudgeCallError(f"connection error after {self.max_retries} retries ({exc.__cause__ or exc})"
                                 ) from exc
        except (anthropic.APIError, ValueError) as exc:  # e.g. a body that is not a message
            raise JudgeCallError(f"unreadable reply ({type(exc).__name__}: {str(exc)[:120]})") from exc
        use = getattr(message, "usage", None)
        usage = {k: int(getattr(use, k, 0) or 0) for k in ("input_tokens", "output_tokens",
                                                           "cache_read_input_tokens", "cache_creation_input_tokens")}
        return CallResult(message, usage, usage_cost(self.model, usage))


def _retry_after(headers: Mapping[str, str]) -> float | None:
    try:
        value = float(headers.get("retry-after", ""))
    except (TypeError, ValueError):
        return None
    return min(value, MAX_RETRY_AFTER_S) if value > 0 else None


def opaque_run_id(run_id: str) -> str:
    """A stable id for the run-id header that names neither model, arm nor skill (keys the sim's draws)."""
    return "judge-" + hashlib.sha256(run_id.encode()).hexdigest()[:16]


def shuffle_seed(seed: int, run_id: str, sample: int, attempt: int) -> int:
    """The rubric-order seed of one call (recorded with the call)."""
    digest = hashlib.sha256(f"{seed}|{run_id}|{sample}|{attempt}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


# -- grading one run --------------------------------------------------------------------------------------


class SlotFailed(RuntimeError):
    """A slot (one sample of one run, or its re-ask) failed twice; the message is the reason."""


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
        return self.verdict != "ungraded"


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
        client: the judge client.
        seed: seed of the rubric orders (each call's seed is derived from it and recorded).
    """

    def __init__(self, client: JudgeClient, *, seed: int = 0):
        self.client = client
        self.seed = seed

    @property
    def model(self) -> str:
        return self.client.model

    def _ask(self, run: RunAnswer, items: list[RubricLine], sample: int, purpose: str, log: RunGrading,
             attempts: dict[int, int]) -> dict[int, Any]:
        """One slot: a call, retried once if it fails or does not validate; returns verdicts by item."""
        errors = []
        for _ in range(2):
            attempts[sample] = attempt = attempts.get(sample, 0) + 1
            seed = shuffle_seed(self.seed, run.run_id, sample, attempt)
            record: dict[str, Any] = {"purpose": purpose, "sample": sample, "attempt": attempt, "shuffle_seed": seed,
                                      "items": [i for i, _, _ in items]}
            log.calls.append(record)
            request = build_judge_request(run.prompt_text, run.answer, items, seed)
            headers = judge_headers(sample, run_id=opaque_run_id(run.run_id), attempt=attempt)
            try:
                result = self.client.create(request, headers)
            except JudgeCallError as exc:
                record["error"] = str(exc)
                errors.append(str(exc))
                continue  # a rate limit's Retry-After is waited out by the client before the next call
            record.update(usage=result.usage, cost_usd=round(result.cost_usd, 8))
            try:
                verdicts = parse_verdicts(tool_input(result.message, VERDICTS_TOOL), items).by_item()
            except (ProtocolError, ValidationError) as exc:
                first = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
                record["error"] = f"invalid reply: {first}"[:300]
                errors.append(record["error"])
                continue
            record["verdicts"] = {str(i): v.verdict for i, v in sorted(verdicts.items())}
            return verdicts
        raise SlotFailed("; ".join(errors))

    def grade_sample(self, run: RunAnswer, items: list[RubricLine], sample: int, log: RunGrading,
                     attempts: dict[int, int], purpose: str = "grade") -> dict[int, Vote | str]:
        """One sample's votes on ``items`` with evidence verified; a failed item maps to its reason."""
        try:
            first = self._ask(run, items, sample, purpose, log, attempts)
        except SlotFailed as exc:
            return {i: str(exc) for i, _, _ in items}
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
            return out
        try:
            again = self._ask(run, run.lines(unverified), sample, "re-ask", log, attempts)
        except SlotFailed as exc:
            out.update({i: f"evidence re-ask failed: {exc}" for i in unverified})
            return out
        still = []
        for index in unverified:
            v = again[index]
            if v.verdict in POSITIVE_VERDICTS and quote_in_answer(v.evidence, run.answer):
                out[index] = Vote(v.verdict, " ".join(v.evidence.split()))
            else:  # no verifiable quote: the protocol's rule is missing/clean, and the item is flagged
                out[index] = Vote(_negative(run.item_type(index)), flagged=True)
                still.append(index)
        log.calls[-1].update(positives=sum(v.verdict in POSITIVE_VERDICTS for v in again.values()),
                             unverified=sorted(still))
        return out

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
        log.grades = [_decide(i, votes[i], errors[i]) for i, _, _ in run.items]
        return log


def _settled(votes: list[Vote]) -> bool:
    verdicts = [v.verdict for v in votes]
    return any(verdicts.count(v) >= 2 for v in verdicts)


def _decide(index: int, votes: list[Vote], errors: list[str]) -> ItemGrade:
    """The majority of the available votes; no vote, or a 1–1 split, is ``ungraded``."""
    flagged = any(v.flagged for v in votes)
    if not votes:
        return ItemGrade(index, "ungraded", "", False, 0, "", "; ".join(dict.fromkeys(errors)) or "no verdict")
    counts = {v.verdict: sum(u.verdict == v.verdict for u in votes) for v in votes}
    best = max(counts.values())
    winners = [k for k, n in counts.items() if n == best]
    contested = len(counts) > 1
    if len(winners) > 1:
        reason = "two samples split 1–1 and no third verdict"  # a sample failed, so the tie-break was the 2nd vote
        if errors:
            reason += f" ({errors[-1]})"
        return ItemGrade(index, "ungraded", "", True, len(votes), "0" if flagged else "", reason)
    verdict = winners[0]
    evidence = next((v.evidence for v in votes if v.verdict == verdict and v.evidence), "")
    positive = verdict in POSITIVE_VERDICTS
    verified = "0" if flagged else ("1" if positive else "")
    return ItemGrade(index, verdict, evidence if positive else "", contested, len(votes), verified)


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
            "judge_prompt_sha": grading.judge_prompt_sha,
        })
    return rows


def _csv_text(rows: Iterable[Sequence[str]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf)  # qdrant's ledger is the csv module's default dialect (CRLF rows)
    writer.writerows(rows)
    return buf.getvalue()


class LedgerConflict(RuntimeError):
    """An existing ledger that cannot be resumed; the message says what to do."""


class AppendLedger:
    """A CSV ledger appended one group of rows at a time, durably, and repaired on open.

    Args:
        path: the CSV file.
        columns: its header.
        key: the column that names a group (a run, a pair).
    """

    def __init__(self, path: Path, columns: Sequence[str], key: str):
        self.path, self.columns, self.key = path, list(columns), key
        self._lock = threading.Lock()

    def read(self) -> list[dict[str, str]]:
        """Rows of whole lines with the right number of cells (a torn last line is left out)."""
        if not self.path.is_file():
            return []
        with open(self.path, encoding="utf-8", errors="replace", newline="") as fh:
            text = fh.read()
        # Every append ends with a newline, so anything after the last one is a cut write. Parse with the csv
        # module, not by lines: a quoted cell may hold a line break or U+2028 and must not tear its row.
        text = text[: text.rfind("\n") + 1]
        reader = csv.reader(io.StringIO(text, newline=""))
        records: list[list[str]] = []
        while True:
            try:
                records.append(next(reader))
            except StopIteration:
                break
            except csv.Error:  # an unterminated quote at the cut: drop the torn record
                break
        if not records:
            return []
        if records[0] != self.columns:
            raise LedgerConflict(f"{self.path}: its columns are not {self.columns[:3]}…; move it away or pass --fresh")
        return [dict(zip(self.columns, cells, strict=True)) for cells in records[1:] if len(cells) == len(self.columns)]

    def rewrite(self, rows: Iterable[Mapping[str, str]]) -> None:
        """Replace the file with ``rows`` (atomic)."""
        atomic_write_text(self.path, _csv_text([self.columns, *([r.get(c, "") for c in self.columns] for r in rows)]))

    def append(self, rows: Sequence[Mapping[str, str]]) -> None:
        """Append one group in one write; flushed and fsynced before returning."""
        text = _csv_text([r.get(c, "") for c in self.columns] for r in rows)
        with self._lock:
            new = not self.path.is_file() or self.path.stat().st_size == 0
            with open(self.path, "a", encoding="utf-8", newline="") as fh:
                if new:
                    fh.write(_csv_text([self.columns]))
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())


class ScoresLedger(AppendLedger):
    """``scores.csv``: qdrant's 12 columns, then ours; one group of rows per run."""

    def __init__(self, run_dir: Path):
        super().__init__(Path(run_dir) / SCORES_FILE, SCORE_COLUMNS, "run_id")

    def resume(self, expected: Mapping[str, int], *, drop: Iterable[str] = ()) -> dict[str, list[dict[str, str]]]:
        """Keep the runs whose rows are complete; rewrite the file without torn or dropped runs.

        Args:
            expected: number of rubric items per run id being graded.
            drop: run ids to grade again (e.g. those with ungraded items).

        Returns:
            The complete runs' rows, by run id.
        """
        rows = self.read()
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


# -- judge cost -------------------------------------------------------------------------------------------

_COST_LOCK = threading.Lock()


def record_judge_cost(folder: Path, part: str, usd: float, *, add: bool = False) -> float:
    """Set (or add to) one judge's spend on a run and rewrite ``judge_cost.txt`` as the sum of the parts.

    Args:
        folder: the run folder.
        part: ``rubric`` or ``pairs``.
        usd: dollars.
        add: add to the part instead of replacing it.

    Returns:
        The run's total judge spend.
    """
    with _COST_LOCK:
        parts = _cost_parts(folder)
        parts[part] = (parts.get(part, 0.0) if add else 0.0) + usd
        return _write_cost_parts(folder, parts)


def clear_judge_cost(folder: Path, part: str) -> None:
    """Forget one judge's spend on a run (``--fresh``)."""
    with _COST_LOCK:
        parts = _cost_parts(folder)
        if part in parts:
            del parts[part]
            _write_cost_parts(folder, parts)


def _cost_parts(folder: Path) -> dict[str, float]:
    path = folder / COST_PARTS_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _write_cost_parts(folder: Path, parts: Mapping[str, float]) -> float:
    if not parts:
        (folder / COST_PARTS_FILE).unlink(missing_ok=True)
        (folder / JUDGE_COST_FILE).unlink(missing_ok=True)
        return 0.0
    atomic_write_json(folder / COST_PARTS_FILE, dict(parts))
    total = sum(parts.values())
    atomic_write_text(folder / JUDGE_COST_FILE, f"{total:.8f}\n")
    return total


# -- a whole judge pass -----------------------------------------------------------------------------------


@dataclass
class JudgeOptions:
    """What ``skillbench judge`` was asked to do."""

    judge_model: str = DEFAULT_JUDGE_MODEL
    samples: int = 1
    fresh: bool = False
    jobs: int = 2
    include_plugin: bool = False
    seed: int = 0
    retry_ungraded: bool = False
    max_retries: int = 4
    timeout: float = 120.0
    limit: int | None = None


@dataclass
class JudgeReport:
    """What a pass did; also the ``passes`` entry of ``RUN_DIR/judge.json``."""

    judge_model: str
    samples: int
    planned: int  # gradeable runs with an answer
    already: int  # complete in the ledger before this pass
    graded: int  # graded in this pass
    skipped: int  # judge-skips.csv rows
    ungraded_items: int  # in the whole ledger
    cost_usd: float  # this pass
    evidence: dict[str, Any]
    started: str
    finished: str = ""

    @property
    def ok(self) -> bool:
        return self.ungraded_items == 0


def _now() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def evidence_summary(run_dir: str | Path) -> pd.DataFrame:
    """Each judge model's hallucinated-evidence rate, from the per-run ``judge.json`` files.

    Returns:
        One row per judge model: ``judge_model, positive_verdicts`` (met/violated verdicts on first asks),
        ``unverified`` (their quotes not in the answer), ``hallucinated_evidence_rate``, ``still_unverified``
        (after the re-ask; scored missing/clean and flagged) and ``residual_rate``.
    """
    totals: dict[str, list[int]] = {}
    for path in sorted(Path(run_dir).glob(f"*/{RUN_JUDGE_FILE}")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        t = totals.setdefault(data.get("judge_model", ""), [0, 0, 0])
        for call in data.get("calls", []):
            if call.get("purpose") in ("grade", "tie-break") and "positives" in call:
                t[0] += int(call["positives"])
                t[1] += len(call.get("unverified", []))
            elif call.get("purpose") == "re-ask" and "positives" in call:
                t[2] += len(call.get("unverified", []))
        # A failed re-ask leaves its items ungraded, not flagged: count them as still unverified too.
        t[2] += sum(1 for reason in data.get("ungraded", {}).values() if reason.startswith("evidence re-ask"))
    rows = [{"judge_model": m, "positive_verdicts": p, "unverified": u,
             "hallucinated_evidence_rate": u / p if p else float("nan"), "still_unverified": s,
             "residual_rate": s / p if p else float("nan")} for m, (p, u, s) in sorted(totals.items())]
    return pd.DataFrame(rows, columns=["judge_model", "positive_verdicts", "unverified", "hallucinated_evidence_rate",
                                       "still_unverified", "residual_rate"])


def write_skips(run_dir: Path, skips: Sequence[Skip]) -> None:
    """Rewrite ``judge-skips.csv`` (one row per run id, first reason wins)."""
    seen: dict[str, str] = {}
    for s in skips:
        seen.setdefault(s.run_id, s.reason)
    rows = [list(JUDGE_SKIPS_COLUMNS), *([k, v] for k, v in sorted(seen.items()))]
    atomic_write_text(run_dir / JUDGE_SKIPS_FILE, _csv_text(rows))


def _failed_runs(rows: Mapping[str, list[dict[str, str]]], folders: Mapping[str, Path]) -> list[Skip]:
    """Runs whose every item is ungraded, with the recorded reason (the judge failed, not the skill)."""
    out = []
    for run_id, group in rows.items():
        if group and all(r["verdict"] == "ungraded" for r in group):
            reason = "judge failed"
            folder = folders.get(run_id)
            if folder is not None and (folder / RUN_JUDGE_FILE).is_file():
                reasons = json.loads((folder / RUN_JUDGE_FILE).read_text(encoding="utf-8")).get("ungraded", {})
                if reasons:
                    reason = f"judge failed: {next(iter(reasons.values()))}"
            out.append(Skip(run_id, reason[:300]))
    return out


def reset(run_dir: Path) -> None:
    """Forget every rubric grade of a run directory (``--fresh``)."""
    for name in (SCORES_FILE, JUDGE_SKIPS_FILE, PASS_FILE):
        (run_dir / name).unlink(missing_ok=True)
    for folder in run_dirs(run_dir):
        (folder / RUN_JUDGE_FILE).unlink(missing_ok=True)
        clear_judge_cost(folder, "rubric")


def judge_run_dir(
    run_dir: str | Path,
    options: JudgeOptions,
    *,
    base_url: str,
    api_key: str,
    endpoint_kind: str = "",
    log: Log = stderr_log,
) -> JudgeReport:
    """Grade every gradeable run of ``run_dir`` that the ledger does not have yet.

    Args:
        run_dir: a week's output folder (made by ``skillbench generate``).
        options: judge model, samples, fresh/resume, concurrency, plugin arm, seed, retries.
        base_url: the Messages endpoint.
        api_key: its key.
        endpoint_kind: ``simulated`` or ``real`` (recorded).
        log: where progress lines go.

    Returns:
        What the pass did (also merged into ``RUN_DIR/judge.json``).

    Raises:
        LedgerConflict: an existing ledger from another judge model, protocol or layout (use ``fresh``).
    """
    run_dir = Path(run_dir)
    if options.fresh:
        reset(run_dir)
    runs, skips = select_runs(run_dir, include_plugin=options.include_plugin)
    ledger = ScoresLedger(run_dir)
    existing = ledger.read()
    _check_compatible(existing, options.judge_model, judge_prompt_sha(), ledger.path)
    redo = set()
    if options.retry_ungraded:
        redo = {r["run_id"] for r in existing if r["verdict"] == "ungraded"}
    done = ledger.resume({r.run_id: len(r.items) for r in runs}, drop=redo)
    report = JudgeReport(options.judge_model, options.samples, len(runs), sum(r.run_id in done for r in runs), 0,
                         0, 0, 0.0, {}, _now())
    write_skips(run_dir, skips)

    todo = [r for r in runs if r.run_id not in done]
    random.Random(f"judge-order:{options.seed}").shuffle(todo)  # no arm or model is graded first
    if options.limit is not None:
        todo = todo[: options.limit]
    log(f"judge: {len(runs)} gradeable runs with an answer, {report.already} already graded, {len(todo)} to grade "
        f"({options.judge_model}, {options.samples} sample{'s' if options.samples > 1 else ''}); "
        f"{len(skips)} not gradeable")

    client = JudgeClient(base_url, api_key, options.judge_model, max_retries=options.max_retries,
                         timeout=options.timeout)
    judge = RubricJudge(client, seed=options.seed)
    spent = [0.0]
    lock = threading.Lock()

    def work(run: RunAnswer) -> None:
        grading = judge.grade(run, options.samples)
        atomic_write_json(run.folder / RUN_JUDGE_FILE, grading.to_json())
        record_judge_cost(run.folder, "rubric", grading.cost_usd)
        ledger.append(score_rows(run, grading))  # the commit point: after this the run is graded
        with lock:
            spent[0] += grading.cost_usd
            report.graded += 1

    from tqdm.auto import tqdm

    try:
        with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool, \
                tqdm(total=len(todo), desc="judge", unit="run", file=sys.stderr, disable=not todo) as bar:
            for future in [pool.submit(work, r) for r in todo]:
                future.result()
                bar.update(1)
    finally:
        client.close()

    final = ledger.resume({r.run_id: len(r.items) for r in runs})
    failed = _failed_runs({k: v for k, v in final.items() if k in {r.run_id for r in runs}},
                          {r.run_id: r.folder for r in runs})
    write_skips(run_dir, [*skips, *failed])
    report.skipped = len({s.run_id for s in [*skips, *failed]})
    report.ungraded_items = sum(r["verdict"] == "ungraded" for g in final.values() for r in g)
    report.cost_usd = spent[0]
    evidence = evidence_summary(run_dir)
    report.evidence = {row.judge_model: {k: (None if isinstance(v, float) and v != v else v)
                                         for k, v in row._asdict().items() if k != "judge_model"}
                       for row in evidence.itertuples(index=False)}
    report.finished = _now()
    _write_pass(run_dir, report, runs, options, endpoint_kind)
    return report


def _check_compatible(rows: Sequence[Mapping[str, str]], judge_model: str, prompt_sha: str, path: Path) -> None:
    models = {r["judge_model"] for r in rows if r["judge_model"]}
    shas = {r["judge_prompt_sha"] for r in rows if r["judge_prompt_sha"]}
    if models - {judge_model}:
        raise LedgerConflict(f"{path} was graded by {', '.join(sorted(models))}, not {judge_model}; one ledger holds "
                          "one judge — pass --fresh to start over (or use the same --judge-model)")
    if shas - {prompt_sha}:
        raise LedgerConflict(f"{path} was graded with another judge protocol ({', '.join(sorted(shas))}, now "
                          f"{prompt_sha}); pass --fresh to grade again with this one")


def _write_pass(run_dir: Path, report: JudgeReport, runs: Sequence[RunAnswer], options: JudgeOptions,
                endpoint_kind: str) -> None:
    path = run_dir / PASS_FILE
    old = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    costs = []
    for r in runs:
        f = r.folder / JUDGE_COST_FILE
        if f.is_file():
            costs.append(float(f.read_text().strip() or 0))
    passes = [*old.get("passes", []), {
        "started": report.started, "finished": report.finished, "graded": report.graded, "already": report.already,
        "samples": options.samples, "seed": options.seed, "cost_usd": round(report.cost_usd, 8),
        "retry_ungraded": options.retry_ungraded, "endpoint": endpoint_kind,
    }]
    atomic_write_json(path, {
        "judge_model": options.judge_model,
        "judge_prompt_sha": judge_prompt_sha(),
        "samples": options.samples,
        "include_plugin": options.include_plugin,
        "order": f"runs shuffled with random.Random('judge-order:{options.seed}'); each call's rubric order "
                 "seed is in the run's judge.json",
        "rubric_sha": {r.prompt: r.rubric_sha for r in sorted(runs, key=lambda r: r.prompt)},
        "runs_gradeable": report.planned,
        "ungraded_items": report.ungraded_items,
        "skipped_runs": report.skipped,
        "evidence": report.evidence,
        "judge_cost_usd": round(sum(costs), 8),
        "passes": passes,
    })
