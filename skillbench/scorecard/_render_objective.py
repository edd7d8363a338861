"""The scorecard's objective section: the deterministic checks' tables, from :attr:`ScorecardData.objective`.

Shown beside qdrant's rubric sections (which it never changes) only when the week has ``checks.csv`` rows.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from skillbench.markdown import fmt, md_table, md_text, signed, with_span
from skillbench.scorecard._compute import ScorecardData
from skillbench.scorecard._labels import arm_names, arm_order
from skillbench.scorecard._stats import ci_flag_text
from skillbench.scorecard._verdicts import objective_rule
from skillbench.vocab import TRANSITIONS

DETAIL_CHARS = 100


def _model_rank(d: ScorecardData, frame: pd.DataFrame, *extra: str) -> pd.DataFrame:
    rank = {m: i for i, m in enumerate(d.models)}
    out = frame.assign(_m=frame["model"].map(rank).fillna(len(rank)))
    keys = ["_m", "model"]
    if "condition" in out:
        arm = {c: i for i, c in enumerate(arm_order(out["condition"], d.pair))}
        out = out.assign(_c=out["condition"].map(arm).fillna(len(arm)))
        keys.append("_c")
    return out.sort_values([*keys, *extra], kind="stable")


def _rates_table(d: ScorecardData) -> str:
    rates = _model_rank(d, d.objective["check_rates"])
    rows = [[md_text(r.model), md_text(r.condition), int(r.runs),
             _rate(r.check_pass_rate, r.check_pass_low, r.check_pass_high),
             _rate(r.task_pass_rate, r.task_pass_low, r.task_pass_high), int(r.unknown_runs)]
            for r in rates.itertuples(index=False)]
    return md_table(["model", "condition", "runs", "check pass rate [95% CI]", "task pass rate [95% CI]",
                     "runs with a check error"], rows)


def _rate(rate: float, low: float, high: float) -> str:
    """``0.620 [0.410, 0.790]``; the bare rate (``n/a`` when unknown) without an interval."""
    return with_span(fmt(rate), low, high, 3)


def _lift_table(d: ScorecardData) -> str:
    lift = _model_rank(d, d.objective["task_lift"])
    rows = []
    for r in lift.itertuples(index=False):
        flag = ci_flag_text(r.excludes_zero)
        rows.append([md_text(r.model), f"{fmt(r.no_skill)} → {fmt(r.with_skill)}",
                     f"{signed(r.task_lift)} ± {fmt(r.task_lift_se)}", flag, int(r.n_pairs)])
    return md_table(["model", f"task pass {arm_names(d.pair).arrow}", "task lift ± SE", "95% CI != 0?", "n stimuli"],
                    rows)


def _pass_k_table(d: ScorecardData) -> str:
    table = _model_rank(d, d.objective["pass_k"], "k")
    rows = [[md_text(r.model), md_text(r.condition), int(r.k), int(r.stimuli), fmt(r.pass_at_k), fmt(r.pass_hat_k)]
            for r in table.itertuples(index=False)]
    return md_table(["model", "condition", "k", "stimuli", "pass@k", "pass^k"], rows)


def _transitions_table(d: ScorecardData) -> str:
    counts = _model_rank(d, d.objective["transition_counts"])
    rows = [[md_text(r["model"]), *(int(r[t]) for t in TRANSITIONS)] for _, r in counts.iterrows()]
    return md_table(["model", *TRANSITIONS], rows)


def _record_table(d: ScorecardData) -> str:
    records = _model_rank(d, d.objective["objective_record"]).sort_values(["skill_family", "_m", "model"],
                                                                           kind="stable")
    rows = [[md_text(r.skill_family), md_text(r.model), r.evidence.removeprefix("objective "),
             _regression_cell(r.reason)]
            for r in records.itertuples(index=False)]
    return md_table(["skill family", "model", "objective record", "regression?"], rows)


def _regression_cell(reason: str) -> str:
    """``**VALID_REGRESSION** (credible loss)`` or ``no credible loss (underpowered)``: the rule's own words."""
    rule = objective_rule(reason if isinstance(reason, str) else "")
    return f"**{rule.state}** ({rule.label})" if rule.state else f"{rule.label} ({rule.reason})"


def _violations_table(d: ScorecardData) -> str:
    v = d.objective["tool_violations"]
    rows = [[md_text(r.prompt), md_text(r.model), md_text(r.condition), int(r.rep), md_text(r.check_id),
             md_text(r.detail, DETAIL_CHARS)]
            for r in v.itertuples(index=False)]
    return md_table(["prompt", "model", "condition", "rep", "check", "what was used"], rows)


def _errors_table(d: ScorecardData) -> str:
    e = d.objective["check_errors"]
    rows = [[md_text(r.run_id), md_text(r.check_id), md_text(r.check_type), r.reason, md_text(r.detail, DETAIL_CHARS)]
            for r in e.itertuples(index=False)]
    return md_table(["run_id", "check", "type", "coverage", "why"], rows)


def objective_context(d: ScorecardData) -> dict[str, Any]:
    """The template's ``objective`` block: every table of the section ({} when the week has no checks)."""
    if not d.has_checks:
        return {}
    return {
        "rates": _rates_table(d), "lift": _lift_table(d) if not d.objective["task_lift"].empty else "",
        "pass_k": _pass_k_table(d), "transitions": _transitions_table(d) if len(d.objective["transitions"]) else "",
        "records": _record_table(d) if len(d.objective["transitions"]) else "",
        "violations": _violations_table(d) if len(d.objective["tool_violations"]) else "",
        "errors": _errors_table(d) if len(d.objective["check_errors"]) else "",
        "n_errors": len(d.objective["check_errors"]),
    }
