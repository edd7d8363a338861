"""The generalization check: does an edit lift the held-out prompts as it lifts the scored ones?

``compare --generalization`` also runs the changed families' held-out prompts (the suite's held-out prefix, or a
dotnet spec's held-out tag) in the same arms, in a week of their own (``RUN_DIR/_heldout/``, below the scored
week, so nothing of theirs can reach the scored ledgers, the gate, the history or the sentinel), judged by the same
rubric judge. Per changed family × model this module then reads:

* the **scored lift**: ``mean(dᵢ)`` over the family's preference-eligible scored prompts, ``dᵢ`` = head − base
  must coverage of prompt ``i`` (each arm the mean over its reps: the scorecard's paired lift, family by family),
  with its paired t interval ``mean ± t₀.₉₇₅(n−1) · sd(dᵢ)/√n``;
* the **held-out lift**: the same over the family's held-out prompts;
* the **gap** = scored lift − held-out lift, with a **Welch t interval**: the two lifts come from different prompts,
  so the gap's SE is ``√(SE_scored² + SE_heldout²)`` and its degrees of freedom Welch–Satterthwaite's
  (``SE⁴ / (SE_s⁴/(n_s−1) + SE_h⁴/(n_h−1))``). When every prompt moved alike (both SEs 0) the interval is the
  point itself, as the scorecard's t interval is.

**The flag** ("may be tuned to the test"), exactly: the family has at least :data:`MIN_HELDOUT` held-out prompts
and at least two scored ones, and (1) the scored lift's 95 % interval lies above 0, (2) the held-out lift's does not
(its lower bound ≤ 0), and (3) the gap's 95 % Welch interval lies above 0. (1) and (2) are "the scored prompts lift
and the held-out ones don't"; (3) asks that the difference be more than the noise of two small samples, so a
held-out lift that is merely too noisy to exclude 0 does not flag an honest edit. With fewer held-out prompts the
gap is described (the two lifts and their difference), never tested nor flagged, and the page says so.
``tests/data/generalization_cases.json`` pins the rule.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from skillbench.scorecard import paired_differences, t_critical
from skillbench.vocab import MIN_STIMULI

MIN_HELDOUT = MIN_STIMULI  # held-out prompts a family needs before its gap is tested (the gate's n ≥ 5)
MIN_SCORED = 2  # a scored lift needs a spread to have an interval
CONFIDENCE = 0.95
TUNED = "may be tuned to the test"
GENERALIZES = "generalizes"
NOT_TESTED = "described only"
INCONCLUSIVE = "no sign of tuning"
RULE = ("flagged “may be tuned to the test” when the family has ≥ 5 held-out prompts and ≥ 2 scored ones, the scored "
        "lift's 95 % paired t interval lies above 0, the held-out lift's does not (lower bound ≤ 0), and the gap's "
        "95 % Welch t interval lies above 0; with fewer held-out prompts the gap is described, not tested")
INTERVAL = ("each lift: mean of the per-prompt head − base must coverage, 95 % paired t interval; the gap: scored − "
            "held-out, 95 % Welch t interval (SE √(SE_s² + SE_h²), Welch–Satterthwaite df)")
GAP_COLUMNS = ["skill_family", "model", "n_scored", "scored_lift", "scored_low", "scored_high", "n_heldout",
               "heldout_lift", "heldout_low", "heldout_high", "gap", "gap_se", "gap_df", "gap_low", "gap_high",
               "tested", "flagged", "reading"]


@dataclass(frozen=True)
class Lift:
    """A paired lift over ``n`` prompts: its mean, SE and t interval (NaN where undefined)."""

    n: int
    mean: float
    se: float
    low: float
    high: float

    @classmethod
    def of(cls, d: Iterable[float], confidence: float = CONFIDENCE) -> Lift:
        values = np.asarray(list(d), dtype=float)
        n = len(values)
        if n == 0:
            return cls(0, math.nan, math.nan, math.nan, math.nan)
        mean = float(values.mean())
        if n < 2:
            return cls(n, mean, math.nan, math.nan, math.nan)
        se = float(values.std(ddof=1) / math.sqrt(n))
        half = float(t_critical(n - 1, confidence)) * se
        return cls(n, mean, se, mean - half, mean + half)


@dataclass(frozen=True)
class Gap:
    """Scored lift − held-out lift, with its Welch t interval."""

    value: float
    se: float
    df: float
    low: float
    high: float

    @classmethod
    def of(cls, scored: Lift, heldout: Lift, confidence: float = CONFIDENCE) -> Gap:
        value = scored.mean - heldout.mean
        if scored.n < 2 or heldout.n < 2:
            return cls(value, math.nan, math.nan, math.nan, math.nan)
        se = math.sqrt(scored.se ** 2 + heldout.se ** 2)
        if se == 0.0:  # every prompt of both sets moved alike: the interval is the point
            return cls(value, 0.0, math.nan, value, value)
        df = se ** 4 / (scored.se ** 4 / (scored.n - 1) + heldout.se ** 4 / (heldout.n - 1))
        half = float(t_critical(df, confidence)) * se
        return cls(value, se, df, value - half, value + half)


def reading(scored: Lift, heldout: Lift, gap: Gap) -> tuple[bool, bool, str]:
    """``(tested, flagged, reading)`` by the module's rule."""
    tested = heldout.n >= MIN_HELDOUT and scored.n >= MIN_SCORED
    if not tested:
        return False, False, NOT_TESTED
    flagged = scored.low > 0 and not heldout.low > 0 and gap.low > 0
    if flagged:
        return True, True, TUNED
    if scored.low > 0 and heldout.low > 0:
        return True, False, GENERALIZES
    return True, False, INCONCLUSIVE


def gap_row(family: str, model: str, scored_d: Iterable[float], heldout_d: Iterable[float]) -> dict:
    """One family × model's row (:data:`GAP_COLUMNS`) from its per-prompt differences."""
    scored, heldout = Lift.of(scored_d), Lift.of(heldout_d)
    gap = Gap.of(scored, heldout)
    tested, flagged, text = reading(scored, heldout, gap)
    return {"skill_family": family, "model": model, "n_scored": scored.n, "scored_lift": scored.mean,
            "scored_low": scored.low, "scored_high": scored.high, "n_heldout": heldout.n,
            "heldout_lift": heldout.mean, "heldout_low": heldout.low, "heldout_high": heldout.high,
            "gap": gap.value, "gap_se": gap.se, "gap_df": gap.df, "gap_low": gap.low, "gap_high": gap.high,
            "tested": tested, "flagged": flagged, "reading": text}


def family_differences(prompts: pd.DataFrame, pair: object, keep: Iterable[str]) -> pd.DataFrame:
    """Per model × prompt of ``keep`` (prompt names), treatment − control must coverage, with the prompt's family.

    Args:
        prompts: a week's :func:`skillbench.scorecard.prompt_scores` frame (its ``skill`` column is the family).
        pair: the week's arms (:class:`skillbench.arms.ArmPair`).
        keep: the prompts that count (the scored week's preference-eligible ones; every held-out one).
    """
    wanted = set(keep)
    mine = prompts[prompts["prompt"].isin(wanted)]
    if mine.empty:
        return pd.DataFrame(columns=["model", "prompt", "skill_family", "d"])
    d = paired_differences(mine, pair=pair)  # type: ignore[arg-type]
    family = mine.drop_duplicates("prompt").set_index("prompt")["skill"]
    d["skill_family"] = d["prompt"].map(family)
    return d[["model", "prompt", "skill_family", "d"]]


def gap_table(scored: pd.DataFrame, heldout: pd.DataFrame, families: Iterable[str],
              models: Iterable[str]) -> pd.DataFrame:
    """One row per family × model (:data:`GAP_COLUMNS`) from :func:`family_differences` of both weeks.

    A family × model with no held-out prompt judged is still a row (``n_heldout`` 0, described only).
    """
    rows = []
    for family in families:
        for model in models:
            s = scored[scored["skill_family"].eq(family) & scored["model"].eq(model)]["d"]
            h = heldout[heldout["skill_family"].eq(family) & heldout["model"].eq(model)]["d"]
            rows.append(gap_row(family, model, s, h))
    return pd.DataFrame(rows, columns=GAP_COLUMNS)


def worn(decisions: pd.Series, prompts: Iterable[str], limit: int) -> list[tuple[str, int]]:
    """The prompts of this use that have informed more than ``limit`` decisions (this one counted), worst first."""
    counts = [(p, int(decisions.get(p, 0))) for p in dict.fromkeys(prompts)]
    return sorted([(p, n) for p, n in counts if n > limit], key=lambda x: (-x[1], x[0]))
