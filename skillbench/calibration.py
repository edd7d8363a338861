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
import random
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from skillbench.judge_protocol import POSITIVE_VERDICTS

UNANIMOUS_MUSTS_BAR = 0.95
ITEM_TYPES = ("must", "bonus", "avoid")
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
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

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


# -- running a calibration --------------------------------------------------------------------------------


@dataclass
class CalibrationOptions:
    """What ``skillbench calibrate`` was asked to do."""

    repeat: int = 3
    sample: int | None = None  # runs to grade again (None: every gradeable run)
    judge_model: str | None = None  # default: the ledger's judge, else the default judge
    other_judge: str | None = None
    human: Path | None = None
    include_plugin: bool = False
    seed: int = 0
    jobs: int = 2
    max_retries: int = 4
    timeout: float = 120.0


@dataclass
class Calibration:
    """The tidy results (what the notebooks read) and the files written."""

    grades: pd.DataFrame
    self_agreement: pd.DataFrame
    flipping: pd.DataFrame
    agreement: pd.DataFrame
    evidence: pd.DataFrame
    cost_usd: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def musts_pass(self) -> bool | None:
        row = self.self_agreement[self.self_agreement["item_type"] == "must"]
        return None if row.empty else row["passes"].iloc[0]


def grade_repeats(runs: Sequence[Any], client: Any, samples: Sequence[int], rater: str, *, seed: int = 0,
                  jobs: int = 2) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """Grade each run's items once per sample number (independent samples), evidence verified as in scoring.

    Args:
        runs: :class:`skillbench.judge.RunAnswer` objects.
        client: a :class:`skillbench.judge.JudgeClient`.
        samples: the sample numbers (each is one grading).
        rater: name prefix of the rater (``<rater>#<sample>``).
        seed: rubric-order seed.
        jobs: runs at once.

    Returns:
        ``(grades, evidence, cost)``: tidy gradings (:data:`GRADE_COLUMNS`), the judge's evidence counts
        (one row), and the spend.
    """
    from skillbench.judge import RubricJudge, RunGrading, Vote, judge_prompt_sha

    judge = RubricJudge(client, seed=seed)

    def work(run: Any) -> tuple[list[dict[str, Any]], RunGrading]:
        log = RunGrading(run.run_id, client.model, len(samples), seed, run.rubric_sha, judge_prompt_sha())
        attempts: dict[int, int] = {}
        rows = []
        for s in samples:
            result = judge.grade_sample(run, run.lines(), s, log, attempts)
            for index, kind, text in run.items:
                vote = result.get(index)
                graded = isinstance(vote, Vote)
                rows.append({"run_id": run.run_id, "item_index": index, "item_type": kind, "item_text": text,
                             "prompt": run.prompt, "model": run.model, "condition": run.condition,
                             "rater": f"{rater}#{s}", "verdict": vote.verdict if graded else "ungraded",
                             "flagged": bool(graded and vote.flagged), "reason": "" if graded else str(vote)})
        return rows, log

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(work, runs))
    grades = pd.DataFrame([r for rows, _ in results for r in rows], columns=[c for c in GRADE_COLUMNS
                                                                              if c != "positive"])
    grades["positive"] = positive(grades["verdict"])
    calls = [c for _, log in results for c in log.calls]
    firsts = [c for c in calls if c["purpose"] == "grade" and "positives" in c]
    again = [c for c in calls if c["purpose"] == "re-ask" and "positives" in c]
    p = sum(c["positives"] for c in firsts)
    u = sum(len(c["unverified"]) for c in firsts)
    s_ = sum(len(c["unverified"]) for c in again)
    evidence = pd.DataFrame([{"judge_model": client.model, "positive_verdicts": p, "unverified": u,
                              "hallucinated_evidence_rate": u / p if p else float("nan"), "still_unverified": s_,
                              "residual_rate": s_ / p if p else float("nan")}])
    cost = sum(c.get("cost_usd", 0.0) for c in calls)
    return grades[GRADE_COLUMNS], evidence, cost


def ledger_grades(run_dir: Path, rater: str) -> pd.DataFrame:
    """The final verdicts of ``scores.csv`` as gradings by ``rater`` (empty when there is no ledger)."""
    path = run_dir / "scores.csv"
    if not path.is_file():
        return pd.DataFrame(columns=GRADE_COLUMNS)
    s = pd.read_csv(path, dtype=str, keep_default_na=False)
    if "run_id" not in s or "item_index" not in s:
        return pd.DataFrame(columns=GRADE_COLUMNS)
    out = pd.DataFrame({"run_id": s["run_id"], "item_index": pd.to_numeric(s["item_index"]).astype(int),
                        "item_type": s["item_type"], "item_text": s["item_text"], "prompt": s["prompt"],
                        "model": s["model"], "condition": s["condition"], "rater": rater, "verdict": s["verdict"],
                        "flagged": s["evidence_verified"].eq("0"), "reason": ""})
    out["positive"] = positive(out["verdict"])
    return out[GRADE_COLUMNS]


def human_grades(labels: pd.DataFrame) -> pd.DataFrame:
    """Filled label rows (:func:`skillbench.labels.read_labels`) as gradings, one rater per labeler."""
    out = labels.assign(rater="human:" + labels["labeler"], model="", condition="", flagged=False, reason="")
    out["positive"] = positive(out["verdict"])
    return out.reindex(columns=GRADE_COLUMNS)


def calibrate(
    run_dir: str | Path,
    options: CalibrationOptions,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    log: Any = None,
) -> Calibration:
    """Run the calibration of ``run_dir`` and write ``calibration.csv``, ``calibration-grades.csv`` and
    ``calibration.md``.

    Args:
        run_dir: a generated (and usually judged) run directory.
        options: repeats, sample size, judges, human labels.
        base_url: the Messages endpoint (needed when ``repeat`` ≥ 2 or ``other_judge`` is set).
        api_key: its key.
        log: where progress lines go (default stderr).

    Raises:
        ValueError: nothing to calibrate (no repeats, no other judge, no labels), or labels that match no
            graded item.
    """
    from skillbench.judge import DEFAULT_JUDGE_MODEL, JudgeClient, select_runs
    from skillbench.labels import read_labels

    say = log or (lambda m: print(m, file=sys.stderr))
    run_dir = Path(run_dir)
    ledger = ledger_grades(run_dir, "ledger")
    primary = options.judge_model or _ledger_judge(run_dir) or DEFAULT_JUDGE_MODEL
    frames, evidence, rows, notes = [], [], [], []
    cost = 0.0
    needs_calls = options.repeat >= 2 or options.other_judge
    self_table = pd.DataFrame(columns=SELF_COLUMNS)
    flips = pd.DataFrame(columns=["run_id", "item_index", "item_type", "item_text", "prompt", "verdicts",
                                  "n_positive", "n"])
    if needs_calls:
        if base_url is None or api_key is None:
            raise ValueError("calibrate: grading again needs an endpoint")
        runs, _ = select_runs(run_dir, include_plugin=options.include_plugin)
        if options.sample is not None and options.sample < len(runs):
            runs = random.Random(f"calibrate:{options.seed}").sample(runs, options.sample)
        if not runs:
            raise ValueError(f"{run_dir}: no gradeable run with an answer to calibrate on")
        repeats = list(range(1, max(options.repeat, 1) + 1))
        say(f"calibrate: {len(runs)} runs × {len(repeats)} gradings by {primary}"
            + (f", 1 by {options.other_judge}" if options.other_judge else ""))
        client = JudgeClient(base_url, api_key, primary, max_retries=options.max_retries, timeout=options.timeout)
        try:
            g, ev, c = grade_repeats(runs, client, repeats, primary, seed=options.seed, jobs=options.jobs)
        finally:
            client.close()
        frames.append(g)
        evidence.append(ev)
        cost += c
        raters = [f"{primary}#{s}" for s in repeats]
        if len(raters) >= 2:
            self_table = self_agreement(g, raters)
            flips = flipping_items(g, raters)
            for a, b in itertools.combinations(raters, 2):
                rows.append(agreement_rows(g, "samples", a, b))
            if len(raters) >= 3:
                rows.append(multi_rows(g, "samples (all)", raters))
        if options.other_judge:
            other = JudgeClient(base_url, api_key, options.other_judge, max_retries=options.max_retries,
                                timeout=options.timeout)
            try:
                # Its own sample number: a second judge's errors are its own, not a replay of sample 1's.
                g2, ev2, c2 = grade_repeats(runs, other, [repeats[-1] + 1], options.other_judge,
                                            seed=options.seed, jobs=options.jobs)
            finally:
                other.close()
            frames.append(g2)
            evidence.append(ev2)
            cost += c2
            both = pd.concat([g, g2])
            rows.append(agreement_rows(both, "judges", f"{primary}#1", f"{options.other_judge}#{repeats[-1] + 1}"))
    if options.human is not None:
        labels = read_labels(options.human, run_ids=ledger["run_id"].unique() if not ledger.empty else ())
        humans = human_grades(labels)
        if ledger.empty:
            raise ValueError(f"{run_dir}: --human needs the judge's verdicts (scores.csv); run skillbench judge")
        judged = ledger.set_index(["run_id", "item_index"])
        matched = humans.join(judged[[]], on=["run_id", "item_index"], how="inner")
        if matched.empty:
            raise ValueError(f"{options.human}: no labelled item is in {run_dir / 'scores.csv'}")
        frames.extend([humans, ledger])
        labelers = sorted(humans["rater"].unique())
        for h in labelers:
            rows.append(agreement_rows(pd.concat([humans, ledger]), "judge vs human", h, "ledger"))
        if len(labelers) >= 2:
            rows.append(multi_rows(pd.concat([humans, ledger]), "judge + humans", [*labelers, "ledger"]))
        notes.append(f"human labels: {labels['verdict'].ne('').sum()} from {len(labelers)} labeler(s); the judge "
                     "side is the ledger's final verdict (scores.csv)")
    if not frames:
        raise ValueError("nothing to calibrate: use --repeat 2 or more, --other-judge M, or --human FILE")
    grades = pd.concat(frames, ignore_index=True)
    agreement = _typed(pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=AGREEMENT_COLUMNS))
    cal = Calibration(grades, self_table, flips, agreement,
                      pd.concat(evidence, ignore_index=True) if evidence else pd.DataFrame(), cost, notes)
    write_calibration(run_dir, cal, options, primary)
    return cal


def _ledger_judge(run_dir: Path) -> str | None:
    path = run_dir / "scores.csv"
    if not path.is_file():
        return None
    models = pd.read_csv(path, dtype=str, keep_default_na=False, usecols=lambda c: c == "judge_model")
    values = [m for m in models.get("judge_model", pd.Series(dtype=str)).unique() if m]
    return values[0] if values else None


# -- the report -------------------------------------------------------------------------------------------


def _fmt(x: Any, digits: int = 3) -> str:
    if x is None or x is pd.NA or (isinstance(x, float) and not np.isfinite(x)):
        return "–"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        return f"{x:.{digits}f}"
    return str(x)


def _table(frame: pd.DataFrame, columns: Sequence[str], headers: Sequence[str] | None = None) -> str:
    head = list(headers or columns)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, row in frame.iterrows():
        lines.append("| " + " | ".join(_fmt(row[c]).replace("|", "\\|") for c in columns) + " |")
    return "\n".join(lines)


def render_markdown(cal: Calibration, options: CalibrationOptions, judge_model: str) -> str:
    """``calibration.md``: self-agreement with the must bar, flipping items, agreement, confusion, evidence."""
    out = [f"# Judge calibration — {judge_model}", ""]
    if not cal.self_agreement.empty:
        verdict = {True: "**PASS**", False: "**FAIL**", None: "n/a"}[cal.musts_pass]
        must = cal.self_agreement[cal.self_agreement["item_type"] == "must"].iloc[0]
        out += ["## Self-agreement", "",
                f"The same answers graded {options.repeat} times. Bar: ≥ {UNANIMOUS_MUSTS_BAR:.0%} of must items "
                f"unanimous — {verdict} ({_fmt(must['unanimity'] * 100 if must['n_items'] else None, 1)} % of "
                f"{int(must['n_items'])} musts).", "",
                _table(cal.self_agreement, ["item_type", "n_items", "unanimous", "unanimity", "flipping"],
                       ["item type", "items", "unanimous", "unanimity", "flipping"]), ""]
        if cal.flipping.empty:
            out += ["No item flipped.", ""]
        else:
            out += ["### Flipping items", "",
                    "Items whose verdict changed between gradings: reword them or accept the noise.", "",
                    _table(cal.flipping, ["item_type", "prompt", "run_id", "item_index", "item_text", "verdicts"],
                           ["type", "prompt", "run", "item", "text", "verdicts"]), ""]
    if not cal.agreement.empty:
        out += ["## Agreement", "",
                "κ read on the Landis–Koch scale (≤ 0.20 slight, ≤ 0.40 fair, ≤ 0.60 moderate, ≤ 0.80 "
                "substantial, above almost perfect); α with Krippendorff's rule (≥ 0.800 reliable, ≥ 0.667 "
                "tentative conclusions only, below unreliable). PABAK = 2·p_o − 1 stays readable when base "
                "rates are extreme and κ collapses.", "",
                _table(cal.agreement, ["comparison", "rater_a", "rater_b", "item_type", "n_units", "raw_agreement",
                                       "cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "pabak", "base_rate_a",
                                       "base_rate_b", "landis_koch", "krippendorff_reading"],
                       ["comparison", "rater A", "rater B", "type", "n", "agree", "Cohen κ", "Fleiss κ", "α",
                        "PABAK", "base A", "base B", "κ reading", "α reading"]), ""]
        pairs = cal.agreement[cal.agreement["rater_b"].ne("")]
        if not pairs.empty:
            out += ["### Confusion against the reference (rater A)", "",
                    "A false positive is a \"met\" (or \"violated\") the reference does not give: for must and "
                    "bonus items it is the costly error, because it inflates coverage.", "",
                    _table(pairs, ["comparison", "rater_a", "rater_b", "item_type", "true_positive",
                                   "false_positive", "false_negative", "true_negative", "false_positive_rate",
                                   "false_negative_rate"],
                           ["comparison", "reference", "rater", "type", "both +", "false +", "false −", "both −",
                            "false + rate", "false − rate"]), ""]
    if not cal.evidence.empty:
        out += ["## Evidence", "",
                "Quotes of met/violated verdicts that are not in the answer (first asks), and those still "
                "unverified after the one re-ask (scored missing/clean and flagged).", "",
                _table(cal.evidence, ["judge_model", "positive_verdicts", "unverified", "hallucinated_evidence_rate",
                                      "still_unverified", "residual_rate"],
                       ["judge", "met/violated", "unverified", "rate", "still unverified", "residual rate"]), ""]
    out += ["## Provenance", "", f"- judge model: {judge_model}"]
    if options.other_judge:
        out.append(f"- other judge: {options.other_judge}")
    out += [f"- repeats: {options.repeat}; runs: {cal.grades['run_id'].nunique()}; seed: {options.seed}",
            f"- calibration spend: ${cal.cost_usd:.4f}", *[f"- {n}" for n in cal.notes], ""]
    return "\n".join(out)


def write_calibration(run_dir: Path, cal: Calibration, options: CalibrationOptions, judge_model: str) -> None:
    """Write ``calibration.csv``, ``calibration-grades.csv`` and ``calibration.md`` (atomically)."""
    from skillbench.fileio import atomic_write_text

    rows = [cal.agreement]
    if not cal.self_agreement.empty:
        rows.append(pd.DataFrame({"comparison": "self-agreement", "rater_a": judge_model, "rater_b": "",
                                  "item_type": cal.self_agreement["item_type"],
                                  "n_units": cal.self_agreement["n_items"], "n_raters": options.repeat,
                                  "unanimity": cal.self_agreement["unanimity"]}))
    present = [r for r in rows if not r.empty]
    table = _typed(pd.concat(present, ignore_index=True) if present else pd.DataFrame(columns=AGREEMENT_COLUMNS))
    atomic_write_text(run_dir / "calibration.csv", table.to_csv(index=False))
    atomic_write_text(run_dir / "calibration-grades.csv", cal.grades.to_csv(index=False))
    atomic_write_text(run_dir / "calibration.md", render_markdown(cal, options, judge_model))
