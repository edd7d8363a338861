"""The generalization check: does an edit (or a skill) lift the held-out prompts as it lifts the scored ones?

``compare --generalization`` and ``weekly --generalization`` also run the families' held-out prompts (the suite's
held-out prefix, or a dotnet spec's held-out tag) in the same arms, in a week of their own (``RUN_DIR/_heldout/``,
below the scored week, so nothing of theirs can reach the scored ledgers, the gate, the history or the sentinel:
every reader of the week reads its top folder only), judged by the same rubric judge. Per family × model this
module then reads:

* the **scored lift**: ``mean(dᵢ)`` over the family's preference-eligible scored prompts, ``dᵢ`` = treatment −
  control must coverage of prompt ``i`` (head − base in a comparison, with-skill − no-skill in a week; each arm
  the mean over its reps: the scorecard's paired lift, family by family), with its paired t interval
  ``mean ± t₀.₉₇₅(n−1) · sd(dᵢ)/√n``;
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from skillbench.ledgers import HELDOUT_DIR, LedgerError, load_week, read_heldout_use
from skillbench.markdown import md_table, md_text, signed
from skillbench.scorecard._scoring import prompt_rep_scores, prompt_scores
from skillbench.scorecard._stats import paired_differences, t_critical
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
INTERVAL = ("each lift: mean of the per-prompt treatment − control must coverage, 95 % paired t interval; the gap: "
            "scored − held-out, 95 % Welch t interval (SE √(SE_s² + SE_h²), Welch–Satterthwaite df)")
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


# -- a week's check (weekly --generalization; a comparison's scorecard too) ------------------------------------


@dataclass(frozen=True)
class WeekGeneralization:
    """The held-out check of a week whose ``_heldout/`` folder holds its held-out runs.

    Attributes:
        table: one row per family × model (:data:`GAP_COLUMNS`).
        use: ``_heldout/heldout-use.json`` (what was recorded, the wear), ``{}`` when the pass wrote none.
        problem: one line when the held-out week or its use file could not be read (the table is then empty).
    """

    table: pd.DataFrame
    use: dict
    problem: str = ""


def week_generalization(run_dir: Path, prompts: pd.DataFrame, pair: object,
                        models: Sequence[str]) -> WeekGeneralization | None:
    """The check of the week in ``run_dir`` (None: no held-out runs beside it, the option was not asked).

    ``prompts`` and ``pair`` are the scored week's (its prompt scores and arms): the scored side. The held-out
    side is read from ``run_dir/_heldout/`` by the same readers; a damaged held-out week is one line, never a
    table that reads as clean.
    """
    held = Path(run_dir) / HELDOUT_DIR
    if not held.is_dir():
        return None
    empty = pd.DataFrame(columns=GAP_COLUMNS)
    try:
        use = read_heldout_use(held)
        ledgers = load_week(held)
    except (LedgerError, OSError) as exc:
        return WeekGeneralization(empty, {}, f"the held-out runs in {held} could not be read: {exc}")
    theirs = prompt_scores(prompt_rep_scores(ledgers.scores))
    names = set(theirs["prompt"])
    heldout = family_differences(theirs, ledgers.arms, names)
    scored = family_differences(prompts, pair, set(prompts["prompt"]) - names)
    families = [str(f) for f in use.get("families") or sorted(set(heldout["skill_family"].dropna()))]
    return WeekGeneralization(gap_table(scored, heldout, families, models), use)


def _signed(value: object) -> str:
    return "n/a" if value is None or pd.isna(value) else signed(float(value))  # type: ignore[arg-type]


def generalization_markdown(g: WeekGeneralization | None) -> str:
    """The scorecard's "Generalization: held-out prompts" section ("" when the option was not asked)."""
    if g is None:
        return ""
    lines = ["## Generalization: held-out prompts", "",
             "Asked for with `--generalization`: the held-out prompts ran in the lift's arms, in a week of their own "
             "(`_heldout/`), judged by the same rubric judge — never part of the lift, the gate, the history or the "
             "sentinel above. Held-out prompts are validated and never run unless asked; each use is recorded.", ""]
    if g.problem:
        return "\n".join([*lines, f"**Not read**: {md_text(g.problem)}", "", ""])
    rows = []
    for r in g.table.itertuples(index=False):
        gap = _signed(r.gap) + (f" [{_signed(r.gap_low)}, {_signed(r.gap_high)}]" if r.tested else " (not tested)")
        rows.append([md_text(r.skill_family), md_text(r.model),
                     f"{_signed(r.scored_lift)} [{_signed(r.scored_low)}, {_signed(r.scored_high)}] (n={r.n_scored})",
                     f"{_signed(r.heldout_lift)} [{_signed(r.heldout_low)}, {_signed(r.heldout_high)}] "
                     f"(n={r.n_heldout})", gap, f"⚠️ **{r.reading}**" if r.flagged else md_text(r.reading)])
    if rows:
        lines += [md_table(["skill family", "model", "scored lift", "held-out lift", "gap", "reading"], rows), ""]
    small = sorted({str(f) for f in g.table.loc[~g.table["tested"].astype(bool), "skill_family"]})
    if small:
        lines += [f"Fewer than {MIN_HELDOUT} held-out prompts (or 2 scored ones): the gap of "
                  f"{', '.join(md_text(f) for f in small)} is described only — never tested nor flagged.", ""]
    worn_now = [(str(p), int(n)) for p, n in g.use.get("worn") or []]
    if worn_now:
        lines += ["⚠️ **Worn held-out prompts**: " + ", ".join(f"{md_text(p)} ({n})" for p, n in worn_now[:10])
                  + f" have informed more than {int(g.use.get('wear_limit') or 0)} decisions (`[suite] heldout_wear`):"
                  " they no longer measure generalization — write fresh held-out prompts.", ""]
    lines += [f"- Rule: {md_text(RULE)}.", f"- Intervals: {md_text(INTERVAL)}."]
    if g.use.get("record"):
        lines.append(f"- Use record: {md_text(str(g.use['record']))}.")
    return "\n".join([*lines, "", ""])


def with_generalization(markdown: str, g: WeekGeneralization | None) -> str:
    """``markdown`` with the section before Coverage (at the end when there is none)."""
    section = generalization_markdown(g)
    if not section:
        return markdown
    at = markdown.find("\n## Coverage\n")
    return markdown[: at + 1] + section + markdown[at + 1:] if at >= 0 else markdown + "\n" + section
