"""The judge study's recommendation: the cheapest judge that is not credibly worse than the best one.

**The rule** (one home; pinned by ``tests/data/recommend_cases.json``):

1. The **best judge** is the judge with the highest Cohen's κ with the reference over all items (ties: the
   cheaper, then the name).
2. A judge is **non-inferior** to the best when the lower end of the bootstrap interval of the *paired*
   difference κ(judge) − κ(best) — the same resampled runs for both, :func:`skillbench.calibration._intervals.
   paired_interval` — is at least ``−margin`` (default 0.10). The best judge is non-inferior to itself.
3. The **recommended judge** is the non-inferior judge with the lowest cost per graded run (ties: the higher κ,
   then the name). A judge whose cost is unknown is never preferred to one whose cost is known.

The same test is then applied per item type (must / bonus / avoid) to the recommended judge against the best.
Avoid items are where leniency hurts most (a missed violation hides harm and raises the lift), so a recommended
judge that is not shown non-inferior on avoid items gets a warning; so does one whose self-agreement must bar
(judged on the lower end of its interval) is not a PASS. Without a reference there is no
recommendation. Everything here is a pure function of the study's tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from skillbench.vocab import ITEM_TYPES

DEFAULT_MARGIN = 0.10
KAPPA_COLUMNS = ["judge_model", "item_type", "kappa", "cost_per_run"]
DIFFERENCE_COLUMNS = ["judge_model", "versus", "item_type", "diff", "diff_low", "diff_high"]
JUDGE_COLUMNS = ["judge_model", "kappa", "cost_per_run", "diff", "diff_low", "diff_high", "non_inferior",
                 "best", "recommended"]
TYPE_COLUMNS = ["item_type", "diff", "diff_low", "diff_high", "non_inferior"]


def rule_text(margin: float = DEFAULT_MARGIN, confidence: float = 0.95) -> str:
    """The rule in words, with the margin, as every page states it."""
    return (f"The best judge is the one with the highest Cohen's κ with the reference over all items. The "
            f"recommended judge is the cheapest (cost per graded run) whose κ is not credibly below the best's: the "
            f"lower end of the {confidence:.0%} bootstrap interval of the paired difference κ(judge) − κ(best) "
            f"(the same resampled runs for both) is at least −{margin:.2f}.")


@dataclass(frozen=True)
class Recommendation:
    """What :func:`recommend` decided, with the numbers behind it."""

    best: str | None
    recommended: str | None
    margin: float
    rule: str
    judges: pd.DataFrame  # JUDGE_COLUMNS, one row per judge
    by_type: pd.DataFrame  # TYPE_COLUMNS: the recommended judge against the best, per item type
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``study.json``): NaN becomes None."""
        def clean(frame: pd.DataFrame) -> list[dict[str, Any]]:
            return [{k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
                    for r in frame.astype(object).to_dict("records")]

        return {"best": self.best, "recommended": self.recommended, "margin": self.margin, "rule": self.rule,
                "judges": clean(self.judges), "by_type": clean(self.by_type), "warnings": list(self.warnings)}


def _num(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")


def _difference(differences: pd.DataFrame, judge: str, best: str, kind: str) -> tuple[float, float, float]:
    if judge == best:
        return 0.0, 0.0, 0.0
    hit = differences[differences["judge_model"].eq(judge) & differences["versus"].eq(best)
                      & differences["item_type"].eq(kind)]
    if hit.empty:
        return float("nan"), float("nan"), float("nan")
    row = hit.iloc[0]
    return _num(row["diff"]), _num(row["diff_low"]), _num(row["diff_high"])


def recommend(kappas: pd.DataFrame, differences: pd.DataFrame, *, margin: float = DEFAULT_MARGIN,
              confidence: float = 0.95, must_bar: Mapping[str, str] | None = None) -> Recommendation:
    """Apply the rule of the module docstring.

    Args:
        kappas: :data:`KAPPA_COLUMNS`: each judge's κ with the reference per item type (``all`` included) and
            its cost per graded run (NaN: unknown).
        differences: :data:`DIFFERENCE_COLUMNS`: the paired difference κ(judge) − κ(versus) with its interval,
            per ordered pair of judges and item type.
        margin: the non-inferiority margin on κ (≥ 0).
        confidence: the level of the intervals (for the wording only).
        must_bar: each judge's self-agreement bar state (``PASS``/``NOT SHOWN``/``FAIL``, judged on the lower end
            of the must unanimity's interval); a recommended judge that does not pass gets a warning (the bar is
            no part of the rule: it says whether the judge is stable, not whether it agrees).
    """
    if not margin >= 0:
        raise ValueError(f"margin {margin}: must be 0 or more")
    rule = rule_text(margin, confidence)
    overall = kappas[kappas["item_type"].eq("all")].drop_duplicates("judge_model")
    cost = {r.judge_model: _num(r.cost_per_run) for r in overall.itertuples()}
    kap = {r.judge_model: _num(r.kappa) for r in overall.itertuples()}
    judges = list(overall["judge_model"])
    defined = [j for j in judges if np.isfinite(kap[j])]

    def cheap(j: str) -> float:
        return cost[j] if np.isfinite(cost[j]) else float("inf")

    best = min(defined, key=lambda j: (-kap[j], cheap(j), j)) if defined else None
    rows = []
    for j in judges:
        d, lo, hi = _difference(differences, j, best, "all") if best else (float("nan"),) * 3
        rows.append({"judge_model": j, "kappa": kap[j], "cost_per_run": cost[j], "diff": d, "diff_low": lo,
                     "diff_high": hi, "non_inferior": bool(np.isfinite(lo) and lo >= -margin - 1e-12),
                     "best": j == best})
    table = pd.DataFrame(rows, columns=JUDGE_COLUMNS[:-1])
    ok = table[table["non_inferior"]]
    recommended = (min(ok["judge_model"], key=lambda j: (cheap(j), -kap[j], j)) if best and len(ok) else None)
    table["recommended"] = table["judge_model"].eq(recommended)
    warnings: list[str] = []
    if best is None:
        warnings.append("no judge has a defined κ with the reference (every verdict the same?), so there is no "
                        "recommendation")
    type_rows = []
    if recommended is not None:
        for kind in ITEM_TYPES:
            d, lo, hi = _difference(differences, recommended, best, kind)
            type_rows.append({"item_type": kind, "diff": d, "diff_low": lo, "diff_high": hi,
                              "non_inferior": bool(np.isfinite(lo) and lo >= -margin - 1e-12)})
        avoid = type_rows[ITEM_TYPES.index("avoid")]
        if not avoid["non_inferior"] and recommended != best:
            why = (f"the lower end of κ({recommended}) − κ({best}) on avoid items is {avoid['diff_low']:+.3f}, "
                   f"below −{margin:.2f}" if np.isfinite(avoid["diff_low"])
                   else "κ on avoid items is undefined or has no interval (too few avoid items or violations)")
            warnings.append(f"{recommended} is not shown non-inferior to {best} on avoid items ({why}): a judge "
                            "lenient on avoid items misses harm and inflates the lift; label more avoid items or "
                            f"keep {best} for them")
    state = (must_bar or {}).get(recommended or "", "")
    if recommended is not None and state and state != "PASS":
        warnings.append(f"{recommended}'s self-agreement must bar is {state}: the lower end of its must unanimity's "
                        "interval is below the bar" + (" although the estimate reaches it — grade more runs to show it"
                                                       if state == "NOT SHOWN" else ""))
    return Recommendation(best, recommended, margin, rule, table[JUDGE_COLUMNS],
                          pd.DataFrame(type_rows, columns=TYPE_COLUMNS), warnings)
