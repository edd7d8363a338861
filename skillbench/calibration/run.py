"""Running a calibration: grade the week's answers again, compare raters, write the three files.

:func:`calibrate` grades each answer ``repeat`` times with the ledger's judge (self-agreement), once with a second
judge, and/or reads human labels (two or more labelers are also compared with each other, "human vs human": the
ceiling any judge can reach); it writes ``calibration.csv``, ``calibration-grades.csv`` and
``calibration.md`` into the run directory. :func:`calibration_current` is the one "calibration is current" rule:
the chain reuses a calibration written after the scores it measured last changed.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.calibration.agreement import (
    AGREEMENT_COLUMNS,
    GRADE_COLUMNS,
    SELF_COLUMNS,
    _typed,
    agreement_rows,
    flipping_items,
    multi_rows,
    positive,
    self_agreement,
)
from skillbench.judge.evidence import evidence_counts, evidence_frame
from skillbench.ledgers.files import CALIBRATION_FILE, SCORES_FILE
from skillbench.ledgers.readers import read_cells
from skillbench.runtime import PassContext
from skillbench.vocab import UNGRADED


@dataclass(frozen=True)
class CalibrationOptions:
    """What ``skillbench calibrate`` was asked to do."""

    repeat: int = 3
    sample: int | None = None  # runs to grade again (None: every gradeable run)
    judge_model: str | None = None  # default: the ledger's judge, else the default judge
    other_judge: str | None = None
    human: Path | None = None
    include_plugin: bool = False
    seed: int = 0
    jobs: int = 2
    max_retries: int = 4
    timeout: float = 120.0
    batch: bool = False  # --batch: the gradings through Message Batches (half price)
    batch_wait_s: float | None = None  # the longest wait for one round of batches (None: until they end)
    cache: bool = False  # --cache: sample 1 resends the judge pass's requests; read them from the prompt cache


@dataclass
class Calibration:
    """The tidy results (what the notebooks read) and the files written."""

    grades: pd.DataFrame
    self_agreement: pd.DataFrame
    flipping: pd.DataFrame
    agreement: pd.DataFrame
    evidence: pd.DataFrame
    cost_usd: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def musts_pass(self) -> bool | None:
        row = self.self_agreement[self.self_agreement["item_type"] == "must"]
        return None if row.empty else row["passes"].iloc[0]


def grade_repeats(runs: Sequence[Any], client: Any, samples: Sequence[int], rater: str, *, seed: int = 0,
                  jobs: int = 2, cache: bool = False, batch: Any = None) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """Grade each run's items once per sample number (independent samples), evidence verified as in scoring.

    Args:
        runs: :class:`skillbench.judge.RunAnswer` objects.
        client: a :class:`skillbench.judge.JudgeClient`.
        samples: the sample numbers (each is one grading).
        rater: name prefix of the rater (``<rater>#<sample>``).
        seed: rubric-order seed.
        jobs: runs at once.
        cache: a prompt-cache breakpoint on sample 1 (:class:`~skillbench.judge.rubric.RubricJudge`).
        batch: a :class:`skillbench.judge.batch.BatchClient` around ``client``: the same calls, batched.

    Returns:
        ``(grades, evidence, cost)``: tidy gradings (:data:`GRADE_COLUMNS`), the judge's evidence counts
        (one row), and the spend.
    """
    from skillbench.judge.protocol import judge_prompt_sha
    from skillbench.judge.rubric import RubricJudge, RunGrading, Vote

    judge = RubricJudge(batch or client, seed=seed, cache=cache)

    def work(run: Any) -> tuple[list[dict[str, Any]], RunGrading]:
        log = RunGrading(run.run_id, client.model, len(samples), seed, run.rubric_sha, judge_prompt_sha())
        attempts: dict[int, int] = {}
        rows = []
        for s in samples:
            result = judge.grade_sample(run, run.lines(), s, log, attempts)
            for index, kind, text in run.items:
                vote = result.get(index)
                graded = isinstance(vote, Vote)
                rows.append({"run_id": run.run_id, "item_index": index, "item_type": kind, "item_text": text,
                             "prompt": run.prompt, "model": run.model, "condition": run.condition,
                             "rater": f"{rater}#{s}", "verdict": vote.verdict if graded else UNGRADED,
                             "flagged": bool(graded and vote.flagged), "reason": "" if graded else str(vote)})
        return rows, log

    if batch is not None:
        results = batch.run(list(runs), work, lambda r: ("calibration", r.run_id))
    else:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            results = list(pool.map(work, runs))
    grades = pd.DataFrame([r for rows, _ in results for r in rows], columns=[c for c in GRADE_COLUMNS
                                                                              if c != "positive"])
    grades["positive"] = positive(grades["verdict"])
    calls = [c for _, log in results for c in log.calls]
    reasons = grades.loc[grades["verdict"].eq(UNGRADED), "reason"]
    evidence = evidence_frame({client.model: evidence_counts(calls, reasons)})
    cost = sum(c.get("cost_usd", 0.0) for c in calls)
    return grades[GRADE_COLUMNS], evidence, cost


def ledger_grades(run_dir: Path, rater: str) -> pd.DataFrame:
    """The final verdicts of ``scores.csv`` as gradings by ``rater`` (empty when there is no ledger)."""
    path = run_dir / SCORES_FILE
    if not path.is_file():
        return pd.DataFrame(columns=GRADE_COLUMNS)
    s = read_cells(path)
    if "run_id" not in s or "item_index" not in s:
        return pd.DataFrame(columns=GRADE_COLUMNS)
    out = pd.DataFrame({"run_id": s["run_id"], "item_index": pd.to_numeric(s["item_index"]).astype(int),
                        "item_type": s["item_type"], "item_text": s["item_text"], "prompt": s["prompt"],
                        "model": s["model"], "condition": s["condition"], "rater": rater, "verdict": s["verdict"],
                        "flagged": s["evidence_verified"].eq("0"), "reason": ""})
    out["positive"] = positive(out["verdict"])
    return out[GRADE_COLUMNS]


def calibrate(run_dir: str | Path, options: CalibrationOptions, ctx: PassContext) -> Calibration:
    """Run the calibration of ``run_dir`` and write ``calibration.csv``, ``calibration-grades.csv`` and
    ``calibration.md``.

    Args:
        run_dir: a generated (and usually judged) run directory.
        options: repeats, sample size, judges, human labels.
        ctx: the Messages endpoint (needed when ``repeat`` ≥ 2 or ``other_judge`` is set; a simulated one gets
            the sim's draw keys on batched requests), the executor (a Dask cluster's: every grading request of
            both judges is sent from one of its workers, one connection for the pass), the log.

    Raises:
        ValueError: nothing to calibrate (no repeats, no other judge, no labels), or labels that match no
            graded item.
    """
    from skillbench.calibration.labels import INTER_HUMAN, human_grades, inter_human, read_labels
    from skillbench.calibration.report import write_calibration
    from skillbench.judge.answers import select_runs
    from skillbench.judge.client import JudgeClient, resolve_judge_model

    say = ctx.log
    run_dir = Path(run_dir)
    ledger = ledger_grades(run_dir, "ledger")
    primary = resolve_judge_model(options.judge_model, _ledger_judge(run_dir))
    frames, evidence, rows, notes = [], [], [], []
    cost = 0.0
    needs_calls = options.repeat >= 2 or options.other_judge
    self_table = pd.DataFrame(columns=SELF_COLUMNS)
    flips = pd.DataFrame(columns=["run_id", "item_index", "item_type", "item_text", "prompt", "verdicts",
                                  "n_positive", "n"])
    if needs_calls:
        if ctx.endpoint is None:
            raise ValueError("calibrate: grading again needs an endpoint")
        runs, _ = select_runs(run_dir, include_plugin=options.include_plugin)
        if options.sample is not None and options.sample < len(runs):
            runs = random.Random(f"calibrate:{options.seed}").sample(runs, options.sample)
        if not runs:
            raise ValueError(f"{run_dir}: no gradeable run with an answer to calibrate on")
        repeats = list(range(1, max(options.repeat, 1) + 1))
        say(f"calibrate: {len(runs)} runs × {len(repeats)} gradings by {primary}"
            + (f", 1 by {options.other_judge}" if options.other_judge else ""))
        # --executor dask: every grading request is one Dask task, both judges through one cluster connection
        with ctx.open_endpoint() as ep, ctx.judge_transport(needed=True, simulated=ep.simulated) as transport:
            client = JudgeClient(ep.base_url, ep.api_key, primary, max_retries=options.max_retries,
                                 timeout=options.timeout, transport=transport)
            try:
                g, ev, c = grade_repeats(runs, client, repeats, primary, seed=options.seed, jobs=options.jobs,
                                         cache=options.cache, batch=_batcher(run_dir, client, options, ctx, ep))
            finally:
                client.close()
            frames.append(g)
            evidence.append(ev)
            cost += c
            if options.other_judge:
                other = JudgeClient(ep.base_url, ep.api_key, options.other_judge, max_retries=options.max_retries,
                                    timeout=options.timeout, transport=transport)
                try:
                    # Its own sample number: a second judge's errors are its own, not a replay of sample 1's.
                    g2, ev2, c2 = grade_repeats(runs, other, [repeats[-1] + 1], options.other_judge,
                                                seed=options.seed, jobs=options.jobs,
                                                batch=_batcher(run_dir, other, options, ctx, ep))
                finally:
                    other.close()
                frames.append(g2)
                evidence.append(ev2)
                cost += c2
        raters = [f"{primary}#{s}" for s in repeats]
        if len(raters) >= 2:
            self_table = self_agreement(g, raters)
            flips = flipping_items(g, raters)
            for a, b in itertools.combinations(raters, 2):
                rows.append(agreement_rows(g, "samples", a, b))
            if len(raters) >= 3:
                rows.append(multi_rows(g, "samples (all)", raters))
        if options.other_judge:
            both = pd.concat([g, g2])
            rows.append(agreement_rows(both, "judges", f"{primary}#1", f"{options.other_judge}#{repeats[-1] + 1}"))
    if options.human is not None:
        labels = read_labels(options.human, run_ids=ledger["run_id"].unique() if not ledger.empty else ())
        humans = human_grades(labels)
        if ledger.empty:
            raise ValueError(f"{run_dir}: --human needs the judge's verdicts (scores.csv); run skillbench judge")
        judged = ledger.set_index(["run_id", "item_index"])
        matched = humans.join(judged[[]], on=["run_id", "item_index"], how="inner")
        if matched.empty:
            raise ValueError(f"{options.human}: no labelled item is in {run_dir / 'scores.csv'}")
        frames.extend([humans, ledger])
        labelers = sorted(humans["rater"].unique())
        for h in labelers:
            rows.append(agreement_rows(pd.concat([humans, ledger]), "judge vs human", h, "ledger"))
        if len(labelers) >= 2:
            rows.append(multi_rows(pd.concat([humans, ledger]), "judge + humans", [*labelers, "ledger"]))
            rows.append(inter_human(labels))
        notes.append(f"human labels: {labels['verdict'].ne('').sum()} from {len(labelers)} labeler(s); the judge "
                     "side is the ledger's final verdict (scores.csv)")
        if len(labelers) >= 2:
            notes.append(f"{INTER_HUMAN}: the labelers against each other — the ceiling any judge can reach on "
                         "these items (a judge vs human κ near it is as good as the labels allow)")
    if not frames:
        raise ValueError("nothing to calibrate: use --repeat 2 or more, --other-judge M, or --human FILE")
    grades = pd.concat(frames, ignore_index=True)
    agreement = _typed(pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=AGREEMENT_COLUMNS))
    cal = Calibration(grades, self_table, flips, agreement,
                      pd.concat(evidence, ignore_index=True) if evidence else pd.DataFrame(), cost, notes)
    write_calibration(run_dir, cal, options, primary)
    if options.batch:
        from skillbench.judge.batch_store import BatchStore

        BatchStore(run_dir).close(["calibration"])  # complete: the next calibration asks again
    return cal


def _batcher(run_dir: Path, client: Any, options: CalibrationOptions, ctx: PassContext, endpoint: Any) -> Any:
    """The batch client of a ``--batch`` calibration (None: synchronous)."""
    if not options.batch:
        return None
    from skillbench.judge.batch import BatchClient
    from skillbench.judge.batch_store import BatchStore

    return BatchClient(client, BatchStore(run_dir), "calibration", simulated=endpoint.simulated,
                       wait_s=options.batch_wait_s, log=ctx.log)


def _ledger_judge(run_dir: Path) -> str | None:
    path = run_dir / SCORES_FILE
    if not path.is_file():
        return None
    models = read_cells(path)
    values = [m for m in models.get("judge_model", pd.Series(dtype=str)).unique() if m]
    return values[0] if values else None


def calibration_current(run_dir: str | Path) -> bool:
    """True when ``calibration.csv`` was written after the scores it measured last changed."""
    folder = Path(run_dir)
    cal, scores = folder / CALIBRATION_FILE, folder / SCORES_FILE
    return cal.is_file() and scores.is_file() and cal.stat().st_mtime >= scores.stat().st_mtime
