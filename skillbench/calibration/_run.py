"""Running a calibration: grade the week's answers again, compare raters, write the three files.

:func:`calibrate` grades each answer ``repeat`` times with the ledger's judge (self-agreement) — the answers of a
stratified sample of the week's runs, sized by the must bar (:mod:`skillbench.calibration._sample`; every run of a
week with fewer than 150 musts) — once with a second judge, and/or reads human labels (two or more labelers are
also compared with each other, "human vs human": the ceiling any judge can reach); it writes ``calibration.csv``,
``calibration-grades.csv``, ``calibration-sample.json`` and ``calibration.md`` into the run directory.
:func:`calibration_current` is the one "calibration is current" rule: the chain reuses a calibration written after
the scores it measured last changed.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from skillbench.calibration._agreement import (
    AGREEMENT_COLUMNS,
    BAR_WORDS,
    GRADE_COLUMNS,
    INTERVAL_MEASURES,
    MIN_CLUSTERS,
    SELF_COLUMNS,
    UNANIMOUS_MUSTS_BAR,
    _typed,
    agreement_rows,
    flipping_items,
    multi_rows,
    positive,
    self_agreement,
)
from skillbench.calibration._bias import week_pairwise_bias
from skillbench.calibration._sample import (
    MUST_FLOOR,
    SampleRecord,
    candidate_frame,
    decided,
    draw,
    exact_runs,
    item_counts,
    looks,
    new_nonce,
    sample_key,
)
from skillbench.judge import NO_CLAIM_COLUMNS, evidence_counts, evidence_frame, no_claim_frame
from skillbench.ledgers import (
    CALIBRATION_FILE,
    CALIBRATION_GRADES_FILE,
    CALIBRATION_MD,
    CALIBRATION_SAMPLE_FILE,
    PAIRS_FILE,
    PAIRWISE_BIAS_FILE,
    SCORES_FILE,
    LedgerError,
    atomic_write_json,
    atomic_write_text,
    read_calibration_sample,
    read_cells,
    week_run_key,
)
from skillbench.markdown import cell_text as _fmt, frame_table as _table, span
from skillbench.runtime import PassContext
from skillbench.vocab import EVIDENCE_NO_CLAIM, UNGRADED


@dataclass(frozen=True)
class CalibrationOptions:
    """What ``skillbench calibrate`` was asked to do."""

    repeat: int = 3
    sample: int | None = None  # exactly this many runs, drawn stratified (None: the size rule, ``min_musts``)
    # The size rule (skillbench.calibration._sample): a stratified sample holding at least this many musts, grown
    # while the must interval straddles the bar; None: every gradeable run.
    min_musts: int | None = MUST_FLOOR
    sample_nonce: str | None = None  # the draw's nonce (None: the week's recorded one, else a fresh one)
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
    cluster_by: str = "run"  # --cluster-by: what the agreement intervals resample, runs or prompts (CLUSTER_BY)


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
    # the week ledger's violated avoid items per judge × model, and those whose quote cannot show the harm
    no_claim: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=NO_CLAIM_COLUMNS))
    drawn: SampleRecord | None = None  # how the graded-again runs were drawn (None: no grading, labels only)

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
        cache: a prompt-cache breakpoint on sample 1 (:class:`~skillbench.judge._rubric.RubricJudge`).
        batch: a :class:`skillbench.judge._batch.BatchClient` around ``client``: the same calls, batched.

    Returns:
        ``(grades, evidence, cost)``: tidy gradings (:data:`GRADE_COLUMNS`), the judge's evidence counts
        (one row), and the spend.
    """
    grades, calls = _gradings(runs, client, samples, rater, seed=seed, jobs=jobs, cache=cache, batch=batch)
    return _summarised(grades, calls, client.model)


def _gradings(runs: Sequence[Any], client: Any, samples: Sequence[int], rater: str, *, seed: int, jobs: int,
              cache: bool, batch: Any) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """:func:`grade_repeats`' gradings (with their evidence quotes) and every call, before they are summed up."""
    from skillbench.judge import RubricJudge, RunGrading, Vote, judge_prompt_sha

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
                             "flagged": bool(graded and vote.flagged), "reason": "" if graded else str(vote),
                             "evidence": vote.evidence if graded else ""})
        return rows, log

    if not runs:
        results: list[tuple[list[dict[str, Any]], Any]] = []
    elif batch is not None:
        results = batch.run(list(runs), work, lambda r: ("calibration", r.run_id))
    else:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            results = list(pool.map(work, runs))
    grades = pd.DataFrame([r for rows, _ in results for r in rows], columns=[*(c for c in GRADE_COLUMNS
                                                                               if c != "positive"), "evidence"])
    grades["positive"] = positive(grades["verdict"])
    return grades, [c for _, log in results for c in log.calls]


def _summarised(grades: pd.DataFrame, calls: list[dict[str, Any]], model: str
                ) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """``(grades, evidence, cost)`` of gradings and their calls (:func:`grade_repeats`' return)."""
    reasons = grades.loc[grades["verdict"].eq(UNGRADED), "reason"]
    # violated avoid items and those whose verified quote cannot show the harm (judge.claim_gap), over every sample
    verified = grades[~grades["flagged"].astype(bool)]
    no_claim = no_claim_frame(verified, quote="evidence")
    evidence = evidence_frame({model: evidence_counts(calls, reasons)}).assign(
        avoid_violations=int(no_claim["avoid_violations"].sum()), no_claim=int(no_claim["no_claim"].sum()))
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


def ledger_no_claim(run_dir: Path) -> pd.DataFrame:
    """:func:`skillbench.judge.no_claim_frame` of the week's ``scores.csv`` (empty without one)."""
    path = run_dir / SCORES_FILE
    if not path.is_file():
        return pd.DataFrame(columns=NO_CLAIM_COLUMNS)
    s = read_cells(path)
    if not {"item_type", "verdict", "item_text", "evidence_quote", "model"} <= set(s.columns):
        return pd.DataFrame(columns=NO_CLAIM_COLUMNS)
    return no_claim_frame(s)


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
    from skillbench.calibration._labels import INTER_HUMAN, human_grades, inter_human, read_labels
    from skillbench.judge import JudgeClient, resolve_judge_model, select_runs

    say = ctx.log
    run_dir = Path(run_dir)
    ledger = ledger_grades(run_dir, "ledger")
    primary = resolve_judge_model(options.judge_model, _ledger_judge(run_dir))
    frames, evidence, rows, notes = [], [], [], []
    cost = 0.0
    record: SampleRecord | None = None
    needs_calls = options.repeat >= 2 or options.other_judge
    self_table = pd.DataFrame(columns=SELF_COLUMNS)
    flips = pd.DataFrame(columns=["run_id", "item_index", "item_type", "item_text", "prompt", "verdicts",
                                  "n_positive", "n"])
    if needs_calls:
        if ctx.endpoint is None:
            raise ValueError("calibrate: grading again needs an endpoint")
        candidates, _ = select_runs(run_dir, include_plugin=options.include_plugin)
        if not candidates:
            raise ValueError(f"{run_dir}: no gradeable run with an answer to calibrate on")
        repeats = list(range(1, max(options.repeat, 1) + 1))
        draws = _Draws(run_dir, candidates, options)
        say(f"calibrate: {draws.describe()} × {len(repeats)} gradings by {primary}"
            + (f", 1 by {options.other_judge}" if options.other_judge else ""))
        # --executor dask: every grading request is one Dask task, both judges through one cluster connection
        with ctx.open_endpoint() as ep, ctx.judge_transport(needed=True, simulated=ep.simulated) as transport:
            client = JudgeClient(ep.base_url, ep.api_key, primary, max_retries=options.max_retries,
                                 timeout=options.timeout, transport=transport)
            try:
                g, ev, c = draws.grade(client, repeats, primary, batch=_batcher(run_dir, client, options, ctx, ep),
                                       log=say)
            finally:
                client.close()
            runs = draws.graded
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
        record = draws.record()
        raters = [f"{primary}#{s}" for s in repeats]
        if len(raters) >= 2:
            self_table = self_agreement(g, raters)
            flips = flipping_items(g, raters)
            for a, b in itertools.combinations(raters, 2):
                rows.append(agreement_rows(g, "samples", a, b, cluster_by=options.cluster_by))
            if len(raters) >= 3:
                rows.append(multi_rows(g, "samples (all)", raters, cluster_by=options.cluster_by))
        if options.other_judge:
            both = pd.concat([g, g2])
            rows.append(agreement_rows(both, "judges", f"{primary}#1", f"{options.other_judge}#{repeats[-1] + 1}",
                                       cluster_by=options.cluster_by))
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
            rows.append(agreement_rows(pd.concat([humans, ledger]), "judge vs human", h, "ledger",
                                       cluster_by=options.cluster_by))
        if len(labelers) >= 2:
            rows.append(multi_rows(pd.concat([humans, ledger]), "judge + humans", [*labelers, "ledger"],
                                   cluster_by=options.cluster_by))
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
                      pd.concat(evidence, ignore_index=True) if evidence else pd.DataFrame(), cost, notes,
                      no_claim=ledger_no_claim(run_dir), drawn=record)
    write_calibration(run_dir, cal, options, primary)
    if options.batch:
        from skillbench.judge import BatchStore

        BatchStore(run_dir).close(["calibration"])  # complete: the next calibration asks again
    return cal


class _Draws:
    """The runs a calibration grades again, look by look (:mod:`skillbench.calibration._sample`).

    The draw's key is fixed before the first request (the nonce recorded in ``calibration-sample.json``), so a
    pass stopped "judge pending" draws the same runs when rerun and its batches are polled, not sent again.
    """

    def __init__(self, run_dir: Path, candidates: Sequence[Any], options: CalibrationOptions):
        self.run_dir, self.options = run_dir, options
        self.candidates = list(candidates)
        self.frame = candidate_frame(self.candidates)
        self.run_key = week_run_key(run_dir)
        self.nonce = options.sample_nonce or _recorded_nonce(run_dir) or new_nonce()
        self.key = sample_key(self.run_key, options.seed, self.nonce)
        total = int(self.frame["musts"].sum())
        self.targets: list[int | None] = ([None] if options.sample is not None
                                          else looks(total, options.min_musts))
        self.done: list[int | None] = []
        self.graded: list[Any] = []
        atomic_write_json(run_dir / CALIBRATION_SAMPLE_FILE, self._head())

    def _head(self) -> dict[str, Any]:
        return {"key": self.key, "run_key": self.run_key, "seed": self.options.seed, "nonce": self.nonce}

    def _runs(self, target: int | None) -> list[Any]:
        if self.options.sample is not None:
            picked = exact_runs(self.frame, self.key, self.options.sample)
        else:
            picked = draw(self.frame, self.key, target)
        wanted = set(picked["run_id"])
        return [r for r in self.candidates if r.run_id in wanted]

    def describe(self) -> str:
        first = self._runs(self.targets[0])
        if len(first) == len(self.candidates):
            return f"{len(first)} runs"
        return (f"{len(first)} of {len(self.candidates)} runs (a stratified sample"
                + (f" of ≥ {self.targets[0]} musts, grown while the must bar is undecided)" if self.targets[0]
                   else ")"))

    def grade(self, client: Any, repeats: list[int], rater: str, *, batch: Any,
              log: Any) -> tuple[pd.DataFrame, pd.DataFrame, float]:
        """Grade look after look until the must interval decides the bar (or every run is graded)."""
        frames, calls = [], []
        raters = [f"{rater}#{s}" for s in repeats]
        for target in self.targets:
            have = {r.run_id for r in self.graded}
            new = [r for r in self._runs(target) if r.run_id not in have]
            if not new and target is not None:
                continue  # the last look's runs (rounded up per stratum) already hold this target
            g, c = _gradings(new, client, repeats, rater, seed=self.options.seed, jobs=self.options.jobs,
                             cache=self.options.cache, batch=batch)
            frames.append(g)
            calls.extend(c)
            self.graded.extend(new)
            self.done.append(target)
            if len(raters) < 2 or target is None:
                break
            must = self_agreement(pd.concat(frames, ignore_index=True), raters).set_index("item_type").loc["must"]
            if decided(str(must["bar_state"]), float(must["unanimity_high"])):
                break
            log(f"calibrate: {int(must['n_items'])} musts leave the bar undecided ({must['bar_state']}, 95 % "
                f"interval [{must['unanimity_low']:.3f}, {must['unanimity_high']:.3f}]): the sample grows")
        grades = pd.concat(frames, ignore_index=True)
        return _summarised(grades, calls, client.model)

    def record(self) -> SampleRecord:
        """What was graded, written to ``calibration-sample.json`` beside the calibration."""
        rec = SampleRecord(key=self.key, run_key=self.run_key, seed=self.options.seed, nonce=self.nonce,
                           floor=self.options.min_musts, runs_asked=self.options.sample, looks=self.done,
                           runs=len(self.graded), population_runs=len(self.candidates),
                           items=item_counts(self.graded), population_items=item_counts(self.candidates),
                           strata=int(candidate_frame(self.graded).groupby(["skill_family", "model", "condition"])
                                      .ngroups))
        atomic_write_json(self.run_dir / CALIBRATION_SAMPLE_FILE, rec.to_json())
        return rec


def _recorded_nonce(run_dir: Path) -> str | None:
    """The nonce of the week's recorded draw (None: none recorded); a damaged record stops the pass (one line)."""
    try:
        data = read_calibration_sample(run_dir)
    except LedgerError as exc:
        raise ValueError(str(exc)) from exc
    return None if data is None else str(data["nonce"])


def _batcher(run_dir: Path, client: Any, options: CalibrationOptions, ctx: PassContext, endpoint: Any) -> Any:
    """The batch client of a ``--batch`` calibration (None: synchronous)."""
    if not options.batch:
        return None
    from skillbench.judge import BatchClient, BatchStore

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


# -- calibration.md --------------------------------------------------------------------------------------
# ``calibration.md``: self-agreement against the must bar, flipping items, agreement, confusion, evidence, and
# the pairwise judge's bias (:mod:`skillbench.calibration._bias`, also written to ``pairwise-bias.csv``).


def bias_section(bias: pd.DataFrame | None, *, has_pairs: bool = True) -> list[str]:
    """The "Pairwise judge bias" section's lines: the measures with intervals and readings, or why there are none.

    Args:
        bias: :func:`skillbench.calibration._bias.pairwise_bias` rows; None: not measured.
        has_pairs: whether the week has a ``pairs.csv`` (the reason given when there is no row).
    """
    out = ["## Pairwise judge bias", ""]
    if bias is None or bias.empty:
        why = ("the pairwise judge did not run on this week (no pairs.csv)" if not has_pairs or bias is None
               else "pairs.csv has no judged pair")
        return [*out, f"Not measured: {why}.", ""]
    shown = bias.assign(interval=[f"{_fmt(lo, 2)} – {_fmt(hi, 2)}" for lo, hi in zip(bias["ci_low"],
                                                                                       bias["ci_high"], strict=True)])
    return [*out,
            "Each pair is judged in both orders. Order flip rate: the share of pairs whose preferred answer changes "
            "when the order is swapped. Position bias: (#A − #B) / verdicts over both orders (0 for a position-"
            "blind judge; the share of verdicts that pick A whatever the content). Length bias: among pairs the "
            "rubric judge scored equal, (#longer − #shorter) / verdicts. Intervals: 95 % bootstrap over prompts "
            "(a prompt's pairs, every rep and model, are resampled together).",
            "",
            _table(shown, ["judge_model", "measure", "n", "estimate", "interval", "reading", "note"],
                   ["judge", "measure", "pairs", "estimate", "interval", "reading", "note"]), ""]


def _range(low: Any, high: Any) -> str:
    """``[0.41, 0.79]``; ``—`` without an interval."""
    return span(low, high) or "—"


def _with_intervals(agreement: pd.DataFrame) -> pd.DataFrame:
    """The agreement table with ``<measure>_ci`` cells: ``0.62 [0.41, 0.79]``, the estimate alone without one."""
    out = agreement.copy()
    for m in INTERVAL_MEASURES:
        cells = []
        for v, lo, hi in zip(out[m], out.get(f"{m}_low", np.nan), out.get(f"{m}_high", np.nan), strict=False):
            text = "" if v is None or pd.isna(v) else f"{float(v):.3f}"
            cells.append(f"{text} {_range(lo, hi)}" if text and not pd.isna(lo) else text)
        out[f"{m}_ci"] = cells
    return out


def _interval_words(cluster_by: str) -> str:
    """The sentence the page prints about the agreement intervals."""
    what = {"run": "runs (all items of an answer together: they are not independent)",
            "prompt": "prompts (all runs and items of a prompt together: the claim is about prompts in general, "
                      "and the interval is wider than the run-clustered one)"}[cluster_by]
    return (f"Brackets: the 95 % bootstrap interval (BCa; percentile when BCa is degenerate) that resamples "
            f"{what}; with fewer than {MIN_CLUSTERS} {cluster_by}s no interval is printed — too few to resample — nor "
            f"when every resample gives the same value (perfect agreement: the `interval_method` column of "
            f"calibration.csv says `degenerate`). "
            f"`--cluster-by {'prompt' if cluster_by == 'run' else 'run'}` resamples "
            f"{'prompts' if cluster_by == 'run' else 'runs'} instead.")


def render_markdown(cal: Calibration, options: CalibrationOptions, judge_model: str,
                    bias: pd.DataFrame | None = None, *, has_pairs: bool = False) -> str:
    """``calibration.md``: self-agreement with the must bar, flipping items, agreement, confusion, evidence, bias.

    ``bias``: :func:`skillbench.calibration._bias.pairwise_bias` rows (None: not measured); ``has_pairs``: whether
    the week has a ``pairs.csv`` (what the section says when there is no row).
    """
    out = [f"# Judge calibration — {judge_model}", ""]
    if not cal.self_agreement.empty:
        must = cal.self_agreement[cal.self_agreement["item_type"] == "must"].iloc[0]
        state = must.get("bar_state") or ""
        verdict = f"**{state}**" if state else "n/a"
        shown = cal.self_agreement.assign(interval=[_range(lo, hi) for lo, hi in zip(
            cal.self_agreement["unanimity_low"], cal.self_agreement["unanimity_high"], strict=True)])
        sampled = cal.drawn is not None and cal.drawn.sampled
        of_week = f" (a sample of the week's {cal.drawn.population_items.get('must', 0)})" if sampled else ""
        columns = ["item_type", "n_items", "unanimous", "unanimity", "interval", "flipping"]
        names = ["item type", "items", "unanimous", "unanimity", "95 % interval", "flipping"]
        if sampled:
            week = cal.drawn.population_items
            shown = shown.assign(week=[sum(week.values()) if t == "all" else week.get(t, 0)
                                       for t in shown["item_type"]])
            columns.insert(2, "week")
            names.insert(2, "in the week")
        out += ["## Self-agreement", "",
                f"The same answers graded {options.repeat} times. Bar: ≥ {UNANIMOUS_MUSTS_BAR:.0%} of must items "
                f"unanimous — {verdict} ({_fmt(must['unanimity'] * 100 if must['n_items'] else None, 1)} % of "
                f"{int(must['n_items'])} musts{of_week}, 95 % interval "
                f"{_range(must['unanimity_low'], must['unanimity_high'])}, {must['interval_method']}). "
                + BAR_WORDS.format(min_clusters=MIN_CLUSTERS), "",
                *([cal.drawn.words(), ""] if cal.drawn is not None else []),
                _table(shown, columns, names), ""]
        if cal.flipping.empty:
            out += ["No item flipped.", ""]
        else:
            out += ["### Flipping items", "",
                    "Items whose verdict changed between gradings: reword them or accept the noise.", "",
                    _table(cal.flipping, ["item_type", "prompt", "run_id", "item_index", "item_text", "verdicts"],
                           ["type", "prompt", "run", "item", "text", "verdicts"]), ""]
    if not cal.agreement.empty:
        out += ["## Agreement", "",
                "κ read on the Landis–Koch scale (≤ 0.20 slight, ≤ 0.40 fair, ≤ 0.60 moderate, ≤ 0.80 "
                "substantial, above almost perfect); α with Krippendorff's rule (≥ 0.800 reliable, ≥ 0.667 "
                "tentative conclusions only, below unreliable). PABAK = 2·p_o − 1 stays readable when base "
                "rates are extreme and κ collapses. " + _interval_words(options.cluster_by), "",
                _table(_with_intervals(cal.agreement),
                       ["comparison", "rater_a", "rater_b", "item_type", "n_units", "raw_agreement",
                        "cohen_kappa_ci", "fleiss_kappa_ci", "krippendorff_alpha_ci", "pabak_ci", "base_rate_a",
                        "base_rate_b", "landis_koch", "krippendorff_reading", "clusters"],
                       ["comparison", "rater A", "rater B", "type", "n", "agree", "Cohen κ", "Fleiss κ", "α",
                        "PABAK", "base A", "base B", "κ reading", "α reading", f"{options.cluster_by}s"]), ""]
        pairs = cal.agreement[cal.agreement["rater_b"].ne("")]
        if not pairs.empty:
            out += ["### Confusion against the reference (rater A)", "",
                    "A false positive is a \"met\" (or \"violated\") the reference does not give: for must and "
                    "bonus items it is the costly error, because it inflates coverage.", "",
                    _table(pairs, ["comparison", "rater_a", "rater_b", "item_type", "true_positive",
                                   "false_positive", "false_negative", "true_negative", "false_positive_rate",
                                   "false_negative_rate"],
                           ["comparison", "reference", "rater", "type", "both +", "false +", "false −", "both −",
                            "false + rate", "false − rate"]), ""]
    if not cal.evidence.empty:
        claims = "no_claim" in cal.evidence
        out += ["## Evidence", "",
                "Quotes of met/violated verdicts that are not in the answer (first asks), and those still "
                "unverified after the one re-ask (scored missing/clean and flagged)"
                + ("; and of the violated avoid items over every grading, those whose verbatim quote cannot show "
                   "the harm (`no claim`: a bare number, or fewer than three content words and none of the item's "
                   "— `skillbench.judge.claim_gap`)." if claims else "."), "",
                _table(cal.evidence, ["judge_model", "positive_verdicts", "unverified", "hallucinated_evidence_rate",
                                      "still_unverified", "residual_rate",
                                      *(["avoid_violations", "no_claim"] if claims else [])],
                       ["judge", "met/violated", "unverified", "rate", "still unverified", "residual rate",
                        *(["violated avoid", EVIDENCE_NO_CLAIM] if claims else [])]), ""]
    if not cal.no_claim.empty:
        out += [f"### Avoid quotes that cannot show the harm ({SCORES_FILE})", "",
                "Per judge and model, the week's violated avoid items and how many of their verbatim quotes cannot "
                "carry the harmful claim on their own; the violations keep their credit, the scorecard's avoid "
                "table flags each.", "",
                _table(cal.no_claim, NO_CLAIM_COLUMNS,
                       ["judge", "model", "violated avoid", EVIDENCE_NO_CLAIM, "share"]), ""]
    out += bias_section(bias, has_pairs=has_pairs)
    out += ["## Provenance", "", f"- judge model: {judge_model}"]
    if options.other_judge:
        out.append(f"- other judge: {options.other_judge}")
    runs = (f"{cal.drawn.runs} of {cal.drawn.population_runs} (sample key {cal.drawn.key})"
            if cal.drawn is not None and cal.drawn.sampled else str(cal.grades["run_id"].nunique()))
    out += [f"- repeats: {options.repeat}; runs: {runs}; seed: {options.seed}",
            f"- calibration spend: ${cal.cost_usd:.4f}", *[f"- {n}" for n in cal.notes], ""]
    return "\n".join(out)


def _sample_columns(cal: Calibration) -> dict[str, Any]:
    """The self-agreement rows' sample columns: each item type's items in the week, the runs n of N, the key."""
    rec = cal.drawn
    if rec is None:
        return {}
    types = cal.self_agreement["item_type"]
    week = [sum(rec.population_items.values()) if t == "all" else rec.population_items.get(t, 0) for t in types]
    return {"population_units": week, "runs": rec.runs, "population_runs": rec.population_runs,
            "sample_key": rec.key}


def write_calibration(run_dir: Path, cal: Calibration, options: CalibrationOptions, judge_model: str) -> None:
    """Write ``calibration.csv``, ``calibration-grades.csv``, ``pairwise-bias.csv`` and ``calibration.md`` atomically.

    The pairwise judge's bias is measured on the week's ``pairs.csv``
    (:func:`skillbench.calibration._bias.week_pairwise_bias`; an empty table when there is none).
    """
    rows = [cal.agreement]
    if not cal.self_agreement.empty:
        rows.append(pd.DataFrame({"comparison": "self-agreement", "rater_a": judge_model, "rater_b": "",
                                  "item_type": cal.self_agreement["item_type"],
                                  "n_units": cal.self_agreement["n_items"], "n_raters": options.repeat,
                                  "unanimity": cal.self_agreement["unanimity"],
                                  "unanimity_low": cal.self_agreement["unanimity_low"],
                                  "unanimity_high": cal.self_agreement["unanimity_high"],
                                  "interval_method": cal.self_agreement["interval_method"],
                                  "bar_state": cal.self_agreement["bar_state"], **_sample_columns(cal)}))
    present = [r for r in rows if not r.empty]
    table = _typed(pd.concat(present, ignore_index=True) if present else pd.DataFrame(columns=AGREEMENT_COLUMNS))
    atomic_write_text(run_dir / CALIBRATION_FILE, table.to_csv(index=False))
    atomic_write_text(run_dir / CALIBRATION_GRADES_FILE, cal.grades.to_csv(index=False))
    bias = week_pairwise_bias(run_dir)
    atomic_write_text(run_dir / PAIRWISE_BIAS_FILE, bias.to_csv(index=False))
    atomic_write_text(run_dir / CALIBRATION_MD, render_markdown(cal, options, judge_model, bias,
                                                                has_pairs=(run_dir / PAIRS_FILE).is_file()))
