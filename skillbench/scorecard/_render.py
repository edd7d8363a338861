"""``scorecard.md``: qdrant's sections, in their order and table layout, from a computed :class:`ScorecardData`.

The page is ``scorecard/templates/scorecard.md.j2``; this module builds each table and line it shows. Headings and
labels name the week's pair (:func:`skillbench.scorecard._labels.arm_names`): a weekly week's text is unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import jinja2
import pandas as pd

from skillbench.arms import arm_kind
from skillbench.ledgers import SCORECARD_FILE
from skillbench.markdown import CutTable, capped_page, fmt, is_missing, md_code, md_table, md_text, money, signed
from skillbench.scorecard._compute import ScorecardData
from skillbench.scorecard._controls import accumulated_controls, accumulated_text
from skillbench.scorecard._decision import LEVEL_ICONS, decision_markdown, trust_flags, week_decision
from skillbench.scorecard._fabrication import fabrication_markdown
from skillbench.scorecard._generalization import with_generalization
from skillbench.scorecard._inference import exact_f1_interval, rate_interval
from skillbench.scorecard._labels import arm_names, arm_order
from skillbench.scorecard._render_objective import objective_context
from skillbench.scorecard._render_stimuli import (
    dormancy_markdown,
    dormancy_rows,
    error_control_line,
    gate_rows,
    invalid_lines,
    label_counts,
    record_label,
    stimulus_markdown,
    stimulus_rows,
    stimulus_tables,
)
from skillbench.scorecard._simulation import FLOOR_ALPHA, JUDGE_ACCURACY_FLOOR
from skillbench.scorecard._stats import DEFAULT_POWER, ci_flag_text
from skillbench.scorecard._verdicts import rule_words
from skillbench.signals import NO_RUBRIC, never_triggered
from skillbench.vocab import EVIDENCE_NO_CLAIM, NO_SKILL, PLUGIN, REAL

TEMPLATE = "scorecard.md.j2"
EPS = 1e-9
EVIDENCE_CHARS = 120
ITEM_CHARS = 80
# A snapshot pinned to a build ends in its date (claude-haiku-4-5-20251001); anything else is an alias.
DATED = re.compile(r"-\d{8}$")
T = TypeVar("T")


def _lift_section(d: ScorecardData) -> dict[str, Any]:
    lift = d.lift.set_index("model")
    show_bonus = bool((lift["bonus_delta"].abs() > EPS).any())
    show_avoid = bool((lift["avoid_delta"].abs() > EPS).any())
    # qdrant's lift (the cells' means) beside the paired one only when a prompt graded in one arm makes them differ
    one_arm = lift["one_arm_prompts"].fillna(0).astype(int) if "one_arm_prompts" in lift else pd.Series(0, lift.index)
    show_cells = bool(((lift["must_lift"] - lift["paired_lift"]).abs() > EPS).any() and one_arm.gt(0).any())
    headers = ["model", f"must_coverage {arm_names(d.pair).arrow}", "must lift ± SE", "95% CI != 0?"]
    headers += ["cell lift (qdrant)"] * show_cells
    headers += ["Δbonus"] * show_bonus + ["Δavoid"] * show_avoid + ["Δcost ($)", "Δturns"]
    rows, differs = [], []
    for m in d.models:
        r = lift.loc[m]
        row = [md_text(m), f"{fmt(r['must_no'])} → {fmt(r['must_with'])}",
               f"{signed(r['paired_lift'])} ± {fmt(r['must_lift_se'])}", ci_flag_text(r["excludes_zero"])]
        if show_cells:
            row.append(signed(r["must_lift"]))
            if one_arm.get(m, 0) and abs(r["must_lift"] - r["paired_lift"]) > EPS:
                differs.append(f"{m}: {int(one_arm[m])} prompt(s) graded in one arm only")
        row += [signed(r["bonus_delta"])] * show_bonus + [signed(r["avoid_delta"], 2)] * show_avoid
        row += [signed(r["cost_delta"], 4), signed(r["turns_delta"], 1)]
        rows.append(row)
    return {"table": md_table(headers, rows), "differs": differs}


def _uncertainty_table(d: ScorecardData) -> str:
    u = d.uncertainty.set_index("model")
    rows = []
    for m in d.models:
        if m not in u.index:
            rows.append([md_text(m), 0, "n/a", "n/a", "n/a", "n/a", "n/a"])
            continue
        r = u.loc[m]
        ci = "n/a" if is_missing(r["boot_low"]) else f"[{signed(r['boot_low'])}, {signed(r['boot_high'])}]"
        reach = "n/a" if r["detectable"] is pd.NA else "yes" if bool(r["detectable"]) else "no"
        rows.append([md_text(m), int(r["n_pairs"]), signed(r["paired_lift"]), ci, fmt(r["sd_d"]), fmt(r["mde"]), reach])
    pct = f"{d.uncertainty['power'].iloc[0] * 100:.0f}" if len(d.uncertainty) else f"{DEFAULT_POWER * 100:.0f}"
    return md_table(["model", "n prompts", "paired lift", "95% bootstrap CI", "SD(dᵢ)", f"MDE ({pct}% power)",
                     "lift ≥ MDE?"], rows)


def _wow_table(d: ScorecardData) -> str:
    rows = [[md_text(r.model), f"{fmt(r.prev_lift)} → {fmt(r.now_lift)}", signed(r.delta), fmt(r.se),
             f"{r.rule}, n = {r.n}", fmt(r.within), fmt(r.between), fmt(r.threshold), r.actionable]
            for r in d.wow.table.itertuples(index=False)]
    return md_table(["model", "must lift (prev → now)", "Δ", "SE_Δ", "rule", "t·SE_Δ (within)",
                     "t·σ·√2 (between)", "threshold", "actionable?"], rows)


def _wow_rules(d: ScorecardData) -> list[str]:
    """The week-over-week rules the table used, in the order the table shows them."""
    return list(dict.fromkeys(d.wow.table["rule"])) if d.wow.ready and "rule" in d.wow.table else []


def _each(values: Iterable[Any], fn: Callable[[Any], T]) -> list[T]:
    """``fn`` of every value, computed once per distinct value: a 100k-run week's tables repeat their prompts,
    models and scores thousands of times (the type is part of the key: ``True`` and ``1`` print differently)."""
    known: dict[tuple[type, Any], T] = {}
    out = []
    for value in values.tolist() if hasattr(values, "tolist") else values:  # a column's Python values, not cells
        key = (value.__class__, value)
        text = known.get(key)
        if text is None:
            text = known[key] = fn(value)
        out.append(text)
    return out


def _cells_table(d: ScorecardData) -> str:
    c = d.cells.set_index(["model", "condition"])
    rows = []
    for m in d.models:
        for cond in arm_order(d.cells["condition"], d.pair):
            if (m, cond) not in c.index or c.loc[(m, cond), "n_prompts"] == 0:
                continue
            r = c.loc[(m, cond)]
            rows.append([md_text(m), md_text(cond), fmt(r["must_coverage"]), fmt(r["bonus_rate"]),
                         fmt(r["avoid_violations"], 2), fmt(r["composite"]), fmt(r.get("mean_cost"), 4),
                         fmt(r.get("mean_turns"), 1), int(r["n_prompts"])])
    if not rows:
        return ""
    return md_table(["model", "condition", "must_cov", "bonus_rate", "avoid_viol", "composite", "mean cost",
                     "mean turns", "n"], rows)


def _prompts_table(d: ScorecardData) -> str:
    arms = list(d.pair.lift_arms)
    no, wi = arms
    p = d.prompts[d.prompts["condition"].isin(arms)]
    wide = p.pivot(index=["prompt", "model"], columns="condition", values=["must_coverage", "composite"])
    wide = wide.reindex(columns=pd.MultiIndex.from_product([["must_coverage", "composite"], arms]))
    rank = {m: i for i, m in enumerate(d.models)}
    # by prompt, then the models' order: positions sorted once (a lookup of 25k index tuples is the slow way)
    pairs = wide.index.tolist()
    wide = wide.iloc[sorted(range(len(pairs)),
                            key=lambda i: (pairs[i][0], rank.get(pairs[i][1], len(rank)), pairs[i][1]))]
    must, comp = wide["must_coverage"], wide["composite"]
    lift = must[wi] - must[no]
    keys = wide.index
    rows = [[prompt, model, f"{a} → {b}", delta, f"{c} → {e}"]
            for prompt, model, a, b, delta, c, e in zip(
                _each(keys.get_level_values(0), md_text), _each(keys.get_level_values(1), md_text),
                _each(must[no], fmt), _each(must[wi], fmt), _each(lift, signed), _each(comp[no], fmt),
                _each(comp[wi], fmt), strict=True)]
    if not rows:
        return ""
    arrow = arm_names(d.pair).arrow
    return md_table(["prompt", "model", f"must {arrow}", "must lift", f"comp {arrow}"], rows)


def _activation_table(d: ScorecardData) -> str:
    a = d.activation
    kinds = sorted(c for c in a.columns if c.startswith("act_"))  # by kind: the names differ past the prefix
    counts = list(zip(*(a[c].tolist() for c in kinds), strict=True)) if kinds else [()] * len(a)
    rows = []
    for prompt, n, never, leaf, runs in zip(_each(a["prompt"], md_text), counts, a["never_triggered"].tolist(),
                                            a["reached_leaf"].tolist(), a["runs"].tolist(), strict=True):
        acts = ", ".join(f"{k[4:]}×{int(v)}" for k, v in zip(kinds, n, strict=True) if v)
        flag = "  ⚠ never triggered" if never else ""
        rows.append([prompt, f"{acts}{flag}", f"{int(leaf)}/{int(runs)}"])
    return md_table(["prompt", f"activations ({arm_names(d.pair).treatment})", "reached leaf"], rows)


def _trigger_health_table(d: ScorecardData) -> str:
    def rate(k: int, n: int, value: float) -> str:  # every rate shown with its Wilson/exact interval
        return "n/a" if is_missing(value) else rate_interval(k, n).text()

    rows = [[md_text(r.skill_family), r.scored_runs, r.activations, rate(r.activations, r.scored_runs, r.recall),
             r.dormancy_runs, r.false_triggers, rate(r.false_triggers, r.dormancy_runs, r.false_trigger_rate),
             rate(r.activations, r.activations + r.false_triggers, r.precision),
             exact_f1_interval(int(r.activations), int(r.scored_runs), int(r.false_triggers),
                               int(r.dormancy_runs)).text()]
            for r in d.trigger_health.itertuples(index=False)]
    return md_table(["skill family", f"{arm_names(d.pair).treatment} runs", "activated", "recall", "dormancy runs",
                     "false triggers",
                     "false-trigger rate", "precision", "F1"], rows)


def _avoid_table(d: ScorecardData) -> str:
    v = d.avoid_violations
    rows = [list(cells) for cells in zip(
        _each(v["prompt"], md_text), _each(v["model"], md_text), _each(v["condition"], md_text),
        _each(v["item_text"], lambda x: md_text(x, ITEM_CHARS)),
        _each(v["evidence_quote"], lambda x: md_text(x, EVIDENCE_CHARS)),
        _each(zip(v["evidence_quote"].tolist(), v["claim_gap"].tolist(), strict=True), lambda qg: _shows_harm(*qg)),
        strict=True)]
    return md_table(["prompt", "model", "condition", "violated item", "evidence", "evidence check"], rows)


def _shows_harm(quote: Any, gap: str) -> str:
    """The avoid table's evidence check: ``ok`` (the quote can carry the claim — not that it does), no quote at all,
    or the no-claim state with its reason."""
    if is_missing(quote) or not str(quote).strip():
        return "no quote"
    return f"**{EVIDENCE_NO_CLAIM}**: {md_text(gap)}" if gap else "ok"


def _ordered_gate(d: ScorecardData) -> pd.DataFrame:
    g = d.gate.assign(_rank=d.gate["model"].map({m: i for i, m in enumerate(d.models)}).fillna(len(d.models)))
    return g.sort_values(["skill_family", "_rank", "model"], kind="stable")


def _gate_table(d: ScorecardData) -> str:
    headers, rows = gate_rows(_ordered_gate(d))
    return md_table(headers, rows)


def _scope(d: ScorecardData) -> str:
    """How the page names the report whose records Holm corrects together."""
    if not d.pair.is_default:
        return "this comparison"
    subset = d.reconciliation is not None and d.reconciliation.is_subset
    return "this subset week (corrected among its own records)" if subset else "this week"


def _decision(d: ScorecardData) -> dict[str, Any] | None:
    """The page's first lines: how many records read each plain verdict, and every invalid record (no cap)."""
    if d.gate is None or d.gate.empty:
        return None
    gate = _ordered_gate(d)
    labels = [record_label(r) for r in gate.itertuples(index=False)]
    return {"counts": label_counts(labels), "n": len(labels), "invalid": invalid_lines(gate),
            "control": error_control_line(gate, _scope(d))}


def _interval(low: Any, high: Any) -> str:
    return "n/a" if is_missing(low) or is_missing(high) else f"[{signed(low)}, {signed(high)}]"


def _yes_no(value: Any) -> str:
    return "n/a" if is_missing(value) else "yes" if bool(value) else "**no**"


def _model_rank(d: ScorecardData) -> dict[str, int]:
    return {m: i for i, m in enumerate(d.models)}


def _simulation_context(d: ScorecardData) -> dict[str, Any] | None:
    """The simulation check's tables (:mod:`skillbench.scorecard._simulation`); None for a week without one."""
    sim = d.simulation
    if sim is None:
        return None
    rank = _model_rank(d)
    lift = sim.lift.assign(_r=sim.lift["model"].map(rank)).sort_values("_r", kind="stable")
    lift_rows = [[md_text(r.model), int(r.n_pairs), signed(r.true_lift), signed(r.measured_lift),
                  _interval(r.ci_low, r.ci_high), _yes_no(r.t_covers), _interval(r.boot_low, r.boot_high),
                  _yes_no(r.boot_covers)]
                 for r in lift.itertuples(index=False)]
    judge_rows = [[r.item_type, r.n, r.agree, fmt(r.accuracy), r.truth_omitted, r.false_met, fmt(r.false_met_rate),
                   "**yes**" if r.below_floor else "no"] for r in sim.judge.itertuples(index=False)]
    act = sim.activation.set_index("condition")
    act_rows = [[md_text(c), int(act.at[c, "runs"]), int(act.at[c, "agree"]), fmt(act.at[c, "agreement"])]
                for c in arm_order(act.index, d.pair)]
    gate = sim.gate.assign(_r=sim.gate["model"].map(rank)).sort_values(["skill_family", "_r"], kind="stable")
    gate_rows = [[md_text(r.skill_family), md_text(r.model),
                  md_text(r.measured if isinstance(r.measured, str) else "n/a"),
                  md_text(r.truth if isinstance(r.truth, str) else "n/a"),
                  md_text(r.truth_evidence if isinstance(r.truth_evidence, str) else ""),
                  "yes" if r.agrees else "one vote off" if r.one_vote else "**no**"]
                 for r in gate.itertuples(index=False)]
    return {
        "reasons": sim.reasons, "unmatched": sim.unmatched, "floor": f"{JUDGE_ACCURACY_FLOOR:.0%}",
        "alpha": f"{FLOOR_ALPHA:g}",
        "lift": md_table(["model", "n prompts", "true lift", "measured lift", "95% t CI", "covers truth?",
                          "95% bootstrap CI", "covers truth?"], lift_rows),
        "judge": md_table(["item type", "graded", "= truth", "accuracy", "truth omitted", "false met",
                           "false-met rate", f"below {JUDGE_ACCURACY_FLOOR:.0%}?"], judge_rows),
        "activation": md_table(["arm", "runs", "activation = truth", "agreement"], act_rows) if act_rows else "",
        "gate": md_table(["skill family", "model", "gate verdict (measured)", "verdict the truth implies",
                          "truth's record", "agree?"], gate_rows) if gate_rows else "",
    }


def _controls_context(d: ScorecardData) -> dict[str, Any] | None:
    """The placebo and A/A tables (:mod:`skillbench.scorecard._controls`); None for a week without those arms."""
    ctl = d.controls
    if ctl is None:
        return None
    rank = _model_rank(d)
    order = {c: i for i, c in enumerate(dict.fromkeys(ctl.lift["comparison"]))}
    lift = ctl.lift.assign(_c=ctl.lift["comparison"].map(order), _r=ctl.lift["model"].map(rank))
    lift_rows = []
    for r in lift.sort_values(["_c", "_r"], kind="stable").itertuples(index=False):
        flag = ci_flag_text(r.excludes_zero)
        lift_rows.append([md_text(r.comparison), md_text(r.model), int(r.n_pairs),
                          f"{fmt(r.must_no)} → {fmt(r.must_with)}",
                          f"{signed(r.must_lift)} ± {fmt(r.must_lift_se)}", _interval(r.ci_low, r.ci_high),
                          _interval(r.boot_low, r.boot_high), flag])
    gate = ctl.gate.assign(_c=ctl.gate["comparison"].map(order), _r=ctl.gate["model"].map(rank))
    gate_rows = [[md_text(r.comparison), md_text(r.skill_family), md_text(r.model), r.verdict, md_text(r.evidence)]
                 for r in gate.sort_values(["_c", "skill_family", "_r"], kind="stable").itertuples(index=False)]
    return {
        "arms": ctl.arms, "ungraded": ctl.ungraded, "accumulated": _accumulated_lines(d),
        "lift": md_table(["comparison", "model", "n prompts", "must_coverage control→treatment", "must lift ± SE",
                          "95% t CI", "95% bootstrap CI", "95% CI != 0?"], lift_rows),
        "gate": md_table(["comparison", "skill family", "model", "verdict (rubric votes)", "evidence"], gate_rows)
        if gate_rows else "",
    }


def _accumulated_lines(d: ScorecardData) -> list[str]:
    """One line per control: its pass rate over the recorded weeks of this endpoint kind, with the exact interval."""
    if d.recorded is None:
        return []
    window = (d.provenance.get("window") or ("", ""))[1]
    return [accumulated_text(r, d.endpoint)
            for r in accumulated_controls(d.recorded.controls, d.endpoint, window).itertuples(index=False)]


def _dropped_table(d: ScorecardData) -> str:
    rows = [[md_text(r.run_id), md_text(r.prompt), md_text(r.model), md_text(r.condition), md_text(r.reason)]
            for r in d.dropped.itertuples(index=False)]
    return md_table(["run_id", "prompt", "model", "condition", "reason"], rows)


def _spec_dropped_table(d: ScorecardData) -> str:
    pieces = d.extras.get("dropped_pieces")
    if pieces is None or pieces.empty:
        return ""
    return md_table(["prompt", "not run"],
                    [[md_text(r.prompt), md_text(r.piece)] for r in pieces.itertuples(index=False)])


def _snapshot_table(d: ScorecardData) -> str:
    rows = []
    for m, strings in d.provenance["snapshots"].items():
        if not strings:
            rows.append([md_text(m), "(unknown)"])
        elif len(strings) == 1:
            rows.append([md_text(m), md_code(strings[0])])
        else:
            rows.append([md_text(m), f"⚠ multiple ({', '.join(map(md_code, strings))}) — model changed mid-week"])
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
    flags = d.manifest.get("rate_limited", pd.Series(dtype=str))
    limited = _each(flags, lambda v: str(v).strip() in {"1", "True", "true"})
    if any(limited):  # a week without rate limits renders as before
        lines.append(f"- rate-limited runs (the CLI retried a 429 or 529; see retries.json): {sum(limited)} "
                     f"of {len(d.manifest)}")
    return lines


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("skillbench.scorecard", "templates"), trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                             autoescape=False)
    env.filters.update(fmt=fmt, signed=signed, money=money, code=md_code,
                       codes=lambda xs: ", ".join(map(md_code, xs)), text=md_text)
    return env


# The judge drift sentinel's banner (skillbench.calibration._sentinel.DRIFT_BANNER; the scorecard does not import it).
DRIFT_BANNER = "judge drift — re-certify before reading this week's lift"
SENTINEL_TITLE = "Judge drift sentinel"
MEASURE_NAMES = {"must_credit": "mean must credit", "agreement": "agreement with the gold labels"}


def sentinel_markdown(s: dict[str, Any] | None) -> str:
    """The "Judge drift sentinel" section of a week's ``sentinel.json`` ("" when the week ran no sentinel).

    The scorecard shows it before Coverage; ``04_calibration`` shows it too.
    """
    if s is None:
        return ""
    kappa = fmt(s.get("kappa"))
    lines = [f"## {SENTINEL_TITLE}", "",
             f"The week's judge re-graded the frozen gold set ({md_code(Path(str(s.get('gold', ''))).name)}, "
             f"{s.get('n_items', 0)} items of {s.get('n_answers', 0)} answers, sha {md_code(s.get('gold_sha', ''))}): "
             f"judge {md_code(s.get('judge_model', ''))}, resolved snapshot "
             f"{md_code(s.get('judge_snapshot') or 'unknown')}. Agreement with the gold labels "
             f"{fmt(s.get('agreement'))} (Cohen's κ {kappa}), mean must credit {fmt(s.get('must_credit'))}.", ""]
    rows = [[MEASURE_NAMES.get(r["measure"], r["measure"]), r["n_paired"], r.get("n_answers", "—"), fmt(r["now"]),
             fmt(r["previous"]), signed(r["move"]), fmt(r["within"]), fmt(r["between"]), fmt(r["threshold"]),
             r["moved"]]
            for r in s.get("comparison") or []]
    if rows:
        prev = s.get("previous") or {}
        lines += [f"Against {prev.get('run_key', 'the previous week')} (the most recent earlier week with this gold "
                  "set and endpoint kind): the move is the mean of the paired per-item differences, within = "
                  "t(a−1)·SE of that mean with the items clustered by gold answer (a answers), between = "
                  "t(a−1)·σ·√2 with σ the spread (ddof 1) of the earlier weeks' values, threshold = the larger.",
                  "", md_table(["measure", "paired items", "answers", "this week", "previous", "move", "within",
                                "between", "threshold", "moved?"], rows), ""]
    flag = str(s.get("flag", ""))
    verdict = f"**{DRIFT_BANNER}**" if s.get("flagged") else f"**{flag}**"
    lines += [f"Flag: {verdict} — {'; '.join(s.get('reasons') or []) or flag}.", ""]
    return "\n".join(lines) + "\n"


def _with_sentinel(d: ScorecardData, markdown: str) -> str:
    """The banner at the top (after the title's other banners) when flagged, and the section before Coverage."""
    section = sentinel_markdown(d.sentinel)
    if not section:
        return markdown
    if d.judge_drift:
        reasons = "; ".join((d.sentinel or {}).get("reasons") or [])
        banner = f"> **{DRIFT_BANNER}** — {reasons}; see {SENTINEL_TITLE}. Read no lift below as a clean week.\n\n"
        head = markdown.find("\n## ")
        markdown = markdown[: head + 1] + banner + markdown[head + 1:] if head >= 0 else banner + markdown
    at = markdown.find("\n## Coverage\n")
    return markdown[: at + 1] + section + markdown[at + 1:] if at >= 0 else markdown + "\n" + section


def render_markdown(d: ScorecardData) -> str:
    """Render ``scorecard.md`` from computed data through ``templates/scorecard.md.j2``; a week with a drift
    sentinel gets its section before Coverage, and a flagged one the drift banner at the top."""
    counts = d.activation_counts
    kinds = _each(d.manifest["condition"].astype(str), arm_kind)
    ns_runs = int((pd.Series(kinds, index=d.manifest.index).eq(NO_SKILL) & ~d.manifest["dormancy"]).sum())
    cov = d.coverage
    tables = stimulus_tables(d)
    context = {
        "d": d, "title": d.title, "names": arm_names(d.pair), "lift": _lift_section(d), "rule": rule_words(),
        "objective": objective_context(d),
        "uncertainty_table": _uncertainty_table(d) if d.models else "",
        "wow_table": _wow_table(d) if d.wow.ready else "", "wow_rules": _wow_rules(d),
        "cells_table": _cells_table(d),
        "has_plugin_cells": bool(d.cells["condition"].astype(str).map(arm_kind).eq(PLUGIN).any()),
        "prompts_table": _prompts_table(d), "activation_counts": counts,
        "activation_table": _activation_table(d) if not d.activation.empty else "",
        "never_triggered": never_triggered(d.activation),
        "trigger_health_table": _trigger_health_table(d) if not d.trigger_health.empty else "",
        "site": d.site_host, "ns_runs": ns_runs,
        "served_prompts": sorted(set(d.self_served["prompt"])),
        "avoid_table": _avoid_table(d) if not d.avoid_violations.empty else "",
        "fabrication": fabrication_markdown(d.fabrication, d.pair),
        "gate_table": _gate_table(d) if d.gate is not None and not d.gate.empty else "",
        "gate_control": (error_control_line(d.gate, _scope(d)) if d.gate is not None and not d.gate.empty
                         else ""),
        "decision_block": decision_markdown(week_decision(d), (_decision(d) or {}).get("counts", "")),
        "stimuli": stimulus_markdown(tables), "dormancy": dormancy_markdown(tables),
        "simulation": _simulation_context(d), "controls": _controls_context(d),
        "graded": int(cov["graded"].sum()), "gradeable": int(cov["gradeable"].sum()),
        "dropped_table": _dropped_table(d) if not d.dropped.empty else "",
        "spec_dropped": _spec_dropped_table(d), "n_spec_dropped": len(d.extras.get("dropped_pieces", ())),
        "n_dormancy_runs": int(cov["dormancy"].sum()),
        "n_no_rubric_runs": int(cov["reason"].eq(NO_RUBRIC).sum()),
        "n_telemetry_runs": int((~cov["dormancy"] & ~cov["gradeable"]).sum()),
        "recon": d.reconciliation, "spend": _spend_lines(d), "timing_lines": _timing_lines(d), "h": d.health,
        "snapshot_table": _snapshot_table(d), "prov": d.provenance,
        "floating": sorted({v for s in d.provenance["snapshots"].values() for v in s if not DATED.search(v)}),
    }
    markdown = _with_sentinel(d, _environment().get_template(TEMPLATE).render(**context))
    return with_generalization(markdown, d.extras.get("generalization"))  # weekly/compare --generalization


BANNERED_FLAGS = frozenset({"incomplete", "disagrees_with_truth", "sentinel_drift", "simulated"})


def render_comment(d: ScorecardData, *, full_report: str = SCORECARD_FILE) -> str:
    """``scorecard-comment.md``: the week's decision fit for a pull-request comment — the title and banners, the
    plain verdicts' counts, every invalid record, then only what does not pass (verdicts, stimuli, dormancy
    contracts), cut to GitHub's comment limit with the cut said (:func:`skillbench.markdown.capped_page`)."""
    parts: list[str | CutTable] = [f"# {d.title}", ""]
    if d.incomplete:
        parts += [f"> **INCOMPLETE** — {md_text('; '.join(d.incomplete_reasons))}. Read no verdict below as a clean "
                  "week.", ""]
    if d.disagrees_with_truth and d.simulation is not None:
        parts += [f"> **MEASUREMENT DISAGREES WITH TRUTH** — {md_text('; '.join(d.simulation.reasons))}.", ""]
    if d.judge_drift:
        parts += [f"> **{DRIFT_BANNER}**.", ""]
    if d.endpoint != REAL:
        parts += [f"> Endpoint: **{md_text(d.endpoint)}**. These numbers test the harness, not a model.", ""]
    # the decision block's other trust flags (the banners above already say incomplete, truth, drift, endpoint);
    # no link: a comment is read away from the report
    flags = [f for f in trust_flags(d, d.calibration) if f.key not in BANNERED_FLAGS]
    parts += [f"- {LEVEL_ICONS[f.level]} {md_text(f.text)}" for f in flags] + [""] * bool(flags)
    decision = _decision(d)
    if decision is None:
        parts += ["_No pairwise judgments (`pairs.csv`): no gate verdict yet._", ""]
    else:
        parts += [f"**Verdicts** ({decision['n']} skill family × model record{'' if decision['n'] == 1 else 's'}): "
                  f"{decision['counts']}", "", decision["control"], ""]
        if decision["invalid"]:
            parts += ["No verdict on the skill for these — fix the measurement first:", *decision["invalid"], ""]
    tables = stimulus_tables(d)
    failing = [CutTable(title, *table) for title, table in (
        ("### Verdicts that are not Improved",
         gate_rows(_ordered_gate(d), failing_only=True) if decision else ([], [])),
        ("### Stimuli that do not pass", stimulus_rows(tables, failing_only=True)),
        ("### Dormancy contracts broken", dormancy_rows(tables, failing_only=True))) if table[1]]
    parts += failing
    if not failing and decision is not None:
        parts += ["Every record Improved, every stimulus won its vote and every dormancy contract held.", ""]
    parts += [f"Full report: {md_code(full_report)} (every stimulus and contract, lift, coverage, cost)."]
    return capped_page(parts, full_report=full_report)
