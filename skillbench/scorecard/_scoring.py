"""Scoring: rubric-item credit → prompt×rep metrics → prompt → cell, as tidy DataFrames.

The aggregation is qdrant's (SCORING.md), averaged at every level rather than pooled, so rubric length never
weighs a prompt:

* **prompt × rep** — ``must_coverage`` = Σ must credit / n must, ``bonus_rate`` = Σ bonus credit / n bonus,
  ``avoid_violations`` = Σ avoid credit (a count), ``composite`` = clamp(must + 0.10·bonus − 0.25·avoid, 0, 1).
  Ungraded items are left out of every count. A prompt without bonus items has ``bonus_rate`` 0 (the issue's
  rule, and qdrant's composite); a rep whose bonus items are all ungraded has none (``NaN``: not measured is not
  zero). A rep without graded must items has no ``must_coverage`` and no composite.
* **prompt** — mean over its reps (``NaN`` skipped), with min–max of must coverage and composite kept as the
  stability signal.
* **cell** (model × condition) — flat macro mean over prompts.

Every function is vectorized (groupby/unstack) and returns a tidy frame sorted by its keys; presentation order
is the scorecard's business. The lift arms are the week's :class:`~skillbench.arms.ArmPair` (``pair``, default
with-skill vs no-skill): every "with-skill − no-skill" below is treatment − control.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from skillbench.arms import DEFAULT_PAIR, ArmPair
from skillbench.vocab import ITEM_TYPES

BONUS_WEIGHT = 0.10
AVOID_PENALTY = 0.25
METRICS: tuple[str, ...] = ("must_coverage", "bonus_rate", "avoid_violations", "composite")
REP_KEYS = ["model", "condition", "prompt", "rep"]
PROMPT_KEYS = ["model", "condition", "prompt"]
CELL_KEYS = ["model", "condition"]


def composite_score(must: pd.Series, bonus: pd.Series, avoid: pd.Series) -> pd.Series:
    """qdrant's composite: must dominant, bonus a small bump, avoid a real penalty, clamped to [0, 1]."""
    raw = must + BONUS_WEIGHT * bonus.fillna(0.0) - AVOID_PENALTY * avoid.fillna(0.0)
    return raw.clip(lower=0.0, upper=1.0)


def prompt_rep_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """Per prompt × rep metrics from a scores ledger (see :func:`skillbench.ledgers.read_scores`).

    Returns:
        One row per (model, condition, prompt, rep) with at least one graded item: ``skill``, ``n_must``,
        ``n_bonus``, ``n_avoid`` (graded items), ``n_ungraded``, and the four metrics.
    """
    columns = [*REP_KEYS, "skill", "n_must", "n_bonus", "n_avoid", "n_ungraded", *METRICS]
    if scores.empty:
        return pd.DataFrame({c: pd.Series(dtype=float) for c in columns})
    # The string keys are factorized once: every count below groups the rep's integer code (a million rubric rows
    # are four string groupbys otherwise). Same sums (pandas' groupby on the code); the rows are sorted by key below.
    rep = scores.groupby(REP_KEYS, sort=False).ngroup().to_numpy()  # numbered as found: sorted at the end
    if (rep < 0).any():  # a row missing a key is in no group, as a groupby on the keys leaves it out
        scores, rep = scores[rep >= 0], rep[rep >= 0]
    graded_mask = (scores["graded"] if "graded" in scores else scores["credit"].notna()).to_numpy(dtype=bool)
    n_reps = int(rep.max()) + 1 if len(rep) else 0
    kinds = scores["item_type"].to_numpy(dtype=object)
    credit = scores["credit"].to_numpy(dtype=float)
    present = np.zeros(n_reps, dtype=bool)
    present[rep[graded_mask]] = True  # a rep with at least one graded item
    out = pd.DataFrame(index=pd.RangeIndex(n_reps))
    firsts = pd.Series(np.arange(len(scores))).groupby(rep).first().to_numpy()
    keys = scores[REP_KEYS].iloc[firsts].reset_index(drop=True)
    out["skill"] = scores["skill"][graded_mask].groupby(rep[graded_mask]).first().reindex(out.index)
    total, count = {}, {}
    for t in ITEM_TYPES:
        of_type = graded_mask & (kinds == t)
        by_rep = pd.Series(credit[of_type]).groupby(rep[of_type])
        total[t] = by_rep.sum().reindex(out.index)  # NaN: no graded item of this type
        count[t] = by_rep.count().reindex(out.index, fill_value=0).astype(int)
        out[f"n_{t}"] = count[t]
    out["n_ungraded"] = np.bincount(rep[~graded_mask], minlength=n_reps).astype(int)
    out["must_coverage"] = (total["must"] / count["must"]).where(count["must"] > 0)
    has_bonus = np.bincount(rep[kinds == "bonus"], minlength=n_reps) > 0
    out["bonus_rate"] = (total["bonus"] / count["bonus"]).where(count["bonus"] > 0, np.where(has_bonus, np.nan, 0.0))
    out["avoid_violations"] = total["avoid"].fillna(0.0)
    out["composite"] = composite_score(out["must_coverage"], out["bonus_rate"], out["avoid_violations"])
    out = pd.concat([keys, out], axis=1)[present]
    return out.sort_values(REP_KEYS, kind="stable").reset_index(drop=True)[columns]


def prompt_scores(prompt_rep: pd.DataFrame) -> pd.DataFrame:
    """Per prompt (model × condition × prompt): mean of each metric over reps, min–max kept.

    Returns:
        ``model, condition, prompt, skill, n_reps``, the four metrics, ``must_min, must_max, composite_min,
        composite_max``.
    """
    columns = [*PROMPT_KEYS, "skill", "n_reps", *METRICS, "must_min", "must_max", "composite_min",
               "composite_max"]
    if prompt_rep.empty:
        return pd.DataFrame({c: pd.Series(dtype=float) for c in columns})
    g = prompt_rep.groupby(PROMPT_KEYS, sort=True)
    out = g[list(METRICS)].mean()
    out["skill"] = g["skill"].first()
    out["n_reps"] = g.size()
    out["must_min"] = g["must_coverage"].min()
    out["must_max"] = g["must_coverage"].max()
    out["composite_min"] = g["composite"].min()
    out["composite_max"] = g["composite"].max()
    return out.reset_index()[columns]


def cost_eligible(manifest: pd.DataFrame) -> pd.Series:
    """Runs whose cost and turns are real figures: exit 0, no budget hit, no API error, a cost recorded.

    A capped or errored run's cost is a truncated floor, so it never enters a cost mean.
    """
    return ((manifest["exit_code"] == 0).fillna(False) & (manifest["budget_hit"] != 1).fillna(True)
            & ~manifest["is_error"].astype(bool) & manifest["total_cost_usd"].notna())


def prompt_cost_deltas(manifest: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> pd.DataFrame:
    """Per model × prompt of a scored (non-dormancy) prompt, mean cost treatment − control over cost-eligible runs.

    The per-prompt view of the lift table's Δcost (same runs, same rule); the cost-vs-lift figure plots it.
    """
    arms = pair.lift_arms
    ok = manifest[cost_eligible(manifest) & ~manifest["dormancy"].astype(bool) & manifest["condition"].isin(arms)]
    wide = ok.pivot_table(index=["model", "prompt"], columns="condition", values="total_cost_usd", aggfunc="mean")
    wide = wide.reindex(columns=list(arms))
    no, wi = arms
    out = (wide[wi] - wide[no]).rename("cost_delta").dropna().reset_index()
    return out[["model", "prompt", "cost_delta"]] if not out.empty else pd.DataFrame(columns=["model", "prompt",
                                                                                            "cost_delta"])


def cost_cells(manifest: pd.DataFrame) -> pd.DataFrame:
    """Mean cost and mean turns per model × condition over cost-eligible runs.

    Returns:
        ``model, condition, mean_cost, mean_turns, n_cost_runs``.
    """
    ok = manifest[cost_eligible(manifest)]
    g = ok.groupby(CELL_KEYS, sort=True)
    out = pd.DataFrame({"mean_cost": g["total_cost_usd"].mean(), "mean_turns": g["num_turns"].mean(),
                        "n_cost_runs": g.size()})
    return out.reset_index()


def cell_scores(prompts: pd.DataFrame, costs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per cell (model × condition): flat macro mean over prompts, optionally joined with cost means.

    Args:
        prompts: :func:`prompt_scores` output.
        costs: :func:`cost_cells` output; cells that have runs but no graded prompt still appear.

    Returns:
        ``model, condition, n_prompts``, the four metrics, and ``mean_cost, mean_turns, n_cost_runs`` when
        ``costs`` is given.
    """
    g = prompts.groupby(CELL_KEYS, sort=True)
    out = g[list(METRICS)].mean()
    out.insert(0, "n_prompts", g.size())
    out = out.reset_index()
    if costs is not None:
        out = out.merge(costs, on=CELL_KEYS, how="outer").sort_values(CELL_KEYS, kind="stable")
        out["n_prompts"] = out["n_prompts"].fillna(0).astype(int)
        out["n_cost_runs"] = out["n_cost_runs"].fillna(0).astype(int)
    return out.reset_index(drop=True)


def lift_scope(scores: pd.DataFrame, manifest: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> pd.DataFrame:
    """The items that may be lift-scored: the pair's two arms (no-skill and with-skill), dormancy prompts left out."""
    dormant = set(manifest.loc[manifest["dormancy"], "prompt"])
    keep = scores["condition"].isin(pair.lift_arms) & ~scores["prompt"].isin(dormant)
    return scores[keep]
