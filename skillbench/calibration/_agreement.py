"""Judge calibration: is the judge stable, does a second judge agree, does it agree with people?

Three measurements, all on binary item verdicts (met/violated = positive, missing/absent/clean = negative;
each item type has exactly two verdicts, so this loses nothing):

* **Self-agreement** — the same answers graded ``repeat`` times (independent samples). Per item type: the
  share of items whose verdicts are unanimous with its interval (:func:`unanimity_interval`); the bar is **≥ 95 %
  unanimous musts** (qdrant's rule for one judge sample per item), judged on the interval's **lower end**
  (:func:`bar_state`: :data:`PASS`, :data:`NOT_SHOWN`, :data:`FAIL`). The items that flipped are listed: they are
  the rubric-wording backlog.
* **Agreement** between samples, between two judge models, and between the judge and human labels: raw
  agreement, Cohen's κ (two raters; ``statsmodels``), Fleiss' κ (three or more raters; ``statsmodels``),
  Krippendorff's α (nominal; the ``krippendorff`` package, which also takes missing ratings), PABAK
  (prevalence- and bias-adjusted κ, ``2·p_o − 1``, which stays readable when nearly every verdict is the
  same and κ collapses), base rates, and the confusion matrix against the reference rater. A false "met"
  (the judge credits what the reference does not) is the costly error: it inflates coverage.
* **Evidence** — each judge's hallucinated-evidence rate (quotes not found in the answer) in the gradings.

κ is read on the Landis–Koch scale; α with Krippendorff's rule (≥ 0.800 reliable, ≥ 0.667 tentative
conclusions only, below that unreliable).

Each κ, α and PABAK carries a 95 % bootstrap interval that resamples runs (or prompts: ``cluster_by``) with all
their items (:func:`agreement_intervals`); fewer than :data:`MIN_CLUSTERS` clusters get no interval, and the row
says so.

Every function returns a tidy DataFrame; :func:`calibrate` runs the gradings and writes ``calibration.csv``
(one row per comparison × item type), ``calibration-grades.csv`` (one row per grading of an item) and
``calibration.md`` into the run directory.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from skillbench.calibration._intervals import (
    BCA,
    NOT_AVAILABLE,
    PERCENTILE,
    Interval,
    cluster_interval,
    kappa as kappa_of_counts,
    pabak_of_counts,
    ratio,
)
from skillbench.scorecard import rate_interval
from skillbench.vocab import (
    BAR_FAIL as FAIL,
    BAR_NOT_SHOWN as NOT_SHOWN,
    BAR_PASS as PASS,
    ITEM_TYPES,
    POSITIVE_VERDICTS,
    UNANIMOUS_MUSTS_BAR,
)

INTERVAL_MEASURES = ("cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "pabak")
CLUSTER_BY = {"run": "run_id", "prompt": "prompt"}  # --cluster-by: what an agreement interval resamples
MIN_CLUSTERS = 10  # fewer runs (or prompts) than this: no interval (a bootstrap over so few has too few resamples)
GRADE_COLUMNS = ["run_id", "item_index", "item_type", "item_text", "prompt", "model", "condition", "rater",
                 "verdict", "positive", "flagged", "reason"]
AGREEMENT_COLUMNS = [
    "comparison", "rater_a", "rater_b", "item_type", "n_units", "n_raters", "raw_agreement", "unanimity",
    "cohen_kappa", "cohen_kappa_se", "fleiss_kappa", "krippendorff_alpha", "pabak", "base_rate_a", "base_rate_b",
    "true_positive", "false_positive", "false_negative", "true_negative", "false_positive_rate",
    "false_negative_rate", "landis_koch", "krippendorff_reading",
    # added with the intervals (issue 31); a file written before them has the columns above only
    *[f"{m}_{end}" for m in INTERVAL_MEASURES for end in ("low", "high")], "interval_method", "clusters",
    "cluster_by", "unanimity_low", "unanimity_high", "bar_state",  # the last three: self-agreement rows only
    # added with the stratified sample (issue 34; self-agreement rows): the item type's items in the week's
    # gradeable runs (n_units of them were graded again), runs graded again of the week's, and the draw's key.
    # A file written before them is a calibration of every run.
    "population_units", "runs", "population_runs", "sample_key",
]
COUNT_COLUMNS = ["n_units", "n_raters", "true_positive", "false_positive", "false_negative", "true_negative",
                 "clusters", "population_units", "runs", "population_runs"]
SELF_COLUMNS = ["item_type", "n_items", "unanimous", "unanimity", "flipping", "bar", "passes",
                "unanimity_low", "unanimity_high", "interval_method", "bar_state"]
BAR_WORDS = (f"The bar is judged on the lower end of the 95 % interval of the must unanimity: {PASS} when it is ≥ "
             f"the bar, {NOT_SHOWN} when the estimate reaches the bar but the lower end does not (too few items to "
             f"show it), {FAIL} when the estimate is below. The interval is the wider of a bootstrap that resamples "
             f"runs (BCa) and the exact Clopper–Pearson interval of unanimous / items; with fewer than "
             f"{{min_clusters}} runs, or when every must is unanimous (every resample agrees), Clopper–Pearson alone "
             f"(conservative). All unanimous, it takes 72 musts to pass at all (0.025^(1/72) = 0.9501).")


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
        same = part.nunique(axis=1).eq(1)
        unanimous = int(same.sum())
        rate = unanimous / n if n else float("nan")
        per_run = pd.DataFrame({"u": same.astype(int).to_numpy(), "n": 1},
                               index=part.index.get_level_values("run_id")).groupby(level=0).sum().to_numpy()
        iv = unanimity_interval(per_run)
        state = bar_state(rate, iv.low) if kind == "must" else ""
        rows.append({"item_type": kind, "n_items": n, "unanimous": unanimous, "unanimity": rate,
                     "flipping": n - unanimous, "bar": UNANIMOUS_MUSTS_BAR if kind == "must" else np.nan,
                     "passes": {PASS: True, FAIL: False}.get(state) if kind == "must" else None,
                     "unanimity_low": iv.low, "unanimity_high": iv.high, "interval_method": iv.method,
                     "bar_state": state})
    return pd.DataFrame(rows, columns=SELF_COLUMNS)


def unanimity_interval(per_run: np.ndarray, *, n_resamples: int = 2000, seed: int = 0,
                       confidence: float = 0.95) -> Interval:
    """Unanimous items / items and its 95 % interval from per-run ``(unanimous, items)`` counts (rows: runs).

    From :data:`MIN_CLUSTERS` runs with items, the wider of the run-clustered bootstrap (:func:`cluster_interval`)
    and the exact Clopper–Pearson interval of the pooled counts, end by end; with fewer runs, or when the bootstrap
    is degenerate (every resample gives the same share: all unanimous), Clopper–Pearson alone — a perfect share is
    never read as certain, and one more flip never raises the lower end.
    """
    counts = np.asarray(per_run, dtype=float).reshape(-1, 2)
    counts = counts[counts[:, 1] > 0]
    k, n = (int(v) for v in counts.sum(axis=0)) if len(counts) else (0, 0)
    exact = rate_interval(k, n, level=confidence, exact=True)
    if not n:
        return Interval(float("nan"), float("nan"), float("nan"), NOT_AVAILABLE)
    if len(counts) >= MIN_CLUSTERS:
        iv = cluster_interval(counts, ratio, n_resamples=n_resamples, seed=seed, confidence=confidence)
        if iv.method in (BCA, PERCENTILE):
            # the wider of the two: the bootstrap sees flips that cluster in runs, Clopper–Pearson sees few flips
            # (one flip among many musts resamples to a lower end above the exact one with none: never monotone)
            return Interval(exact.rate, min(iv.low, exact.low), max(iv.high, exact.high),
                            f"run bootstrap ({iv.method}) or Clopper–Pearson over items, the wider")
    return Interval(exact.rate, exact.low, exact.high, f"{exact.method}, items")


def bar_state(rate: float, low: float, bar: float = UNANIMOUS_MUSTS_BAR) -> str:
    """:data:`PASS` (lower end ≥ bar), :data:`NOT_SHOWN` (estimate ≥ bar > lower end), :data:`FAIL`; "" without
    items."""
    if rate is None or not np.isfinite(rate):
        return ""
    if np.isfinite(low) and low >= bar:
        return PASS
    return NOT_SHOWN if rate >= bar else FAIL


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


def agreement_rows(grades: pd.DataFrame, comparison: str, rater_a: str, rater_b: str, *,
                   cluster_by: str = "run") -> pd.DataFrame:
    """Two-rater statistics per item type and overall (``a`` is the reference of the confusion matrix), with the
    clustered bootstrap intervals of κ, α and PABAK (:func:`agreement_intervals`; ``cluster_by``: run or prompt)."""
    wide = rater_matrix(grades, [rater_a, rater_b])
    clusters = _cluster_of(grades, wide, cluster_by)
    rows = []
    for kind in [*ITEM_TYPES, "all"]:
        at = np.ones(len(wide), dtype=bool) if kind == "all" else wide.index.get_level_values("item_type") == kind
        part = wide[at]
        stats = pair_agreement(part[rater_a], part[rater_b]) if len(part) else pair_agreement([], [])
        rows.append({"comparison": comparison, "rater_a": rater_a, "rater_b": rater_b, "item_type": kind,
                     "n_raters": 2, "unanimity": stats["raw_agreement"], **stats,
                     **agreement_intervals(part[[rater_a, rater_b]], clusters[at], cluster_by)})
    return _typed(pd.DataFrame(rows))


def multi_rows(grades: pd.DataFrame, comparison: str, raters: Sequence[str], *,
               cluster_by: str = "run") -> pd.DataFrame:
    """All-rater statistics (Fleiss' κ, α, unanimity) per item type and overall, with their clustered intervals."""
    wide = rater_matrix(grades, raters)
    clusters = _cluster_of(grades, wide, cluster_by)
    rows = []
    for kind in [*ITEM_TYPES, "all"]:
        at = np.ones(len(wide), dtype=bool) if kind == "all" else wide.index.get_level_values("item_type") == kind
        part = wide[at]
        stats = multi_agreement(part) if len(part) else {"n_units": 0, "n_raters": len(raters)}
        rows.append({"comparison": comparison, "rater_a": " + ".join(raters), "rater_b": "", "item_type": kind,
                     **stats, **agreement_intervals(part, clusters[at], cluster_by)})
    return _typed(pd.DataFrame(rows))


# -- intervals: a bootstrap over runs (or prompts), the items of one cluster resampled together ----------------------


def _cluster_of(grades: pd.DataFrame, wide: pd.DataFrame, cluster_by: str) -> np.ndarray:
    """The cluster of each unit (row of ``wide``): its run, or its run's prompt (the run when the prompt is unknown)."""
    if cluster_by not in CLUSTER_BY:
        raise ValueError(f"cluster_by {cluster_by!r}: use one of {', '.join(CLUSTER_BY)}")
    runs = wide.index.get_level_values("run_id").astype(str)
    if cluster_by == "run" or "prompt" not in grades.columns:
        return np.asarray(runs)
    known = grades[grades["prompt"].fillna("").astype(str).ne("")]
    prompt = known.assign(run_id=known["run_id"].astype(str)).groupby("run_id")["prompt"].first()
    return np.asarray(pd.Series(runs).map(prompt).fillna(pd.Series(runs)), dtype=str)


def alpha_of_coincidences(c: np.ndarray) -> np.ndarray:
    """Krippendorff's α (nominal, two categories) from summed coincidences ``(o_00, o_01, o_11)`` (last axis).

    ``o_01`` is one off-diagonal cell (the matrix is symmetric); ``n_c`` are the margins and
    ``α = 1 − (n − 1)·o_01 / (n_0·n_1)`` (Krippendorff 2011, "Computing Krippendorff's alpha-reliability", the
    nominal case of ``1 − D_o/D_e``); NaN when one category only occurs.
    """
    c = np.asarray(c, dtype=float)
    o00, o01, o11 = c[..., 0], c[..., 1], c[..., 2]
    n0, n1 = o00 + o01, o11 + o01
    den = n0 * n1
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, 1 - (n0 + n1 - 1) * o01 / np.where(den > 0, den, 1), np.nan)


def fleiss_of_sums(c: np.ndarray) -> np.ndarray:
    """Fleiss' κ of binary ratings from summed ``(units, Σ P_i, positive ratings, ratings)`` (last axis), each
    unit rated by the same ``m`` raters; ``P_i = (b(b−1) + a(a−1)) / (m(m−1))`` is unit i's pairwise agreement."""
    c = np.asarray(c, dtype=float)
    units, p_sum, pos, ratings = c[..., 0], c[..., 1], c[..., 2], c[..., 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        p1 = np.where(ratings > 0, pos / np.where(ratings > 0, ratings, 1), np.nan)
        p_e = p1 ** 2 + (1 - p1) ** 2
        p_bar = np.where(units > 0, p_sum / np.where(units > 0, units, 1), np.nan)
        return np.where(np.isfinite(p_e) & (p_e < 1), (p_bar - p_e) / np.where(p_e < 1, 1 - p_e, 1), np.nan)


def _per_unit(wide: pd.DataFrame) -> np.ndarray:
    """Per unit (row of a units × raters matrix of 0/1, NaN missing): the summable pieces of every statistic.

    Columns: the four confusion cells of the first two raters (``_intervals.CONFUSION`` order, units where both
    rated), Fleiss' ``(unit, P_i, b, m)`` (complete units only) and α's coincidences ``(o_00, o_01, o_11)`` (units
    with two ratings or more).
    """
    x = wide.to_numpy(dtype=float)
    b = np.nansum(x == 1, axis=1).astype(float)
    a = np.nansum(x == 0, axis=1).astype(float)
    m = a + b
    out = np.zeros((len(x), 11))
    if x.shape[1] >= 2:
        r, g = x[:, 0], x[:, 1]
        out[:, 0], out[:, 1] = (r == 1) & (g == 1), (r == 0) & (g == 1)
        out[:, 2], out[:, 3] = (r == 1) & (g == 0), (r == 0) & (g == 0)
    complete = (m == x.shape[1]) & (m >= 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        out[:, 4] = complete
        out[:, 5] = np.where(complete, (b * (b - 1) + a * (a - 1)) / (m * (m - 1)), 0)
        out[:, 6], out[:, 7] = np.where(complete, b, 0), np.where(complete, m, 0)
        pairable = m >= 2
        out[:, 8] = np.where(pairable, a * (a - 1) / (m - 1), 0)
        out[:, 9] = np.where(pairable, a * b / (m - 1), 0)
        out[:, 10] = np.where(pairable, b * (b - 1) / (m - 1), 0)
    return out


_OF_UNITS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "cohen_kappa": lambda c: kappa_of_counts(c[..., 0:4]),
    "pabak": lambda c: pabak_of_counts(c[..., 0:4]),
    "fleiss_kappa": lambda c: fleiss_of_sums(c[..., 4:8]),
    "krippendorff_alpha": lambda c: alpha_of_coincidences(c[..., 8:11]),
}


def agreement_intervals(wide: pd.DataFrame, clusters: np.ndarray, cluster_by: str = "run", *,
                        n_resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The 95 % bootstrap intervals of κ (Cohen's for two raters, Fleiss' for three or more), α and PABAK.

    The clusters (runs, or prompts) are resampled with every unit they hold
    (:func:`skillbench.calibration._intervals.cluster_interval`: BCa, percentile when BCa is degenerate). Below
    :data:`MIN_CLUSTERS` clusters there is no interval and ``interval_method`` says so; nor when every resample
    gives the same value (``degenerate``: perfect agreement resamples to itself — a zero-width interval would
    read as certainty).

    Returns:
        ``<measure>_low``/``_high`` per :data:`INTERVAL_MEASURES` (NaN where the statistic is not the row's),
        ``interval_method``, ``clusters`` (how many), ``cluster_by``.
    """
    keys = pd.Series(np.asarray(clusters, dtype=str))
    order = sorted(keys.unique())
    n = len(order)
    out: dict[str, Any] = {f"{m}_{end}": np.nan for m in INTERVAL_MEASURES for end in ("low", "high")}
    out |= {"clusters": n, "cluster_by": cluster_by}
    if n < MIN_CLUSTERS:
        out["interval_method"] = f"none: {n} {cluster_by}s (< {MIN_CLUSTERS})"
        return out
    per = pd.DataFrame(_per_unit(wide)).groupby(keys.to_numpy()).sum().reindex(order).to_numpy()
    two = wide.shape[1] == 2
    methods = set()
    for measure in INTERVAL_MEASURES:
        if measure == ("fleiss_kappa" if two else "cohen_kappa") or (measure == "pabak" and not two):
            continue
        iv = cluster_interval(per, _OF_UNITS[measure], n_resamples=n_resamples, seed=seed)
        if iv.method in (BCA, PERCENTILE):  # a degenerate one (perfect agreement resamples to itself) is not shown
            out[f"{measure}_low"], out[f"{measure}_high"] = iv.low, iv.high
        methods.add(iv.method)
    out["interval_method"] = " / ".join(sorted(methods))
    return out
