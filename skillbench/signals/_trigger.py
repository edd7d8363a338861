"""Activation, trigger misses, the self-served-baseline caveat and trigger health, from the manifest.

qdrant records per run how the skill was reached (``skill_tool``, ``file_read``, ``web_fetch`` or ``none``)
and never gates on it: on the with-skill arm a ``none`` is a **trigger miss** (the skill was installed and not
used), and a no-skill run that fetched the published site **self-served** the skill, so its lift understates
value. Runs whose transcript did not parse (``signals_ok = 0``) are not read as misses.

Trigger health (ours) scores each skill family as a detector: **recall** is the share of the family's
with-skill runs on its own (non-dormancy) prompts that activated it; the **false-trigger rate** is the share
of with-skill and plugin runs on its dormancy prompts that did; precision and F1 follow from the counts (no
dormancy runs → no precision, no F1). The rates' intervals are drawn where they are shown (the scorecard's
trigger health, :func:`skillbench.scorecard.rate_interval`: this layer sits below the scorecard and keeps the counts
each interval needs).

"The with-skill arm" is the week's treatment arm (:class:`skillbench.arms.ArmPair`): ``with-skill`` for a weekly
run, ``with-skill@HEAD`` for a comparison, so a comparison's activation and trigger health describe the version
under test, never a pool of both versions. The arms whose dormancy runs count as false triggers
(:func:`false_trigger_arms`) are the treatment and the plugin arm, which the preference gate's activation contract
reads too.
"""

from __future__ import annotations

import pandas as pd

from skillbench.arms import DEFAULT_PAIR, ArmPair, arm_kind, is_skilled
from skillbench.vocab import NO_SKILL, PLUGIN

NONE = "none"


def activated(manifest: pd.DataFrame) -> pd.Series:
    """Runs whose skill activated by any route."""
    act = manifest["skill_activation"].fillna("").str.strip()
    return act.ne(NONE) & act.ne("")


def reliable(manifest: pd.DataFrame) -> pd.Series:
    """Runs whose transcript parsed (``signals_ok = 1``): only these can be read as trigger misses."""
    return manifest["signals_ok"].fillna(0).astype(int).eq(1)


def false_trigger_arms(condition: pd.Series, pair: ArmPair = DEFAULT_PAIR) -> pd.Series:
    """Runs of an arm whose dormancy runs count as false triggers: the (skilled) treatment arm, and every plugin arm.

    A weekly run: ``with-skill`` and ``plugin``. A comparison: ``with-skill@HEAD`` and ``plugin`` (the control's
    version is not the one under test). Read by trigger health and the preference gate's activation contract.
    """
    labels = condition.astype(str)
    treatment = labels.eq(pair.treatment) & is_skilled(pair.treatment)
    return treatment | labels.map({c: arm_kind(c) for c in labels.unique()}).eq(PLUGIN)  # each label once


def with_skill_runs(manifest: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> pd.DataFrame:
    """The treatment arm's runs of scored (non-dormancy) prompts (a weekly run: with-skill): the activation
    section's population."""
    return manifest[manifest["condition"].eq(pair.treatment) & ~manifest["dormancy"]]


def activation_summary(manifest: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> pd.DataFrame:
    """Per prompt, how the with-skill (treatment) arm reached the skill.

    Returns:
        ``prompt, skill_family, runs, reached_leaf, trigger_misses, unreliable, never_triggered`` and one
        ``act_<kind>`` count column per activation kind seen.
    """
    ws = with_skill_runs(manifest, pair)
    if ws.empty:
        return pd.DataFrame(columns=["prompt", "skill_family", "runs", "reached_leaf", "trigger_misses",
                                     "unreliable", "never_triggered"])
    kinds = ws["skill_activation"].fillna("").replace("", "(empty)")
    # crosstab's counts, by the groupby's cython size (crosstab aggregates each cell in Python)
    counts = ws["prompt"].groupby([ws["prompt"], kinds]).size().unstack(fill_value=0).add_prefix("act_")
    g = ws.assign(_miss=kinds.eq(NONE) & reliable(ws), _bad=~reliable(ws),
                  _leaf=ws["reached_leaf"].fillna(0).eq(1)).groupby("prompt", sort=True)
    out = pd.DataFrame({"skill_family": g["skill_family"].first(), "runs": g.size(), "reached_leaf": g["_leaf"].sum(),
                        "trigger_misses": g["_miss"].sum(), "unreliable": g["_bad"].sum()})
    none_col = counts.get(f"act_{NONE}", pd.Series(0, index=counts.index))
    out["never_triggered"] = none_col.reindex(out.index).eq(out["runs"])
    return out.join(counts).reset_index()


def activation_counts(manifest: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> dict[str, int]:
    """Headline counts: with-skill (treatment) runs, trigger misses, web_fetch-sourced runs, unreliable runs."""
    ws = with_skill_runs(manifest, pair)
    act = ws["skill_activation"].fillna("")
    ok = reliable(ws)
    return {"with_skill_runs": len(ws), "trigger_misses": int((act.eq(NONE) & ok).sum()),
            "web_fetch": int(act.eq("web_fetch").sum()), "unreliable": int((~ok).sum())}


def self_served_baseline(manifest: pd.DataFrame) -> pd.DataFrame:
    """No-skill runs of scored prompts that fetched the published skills site themselves.

    Returns:
        The manifest rows (``run_id, prompt, model, rep, fetched_count``).
    """
    labels = manifest["condition"].astype(str)
    ns = manifest[labels.map({c: arm_kind(c) for c in labels.unique()}).eq(NO_SKILL) & ~manifest["dormancy"]]
    served = ns[ns["fetched_site"].fillna(0).eq(1)]
    return served[["run_id", "prompt", "model", "rep", "fetched_count"]].reset_index(drop=True)


def trigger_health(manifest: pd.DataFrame, by: tuple[str, ...] = ("skill_family",), *,
                   pair: ArmPair = DEFAULT_PAIR) -> pd.DataFrame:
    """Trigger recall, false-trigger rate, precision and F1 per skill family (optionally × model).

    Args:
        manifest: the run manifest.
        by: grouping keys, ``("skill_family",)`` or ``("skill_family", "model")``.
        pair: the week's arms: recall reads the treatment arm, false triggers :func:`false_trigger_arms`.

    Returns:
        ``*by, scored_runs, activations, recall, dormancy_runs, false_triggers, false_trigger_rate, precision,
        f1``. Runs with unreliable signals are left out of every count.
    """
    keys = list(by)
    ok = manifest[reliable(manifest)]
    act = activated(ok)
    pos = ok[ok["condition"].eq(pair.treatment) & ~ok["dormancy"]]
    neg = ok[false_trigger_arms(ok["condition"], pair) & ok["dormancy"]]
    gp = pos.assign(_a=act.loc[pos.index]).groupby(keys)
    gn = neg.assign(_a=act.loc[neg.index]).groupby(keys)
    out = pd.DataFrame({"scored_runs": gp.size(), "activations": gp["_a"].sum()})
    out = out.join(pd.DataFrame({"dormancy_runs": gn.size(), "false_triggers": gn["_a"].sum()}), how="outer")
    out = out.fillna(0).astype(int)
    tp, fp = out["activations"], out["false_triggers"]
    out["recall"] = (tp / out["scored_runs"]).where(out["scored_runs"] > 0)
    out["false_trigger_rate"] = (fp / out["dormancy_runs"]).where(out["dormancy_runs"] > 0)
    # Precision needs negatives to have been tried; without dormancy runs it is unknown, not 1.
    out["precision"] = (tp / (tp + fp)).where((out["dormancy_runs"] > 0) & (tp + fp > 0))
    r, p = out["recall"], out["precision"]
    out["f1"] = (2 * p * r / (p + r)).where(p.notna() & r.notna())
    out.loc[p.notna() & r.notna() & (p + r == 0), "f1"] = 0.0
    cols = ["scored_runs", "activations", "recall", "dormancy_runs", "false_triggers", "false_trigger_rate",
            "precision", "f1"]
    return out[cols].reset_index().sort_values(keys, kind="stable").reset_index(drop=True)


def never_triggered(summary: pd.DataFrame) -> list[str]:
    """Prompts whose with-skill runs never reached the skill."""
    return sorted(summary.loc[summary["never_triggered"], "prompt"]) if not summary.empty else []


__all__ = ["activation_counts", "activation_summary", "false_trigger_arms", "never_triggered", "self_served_baseline",
           "trigger_health", "with_skill_runs"]
