"""The weekly scorecard: every number computed from a run directory's ledgers, rendered to ``scorecard.md``.

qdrant's sections come in their order and with their table layout (padded GitHub-markdown columns, their
number formats and labels), so their published scorecard and ours can be compared cell by cell. Ours are
inserted beside the section they qualify: the lift's bootstrap CI and minimum detectable effect after the lift
table, trigger health after activation, the preference gate after the avoid violations, then — only when the week
has them — the simulation check (a simulated week against its ``truth.csv``,
:mod:`skillbench.scorecard._simulation`) and the controls (placebo and A/A arms,
:mod:`skillbench.scorecard._controls`). A week whose reconciliation is incomplete (:func:`skillbench.ledgers.
load_week` also holds it against the manifest, the plan and the run folders), whose gradeable runs are not all
graded yet, or whose merge of CI shards is not COMPLETE (``consolidation.json``), says **INCOMPLETE** in its
title, says why, and writes no history row; a week on the simulated endpoint says so too, and one whose measurement
disagrees with its truth beyond its stated uncertainty says **MEASUREMENT DISAGREES WITH TRUTH**. A week with no
``reconciliation.json`` and no ``plan.csv`` (qdrant's published layout) is scored as it is and labelled "not
reconciled".

Scope rules: the lift is the week's pair, treatment − control (:class:`skillbench.arms.ArmPair`, ``run.json``'s
``arms``: with-skill − no-skill for a weekly run, ``with-skill@HEAD − with-skill@BASE`` for ``skillbench
compare``, whose no-skill reference arm is graded and shown but never part of the lift); plugin-arm runs never
enter the lift (their cells appear in the per-cell table as telemetry); dormancy prompts are never lift-scored
(they feed trigger health and the activation contract); held-out prompts never appear: they run only in a week of
their own (``_heldout/``, ``--generalization``), read for the generalization section alone. A comparison never
reads or writes the week-over-week history (:func:`skillbench.scorecard._history.keeps_history`).

Use :func:`write_scorecard` (what ``skillbench scorecard`` calls) or, in a notebook, :func:`scorecard_frames`
for the tidy DataFrames behind every table.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from skillbench.arms import DEFAULT_PAIR, ArmPair, arm_kind
from skillbench.ledgers import (
    LedgerError,
    Reconciliation,
    WeekLedgers,
    consolidation_incomplete,
    format_timestamp,
    keys_found,
    read_calibration,
    read_identifiers,
    read_truth,
    replace_week,
)
from skillbench.scorecard import _history as hist, _objective as obj
from skillbench.scorecard._controls import Controls, ScoringFrames, control_checks, control_history_rows
from skillbench.scorecard._fabrication import Fabrication, fabrication_check
from skillbench.scorecard._gate import invalid_family_rows, preference_gate
from skillbench.scorecard._generalization import week_generalization
from skillbench.scorecard._scoring import (
    cell_scores,
    cost_cells,
    cost_eligible,
    prompt_cost_deltas,
    prompt_rep_scores,
    prompt_scores,
)
from skillbench.scorecard._simulation import Measured, SimulationCheck, simulation_check
from skillbench.scorecard._stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    lift_table,
    paired_differences,
    uncertainty_table,
)
from skillbench.signals import (
    NO_RUBRIC,
    activation_counts,
    activation_summary,
    self_served_baseline,
    skip_reason,
    trigger_health,
)
from skillbench.vocab import (
    COMPLETE_STATES,
    CONTROL_ARMS,
    ENDPOINT_UNKNOWN,
    HARNESS_INVALID,
    PLUGIN,
    REAL,
    SIMULATED,
    TAMPERED,
)

# The coverage reason of a gradeable run the judge has not graded (nor skipped): the week is not finished.
NOT_GRADED_YET = "not graded yet"
NO_SCORES_YET = f"{NOT_GRADED_YET} (no scores.csv)"
RUN_STATE_REASONS = {HARNESS_INVALID: "harness-invalid: the harness could not set the run up (e.g. a failed setup "
                                      "command; see its metadata.json) — never a skill loss, rerun by the next pass",
                     TAMPERED: "tampered: the transcript disagrees with what the run's relay saw (its metadata.json "
                               "says where) — content under evaluation wrote into the CLI's output; never graded"}

DISAGREES_WITH_TRUTH = "MEASUREMENT DISAGREES WITH TRUTH"
JUDGE_DRIFT = "JUDGE DRIFT"

# Larger models first, as qdrant lists them; unknown labels follow alphabetically.
MODEL_RANK = ("opus", "sonnet", "haiku")


def order_models(models: Any) -> list[str]:
    """Models in scorecard order: opus, sonnet, haiku families first, then the rest alphabetically."""
    def rank(m: str) -> tuple[int, str]:
        low = m.lower()
        return next((i for i, k in enumerate(MODEL_RANK) if k in low), len(MODEL_RANK)), m

    return sorted({str(m) for m in models}, key=rank)


@dataclass
class ScorecardData:
    """Everything the scorecard shows, computed once; :meth:`frames` hands the tables to notebooks."""

    run_key: str
    endpoint: str
    models: list[str]
    reconciliation: Reconciliation | None
    manifest: pd.DataFrame
    scores: pd.DataFrame
    prompt_reps: pd.DataFrame
    prompts: pd.DataFrame
    cells: pd.DataFrame
    lift: pd.DataFrame
    paired: pd.DataFrame
    uncertainty: pd.DataFrame
    history: pd.DataFrame
    history_rows: pd.DataFrame
    wow: hist.WeekOverWeek
    activation: pd.DataFrame
    activation_counts: dict[str, int]
    self_served: pd.DataFrame
    trigger_health: pd.DataFrame
    avoid_violations: pd.DataFrame
    gate: pd.DataFrame | None
    coverage: pd.DataFrame
    dropped: pd.DataFrame
    spend: dict[str, Any]
    timing: dict[str, Any]
    health: dict[str, int | None]
    provenance: dict[str, Any]
    site_host: str | None
    n_resamples: int
    seed: int
    incomplete_reasons: list[str] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)
    objective: dict[str, pd.DataFrame] = field(default_factory=dict)  # the checks' layer; empty without checks
    pair: ArmPair = DEFAULT_PAIR  # the arms compared: lift = treatment − control
    simulation: SimulationCheck | None = None  # a simulated week against its truth.csv (None: not one)
    controls: Controls | None = None  # placebo and A/A comparisons (None: the week ran neither arm)
    sentinel: dict[str, Any] | None = None  # the judge drift sentinel's sentinel.json (None: not run this week)
    calibration: pd.DataFrame | None = None  # calibration.csv (None: the week was not calibrated, or unreadable)
    pairs: pd.DataFrame | None = None  # pairs.csv, the votes behind the gate (None: no pairwise judge)
    recorded: hist.WeekHistory | None = None  # the history with its sidecars, this week in (None: a comparison)
    fabrication: Fabrication | None = None  # the identifiers pass's section (None: the pass never ran on the week)

    @property
    def judge_drift(self) -> bool:
        """The judge drift sentinel flagged the week (drift, or a changed judge): re-certify before reading it."""
        return bool(self.sentinel and self.sentinel.get("flagged"))

    @property
    def keeps_history(self) -> bool:
        """The week is read against and written into the week-over-week history (never a comparison)."""
        return hist.keeps_history(self.pair)

    @property
    def has_checks(self) -> bool:
        """The week has deterministic checks (``checks.csv`` rows)."""
        return bool(self.objective)

    @property
    def incomplete(self) -> bool:
        """The reconciliation does not account for every planned run, or gradeable runs are not graded yet."""
        return bool(self.incomplete_reasons)

    @property
    def disagrees_with_truth(self) -> bool:
        """A simulated week whose measurement disagrees with its truth beyond its stated uncertainty."""
        return self.simulation is not None and self.simulation.flagged

    @property
    def reconciled(self) -> bool:
        """The week has a reconciliation (``reconciliation.json``, else one rebuilt from ``plan.csv``)."""
        return self.reconciliation is not None

    @property
    def subset_label(self) -> str:
        """``subset: N of M families`` for a pass over part of the suite (``--families``/``--prompts``) whose other
        runs are kept for a later pass of the run key; ``""`` otherwise."""
        recon = self.reconciliation
        if recon is None or not recon.is_subset or not recon.families:
            return ""
        ran = set(self.manifest["skill_family"].astype(str)) & set(recon.families)
        total = len(set(recon.families) | set(recon.invalid_families))
        return f"subset: {len(ran)} of {total} families"

    @property
    def subset_only(self) -> bool:
        """A subset whose runs are all accounted for: nothing but the other families' runs is left for later."""
        return bool(self.subset_label) and not self.incomplete

    @property
    def reconciliation_state(self) -> str:
        """The reconciliation in one phrase: complete, a subset with every run accounted for, or INCOMPLETE."""
        recon = self.reconciliation
        if recon is not None and recon.is_complete:
            return "complete"
        if self.subset_only and recon is not None:
            return (f"every planned run accounted for — {self.subset_label}: {len(recon.limited)} runs of the other "
                    "families limited (kept for a later pass)")
        return "**INCOMPLETE**"

    @property
    def invalid_families(self) -> dict[str, list[str]]:
        """Families the suite left out for a spec that failed validation, with the validator's lines."""
        return dict(self.reconciliation.invalid_families) if self.reconciliation is not None else {}

    @property
    def title(self) -> str:
        title = (f"Weekly Skill Scorecard — {self.run_key}" if self.pair.is_default
                 else f"Skill Comparison Scorecard — {self.run_key} — {self.pair.label}")
        if self.subset_label:
            title += f" — {self.subset_label}"
        if self.endpoint != REAL:
            title += f" — {self.endpoint} endpoint"
        if self.disagrees_with_truth:
            title += f" — {DISAGREES_WITH_TRUTH}"
        if self.judge_drift:
            title += f" — {JUDGE_DRIFT}"
        if self.incomplete:
            title += " — INCOMPLETE"
        return title

    def frames(self) -> dict[str, pd.DataFrame]:
        """The tidy DataFrames behind the scorecard, by name."""
        out = {
            "prompt_reps": self.prompt_reps, "prompts": self.prompts, "cells": self.cells, "lift": self.lift,
            "paired": self.paired, "uncertainty": self.uncertainty, "history": hist.numeric_history(self.history),
            "week_over_week": self.wow.table, "activation": self.activation, "self_served": self.self_served,
            "trigger_health": self.trigger_health, "avoid_violations": self.avoid_violations,
            "coverage": self.coverage, "dropped": self.dropped,
            "prompt_cost_deltas": prompt_cost_deltas(self.manifest, self.pair),
        }
        out["gate"] = self.gate if self.gate is not None else pd.DataFrame()
        out.update(self.objective)
        for part in (self.simulation, self.controls):
            if part is not None:
                out.update(part.frames())
        if self.sentinel is not None:
            out["sentinel"] = pd.DataFrame(self.sentinel.get("comparison") or [])
        if self.fabrication is not None:
            out.update(self.fabrication.frames())
        return out


def endpoint_kind(manifest: pd.DataFrame) -> str:
    """The week's endpoint: ``real``, ``simulated``, …; ``mixed`` when runs disagree."""
    kinds = sorted({str(e) for e in manifest["endpoint"].unique()})
    if not kinds:
        return ENDPOINT_UNKNOWN
    return kinds[0] if len(kinds) == 1 else "mixed"


_RUN_KEYS = ["prompt", "model", "condition", "rep"]


def _per_distinct(frame: pd.DataFrame, fn: Any) -> list[Any]:
    """``fn(record)`` of every row of ``frame`` (records: None for a missing cell), called once per distinct row:
    the runs of a week share a handful of signal combinations."""
    if frame.empty:
        return []
    codes = np.column_stack([pd.factorize(frame[c], use_na_sentinel=False)[0] for c in frame.columns])
    _, first, inverse = np.unique(codes, axis=0, return_index=True, return_inverse=True)
    distinct = frame.iloc[first]
    records = distinct.astype(object).where(distinct.notna(), None).to_dict("records")
    answers = [fn(r) for r in records]
    return [answers[i] for i in inverse.ravel()]


def _coverage(manifest: pd.DataFrame, scores: pd.DataFrame, skips: pd.DataFrame, *,
              scores_file: bool | None = None, pair: ArmPair = DEFAULT_PAIR) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every run with its coverage status, and the dropped ones with their reasons.

    ``scores_file``: whether ``scores.csv`` exists (``None``: judged from ``scores`` being empty). Gradeable
    arms: the pair's graded arms and the placebo and aa controls whenever they ran (the judge's
    :func:`skillbench.judge._answers.graded_arm`), and the plugin arm when the judge graded it.
    """
    plugin_arms = {c for c in scores["condition"].astype(str).unique() if arm_kind(c) == PLUGIN}
    controls = {c for c in manifest["condition"].astype(str).unique() if arm_kind(c) in CONTROL_ARMS}
    arms = set(pair.graded_arms) | plugin_arms | controls
    runs = manifest.copy()
    trigger_only = runs["trigger_only"].astype(bool) if "trigger_only" in runs else pd.Series(False, index=runs.index)
    runs["gradeable"] = ~runs["dormancy"] & ~trigger_only & runs["condition"].isin(arms)
    with_rows, graded = keys_found(runs, scores, keys=_RUN_KEYS, among=(scores["graded"].to_numpy(dtype=bool),))
    runs["graded"] = graded & runs["gradeable"]
    skip = runs["run_id"].map(skips.drop_duplicates("run_id").set_index("run_id")["reason"]) \
        if not skips.empty else pd.Series(np.nan, index=runs.index)
    # the judge's own rule for runs it never saw graded (qdrant's ledgers have no judge-skips.csv)
    cols = ["budget_hit", "condition", "skill_available", "exit_code", "is_error"]
    rule = pd.Series(_per_distinct(runs[cols], skip_reason), index=runs.index, dtype=object)
    # A gradeable run with an answer, no rows and no judge-skips.csv entry has simply not been graded yet.
    no_file = scores.empty if scores_file is None else not scores_file
    fallback = np.select([with_rows, pd.Series(no_file, index=runs.index)],
                         ["judge failed (every item ungraded)", NO_SCORES_YET], NOT_GRADED_YET)
    inferred = rule.where(rule.notna(), pd.Series(fallback, index=runs.index))
    runs["reason"] = skip.where(skip.notna() & (skip.astype(str) != ""), pd.Series(inferred, index=runs.index))
    runs.loc[runs["graded"], "reason"] = ""
    # a prompt without rubric items is judged pairwise only: not graded by design, never a dropped run
    runs.loc[runs["reason"].eq(NO_RUBRIC), "gradeable"] = False
    runs.loc[runs["dormancy"], "reason"] = "dormancy prompt (trigger health only)"
    runs.loc[trigger_only, "reason"] = "trigger query (trigger recall only)"
    runs.loc[~runs["dormancy"] & ~runs["condition"].isin(arms), "reason"] = "telemetry arm (not graded)"
    # A run that never completed says what happened to it (ARCHITECTURE.md, "Run states"), not "errored".
    state = runs["run_state"].astype(str).str.strip() if "run_state" in runs else pd.Series("", index=runs.index)
    unfinished = state.ne("") & ~state.isin(COMPLETE_STATES)
    runs.loc[unfinished, "reason"] = state[unfinished].map(
        lambda s: RUN_STATE_REASONS.get(s, f"run state {s} (rerun by the next generate pass)"))
    cov = runs[["run_id", "prompt", "model", "condition", "rep", "dormancy", "gradeable", "graded", "reason"]]
    dropped = cov[cov["gradeable"] & ~cov["graded"]][["run_id", "prompt", "model", "condition", "reason"]]
    return cov.reset_index(drop=True), dropped.reset_index(drop=True)


def _avoid_violations(scores: pd.DataFrame) -> pd.DataFrame:
    from skillbench.judge import avoid_claim_gaps

    v = scores[scores["item_type"].eq("avoid") & scores["verdict"].eq("violated") & (scores["credit"] > 0)]
    v = v.sort_values(["prompt", "model", "condition", "rep"], kind="stable")
    # claim_gap: why the verbatim quote cannot show the harm ("" when it can); the violation counts either way
    v = v.assign(claim_gap=avoid_claim_gaps(v) if len(v) else pd.Series(dtype=object))
    return v[["prompt", "model", "condition", "rep", "item_text", "evidence_quote", "claim_gap"]].reset_index(
        drop=True)


def _spend(manifest: pd.DataFrame, scores: pd.DataFrame, judge_costs: pd.Series, graded_runs: pd.Series
           ) -> dict[str, Any]:
    cost = manifest["total_cost_usd"]
    per_model = cost.groupby(manifest["model"]).sum(min_count=1).dropna().sort_index()
    generation = float(cost.sum())
    judge_models = sorted({str(m) for m in scores["judge_model"].dropna().unique()} - {""})
    known = set(judge_costs.index)
    lacking = int((~graded_runs.isin(known)).sum())
    judge = float(judge_costs.sum()) if len(judge_costs) else None
    return {"generation": generation, "per_model": per_model.to_dict(), "runs_without_cost": int(cost.isna().sum()),
            "judge": judge, "judge_runs": len(judge_costs), "judge_lacking": lacking if judge is not None else None,
            "graded_runs": len(graded_runs), "judge_models": judge_models,
            "total": generation + judge if judge is not None else None}


def _timing(manifest: pd.DataFrame) -> dict[str, Any]:
    timed = manifest[manifest["duration_ms"].notna()]
    dur = timed["duration_ms"]
    out: dict[str, Any] = {"runs": len(timed)}
    if timed.empty:
        return out
    out.update(compute_min=dur.sum() / 60000, mean_s=dur.mean() / 1000, median_s=dur.median() / 1000,
               max_s=dur.max() / 1000)
    started = timed["started_at"]
    if started.notna().any():
        ends = started + pd.to_timedelta(dur, unit="ms")
        wall = (ends.max() - started.min()).total_seconds() / 60
        out["wall_min"] = wall
        out["speedup"] = out["compute_min"] / wall if wall > 0 else float("nan")
    return out


def _provenance(manifest: pd.DataFrame, scores: pd.DataFrame, models: list[str]) -> dict[str, Any]:
    snaps = (manifest.assign(s=manifest["model_snapshot"].astype(str).str.strip())
             .query("s != '' and s != 'MISSING_TRANSCRIPT'").drop_duplicates(["model", "s"])
             .groupby("model")["s"].agg(lambda s: sorted(set(s))))

    def distinct(series: pd.Series) -> list[str]:
        return sorted({str(v).strip() for v in series.dropna().unique()} - {""})

    stamps = manifest["started_at"].dropna()
    sha = scores["rubric_sha"].astype(str)
    rubric = scores[sha != ""].groupby("prompt")["rubric_sha"].nunique()
    return {
        "snapshots": {m: snaps.get(m, []) for m in [*models, *sorted(set(snaps.index) - set(models))]},
        "cli": distinct(manifest["cli_version"]), "skills": distinct(manifest["skills_sha"]),
        "window": (format_timestamp(stamps.min()), format_timestamp(stamps.max())) if len(stamps) else None,
        "judge_models": distinct(scores["judge_model"]), "judge_prompts": distinct(scores["judge_prompt_sha"]),
        "rubric_hashes": int(sha[sha != ""].nunique()),
        "rubric_changed": sorted(rubric[rubric > 1].index), "sandboxes": distinct(manifest["sandbox"]),
    }


def compute_scorecard(ledgers: WeekLedgers, *, history: pd.DataFrame | hist.WeekHistory | None = None,
                      run_key: str | None = None,
                      n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                      site: str | None = None) -> ScorecardData:
    """Compute every table and figure of the scorecard (writes nothing).

    The arms compared are ``ledgers.arms`` (the week's :class:`~skillbench.arms.ArmPair`).

    Args:
        ledgers: :func:`skillbench.ledgers.load_week` output.
        history: the history read so far (:func:`skillbench.scorecard._history.read_week_history`, or the bare
            :func:`skillbench.scorecard.read_history` frame: no sidecar rows); this week is upserted into a copy.
            Ignored for a comparison (:func:`skillbench.scorecard._history.keeps_history`).
        run_key: overrides the run key (default: reconciliation's, else the folder name).
        n_resamples: bootstrap resamples.
        seed: bootstrap seed.
        site: host of the published skills site for the lift caveat (default: from the runs' metadata).
    """
    run_key = run_key or ledgers.run_key
    manifest, scores, pair = ledgers.manifest, ledgers.scores, ledgers.arms
    dormant = set(manifest.loc[manifest["dormancy"], "prompt"])
    # Trigger-only queries (skill-creator's should-trigger set) run with-skill only: never in lift or cost cells.
    scored_runs = manifest[~manifest["dormancy"] & ~manifest["trigger_only"].astype(bool)]
    telemetry_scores = scores[~scores["prompt"].isin(dormant)]
    prompt_reps = prompt_rep_scores(telemetry_scores)
    prompts = prompt_scores(prompt_reps)
    cells = cell_scores(prompts, cost_cells(scored_runs))
    models = order_models(cells["model"]) if not cells.empty else order_models(manifest["model"])
    lift_prompts = prompts[prompts["condition"].isin(pair.lift_arms)]
    lift = lift_table(lift_prompts, cells, pair=pair)
    lift = lift.set_index("model").reindex(models).reset_index()
    lift["n_pairs"] = lift["n_pairs"].fillna(0).astype(int)
    paired = paired_differences(lift_prompts, pair=pair)
    # The bootstrap (a second at 100k runs, in numpy, which lets go of the GIL) runs in its own thread beside every
    # other table; its own seeded generator on its own copy of the differences: the same intervals as inline.
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="skillbench-bootstrap")
    pending = pool.submit(uncertainty_table, paired.copy(), n_resamples=n_resamples, seed=seed)
    pool.shutdown(wait=False)  # no other task: the thread ends with the bootstrap
    endpoint = endpoint_kind(manifest)
    stamps = manifest["started_at"].dropna()
    window_end = format_timestamp(stamps.max()) if len(stamps) else ""
    sentinel = read_week_sentinel(ledgers.run_dir)
    calibration, calibration_error = _week_calibration(ledgers.run_dir)
    # A model without a lift this week (nothing graded in both arms) gets no history row: history carries lifts.
    rows = hist.history_rows(run_key, window_end, lift[lift["must_lift"].notna()], endpoint, sentinel)
    coverage, dropped = _coverage(manifest, scores, ledgers.judge_skips, scores_file=ledgers.scores_present,
                                  pair=pair)
    recon = ledgers.reconciliation
    # Per family: a family whose planned runs are all accounted for is decided, whatever else the week left out.
    complete = True if recon is None else recon.family_complete
    reasons = incomplete_reasons(recon, coverage, consolidation_incomplete(ledgers.run_dir))
    objective = objective_frames(ledgers.checks, manifest, pair)
    # The controls before the history: a recorded week keeps its control verdicts in the history's sidecar.
    controls = control_checks(ScoringFrames(prompts, prompt_reps, cells), manifest, pair,
                              reconciliation_complete=complete, check_stimuli=objective.get("check_stimuli"),
                              models=models, n_resamples=n_resamples, seed=seed)
    recorded = None
    if hist.keeps_history(pair):
        recorded = hist.as_week_history(history)
        week_prompts = hist.prompt_rows(paired)
        if not reasons and not (recon is not None and recon.is_subset):  # a partial week must not feed later
            recorded = recorded.with_week(run_key, rows, week_prompts,  # weeks' noise floor
                                          control_history_rows(controls, window_end, endpoint))
        history = recorded.rows
        wow = hist.week_over_week(history, run_key, lift, endpoint, window_end=window_end,
                                  prompts=replace_week(recorded.prompts, run_key, week_prompts))
    else:  # a comparison is not a week of the series: no history in, none out, no week-over-week delta
        history, rows = hist.empty_history(), rows.iloc[0:0]
        wow = hist.WeekOverWeek(ready=False, n_runs=0, endpoint=endpoint)
    graded_ids = coverage.loc[coverage["graded"], "run_id"]
    fabrication = fabrication_check(read_identifiers(ledgers.run_dir) if ledgers.run_dir is not None else None,
                                    manifest, pair, models)
    measured_gate = (preference_gate(ledgers.pairs, manifest, reconciliation_complete=complete,
                                     transitions=objective.get("transitions"), pair=pair,
                                     fabrication=fabrication.records if fabrication is not None else None)
                     if ledgers.pairs is not None else None)
    # The invalid families have no run: their records join the gate after the simulation check reads it.
    gate = (invalid_family_rows(measured_gate, recon.invalid_families if recon is not None else {}, models)
            if measured_gate is not None else None)
    excluded = int((~cost_eligible(scored_runs)).sum())
    health = {
        "contested": int(scores["contested"].sum()), "ungraded": int((~scores["graded"]).sum()),
        "budget_capped": int(manifest["budget_hit"].eq(1).sum()),
        "unreliable": int((~manifest["signals_ok"].eq(1).fillna(False)).sum()), "cost_excluded": excluded,
        "api_errors": int(manifest["is_error"].sum()), "retried": int(manifest["attempts"].gt(1).sum()),
        "denials": int(manifest["denials"].gt(0).sum()),
        # None when the judge never checked quotes (qdrant's ledger): "0 unverified" would overclaim.
        "unverified_evidence": (int(scores["evidence_verified"].eq(False).sum())
                                if scores["evidence_verified"].notna().any() else None),
        "pair_errors": int(ledgers.pairs["error"].ne("").sum()) if ledgers.pairs is not None else 0,
    }
    avoid = _avoid_violations(scores)
    health["no_claim_evidence"] = int(avoid["claim_gap"].ne("").sum())
    activation, counts = activation_summary(manifest, pair), activation_counts(manifest, pair)
    served, triggers = self_served_baseline(manifest), trigger_health(manifest, pair=pair)
    spend, provenance = _spend(manifest, scores, ledgers.judge_costs, graded_ids), _provenance(manifest, scores, models)
    uncertainty = pending.result()
    return ScorecardData(
        run_key=run_key, endpoint=endpoint, models=models, reconciliation=recon,
        manifest=manifest, scores=scores, prompt_reps=prompt_reps, prompts=prompts, cells=cells, lift=lift,
        paired=paired, uncertainty=uncertainty, history=history, history_rows=rows, wow=wow,
        activation=activation, activation_counts=counts, self_served=served, trigger_health=triggers,
        avoid_violations=avoid, gate=gate, coverage=coverage, dropped=dropped, spend=spend, timing=_timing(manifest),
        health=health, provenance=provenance, site_host=site or ledgers.site_host,
        n_resamples=n_resamples, seed=seed, incomplete_reasons=reasons, objective=objective,
        extras={"dropped_pieces": ledgers.dropped_pieces, "calibration_error": calibration_error,
                # --generalization: the held-out runs' own week beside this one, read apart (its own section)
                "generalization": week_generalization(ledgers.run_dir, prompts, pair, models)}, pair=pair,
        simulation=simulation_check(read_truth(ledgers.run_dir) if endpoint == SIMULATED else None,
                                    Measured(coverage, lift, uncertainty, measured_gate, objective.get("transitions")),
                                    endpoint=endpoint, manifest=manifest, scores=scores, pair=pair,
                                    reconciliation_complete=complete),
        controls=controls, sentinel=sentinel, pairs=ledgers.pairs, recorded=recorded, calibration=calibration,
        fabrication=fabrication,
    )


def _week_calibration(run_dir: Any) -> tuple[pd.DataFrame | None, str]:
    """The week's ``calibration.csv`` and, when it cannot be read, why (the decision block flags it: an unreadable
    calibration must not read as a calibrated week)."""
    if run_dir is None:
        return None, ""
    try:
        return read_calibration(run_dir), ""
    except LedgerError as exc:
        return None, str(exc)


def read_week_sentinel(run_dir: Any) -> dict[str, Any] | None:
    """The week's ``sentinel.json`` (the calibration stage's drift sentinel), None when absent or unreadable.

    Read as a ledger here (the scorecard never imports the judge or calibration code that wrote it).
    """
    from skillbench.ledgers import read_sentinel

    return None if run_dir is None else read_sentinel(run_dir)


def objective_frames(checks: pd.DataFrame, manifest: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR,
                     ) -> dict[str, pd.DataFrame]:
    """The objective layer's tidy frames (:mod:`skillbench.scorecard._objective`); {} for a week without checks.

    Transitions and the task-pass lift go control → treatment (``pair``).
    """
    if checks.empty:
        return {}
    runs = obj.run_outcomes(checks, manifest)
    stimuli = obj.stimulus_outcomes(runs)
    trans = obj.transitions(stimuli, pair)
    # Dormancy prompts run only in the skilled arms: their rates would tilt the arms' comparison.
    scored_runs, scored_stimuli = runs[~runs["dormancy"].astype(bool)], stimuli[~stimuli["dormancy"].astype(bool)]
    return {"check_runs": runs, "check_rates": obj.arm_rates(scored_runs), "check_stimuli": stimuli,
            "pass_k": obj.pass_k_table(scored_stimuli), "task_lift": obj.task_lift(stimuli, pair), "transitions": trans,
            "transition_counts": obj.transition_counts(trans), "objective_record": obj.objective_record_table(trans),
            "tool_violations": obj.tool_violations(checks), "check_errors": obj.unrunnable_checks(checks)}


def incomplete_reasons(reconciliation: Reconciliation | None, coverage: pd.DataFrame,
                       consolidation: str = "") -> list[str]:
    """Why a week is INCOMPLETE (empty when it is not): its reconciliation, runs not graded yet, and a merge of CI
    shards that is not COMPLETE (``consolidation``: :func:`skillbench.ledgers._shards.consolidation_incomplete`).

    A week without a reconciliation (qdrant's layout) is not reconciled, which is said, but not incomplete. A pass
    over part of the suite whose other runs are all limited (kept for a later pass) is a subset, which its title
    says, not an incomplete week; a week with a family left out for an invalid spec is incomplete, and names every
    such family.
    """
    reasons = [consolidation] if consolidation else []
    if reconciliation is not None and not reconciliation.is_complete:
        reasons += reconciliation_reasons(reconciliation)
    waiting = int((coverage["gradeable"] & coverage["reason"].astype(str).str.startswith(NOT_GRADED_YET)).sum())
    if waiting:
        reasons.append(f"{waiting} gradeable runs are not graded yet (run `skillbench judge RUN_DIR`)")
    return reasons


def reconciliation_reasons(recon: Reconciliation) -> list[str]:
    """Why an incomplete reconciliation leaves the week incomplete, in the words of ``reconciliation.json``."""
    reasons = []
    invalid = recon.invalid_families
    if invalid:
        reasons.append(f"{len(invalid)} skill famil{'y' if len(invalid) == 1 else 'ies'} with an invalid spec, never "
                       f"run (INVALID_INCONCLUSIVE (invalid_spec)): {', '.join(sorted(invalid))} — see Invalid "
                       "families; `skillbench validate` prints every line")
    kept = {name: len(getattr(recon, name)) for name in ("capped", "not_started", "limited") if getattr(recon, name)}
    if not recon.accounted_for or recon.damaged or recon.stopped_legs:
        reasons.append("the reconciliation does not account for every planned run")
    elif kept and not (recon.is_subset and set(kept) == {"limited"}):
        what = ", ".join(f"{n} {name.replace('_', ' ')}" for name, n in kept.items())
        reasons.append(f"every planned run is accounted for, but not all were run ({what}) — rerun the same run "
                       "key to run them")
    if not reasons and not recon.is_subset:  # a flag that disagrees with empty lists fails closed
        reasons.append("the reconciliation does not account for every planned run")
    return reasons
