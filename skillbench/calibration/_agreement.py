"""Judge calibration: is the judge stable, does a second judge agree, does it agree with people?

Three measurements, all on binary item verdicts (met/violated = positive, missing/absent/clean = negative;
each item type has exactly two verdicts, so this loses nothing):

* **Self-agreement** — the same answers graded ``repeat`` times (independent samples). Per item type: the
  share of items whose verdicts are unanimous; the bar is **≥ 95 % unanimous musts** (qdrant's rule for one
  judge sample per item). The items that flipped are listed: they are the rubric-wording backlog.
* **Agreement** between samples, between two judge models, and between the judge and human labels: raw
  agreement, Cohen's κ (two raters; ``statsmodels``), Fleiss' κ (three or more raters; ``statsmodels``),
  Krippendorff's α (nominal; the ``krippendorff`` package, which also takes missing ratings), PABAK
  (prevalence- and bias-adjusted κ, ``2·p_o − 1``, which stays readable when nearly every verdict is the
  same and κ collapses), base rates, and the confusion matrix against the reference rater. A false "met"
  (the judge credits what the reference does not) is the costly error: it inflates coverage.
* **Evidence** — each judge's hallucinated-evidence rate (quotes not found in the answer) in the gradings.

κ is read on the Landis–Koch scale; α with Krippendorff's rule (≥ 0.800 reliable, ≥ 0.667 tentative
conclusions only, below that unreliable).

Every function returns a tidy DataFrame; :func:`calibrate` runs the gradings and writes ``calibration.csv``
(one row per comparison × item type), ``calibration-grades.csv`` (one row per grading of an item) and
``calibration.md`` into the run directory.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from skillbench.vocab import ITEM_TYPES, POSITIVE_VERDICTS

UNANIMOUS_MUSTS_BAR = 0.95
GRADE_COLUMNS = ["run_id", "item_index", "item_type", "item_text", "prompt", "model", "condition", "rater",
                 "verdict", "positive", "flagged", "reason"]
AGREEMENT_COLUMNS = [
    "comparison", "rater_a", "rater_b", "item_type", "n_units", "n_raters", "raw_agreement", "unanimity",
    "cohen_kappa", "cohen_kappa_se", "fleiss_kappa", "krippendorff_alpha", "pabak", "base_rate_a", "base_rate_b",
    "true_positive", "false_positive", "false_negative", "true_negative", "false_positive_rate",
    "false_negative_rate", "landis_koch", "krippendorff_reading",
]
COUNT_COLUMNS = ["n_units", "n_raters", "true_positive", "false_positive", "false_negative", "true_negative"]
SELF_COLUMNS = ["item_type", "n_items", "unanimous", "unanimity", "flipping", "bar", "passes"]


# -- interpretation ---------------------------------------------------------------------------------------


def landis_koch(kappa: float) -> str:
    """Landis & Koch (1977) wording for a κ value."""
    if kappa is None or not np.isfinite(kappa):
        return "undefined"
    if kappa < 0:
        return "poor"
    for upper, label in ((0.20, "slight"), (0.40, "fair"), (0.60, "moderate"), (0.80, "substantial")):
        if kappa <= upper:
            return label
    return "almost perfect"


def krippendorff_reading(alpha: float) -> str:
    """Krippendorff's (2004) rule: rely on α ≥ 0.800, tentative conclusions for 0.667 ≤ α < 0.800."""
    if alpha is None or not np.isfinite(alpha):
        return "undefined"
    if alpha >= 0.800:
        return "reliable"
    if alpha >= 0.667:
        return "tentative conclusions only"
    return "unreliable"


# -- agreement statistics ---------------------------------------------------------------------------------


def _codes(*columns: Sequence[Any]) -> tuple[list[np.ndarray], list[Any]]:
    """Integer codes (NaN for missing) of several label columns over their shared categories."""
    values = [v for col in columns for v in col if not pd.isna(v)]
    categories = sorted(set(values), key=str)
    index = {c: i for i, c in enumerate(categories)}
    out = [np.array([np.nan if pd.isna(v) else index[v] for v in col], dtype=float) for col in columns]
    return out, categories


def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> tuple[float, float]:
    """Cohen's κ and its asymptotic standard error for two raters' labels of the same units.

    Units where either label is missing are dropped. Uses ``statsmodels.stats.inter_rater.cohens_kappa``.

    Returns:
        ``(kappa, se)``; NaN when the labels use a single category (chance agreement is then 1).
    """
    from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

    pairs = [(x, y) for x, y in zip(a, b, strict=True) if not (pd.isna(x) or pd.isna(y))]
    (ca, cb), cats = _codes([x for x, _ in pairs], [y for _, y in pairs])
    if len(cats) < 2:
        return float("nan"), float("nan")
    table = np.zeros((len(cats), len(cats)))
    np.add.at(table, (ca.astype(int), cb.astype(int)), 1)
    res = sm_kappa(table)
    return float(res.kappa), float(res.std_kappa)


def fleiss_kappa(ratings: np.ndarray | pd.DataFrame) -> float:
    """Fleiss' κ of a units × raters label matrix (units with a missing rating are dropped).

    Uses ``statsmodels`` ``aggregate_raters`` + ``fleiss_kappa``; NaN with a single category.
    """
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa as sm_fleiss

    frame = pd.DataFrame(ratings).dropna()
    if frame.empty or frame.shape[1] < 2:
        return float("nan")
    (codes,), cats = _codes(frame.to_numpy().ravel())
    if len(cats) < 2:
        return float("nan")
    table, _ = aggregate_raters(codes.reshape(frame.shape).astype(int))
    return float(sm_fleiss(table, method="fleiss"))


def krippendorff_alpha(ratings: np.ndarray | pd.DataFrame) -> float:
    """Krippendorff's α (nominal) of a units × raters label matrix; missing ratings allowed.

    Uses the ``krippendorff`` package (which wants raters × units); NaN when fewer than two categories occur.
    """
    import krippendorff

    frame = pd.DataFrame(ratings)
    (codes,), cats = _codes(frame.to_numpy().ravel())
    if len(cats) < 2:
        return float("nan")
    data = codes.reshape(frame.shape).T
    try:
        return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    except ValueError:
        return float("nan")


def pabak(a: Sequence[Any], b: Sequence[Any], n_categories: int = 2) -> float:
    """Prevalence- and bias-adjusted κ: ``(k·p_o − 1)/(k − 1)``, i.e. ``2·p_o − 1`` for two categories."""
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if not (pd.isna(x) or pd.isna(y))]
    if not pairs:
        return float("nan")
    p_o = sum(x == y for x, y in pairs) / len(pairs)
    return (n_categories * p_o - 1) / (n_categories - 1)


def pair_agreement(a: Sequence[Any], b: Sequence[Any]) -> dict[str, Any]:
    """Every two-rater statistic for binary labels (1 positive, 0 negative; NaN missing), ``a`` the reference.

    Returns:
        ``n_units, raw_agreement, cohen_kappa, cohen_kappa_se, krippendorff_alpha, pabak, base_rate_a,
        base_rate_b``, the confusion cells (``true_positive`` = both positive, ``false_positive`` = ``b``
        positive where ``a`` is not — a false "met"), their rates, and the two readings.
    """
    x = pd.Series(list(a), dtype="float")
    y = pd.Series(list(b), dtype="float")
    keep = x.notna() & y.notna()
    x, y = x[keep].astype(int), y[keep].astype(int)
    n = int(keep.sum())
    kappa, se = cohen_kappa(list(x), list(y))
    alpha = krippendorff_alpha(np.column_stack([x, y])) if n else float("nan")
    tp = int(((x == 1) & (y == 1)).sum())
    fp = int(((x == 0) & (y == 1)).sum())
    fn = int(((x == 1) & (y == 0)).sum())
    tn = int(((x == 0) & (y == 0)).sum())
    return {
        "n_units": n, "raw_agreement": (tp + tn) / n if n else float("nan"), "cohen_kappa": kappa,
        "cohen_kappa_se": se, "krippendorff_alpha": alpha, "pabak": pabak(list(x), list(y)),
        "base_rate_a": float(x.mean()) if n else float("nan"), "base_rate_b": float(y.mean()) if n else float("nan"),
        "true_positive": tp, "false_positive": fp, "false_negative": fn, "true_negative": tn,
        "false_positive_rate": fp / (fp + tn) if fp + tn else float("nan"),
        "false_negative_rate": fn / (fn + tp) if fn + tp else float("nan"),
        "landis_koch": landis_koch(kappa), "krippendorff_reading": krippendorff_reading(alpha),
    }


def multi_agreement(ratings: pd.DataFrame) -> dict[str, Any]:
    """Statistics over all raters of a units × raters matrix: unanimity, Fleiss' κ (≥ 3 raters), α."""
    complete = ratings.dropna()
    n_raters = ratings.shape[1]
    unanimous = complete.nunique(axis=1).eq(1)
    kappa = fleiss_kappa(complete) if n_raters >= 3 else float("nan")
    alpha = krippendorff_alpha(ratings)
    pairs = [(ratings.iloc[:, i], ratings.iloc[:, j]) for i, j in itertools.combinations(range(n_raters), 2)]
    raw = np.nanmean([(a[a.notna() & b.notna()] == b[a.notna() & b.notna()]).mean() for a, b in pairs]) \
        if pairs else float("nan")
    return {"n_units": len(complete), "n_raters": n_raters, "unanimity": float(unanimous.mean()) if len(complete)
            else float("nan"), "raw_agreement": float(raw), "fleiss_kappa": kappa, "krippendorff_alpha": alpha,
            "landis_koch": landis_koch(kappa), "krippendorff_reading": krippendorff_reading(alpha)}


# -- tidy tables from gradings ----------------------------------------------------------------------------


def positive(verdicts: pd.Series) -> pd.Series:
    """1.0 for met/violated, 0.0 for missing/absent/clean, NaN for ungraded or blank."""
    v = verdicts.fillna("").astype(str).str.strip().str.lower()
    out = pd.Series(np.nan, index=verdicts.index)
    out[v.isin(POSITIVE_VERDICTS)] = 1.0
    out[v.isin({"missing", "absent", "clean"})] = 0.0
    return out


def rater_matrix(grades: pd.DataFrame, raters: Sequence[str] | None = None) -> pd.DataFrame:
    """Units (run_id, item_index) × raters of binary labels, with ``item_type`` in the index."""
    g = grades[grades["positive"].notna()] if raters is None else grades[grades["rater"].isin(raters)]
    wide = g.pivot_table(index=["item_type", "run_id", "item_index"], columns="rater", values="positive",
                         aggfunc="first")
    if raters is not None:
        wide = wide.reindex(columns=list(raters))
    return wide


def self_agreement(grades: pd.DataFrame, raters: Sequence[str]) -> pd.DataFrame:
    """Unanimity per item type over ``raters`` (the repeated samples), with the must bar as pass/fail.

    Returns:
        One row per item type and ``all``: ``item_type, n_items, unanimous, unanimity, flipping, bar, passes``
        (``bar`` and ``passes`` only on the must row).
    """
    wide = rater_matrix(grades, raters).dropna()
    rows = []
    for kind in [*ITEM_TYPES, "all"]:
        part = wide if kind == "all" else wide[wide.index.get_level_values("item_type") == kind]
        n = len(part)
        unanimous = int(part.nunique(axis=1).eq(1).sum())
        rate = unanimous / n if n else float("nan")
        rows.append({"item_type": kind, "n_items": n, "unanimous": unanimous, "unanimity": rate,
                     "flipping": n - unanimous, "bar": UNANIMOUS_MUSTS_BAR if kind == "must" else np.nan,
                     "passes": (bool(rate >= UNANIMOUS_MUSTS_BAR) if n else None) if kind == "must" else None})
    return pd.DataFrame(rows, columns=SELF_COLUMNS)


def flipping_items(grades: pd.DataFrame, raters: Sequence[str]) -> pd.DataFrame:
    """Items whose verdicts differ across ``raters``: ``run_id, item_index, item_type, item_text, verdicts``."""
    g = grades[grades["rater"].isin(raters)]
    keys = ["run_id", "item_index", "item_type", "item_text", "prompt"]
    agg = g.groupby(keys, sort=True).agg(verdicts=("verdict", lambda s: " / ".join(s)),
                                         n_positive=("positive", "sum"), n=("positive", "count"),
                                         distinct=("positive", "nunique"))
    out = agg[agg["distinct"] > 1].drop(columns="distinct").reset_index()
    return out.sort_values(["item_type", "prompt", "run_id", "item_index"], key=_type_order).reset_index(drop=True)


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """The agreement columns in order, counts as nullable integers."""
    out = frame.reindex(columns=AGREEMENT_COLUMNS)
    return out.astype({c: "Int64" for c in COUNT_COLUMNS})


def _type_order(col: pd.Series) -> pd.Series:
    return col.map({t: i for i, t in enumerate(ITEM_TYPES)}) if col.name == "item_type" else col


def agreement_rows(grades: pd.DataFrame, comparison: str, rater_a: str, rater_b: str) -> pd.DataFrame:
    """Two-rater statistics per item type and overall (``a`` is the reference of the confusion matrix)."""
    wide = rater_matrix(grades, [rater_a, rater_b])
    rows = []
    for kind in [*ITEM_TYPES, "all"]:
        part = wide if kind == "all" else wide[wide.index.get_level_values("item_type") == kind]
        stats = pair_agreement(part[rater_a], part[rater_b]) if len(part) else pair_agreement([], [])
        rows.append({"comparison": comparison, "rater_a": rater_a, "rater_b": rater_b, "item_type": kind,
                     "n_raters": 2, "unanimity": stats["raw_agreement"], **stats})
    return _typed(pd.DataFrame(rows))


def multi_rows(grades: pd.DataFrame, comparison: str, raters: Sequence[str]) -> pd.DataFrame:
    """All-rater statistics (Fleiss' κ, α, unanimity) per item type and overall."""
    wide = rater_matrix(grades, raters)
    rows = []
    for kind in [*ITEM_TYPES, "all"]:
        part = wide if kind == "all" else wide[wide.index.get_level_values("item_type") == kind]
        stats = multi_agreement(part) if len(part) else {"n_units": 0, "n_raters": len(raters)}
        rows.append({"comparison": comparison, "rater_a": " + ".join(raters), "rater_b": "", "item_type": kind,
                     **stats})
    return _typed(pd.DataFrame(rows))
