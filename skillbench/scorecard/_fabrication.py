"""The scorecard's "Fabricated identifiers" section and the opt-in fabrication rule's records.

The identifiers pass (:mod:`skillbench.identifiers`) checked every graded answer against the API surfaces the suite
declares and wrote ``identifiers.csv`` and ``identifiers.json``. This module reads them as ledgers and computes,
per model × arm, the identifiers checked, resolved, unresolved and unchecked, and the rate of answers that use at
least one unresolved identifier (with its Wilson/exact interval, :mod:`skillbench.scorecard._inference`); per model
the paired Δ treatment − control over the prompts both arms answered (t at n − 1, as the lift); the most frequent
unresolved names with a quote each; and, when ``[gate] fabrication`` is asked and every declared surface's
measured precision has a 95 % lower bound ≥ :data:`PRECISION_FLOOR`, a :class:`FabricationRecord` per family × model
for the verdict specification's fabrication rule.

Everything an answer wrote (a name, a quote) is content under evaluation: it is escaped on the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from skillbench.arms import ArmPair
from skillbench.identifiers import IDENTIFIER_STATUSES, PRECISION_FLOOR, UNRESOLVED, measured_kinds
from skillbench.ledgers import IDENTIFIERS_FILE, LedgerError, WeekIdentifiers
from skillbench.markdown import fmt, md_code, md_table, md_text, signed
from skillbench.scorecard._inference import rate_intervals
from skillbench.scorecard._labels import arm_names, arm_order
from skillbench.scorecard._objective import objective_loss_test
from skillbench.scorecard._stats import t_critical
from skillbench.scorecard._verdicts import FabricationRecord

TITLE = "Fabricated identifiers"
TOP_NAMES = 10
QUOTE_CHARS = 120
NAME_CHARS = 60
STATUSES = IDENTIFIER_STATUSES  # resolved, unresolved, unchecked: the tables' column order

ANSWER_COLUMNS = ["run_id", "prompt", "skill_family", "model", "condition", "rep", "identifiers", *STATUSES,
                  "fabricated"]
ARM_COLUMNS = ["model", "condition", "answers", "identifiers", *STATUSES, "fabricated", "rate", "low", "high",
               "method"]
DELTA_COLUMNS = ["model", "n_prompts", "control_rate", "treatment_rate", "delta", "se", "ci_low", "ci_high",
                 "excludes_zero"]
TOP_COLUMNS = ["text", "surface", "counted", "answers", "uses", "conditions", "quote"]


@dataclass
class Fabrication:
    """What the section shows, and the gate's records (empty while the rule is off)."""

    record: dict[str, Any]
    answers: pd.DataFrame
    arms: pd.DataFrame
    delta: pd.DataFrame
    top: pd.DataFrame
    gate_on: bool
    gate_line: str
    records: dict[tuple[str, str], FabricationRecord] = field(default_factory=dict)
    uncounted: int = 0  # unresolved identifiers of a kind whose precision is not measured (shown, never counted)

    @property
    def declared(self) -> bool:
        return bool(self.record.get("surfaces"))

    def frames(self) -> dict[str, pd.DataFrame]:
        return {"fabrication_answers": self.answers, "fabrication_arms": self.arms,
                "fabrication_delta": self.delta, "fabrication_top": self.top}


def _answers(week: WeekIdentifiers, manifest: pd.DataFrame) -> pd.DataFrame:
    """One row per checked answer still in the week (a run moved aside since is not counted), with its counts."""
    ids = week.identifiers
    bad = ~ids["status"].isin(STATUSES)
    if bad.any():
        raise LedgerError(f"{IDENTIFIERS_FILE}: column 'status': {ids['status'][bad].iloc[0]!r} is not one of "
                          f"{'/'.join(STATUSES)} — rerun `skillbench identifiers RUN_DIR --fresh`")
    counts = pd.crosstab(ids["run_id"], ids["status"]).reindex(columns=list(STATUSES), fill_value=0)
    runs = week.runs[week.runs["run_id"].isin(set(manifest["run_id"].astype(str)))]
    out = runs.join(counts, on="run_id").fillna({s: 0 for s in STATUSES})
    out[list(STATUSES)] = out[list(STATUSES)].astype(int)
    out["identifiers"] = out[list(STATUSES)].sum(axis=1)
    # only a kind whose precision was measured makes an answer fabricated; the others are shown, never counted
    counted = ids[ids["status"].eq(UNRESOLVED) & ids["kind"].isin(measured_kinds())]
    out["fabricated"] = out["run_id"].isin(set(counted["run_id"]))
    return out[ANSWER_COLUMNS].reset_index(drop=True)


def _arms(answers: pd.DataFrame, pair: ArmPair, models: list[str]) -> pd.DataFrame:
    if answers.empty:
        return pd.DataFrame(columns=ARM_COLUMNS)
    g = answers.groupby(["model", "condition"], sort=False)
    table = g[["identifiers", *STATUSES, "fabricated"]].sum().assign(answers=g.size()).reset_index()
    table = pd.concat([table, rate_intervals(table["fabricated"], table["answers"])], axis=1)
    rank = {m: i for i, m in enumerate(models)}
    order = {c: i for i, c in enumerate(arm_order(table["condition"], pair))}
    table = table.assign(_m=table["model"].map(rank).fillna(len(rank)), _c=table["condition"].map(order))
    return table.sort_values(["_m", "model", "_c"], kind="stable")[ARM_COLUMNS].reset_index(drop=True)


def _prompt_rates(answers: pd.DataFrame, pair: ArmPair) -> pd.DataFrame:
    """Per skill family × model × prompt, each arm's checked answers and fabricated answers (the pair's arms)."""
    arms = answers[answers["condition"].isin(pair.lift_arms)]
    g = arms.groupby(["skill_family", "model", "prompt", "condition"])["fabricated"]
    long = pd.DataFrame({"n": g.size(), "k": g.sum()}).reset_index()
    wide = long.pivot_table(index=["skill_family", "model", "prompt"], columns="condition", values=["n", "k"],
                            fill_value=0)
    out = pd.DataFrame(index=wide.index)
    for arm, name in ((pair.control, "control"), (pair.treatment, "treatment")):
        out[f"{name}_n"] = wide["n"][arm].astype(int) if arm in wide["n"] else 0
        out[f"{name}_k"] = wide["k"][arm].astype(int) if arm in wide["k"] else 0
    both = out[(out["control_n"] > 0) & (out["treatment_n"] > 0)]  # prompts both arms answered
    return both.reset_index()


def _delta(rates: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    """Per model, the paired Δ of the fabricated-answer rate, treatment − control, over the prompts both arms
    answered: mean of the per-prompt differences, SE = sd/√n, the t interval at n − 1 (the lift's rule)."""
    rows = []
    for model in models:
        block = rates[rates["model"].eq(model)]
        if block.empty:
            continue
        ctl = block["control_k"] / block["control_n"]
        trt = block["treatment_k"] / block["treatment_n"]
        d = (trt - ctl).to_numpy(dtype=float)
        n = len(d)
        mean = float(d.mean())
        se = float(d.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
        half = float(t_critical(n - 1)) * se if n > 1 else float("nan")
        low, high = mean - half, mean + half
        excludes = bool(np.isfinite(low) and (low > 0 or high < 0)) if n > 1 else None
        rows.append([model, n, float(ctl.mean()), float(trt.mean()), mean, se, low, high, excludes])
    return pd.DataFrame(rows, columns=DELTA_COLUMNS)


def _top(week: WeekIdentifiers, answers: pd.DataFrame) -> pd.DataFrame:
    ids = week.identifiers[week.identifiers["status"].eq(UNRESOLVED)
                           & week.identifiers["run_id"].isin(set(answers["run_id"]))]
    if ids.empty:
        return pd.DataFrame(columns=TOP_COLUMNS)
    ids = ids.assign(counted=ids["kind"].isin(measured_kinds()))
    g = ids.groupby(["text", "surface", "counted"], sort=False)
    top = pd.DataFrame({"answers": g["run_id"].nunique(), "uses": g.size(),
                        "conditions": g["condition"].agg(lambda s: ", ".join(sorted(set(s)))),
                        "quote": g["quote"].first()}).reset_index()
    top = top.sort_values(["answers", "uses", "text"], ascending=[False, False, True], kind="stable")
    return top.head(TOP_NAMES)[TOP_COLUMNS].reset_index(drop=True)


def gate_state(record: dict[str, Any]) -> tuple[bool, str]:
    """Whether the fabrication rule is on for the week, and the page's one line on it.

    On only when the suite asks for it (``[gate] fabrication = true``, recorded by the pass) and every declared
    surface has a measured precision whose 95 % lower bound is ≥ :data:`PRECISION_FLOOR`: a real identifier flagged
    as fabricated would fail a good run.
    """
    if not record.get("gate_fabrication"):
        return False, ("Fabrication gate: **off** (not asked; `[gate] fabrication = true` in skillbench.toml asks "
                       "for it) — the section is reported, no verdict reads it.")
    surfaces = record.get("surfaces") or []
    if not surfaces:
        return False, "Fabrication gate: **off** — asked, but the suite declares no API surface to check against."
    short = []
    for s in surfaces:
        low = s.get("precision_low")
        if not isinstance(low, int | float) or not np.isfinite(low):
            short.append(f"{md_code(s.get('surface', ''))} has no measured precision")
        elif low < PRECISION_FLOOR:
            short.append(f"{md_code(s.get('surface', ''))}'s measured precision has a 95 % lower bound of "
                         f"{low:.3f} < {PRECISION_FLOOR}")
    if short:
        return False, (f"Fabrication gate: **off** — asked, but {'; '.join(short)} (a false flag would fail a good "
                       "run, so the rule waits for the detector's benchmark).")
    return True, (f"Fabrication gate: **on** — every declared surface's measured precision has a 95 % lower bound "
                  f"≥ {PRECISION_FLOOR}, so a family × model whose {{treatment}} answers carry an unresolved "
                  "identifier credibly more often than {control}'s reads `VALID_REGRESSION (fabrication)`.")


def gate_records(rates: pd.DataFrame) -> dict[tuple[str, str], FabricationRecord]:
    """Per skill family × model, the fabrication rule's record: each prompt's clean answers (no unresolved
    identifier) per arm, tested by the objective record's exact conditional test of a drop."""
    out = {}
    for (family, model), block in rates.groupby(["skill_family", "model"], sort=True):
        no_n, with_n = block["control_n"].to_numpy(), block["treatment_n"].to_numpy()
        no_c, with_c = no_n - block["control_k"].to_numpy(), with_n - block["treatment_k"].to_numpy()
        p, drop = objective_loss_test(no_n, no_c, with_n, with_c)
        clean_diff = with_c / with_n - no_c / no_n
        out[(str(family), str(model))] = FabricationRecord(len(block), int((clean_diff > 0).sum()),
                                                           int((clean_diff < 0).sum()), p, drop)
    return out


def fabrication_check(week: WeekIdentifiers | None, manifest: pd.DataFrame, pair: ArmPair,
                      models: list[str]) -> Fabrication | None:
    """The section's data for a week, None when the identifiers pass never ran on it (a week from before it).

    Raises:
        LedgerError: an identifier row with an unknown status.
    """
    if week is None:
        return None
    answers = _answers(week, manifest)
    rates = _prompt_rates(answers, pair) if not answers.empty else pd.DataFrame()
    on, line = gate_state(week.record)
    names = arm_names(pair)
    line = line.replace("{treatment}", md_text(names.treatment)).replace("{control}", md_text(names.control))
    return Fabrication(record=week.record, answers=answers, arms=_arms(answers, pair, models),
                       delta=_delta(rates, models) if not rates.empty else pd.DataFrame(columns=DELTA_COLUMNS),
                       top=_top(week, answers), gate_on=on, gate_line=line,
                       records=gate_records(rates) if on and not rates.empty else {},
                       uncounted=_uncounted(week, answers))


def _uncounted(week: WeekIdentifiers, answers: pd.DataFrame) -> int:
    ids = week.identifiers
    return int((ids["status"].eq(UNRESOLVED) & ~ids["kind"].isin(measured_kinds())
                & ids["run_id"].isin(set(answers["run_id"]))).sum())


def _surface_text(s: dict[str, Any]) -> str:
    name = md_code(s.get("surface", ""))
    if not s.get("cached"):
        return f"{name} (**not cached**: its identifiers read unchecked, never fabricated)"
    low, est, n = s.get("precision_low"), s.get("precision"), s.get("precision_flags")
    if not isinstance(low, int | float):
        return f"{name} (the detector's precision on it is not measured)"
    return (f"{name} (the detector's measured precision {fmt(est)}, 95 % lower bound {fmt(low)}"
            f"{f' over {n} flags' if n else ''})")


def fabrication_markdown(f: Fabrication | None, pair: ArmPair) -> str:
    """The section, "" for a week the identifiers pass never ran on."""
    if f is None:
        return ""
    lines = [f"## {TITLE}", ""]
    if not f.declared:
        note = str(f.record.get("note") or "the suite declares no API surface ([[api]] in skillbench.toml)")
        return "\n".join([*lines, f"_Not checked: {md_text(note)}._"])
    names = arm_names(pair)
    lines += ["Checked against: " + "; ".join(_surface_text(s) for s in f.record["surfaces"]) + ".", "",
              f.gate_line, ""]
    if not f.record.get("complete", True):
        lines += ["**⚠ The identifiers pass did not finish:** some answers are not checked — rerun "
                  "`skillbench identifiers RUN_DIR`.", ""]
    if f.arms.empty:
        return "\n".join([*lines, "_No graded answer was checked._"])
    rows = [[md_text(r.model), md_text(r.condition), int(r.answers), int(r.identifiers), int(r.resolved),
             int(r.unresolved), int(r.unchecked),
             f"{int(r.fabricated)}/{int(r.answers)} = {fmt(r.rate)} [{fmt(r.low)}, {fmt(r.high)}]"]
            for r in f.arms.itertuples(index=False)]
    lines += [md_table(["model", "arm", "answers", "identifiers", "resolved", "unresolved", "unchecked",
                        "answers with ≥ 1 unresolved (95% CI)"], rows), ""]
    if not f.delta.empty:
        drows = [[md_text(r.model), int(r.n_prompts), f"{fmt(r.control_rate)} → {fmt(r.treatment_rate)}",
                  signed(r.delta), "n/a" if not np.isfinite(r.ci_low) else f"[{signed(r.ci_low)}, {signed(r.ci_high)}]",
                  "n/a" if r.excludes_zero is None else "yes" if r.excludes_zero else "no"]
                 for r in f.delta.itertuples(index=False)]
        lines += [md_table(["model", "n prompts", f"rate {names.arrow}", "Δ (paired)", "95% t CI", "CI != 0?"],
                           drows), ""]
    if f.uncounted:
        lines += [f"_{f.uncounted} unresolved identifier(s) are of a kind the detector's precision was not measured "
                  f"on (measured: {', '.join(sorted(measured_kinds())) or 'none'}; REST paths and config keys are "
                  "not — a client's generated API may omit a route its server still serves): they are listed "
                  "\"(not counted)\", never counted in the rate, the Δ or the gate._", ""]
    if not f.top.empty:
        trows = [[md_text(r.text, NAME_CHARS) + ("" if r.counted else " (not counted)"), md_text(r.surface),
                  int(r.answers), int(r.uses), md_text(r.conditions),
                  md_text(r.quote, QUOTE_CHARS)] for r in f.top.itertuples(index=False)]
        lines += [f"Most frequent unresolved identifiers (top {TOP_NAMES}):", "",
                  md_table(["identifier", "surface", "answers", "uses", "arms", "quote"], trows), ""]
    else:
        lines += ["_No answer used an unresolved identifier._", ""]
    lines += ["_Every answer the rubric judge grades, checked by the identifiers pass (`identifiers.csv`): an "
              "identifier in a declared language resolves against the library at the declared version, or is "
              "unresolved — a fabrication candidate, a name the library lacks; unchecked means the language or "
              "the library is not declared, the surface is not cached, or the surface cannot decide the name (a "
              "column read as an attribute), and is never counted as fabricated. Rate: answers with at least one "
              "unresolved identifier, Wilson's 95 % interval (exact Clopper–Pearson below 20 answers). Δ: per "
              "prompt the rate in each arm (its reps averaged), treatment − control over the prompts both arms "
              "answered, the t interval at n − 1 like the lift. The judge's avoid items are graded as before; this "
              "is separate, deterministic evidence._"]
    return "\n".join(lines)
