"""The weekly scorecard: every number computed from a run directory's ledgers, rendered to ``scorecard.md``.

qdrant's sections come in their order and with their table layout (padded GitHub-markdown columns, their
number formats and labels), so their published scorecard and ours can be compared cell by cell. Ours are
inserted beside the section they qualify: the lift's bootstrap CI and minimum detectable effect after the lift
table, trigger health after activation, the preference gate after the avoid violations. A week whose
reconciliation is incomplete says **INCOMPLETE** in its title; a week on the simulated endpoint says so too.

Scope rules: plugin-arm runs never enter the lift (their cells appear in the per-cell table as telemetry);
dormancy prompts are never lift-scored (they feed trigger health and the activation contract); held-out
prompts are never run, so they never appear.

Use :func:`write_scorecard` (what ``skillbench scorecard`` calls) or, in a notebook, :func:`scorecard_frames`
for the tidy DataFrames behind every table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import pandas as pd

from skillbench import history as hist
from skillbench import trigger
from skillbench.fileio import atomic_write_text
from skillbench.gate import preference_gate
from skillbench.ledgers import (
    ENDPOINT_UNKNOWN,
    Reconciliation,
    RunLedgers,
    format_timestamp,
    load_run,
)
from skillbench.scoring import (
    CONDITIONS,
    LIFT_ARMS,
    cell_scores,
    cost_cells,
    cost_eligible,
    prompt_rep_scores,
    prompt_scores,
)
from skillbench.signals import skip_reason
from skillbench.stats import (
    DEFAULT_POWER,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    lift_table,
    paired_differences,
    uncertainty_table,
)

SCORECARD_FILE = "scorecard.md"
HISTORY_FILE = "scorecard-history.csv"
TEMPLATE = "scorecard.md.j2"
# Larger models first, as qdrant lists them; unknown labels follow alphabetically.
MODEL_RANK = ("opus", "sonnet", "haiku")
EPS = 1e-9
EVIDENCE_CHARS = 120
ITEM_CHARS = 80
# A snapshot pinned to a build ends in its date (claude-haiku-4-5-20251001); anything else is an alias.
DATED = re.compile(r"-\d{8}$")


# --- formatting -------------------------------------------------------------------------------------------


def _missing(x: Any) -> bool:
    return x is None or x is pd.NA or (isinstance(x, float | np.floating) and not np.isfinite(x))


def fmt(x: Any, nd: int = 3) -> str:
    """``0.590``; ``n/a`` when missing."""
    return "n/a" if _missing(x) else f"{float(x):.{nd}f}"


def signed(x: Any, nd: int = 3) -> str:
    """``+0.319``; ``n/a`` when missing."""
    return "n/a" if _missing(x) else f"{float(x):+.{nd}f}"


def money(x: float) -> str:
    """``$11.15``."""
    return f"${x:.2f}"


def md_cell(text: Any) -> str:
    """One table cell on one line, its pipes escaped."""
    return str(text).replace("\r", " ").replace("\n", " ").replace("|", "\\|")


def md_table(headers: list[str], rows: list[list[Any]]) -> str:
    """A GitHub-markdown table with columns padded to their widest cell, readable as raw text."""
    cells = [[str(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(values: list[str]) -> str:
        return "| " + " | ".join(v.ljust(widths[i]) for i, v in enumerate(values)) + " |"

    return "\n".join([line(headers), "| " + " | ".join("-" * w for w in widths) + " |", *map(line, cells)])


def order_models(models: Any) -> list[str]:
    """Models in scorecard order: opus, sonnet, haiku families first, then the rest alphabetically."""
    def rank(m: str) -> tuple[int, str]:
        low = m.lower()
        return next((i for i, k in enumerate(MODEL_RANK) if k in low), len(MODEL_RANK)), m

    return sorted({str(m) for m in models}, key=rank)


# --- computation ------------------------------------------------------------------------------------------


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
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def incomplete(self) -> bool:
        """The reconciliation exists and does not account for every planned run."""
        return self.reconciliation is not None and not self.reconciliation.is_complete

    @property
    def title(self) -> str:
        title = f"Weekly Skill Scorecard — {self.run_key}"
        if self.endpoint != "real":
            title += f" — {self.endpoint} endpoint"
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
        }
        out["gate"] = self.gate if self.gate is not None else pd.DataFrame()
        return out


def endpoint_kind(manifest: pd.DataFrame) -> str:
    """The week's endpoint: ``real``, ``simulated``, …; ``mixed`` when runs disagree."""
    kinds = sorted(set(manifest["endpoint"].astype(str)))
    if not kinds:
        return ENDPOINT_UNKNOWN
    return kinds[0] if len(kinds) == 1 else "mixed"


def _run_keys(df: pd.DataFrame) -> pd.MultiIndex:
    return pd.MultiIndex.from_frame(df[["prompt", "model", "condition", "rep"]].astype(
        {"rep": "int64"}).astype({"prompt": object, "model": object, "condition": object}))


def _coverage(manifest: pd.DataFrame, scores: pd.DataFrame, skips: pd.DataFrame) -> tuple[pd.DataFrame,
                                                                                           pd.DataFrame]:
    """Every run with its coverage status, and the dropped ones with their reasons."""
    plugin_graded = bool(scores["condition"].eq("plugin").any())
    arms = set(LIFT_ARMS) | ({"plugin"} if plugin_graded else set())
    runs = manifest.copy()
    runs["gradeable"] = ~runs["dormancy"] & runs["condition"].isin(arms)
    keys = _run_keys(runs)
    runs["graded"] = keys.isin(_run_keys(scores[scores["graded"]])) & runs["gradeable"]
    with_rows = keys.isin(_run_keys(scores))
    skip = runs["run_id"].map(skips.drop_duplicates("run_id").set_index("run_id")["reason"]) \
        if not skips.empty else pd.Series(np.nan, index=runs.index)
    # the judge's own rule for runs it never saw graded (qdrant's ledgers have no judge-skips.csv)
    cols = ["budget_hit", "condition", "skill_available", "exit_code", "is_error"]
    records = runs[cols].astype(object).where(runs[cols].notna(), None).to_dict("records")
    rule = pd.Series([skip_reason(r) for r in records], index=runs.index, dtype=object)
    fallback = np.select([with_rows, pd.Series(scores.empty, index=runs.index)],
                         ["judge failed (every item ungraded)", "not graded yet (no scores.csv)"],
                         "no gradeable answer")
    inferred = rule.where(rule.notna(), pd.Series(fallback, index=runs.index))
    runs["reason"] = skip.where(skip.notna() & (skip.astype(str) != ""), pd.Series(inferred, index=runs.index))
    runs.loc[runs["graded"], "reason"] = ""
    runs.loc[runs["dormancy"], "reason"] = "dormancy prompt (trigger health only)"
    runs.loc[~runs["dormancy"] & ~runs["condition"].isin(arms), "reason"] = "telemetry arm (not graded)"
    cov = runs[["run_id", "prompt", "model", "condition", "rep", "dormancy", "gradeable", "graded", "reason"]]
    dropped = cov[cov["gradeable"] & ~cov["graded"]][["run_id", "prompt", "model", "condition", "reason"]]
    return cov.reset_index(drop=True), dropped.reset_index(drop=True)


def _avoid_violations(scores: pd.DataFrame) -> pd.DataFrame:
    v = scores[scores["item_type"].eq("avoid") & scores["verdict"].eq("violated") & (scores["credit"] > 0)]
    v = v.sort_values(["prompt", "model", "condition", "rep"], kind="stable")
    return v[["prompt", "model", "condition", "rep", "item_text", "evidence_quote"]].reset_index(drop=True)


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
             .query("s != '' and s != 'MISSING_TRANSCRIPT'").groupby("model")["s"].agg(lambda s: sorted(set(s))))

    def distinct(series: pd.Series) -> list[str]:
        return sorted({str(v).strip() for v in series.dropna().unique()} - {""})

    stamps = manifest["started_at"].dropna()
    rubric = scores[scores["rubric_sha"].astype(str) != ""].groupby("prompt")["rubric_sha"].nunique()
    return {
        "snapshots": {m: snaps.get(m, []) for m in [*models, *sorted(set(snaps.index) - set(models))]},
        "cli": distinct(manifest["cli_version"]), "skills": distinct(manifest["skills_sha"]),
        "window": (format_timestamp(stamps.min()), format_timestamp(stamps.max())) if len(stamps) else None,
        "judge_models": distinct(scores["judge_model"]), "judge_prompts": distinct(scores["judge_prompt_sha"]),
        "rubric_hashes": int(scores["rubric_sha"].astype(str).replace("", np.nan).nunique()),
        "rubric_changed": sorted(rubric[rubric > 1].index), "sandboxes": distinct(manifest["sandbox"]),
    }


def compute_scorecard(ledgers: RunLedgers, *, history: pd.DataFrame | None = None, run_key: str | None = None,
                      n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                      site: str | None = None) -> ScorecardData:
    """Compute every table and figure of the scorecard (writes nothing).

    Args:
        ledgers: :func:`skillbench.ledgers.load_run` output.
        history: the history read so far (:func:`skillbench.history.read_history`); this week is upserted into
            a copy.
        run_key: overrides the run key (default: reconciliation's, else the folder name).
        n_resamples: bootstrap resamples.
        seed: bootstrap seed.
        site: host of the published skills site for the lift caveat (default: from the runs' metadata).
    """
    run_key = run_key or ledgers.run_key
    manifest, scores = ledgers.manifest, ledgers.scores
    dormant = set(manifest.loc[manifest["dormancy"], "prompt"])
    scored_runs = manifest[~manifest["dormancy"]]
    telemetry_scores = scores[~scores["prompt"].isin(dormant)]
    prompt_reps = prompt_rep_scores(telemetry_scores)
    prompts = prompt_scores(prompt_reps)
    cells = cell_scores(prompts, cost_cells(scored_runs))
    models = order_models(cells["model"]) if not cells.empty else order_models(manifest["model"])
    lift_prompts = prompts[prompts["condition"].isin(LIFT_ARMS)]
    lift = lift_table(lift_prompts, cells)
    lift = lift.set_index("model").reindex(models).reset_index()
    lift["n_pairs"] = lift["n_pairs"].fillna(0).astype(int)
    paired = paired_differences(lift_prompts)
    uncertainty = uncertainty_table(paired, n_resamples=n_resamples, seed=seed)
    endpoint = endpoint_kind(manifest)
    stamps = manifest["started_at"].dropna()
    window_end = format_timestamp(stamps.max()) if len(stamps) else ""
    # A model without a lift this week (nothing graded in both arms) gets no history row: history carries lifts.
    rows = hist.history_rows(run_key, window_end, lift[lift["must_lift"].notna()], endpoint)
    complete = ledgers.reconciliation is None or ledgers.reconciliation.is_complete
    history = history if history is not None else hist.empty_history()
    if complete:  # a partial week must not feed later weeks' noise floor
        history = hist.upsert(history, rows)
    wow = hist.week_over_week(history, run_key, lift, endpoint)
    coverage, dropped = _coverage(manifest, scores, ledgers.judge_skips)
    graded_ids = coverage.loc[coverage["graded"], "run_id"]
    gate = (preference_gate(ledgers.pairs, manifest, reconciliation_complete=complete)
            if ledgers.pairs is not None else None)
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
    return ScorecardData(
        run_key=run_key, endpoint=endpoint, models=models, reconciliation=ledgers.reconciliation,
        manifest=manifest, scores=scores, prompt_reps=prompt_reps, prompts=prompts, cells=cells, lift=lift,
        paired=paired, uncertainty=uncertainty, history=history, history_rows=rows, wow=wow,
        activation=trigger.activation_summary(manifest), activation_counts=trigger.activation_counts(manifest),
        self_served=trigger.self_served_baseline(manifest), trigger_health=trigger.trigger_health(manifest),
        avoid_violations=_avoid_violations(scores), gate=gate, coverage=coverage, dropped=dropped,
        spend=_spend(manifest, scores, ledgers.judge_costs, graded_ids), timing=_timing(manifest), health=health,
        provenance=_provenance(manifest, scores, models), site_host=site or ledgers.site_host,
        n_resamples=n_resamples, seed=seed,
    )


# --- rendering --------------------------------------------------------------------------------------------


def _lift_section(d: ScorecardData) -> dict[str, Any]:
    lift = d.lift.set_index("model")
    show_bonus = bool((lift["bonus_delta"].abs() > EPS).any())
    show_avoid = bool((lift["avoid_delta"].abs() > EPS).any())
    headers = ["model", "must_coverage no→with", "must lift ± SE", "95% CI != 0?"]
    headers += ["Δbonus"] * show_bonus + ["Δavoid"] * show_avoid + ["Δcost ($)", "Δturns"]
    rows = []
    for m in d.models:
        r = lift.loc[m]
        se = r["must_lift_se"]
        flag = ("n/a (need >=2 prompts)" if _missing(se) or r["n_pairs"] < 2
                else "yes" if bool(r["excludes_zero"]) else "no")
        row = [m, f"{fmt(r['must_no'])} → {fmt(r['must_with'])}", f"{signed(r['must_lift'])} ± {fmt(se)}", flag]
        row += [signed(r["bonus_delta"])] * show_bonus + [signed(r["avoid_delta"], 2)] * show_avoid
        row += [signed(r["cost_delta"], 4), signed(r["turns_delta"], 1)]
        rows.append(row)
    return {"table": md_table(headers, rows)}


def _uncertainty_table(d: ScorecardData) -> str:
    u = d.uncertainty.set_index("model")
    rows = []
    for m in d.models:
        if m not in u.index:
            rows.append([m, 0, "n/a", "n/a", "n/a", "n/a", "n/a"])
            continue
        r = u.loc[m]
        ci = "n/a" if _missing(r["boot_low"]) else f"[{signed(r['boot_low'])}, {signed(r['boot_high'])}]"
        reach = "n/a" if r["detectable"] is pd.NA else "yes" if bool(r["detectable"]) else "no"
        rows.append([m, int(r["n_pairs"]), signed(r["paired_lift"]), ci, fmt(r["sd_d"]), fmt(r["mde"]), reach])
    pct = f"{d.uncertainty['power'].iloc[0] * 100:.0f}" if len(d.uncertainty) else f"{DEFAULT_POWER * 100:.0f}"
    return md_table(["model", "n prompts", "paired lift", "95% bootstrap CI", "SD(dᵢ)", f"MDE ({pct}% power)",
                     "lift ≥ MDE?"], rows)


def _wow_table(d: ScorecardData) -> str:
    rows = [[r.model, f"{fmt(r.prev_lift)} → {fmt(r.now_lift)}", signed(r.delta), fmt(r.within), fmt(r.between),
             fmt(r.threshold), r.actionable] for r in d.wow.table.itertuples(index=False)]
    return md_table(["model", "must lift (prev → now)", "Δ", "t·SE_Δ (within)", "σ (between)", "threshold",
                     "actionable?"], rows)


def _cells_table(d: ScorecardData) -> str:
    c = d.cells.set_index(["model", "condition"])
    rows = []
    for m in d.models:
        for cond in CONDITIONS:
            if (m, cond) not in c.index or c.loc[(m, cond), "n_prompts"] == 0:
                continue
            r = c.loc[(m, cond)]
            rows.append([m, cond, fmt(r["must_coverage"]), fmt(r["bonus_rate"]), fmt(r["avoid_violations"], 2),
                         fmt(r["composite"]), fmt(r.get("mean_cost"), 4), fmt(r.get("mean_turns"), 1),
                         int(r["n_prompts"])])
    if not rows:
        return ""
    return md_table(["model", "condition", "must_cov", "bonus_rate", "avoid_viol", "composite", "mean cost",
                     "mean turns", "n"], rows)


def _prompts_table(d: ScorecardData) -> str:
    no, wi = LIFT_ARMS
    p = d.prompts[d.prompts["condition"].isin(LIFT_ARMS)]
    wide = p.pivot(index=["prompt", "model"], columns="condition", values=["must_coverage", "composite"])
    wide = wide.reindex(columns=pd.MultiIndex.from_product([["must_coverage", "composite"], list(LIFT_ARMS)]))
    rank = {m: i for i, m in enumerate(d.models)}
    order = sorted(wide.index, key=lambda k: (k[0], rank.get(k[1], len(rank)), k[1]))
    wide = wide.loc[order] if order else wide
    must, comp = wide["must_coverage"], wide["composite"]
    lift = must[wi] - must[no]
    rows = [[prompt, model, f"{fmt(a)} → {fmt(b)}", signed(delta), f"{fmt(c)} → {fmt(e)}"]
            for (prompt, model), a, b, delta, c, e in zip(wide.index, must[no], must[wi], lift, comp[no], comp[wi],
                                                          strict=True)]
    if not rows:
        return ""
    return md_table(["prompt", "model", "must no→with", "must lift", "comp no→with"], rows)


def _activation_table(d: ScorecardData) -> str:
    rows = []
    for r in d.activation.to_dict("records"):
        kinds = sorted((k[4:], int(v)) for k, v in r.items() if k.startswith("act_") and v)
        acts = ", ".join(f"{k}×{v}" for k, v in kinds)
        flag = "  ⚠ never triggered" if r["never_triggered"] else ""
        rows.append([r["prompt"], f"{acts}{flag}", f"{int(r['reached_leaf'])}/{int(r['runs'])}"])
    return md_table(["prompt", "activations (with-skill)", "reached leaf"], rows)


def _trigger_health_table(d: ScorecardData) -> str:
    rows = [[r.skill_family, r.scored_runs, r.activations, fmt(r.recall), r.dormancy_runs, r.false_triggers,
             fmt(r.false_trigger_rate), fmt(r.precision), fmt(r.f1)]
            for r in d.trigger_health.itertuples(index=False)]
    return md_table(["skill family", "with-skill runs", "activated", "recall", "dormancy runs", "false triggers",
                     "false-trigger rate", "precision", "F1"], rows)


def _avoid_table(d: ScorecardData) -> str:
    rows = [[r.prompt, r.model, r.condition, md_cell(r.item_text)[:ITEM_CHARS],
             md_cell(r.evidence_quote)[:EVIDENCE_CHARS]] for r in d.avoid_violations.itertuples(index=False)]
    return md_table(["prompt", "model", "condition", "violated item", "evidence"], rows)


def _gate_table(d: ScorecardData) -> str:
    g = d.gate.assign(_rank=d.gate["model"].map({m: i for i, m in enumerate(d.models)}).fillna(len(d.models)))
    g = g.sort_values(["skill_family", "_rank", "model"], kind="stable")
    rows = [[r.skill_family, r.model, r.verdict, r.evidence] for r in g.itertuples(index=False)]
    return md_table(["skill family", "model", "verdict", "evidence"], rows)


def _dropped_table(d: ScorecardData) -> str:
    rows = [[r.run_id, r.prompt, r.model, r.condition, r.reason] for r in d.dropped.itertuples(index=False)]
    return md_table(["run_id", "prompt", "model", "condition", "reason"], rows)


def _snapshot_table(d: ScorecardData) -> str:
    rows = []
    for m, strings in d.provenance["snapshots"].items():
        if not strings:
            rows.append([m, "(unknown)"])
        elif len(strings) == 1:
            rows.append([m, f"`{strings[0]}`"])
        else:
            rows.append([m, f"⚠ multiple (`{'`, `'.join(strings)}`) — model changed mid-week"])
    return md_table(["model", "exact snapshot string"], rows)


def _spend_lines(d: ScorecardData) -> dict[str, str]:
    s = d.spend
    per_model = ", ".join(f"{m} {money(v)}" for m, v in s["per_model"].items())
    generation = f"{money(s['generation'])}  ({per_model})" if per_model else money(s["generation"])
    if s["runs_without_cost"]:
        generation += f"; {s['runs_without_cost']} runs without a recorded cost"
    label = f"judge ({', '.join(s['judge_models'])})" if s["judge_models"] else "judge"
    if s["judge"] is None:
        judge = "unknown (no judge_cost.txt in the run folders)"
        total = f"**total: unknown** (generation {money(s['generation'])} + judge unknown)"
    elif s["judge_lacking"]:
        judge = (f"≥ {money(s['judge'])} (judge_cost.txt missing for {s['judge_lacking']} of {s['graded_runs']} "
                 f"graded runs)")
        total = f"**total: ≥ {money(s['total'])}** (judge cost incomplete)"
    else:
        judge = money(s["judge"])
        total = f"**total: {money(s['total'])}**"
    return {"generation": generation, "judge_label": label, "judge": judge, "total": total}


def _timing_lines(d: ScorecardData) -> list[str]:
    t = d.timing
    lines = [f"- runs timed: {t['runs']}"]
    if t["runs"]:
        lines.append(f"- compute-time (Σ per-run): {t['compute_min']:.1f} min  (mean {t['mean_s']:.0f}s, "
                     f"median {t['median_s']:.0f}s, max {t['max_s']:.0f}s)")
        if "wall_min" in t:
            lines.append(f"- wall-clock: {t['wall_min']:.1f} min  (parallel speedup ~{t['speedup']:.1f}×)")
        else:
            lines.append("- wall-clock: unknown (no run timestamps)")
    return lines


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("skillbench", "templates"), trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                             autoescape=False)
    env.filters.update(fmt=fmt, signed=signed, money=money, codes=lambda xs: ", ".join(f"`{x}`" for x in xs))
    return env


def render_markdown(d: ScorecardData) -> str:
    """Render ``scorecard.md`` from computed data through ``templates/scorecard.md.j2``."""
    counts = d.activation_counts
    ns_runs = int((d.manifest["condition"].eq("no-skill") & ~d.manifest["dormancy"]).sum())
    cov = d.coverage
    context = {
        "d": d, "title": d.title, "lift": _lift_section(d),
        "uncertainty_table": _uncertainty_table(d) if d.models else "",
        "wow_table": _wow_table(d) if d.wow.ready else "",
        "cells_table": _cells_table(d), "has_plugin_cells": bool(d.cells["condition"].eq("plugin").any()),
        "prompts_table": _prompts_table(d), "activation_counts": counts,
        "activation_table": _activation_table(d) if not d.activation.empty else "",
        "never_triggered": trigger.never_triggered(d.activation),
        "trigger_health_table": _trigger_health_table(d) if not d.trigger_health.empty else "",
        "site": d.site_host, "ns_runs": ns_runs,
        "served_prompts": sorted(set(d.self_served["prompt"])),
        "avoid_table": _avoid_table(d) if not d.avoid_violations.empty else "",
        "gate_table": _gate_table(d) if d.gate is not None and not d.gate.empty else "",
        "graded": int(cov["graded"].sum()), "gradeable": int(cov["gradeable"].sum()),
        "dropped_table": _dropped_table(d) if not d.dropped.empty else "",
        "n_dormancy_runs": int(cov["dormancy"].sum()),
        "n_telemetry_runs": int((~cov["dormancy"] & ~cov["gradeable"]).sum()),
        "recon": d.reconciliation, "spend": _spend_lines(d), "timing_lines": _timing_lines(d), "h": d.health,
        "snapshot_table": _snapshot_table(d), "prov": d.provenance,
        "floating": sorted({v for s in d.provenance["snapshots"].values() for v in s if not DATED.search(v)}),
    }
    return _environment().get_template(TEMPLATE).render(**context)


# --- entry points -----------------------------------------------------------------------------------------


@dataclass
class ScorecardResult:
    """What :func:`write_scorecard` wrote."""

    path: Path
    history_path: Path
    data: ScorecardData
    markdown: str

    @property
    def complete(self) -> bool:
        return not self.data.incomplete


def default_history_path(run_dir: str | Path) -> Path:
    """qdrant's layout: ``RUN_DIR/../scorecard-history.csv``."""
    return Path(run_dir).resolve().parent / HISTORY_FILE


def write_scorecard(run_dir: str | Path, *, history_path: str | Path | None = None, run_key: str | None = None,
                    n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                    site: str | None = None) -> ScorecardResult:
    """Compute the scorecard, write ``RUN_DIR/scorecard.md`` and upsert this week into the history file.

    Raises:
        skillbench.ledgers.LedgerError: a malformed ledger.
        skillbench.history.HistoryError: a malformed history file.
    """
    run_dir = Path(run_dir)
    history_path = Path(history_path) if history_path else default_history_path(run_dir)
    data = compute_scorecard(load_run(run_dir), history=hist.read_history(history_path), run_key=run_key,
                             n_resamples=n_resamples, seed=seed, site=site)
    markdown = render_markdown(data)
    path = run_dir / SCORECARD_FILE
    atomic_write_text(path, markdown)
    hist.write_history(history_path, data.history)
    return ScorecardResult(path=path, history_path=history_path, data=data, markdown=markdown)


def scorecard_frames(run_dir: str | Path, *, history_path: str | Path | None = None, run_key: str | None = None,
                     n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> dict[str, pd.DataFrame]:
    """The scorecard's tidy DataFrames for a run directory, writing nothing (for notebooks).

    Keys: ``prompt_reps, prompts, cells, lift, paired, uncertainty, history, week_over_week, activation,
    self_served, trigger_health, avoid_violations, coverage, dropped, gate``.
    """
    history_path = Path(history_path) if history_path else default_history_path(run_dir)
    data = compute_scorecard(load_run(run_dir), history=hist.read_history(history_path), run_key=run_key,
                             n_resamples=n_resamples, seed=seed)
    return data.frames()
