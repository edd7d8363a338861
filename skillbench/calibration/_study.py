"""A judge study: several judges grade the same sampled answers; which one to trust, at what price?

:func:`plan_study` samples the gradeable runs (seeded; with ``--human`` only runs that have labels) and reads the
reference: the human labels (the labelers' majority per item; a tie is left out), else on a simulated week the
simulation's answer key of each run's final attempt (labelled "simulated truth" everywhere), else none.
:func:`judge_study` has every judge grade every sampled run ``repeat`` times with
:func:`skillbench.calibration._run.grade_repeats` — blind, the same protocol, and the same sample numbers for every
judge, so each answer's rubric order is the same for all of them — and computes, per judge × item type, the
self-agreement, the agreement with the reference and the judge-against-judge κ, each with a run-clustered
bootstrap interval (:mod:`skillbench.calibration._intervals`), the hallucinated-evidence rate and the cost per
graded run; then :func:`skillbench.calibration._recommendation.recommend` applies the rule. Every grading of a judge
counts as one answer (the ``repeat`` gradings of an item are pooled; the bootstrap resamples runs, so pooling
does not narrow the interval). When the week has ``pairs.csv``,
:func:`study_pairwise` runs every judge as the pairwise judge on up to ``sample`` pairs in both orders
(:class:`skillbench.judge._pairwise.PairJudge`, into the study's own ``study-pairs.csv``, never the week's
``pairs.csv``) and measures its bias (:func:`skillbench.calibration._bias.pairwise_bias`).
Files: :func:`skillbench.calibration._study_report.write_study`.
"""

from __future__ import annotations

import itertools
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from skillbench.calibration._agreement import bar_state, unanimity_interval
from skillbench.calibration._intervals import (
    STATISTICS,
    cluster_interval as _cluster,
    confusion_by_run,
    lenient_by_run,
    paired_interval,
    ratio,
    unanimity_by_run,
)
from skillbench.calibration._recommendation import DEFAULT_MARGIN, Recommendation, recommend
from skillbench.vocab import ITEM_TYPES

HUMAN, TRUTH, NO_REFERENCE = "human labels", "simulated truth", "none"
TYPES = (*ITEM_TYPES, "all")
MEASURES = ("raw_agreement", "cohen_kappa", "pabak", "false_met_rate", "false_negative_rate", "true_positive",
            "false_positive", "false_negative", "true_negative")
STUDY_COLUMNS = ["judge_model", "item_type", "reference", "n_runs", "n_units",
                 *[f"{m}{s}" for m in ("unanimity", *MEASURES, "lenient_rate")
                   for s in ("", "_low", "_high", "_method")],
                 "hallucinated_evidence_rate", "no_claim", "no_claim_rate", "cost_usd", "cost_per_run"]
JUDGES_COLUMNS = ["judge_a", "judge_b", "item_type", "n_units", "raw_agreement", "kappa", "kappa_low", "kappa_high",
                  "kappa_method", "kappa_ref_diff", "diff_low", "diff_high", "diff_method"]
Log = Callable[[str], None]


@dataclass
class StudyOptions:
    """What ``skillbench judge-study`` was asked to do."""

    judges: Sequence[str]
    repeat: int = 2
    human: Path | None = None
    sample: int | None = 40  # runs to grade (None: every candidate run)
    margin: float = DEFAULT_MARGIN
    seed: int = 0
    jobs: int = 2
    include_plugin: bool = False
    n_resamples: int = 2000
    confidence: float = 0.95
    max_retries: int = 4
    timeout: float = 120.0


@dataclass
class StudyPlan:
    """The sampled runs and the reference they are compared with."""

    runs: list[Any]  # RunAnswer
    candidates: int
    reference_kind: str
    reference: pd.DataFrame | None  # run_id, item_index, item_type, reference (1 positive, 0 negative)
    labels: pd.DataFrame | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class JudgeStudy:
    """The study's tables (what the page and the notebook show)."""

    options: StudyOptions
    plan: StudyPlan
    grades: pd.DataFrame
    table: pd.DataFrame  # STUDY_COLUMNS
    judges_table: pd.DataFrame  # JUDGES_COLUMNS
    evidence: pd.DataFrame
    recommendation: Recommendation | None
    inter_human: pd.DataFrame | None = None
    pairwise: pd.DataFrame | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def run_ids(self) -> list[str]:
        return [r.run_id for r in self.plan.runs]


def _human_reference(labels: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The labelers' majority per item (ties left out) and the number of tied items."""
    from skillbench.calibration._agreement import positive

    pos = labels.assign(p=positive(labels["verdict"]))
    vote = pos.groupby(["run_id", "item_index", "item_type"], as_index=False)["p"].mean()
    tied = int(vote["p"].eq(0.5).sum())
    vote = vote[vote["p"].ne(0.5)]
    return vote.assign(reference=(vote["p"] > 0.5).astype(int)).drop(columns="p"), tied


def _truth_reference(run_dir: Path) -> pd.DataFrame | None:
    """The simulation's answer key of each run's last attempt, as binary item labels (None: not a sim week)."""
    from skillbench.ledgers import MANIFEST_FILE, final_truth, read_manifest, read_truth
    from skillbench.scorecard import CREDITED

    truth = read_truth(run_dir)
    if truth is None:
        return None
    if (run_dir / MANIFEST_FILE).is_file():
        truth = final_truth(truth, read_manifest(run_dir / MANIFEST_FILE))
    rubric = truth[truth["item_type"].isin(ITEM_TYPES)]
    return pd.DataFrame({"run_id": rubric["run_id"].astype(str), "item_index": rubric["item_index"].astype(int),
                         "item_type": rubric["item_type"],
                         "reference": rubric["decided"].eq(rubric["item_type"].map(CREDITED)).astype(int)})


def plan_study(run_dir: str | Path, options: StudyOptions) -> StudyPlan:
    """Sample the runs and read the reference; nothing is called or written.

    Raises:
        ValueError: (one line) no gradeable run, fewer than two judges without a reference, a sample below 1,
            a repeated judge, or human labels that match no gradeable run's item.
    """
    from skillbench.calibration._labels import read_labels
    from skillbench.judge import select_runs

    run_dir = Path(run_dir)
    judges = list(options.judges)
    if len(set(judges)) != len(judges):
        raise ValueError(f"--judges {' '.join(judges)}: a judge is named twice (name each once)")
    if options.sample is not None and options.sample < 1:
        raise ValueError(f"--sample {options.sample}: must be 1 or more")
    if options.repeat < 1:
        raise ValueError(f"--repeat {options.repeat}: must be 1 or more")
    runs, _ = select_runs(run_dir, include_plugin=options.include_plugin)
    if not runs:
        raise ValueError(f"{run_dir}: no gradeable run with an answer to study (run skillbench generate first)")
    notes: list[str] = []
    labels = None
    if options.human is not None:
        labels = read_labels(options.human, run_ids=[r.run_id for r in runs])
        items = {(r.run_id, i, k) for r in runs for i, k, _ in r.items}
        keys = list(zip(labels["run_id"], labels["item_index"], labels["item_type"], strict=True))
        labels = labels[[k in items for k in keys]].reset_index(drop=True)
        if labels.empty:
            raise ValueError(f"{options.human}: no labelled item matches a gradeable run's item in {run_dir} "
                             "(labels of another week? export them with skillbench labels export)")
        reference, tied = _human_reference(labels)
        kind = HUMAN
        n_labelers = labels["labeler"].nunique()
        notes.append(f"reference: {len(labels)} human label(s) from {n_labelers} labeler(s)"
                     + (f"; their majority per item, {tied} tied item(s) left out" if n_labelers > 1 else ""))
    else:
        reference = _truth_reference(run_dir)
        kind = TRUTH if reference is not None else NO_REFERENCE
        if reference is not None:
            notes.append("reference: the simulation's answer key (truth.csv, each run's final attempt) — simulated "
                         "truth, not human labels")
    if kind == NO_REFERENCE and len(judges) < 2:
        raise ValueError("a study without a reference (no --human FILE, no simulated truth) needs two or more "
                         "--judges to compare")
    candidates = [r for r in runs if reference is None or r.run_id in set(reference["run_id"])]
    if not candidates:
        raise ValueError(f"{run_dir}: no gradeable run has a reference label")
    picked = list(candidates)
    if options.sample is not None and options.sample < len(candidates):
        picked = random.Random(f"judge-study:{options.seed}").sample(candidates, options.sample)
    picked.sort(key=lambda r: r.run_id)
    if reference is not None:
        reference = reference[reference["run_id"].isin({r.run_id for r in picked})].reset_index(drop=True)
    return StudyPlan(picked, len(candidates), kind, reference, labels, notes)


def _split_rater(grades: pd.DataFrame) -> pd.DataFrame:
    parts = grades["rater"].str.rsplit("#", n=1, expand=True)
    return grades.assign(judge_model=parts[0], sample=parts[1].astype(int))


def _kind(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    return frame if kind == "all" else frame[frame["item_type"].eq(kind)]


def study_tables(plan: StudyPlan, grades: pd.DataFrame, judges: Sequence[str], options: StudyOptions,
                 evidence: pd.DataFrame, costs: dict[str, float]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(study.csv rows, study-judges.csv rows)``: every statistic with its run-clustered interval."""
    boot = {"n_resamples": options.n_resamples, "seed": options.seed, "confidence": options.confidence}
    g = _split_rater(grades[grades["positive"].notna()])
    runs = [r.run_id for r in plan.runs]
    ref = plan.reference
    units = g.merge(ref, on=["run_id", "item_index", "item_type"]) if ref is not None else None
    counts: dict[tuple[str, str], np.ndarray] = {}
    rows = []
    for judge, kind in itertools.product(judges, TYPES):
        mine = _kind(g[g["judge_model"].eq(judge)], kind)
        row: dict[str, Any] = {"judge_model": judge, "item_type": kind, "reference": plan.reference_kind,
                               "n_runs": mine["run_id"].nunique(), "n_units": len(mine)}
        stats: dict[str, Any] = {}
        if options.repeat >= 2:
            # the must bar is judged on its lower end: a perfect share falls back to Clopper–Pearson, never [1, 1]
            stats["unanimity"] = unanimity_interval(unanimity_by_run(mine, runs), **boot)
        if units is not None:
            part = _kind(units[units["judge_model"].eq(judge)], kind)
            c = counts[judge, kind] = confusion_by_run(part, runs, rater="positive")
            row["n_units"] = int(c.sum())
            stats |= {m: _cluster(c, STATISTICS[m], **boot) for m in MEASURES}
            stats["lenient_rate"] = _cluster(lenient_by_run(part, runs), ratio, **boot)
        for m, iv in stats.items():
            row |= {m: iv.estimate, f"{m}_low": iv.low, f"{m}_high": iv.high, f"{m}_method": iv.method}
        if kind == "all":
            ev = evidence[evidence["judge_model"].eq(judge)]
            row["hallucinated_evidence_rate"] = ev["hallucinated_evidence_rate"].iloc[0] if len(ev) else np.nan
            # violated avoid items whose verbatim quote cannot show the harm (skillbench.judge.claim_gap)
            if len(ev) and "no_claim" in ev:
                violations = int(ev["avoid_violations"].iloc[0])
                row["no_claim"] = int(ev["no_claim"].iloc[0])
                row["no_claim_rate"] = row["no_claim"] / violations if violations else np.nan
        row["cost_usd"] = costs.get(judge, np.nan)
        row["cost_per_run"] = costs.get(judge, np.nan) / (len(runs) * options.repeat) if runs else np.nan
        rows.append(row)
    pair_rows = []
    for a, b in itertools.permutations(judges, 2):
        both = g[g["judge_model"].eq(a)].merge(g[g["judge_model"].eq(b)], on=["run_id", "item_index", "item_type",
                                                                                "sample"], suffixes=("_a", "_b"))
        for kind in TYPES:
            part = _kind(both, kind)
            c = confusion_by_run(part, runs, reference="positive_a", rater="positive_b")
            k = _cluster(c, STATISTICS["cohen_kappa"], **boot)
            row = {"judge_a": a, "judge_b": b, "item_type": kind, "n_units": int(c.sum()),
                   "raw_agreement": float(STATISTICS["raw_agreement"](c.sum(axis=0))), "kappa": k.estimate,
                   "kappa_low": k.low, "kappa_high": k.high, "kappa_method": k.method}
            if (a, kind) in counts:
                d = paired_interval(counts[a, kind], counts[b, kind], STATISTICS["cohen_kappa"], **boot)
                row |= {"kappa_ref_diff": d.estimate, "diff_low": d.low, "diff_high": d.high, "diff_method": d.method}
            pair_rows.append(row)
    return (pd.DataFrame(rows).reindex(columns=STUDY_COLUMNS),
            pd.DataFrame(pair_rows).reindex(columns=JUDGES_COLUMNS))


def study_recommendation(table: pd.DataFrame, judges_table: pd.DataFrame, options: StudyOptions) -> Recommendation:
    """:func:`recommend` on the study's tables."""
    kappas = table.rename(columns={"cohen_kappa": "kappa"})[["judge_model", "item_type", "kappa", "cost_per_run"]]
    diffs = judges_table.rename(columns={"judge_a": "judge_model", "judge_b": "versus", "kappa_ref_diff": "diff"})
    musts = table[table["item_type"].eq("must")]
    bar = {r.judge_model: bar_state(float(r.unanimity), float(r.unanimity_low))
           for r in musts.itertuples(index=False)} if "unanimity" in musts else {}
    return recommend(kappas, diffs[["judge_model", "versus", "item_type", "diff", "diff_low", "diff_high"]],
                     margin=options.margin, confidence=options.confidence, must_bar=bar)


def _inter_human(labels: pd.DataFrame) -> pd.DataFrame | None:
    """Agreement between the labelers (the ceiling any judge can reach), when there are two or more."""
    from skillbench.calibration._labels import inter_human

    return inter_human(labels) if labels["labeler"].nunique() >= 2 else None


def study_pairwise(run_dir: Path, options: StudyOptions, base_url: str, api_key: str,
                   say: Log) -> tuple[pd.DataFrame | None, pd.DataFrame | None, list[str]]:
    """Every study judge as the pairwise judge on up to ``sample`` of the week's pairs, both orders.

    Reuses :class:`skillbench.judge._pairwise.PairJudge` (its requests and validated calls); the rows go to the
    study's own ``study-pairs.csv``, never the week's ``pairs.csv``. Returns ``(pair rows, bias table, notes)``;
    ``(None, None, notes)`` when the week has no ``pairs.csv`` or no complete pair.
    """
    from concurrent.futures import ThreadPoolExecutor

    from skillbench.calibration._bias import pair_facts, pairwise_bias
    from skillbench.judge import JudgeClient, PairJudge, find_pairs
    from skillbench.ledgers import PAIRS_COLUMNS, PAIRS_FILE, week_run_key

    if not (run_dir / PAIRS_FILE).is_file():
        return None, None, ["no pairwise part: the week has no pairs.csv (run skillbench judge-pairs first)"]
    pairs = find_pairs(run_dir)
    if not pairs:
        return None, None, ["no pairwise part: no prompt × model × rep has a gradeable answer in both arms"]
    if options.sample is not None and options.sample < len(pairs):
        pairs = sorted(random.Random(f"judge-study-pairs:{options.seed}").sample(pairs, options.sample),
                       key=lambda p: p.key)
    say(f"judge-study: {len(pairs)} pair(s) × 2 orders by each judge (pairwise bias)")
    key, rows, spent = week_run_key(run_dir), [], 0.0
    for judge in options.judges:
        client = JudgeClient(base_url, api_key, judge, max_retries=options.max_retries, timeout=options.timeout)
        pair_judge = PairJudge(client, seed=options.seed)
        try:
            with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
                done = list(pool.map(lambda p, j=pair_judge: j.judge(p, key), pairs))
        finally:
            client.close()
        rows += [row for row, _ in done]
        spent += sum(cost for _, cost in done)
    frame = pd.DataFrame(rows, columns=list(PAIRS_COLUMNS))
    lengths, equal = pair_facts(run_dir)
    bias = pairwise_bias(frame, lengths=lengths, equal=equal, n_resamples=options.n_resamples, seed=options.seed,
                         confidence=options.confidence, where="study-pairs.csv")
    order = {j: i for i, j in enumerate(options.judges)}
    bias = bias.sort_values("judge_model", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)
    notes = [f"pairwise part: {len(pairs)} of the week's pairs, both orders, by every judge (spend ${spent:.4f}); "
             "equal pairs for the length bias are those the week's rubric judge (scores.csv) scored equal"]
    return frame, bias, notes


def judge_study(run_dir: str | Path, options: StudyOptions, base_url: str, api_key: str, *,
                log: Log | None = None, plan: StudyPlan | None = None, write: bool = True,
                notes: Sequence[str] = ()) -> JudgeStudy:
    """Run the study of ``run_dir`` and (``write``) replace ``RUN_DIR/judge-study/`` with its files.

    Args:
        run_dir: a generated week.
        options: judges, repeats, sample, reference, margin.
        base_url: the Messages endpoint the judges are called on.
        api_key: its key.
        log: where progress lines go (default stderr).
        plan: a plan already made by :func:`plan_study` (else it is made here).
        write: write the files (:func:`skillbench.calibration._study_report.write_study`).
        notes: lines for the page's provenance (e.g. about the endpoint).

    Raises:
        ValueError: bad input (see :func:`plan_study`).
    """
    from skillbench.calibration._run import grade_repeats
    from skillbench.judge import JudgeClient

    say = log or (lambda m: print(m, file=sys.stderr))
    run_dir = Path(run_dir)
    plan = plan or plan_study(run_dir, options)
    samples = list(range(1, options.repeat + 1))
    say(f"judge-study: {len(plan.runs)} of {plan.candidates} runs × {len(samples)} grading(s) by "
        f"{', '.join(options.judges)}; reference: {plan.reference_kind}")
    frames, evidence, costs = [], [], {}
    for judge in options.judges:
        client = JudgeClient(base_url, api_key, judge, max_retries=options.max_retries, timeout=options.timeout)
        try:  # the same sample numbers for every judge: the same rubric order for every answer
            g, ev, cost = grade_repeats(plan.runs, client, samples, judge, seed=options.seed, jobs=options.jobs)
        finally:
            client.close()
        frames.append(g)
        evidence.append(ev)
        costs[judge] = cost
    grades = pd.concat(frames, ignore_index=True)
    evidence_frame = pd.concat(evidence, ignore_index=True)
    table, judges_table = study_tables(plan, grades, list(options.judges), options, evidence_frame, costs)
    notes = [*plan.notes, *notes]
    from skillbench.prices import price

    unpriced = [j for j in options.judges if not price(j).known]
    if unpriced:
        notes.append(f"no list price for {', '.join(unpriced)}: priced like the default opus model (skillbench.prices)")
    ungraded = int(grades["positive"].isna().sum())
    if ungraded:
        notes.append(f"{ungraded} grading(s) of an item stayed ungraded and are left out")
    rec = study_recommendation(table, judges_table, options) if plan.reference is not None else None
    inter = _inter_human(plan.labels) if plan.labels is not None else None
    pairs, bias, pair_notes = study_pairwise(run_dir, options, base_url, api_key, say)
    study = JudgeStudy(options, plan, grades, table, judges_table, evidence_frame, rec, inter, bias,
                       [*notes, *pair_notes])
    if write:
        from skillbench.calibration._study_report import write_study

        write_study(run_dir, study, pairs=pairs)
    return study
