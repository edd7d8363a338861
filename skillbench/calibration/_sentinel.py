"""The judge drift sentinel: the week's judge re-grades a frozen gold set, and a move beyond noise flags the week.

:func:`run_sentinel` grades every gold answer (:mod:`skillbench.calibration._gold`) once with the week's judge,
through the same protocol and evidence check as the rubric judge (:func:`skillbench.calibration._run.grade_repeats`),
and writes ``RUN_DIR/sentinel-grades.csv`` (one row per gold item) and ``RUN_DIR/sentinel.json`` (judge model, the
resolved snapshot, agreement with the gold labels — raw and Cohen's κ —, mean must credit, the comparison, the flag).

**The drift rule** (one rule; its noise band is :mod:`skillbench.scorecard._noise`'s). The week is compared with the
most recent earlier week of the same weekly folder that has a sentinel for the same gold file (same
:func:`~skillbench.calibration._gold.gold_sha`) and the same endpoint kind, weeks ordered by their run window. For
must credit (must items) and for agreement with the gold labels (every item):

* the move is the mean of the **paired** per-item differences (the gold items graded in both weeks);
* within-week noise is ``t(a − 1) × SE`` of that mean with the items **clustered by gold answer** (``a`` answers
  with a paired item; :func:`clustered_mean_se`): the items of one answer are graded in one call and move
  together, so counting them as independent would make the band too narrow; between-week noise is
  ``t(a − 1) × σ × √2``, σ the ddof = 1 spread of the earlier weeks' values
  (:func:`~skillbench.scorecard._noise.between_band`, two or more earlier weeks);
* ``limit = threshold(within, between)``; the measure moved when ``moved(move, limit)``.

The week is flagged when either measure moved ("drift") or when the judge model or its resolved snapshot differs
from the earlier week's ("judge changed": a new judge must be re-certified even if the gold set did not move). The
first week (no earlier week) is never flagged: it is the baseline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from skillbench.calibration._agreement import GRADE_COLUMNS, pair_agreement, positive
from skillbench.calibration._gold import gold_sha, read_gold
from skillbench.ledgers import MANIFEST_FILE, SENTINEL_FILE, SENTINEL_GRADES_FILE, read_sentinel, read_sentinel_grades
from skillbench.runtime import PassContext

DRIFT_BANNER = "judge drift — re-certify before reading this week's lift"
BASELINE, STABLE, DRIFT, JUDGE_CHANGED = "baseline", "stable", "drift", "judge changed"
FLAGS = (BASELINE, STABLE, DRIFT, JUDGE_CHANGED)
SENTINEL_GRADE_COLUMNS = [*GRADE_COLUMNS, "gold_verdict", "gold_positive", "agrees"]
MEASURES = {"must_credit": "mean must credit", "agreement": "agreement with the gold labels"}
COMPARISON_COLUMNS = ["measure", "n_paired", "n_answers", "now", "previous", "move", "within", "between",
                      "threshold", "moved"]


@dataclass
class Sentinel:
    """The week's sentinel: every gold item's grade and the summary ``sentinel.json`` holds."""

    grades: pd.DataFrame
    summary: dict[str, Any]
    comparison: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=COMPARISON_COLUMNS))

    @property
    def flag(self) -> str:
        return str(self.summary["flag"])

    @property
    def flagged(self) -> bool:
        return bool(self.summary["flagged"])


def _now() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def _week_identity(run_dir: Path, fallback_endpoint: str) -> tuple[str, str]:
    """``(endpoint kind, window end)`` of the week from its manifest (what the history keys weeks by)."""
    from skillbench.ledgers import format_timestamp, read_manifest

    if not (run_dir / MANIFEST_FILE).is_file():
        return fallback_endpoint, ""
    manifest = read_manifest(run_dir / MANIFEST_FILE)
    kinds = sorted(set(manifest["endpoint"].astype(str)) - {""})
    stamps = manifest["started_at"].dropna()
    return (kinds[0] if len(kinds) == 1 else "mixed" if kinds else fallback_endpoint,
            format_timestamp(stamps.max()) if len(stamps) else "")


def score_against_gold(grades: pd.DataFrame, gold: list[Any]) -> pd.DataFrame:
    """The gradings with each item's gold verdict, its positive reading and whether the judge agrees."""
    label = {(g.gold_id, i): v for g in gold for i, v in g.labels.items()}
    out = grades.copy()
    out["gold_verdict"] = [label.get((r, int(i)), "") for r, i in zip(out["run_id"], out["item_index"], strict=True)]
    out["gold_positive"] = positive(out["gold_verdict"])
    out["agrees"] = np.where(out["positive"].isna(), np.nan, (out["positive"] == out["gold_positive"]).astype(float))
    return out[SENTINEL_GRADE_COLUMNS]


def sentinel_values(grades: pd.DataFrame) -> dict[str, Any]:
    """Agreement with the gold labels (raw, κ) and mean must credit of one week's sentinel grades."""
    graded = grades[grades["positive"].notna()]
    stats = pair_agreement(graded["gold_positive"].tolist(), graded["positive"].tolist())
    musts = graded[graded["item_type"] == "must"]
    kappa = stats["cohen_kappa"]
    return {"n_items": len(grades), "n_graded": len(graded), "n_must": len(musts),
            "agreement": float(graded["agrees"].mean()) if len(graded) else None,
            "kappa": None if kappa is None or not np.isfinite(kappa) else float(kappa),
            "must_credit": float(musts["positive"].mean()) if len(musts) else None,
            "false_positive": int(stats["false_positive"]), "false_negative": int(stats["false_negative"])}


def _order(window_end: str, run_key: str) -> tuple[int, int, str]:
    """Weeks in the order they ran: by run window (a week without one first), the run key only breaking ties."""
    from skillbench.ledgers import parse_timestamps

    stamp = parse_timestamps(pd.Series([window_end])).iloc[0]
    return (0, 0, run_key) if pd.isna(stamp) else (1, int(stamp.value), run_key)


def _earlier_weeks(run_dir: Path, sha: str, endpoint: str, window_end: str) -> list[tuple[Path, dict[str, Any]]]:
    """The weekly folder's earlier weeks with a sentinel of the same gold file and endpoint kind, earliest first."""
    here = _order(window_end, run_dir.name)
    found = []
    for folder in (p for p in run_dir.parent.iterdir() if p.is_dir() and p.resolve() != run_dir.resolve()):
        summary = read_sentinel(folder)
        if summary is None or not (folder / SENTINEL_GRADES_FILE).is_file() or summary.get("gold_sha") != sha \
                or summary.get("endpoint") != endpoint:
            continue
        when = _order(str(summary.get("window_end", "")), folder.name)
        if when < here:
            found.append((when, folder, summary))
    return [(folder, summary) for _, folder, summary in sorted(found, key=lambda w: w[0])]


def clustered_mean_se(values: np.ndarray, clusters: np.ndarray) -> tuple[float, float, int]:
    """The mean of ``values`` with its cluster-robust SE: ``(mean, SE, clusters)``.

    ``SE² = C/(C − 1) · Σ_c (Σ_{i∈c} (xᵢ − x̄))² / N²`` over ``C`` clusters of ``N`` values in all (the
    linearisation, "CR1", variance of a mean); with one value per cluster it is the usual ``s/√N`` (ddof = 1).
    NaN below two clusters.
    """
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n == 0:
        return float("nan"), float("nan"), 0
    mean = float(x.mean())
    sums = pd.Series(x - mean).groupby(np.asarray(clusters)).sum().to_numpy()
    c = len(sums)
    if c < 2:
        return mean, float("nan"), c
    return mean, float(np.sqrt(c / (c - 1) * np.sum(sums**2)) / n), c


def compare_weeks(now: pd.DataFrame, earlier: list[tuple[pd.DataFrame, dict[str, Any]]],
                  confidence: float = 0.95) -> pd.DataFrame:
    """The drift rule's table (see the module docstring): one row per measure.

    Args:
        now: this week's sentinel grades.
        earlier: earlier weeks' ``(sentinel grades, sentinel.json)``, earliest first; the last is compared.
        confidence: of the t multiplier.
    """
    from skillbench.scorecard import between_band, moved, t_critical, threshold

    prev_grades, _ = earlier[-1]
    key = ["run_id", "item_index"]
    rows = []
    for measure, column, kinds in (("must_credit", "positive", {"must"}), ("agreement", "agrees", None)):
        a = now if kinds is None else now[now["item_type"].isin(kinds)]
        b = prev_grades if kinds is None else prev_grades[prev_grades["item_type"].isin(kinds)]
        both = a[[*key, column]].merge(b[[*key, column]], on=key, suffixes=("_now", "_prev")).dropna()
        d = (both[f"{column}_now"].astype(float) - both[f"{column}_prev"].astype(float)).to_numpy()
        n = len(d)
        move, se, answers = clustered_mean_se(d, both["run_id"].astype(str).to_numpy())
        within = t_critical(answers - 1, confidence) * se if answers >= 2 else float("nan")
        # on the scale of a difference of two weeks, with the within band's t (scorecard/_noise.py's one rule)
        between = between_band([s.get(measure) if s.get(measure) is not None else np.nan for _, s in earlier],
                               answers - 1 if answers >= 2 else np.inf, confidence)
        limit = threshold(within, between)
        rows.append({"measure": measure, "n_paired": n, "n_answers": answers,
                     "now": float(a[column].mean()) if a[column].notna().any() else float("nan"),
                     "previous": float(b[column].mean()) if b[column].notna().any() else float("nan"),
                     "move": move, "within": within, "between": between, "threshold": limit,
                     "moved": moved(move, limit)})
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def judge_sentinel(run_dir: Path, grades: pd.DataFrame, gold_path: Path, *, judge_model: str, snapshot: str,
                   endpoint: str, cost_usd: float = 0.0) -> Sentinel:
    """Compare a week's sentinel grades with the earlier weeks and decide the flag (writes nothing)."""
    sha = gold_sha(gold_path)
    kind, window_end = _week_identity(run_dir, endpoint)
    summary: dict[str, Any] = {"gold": str(gold_path), "gold_sha": sha, "n_answers": int(grades["run_id"].nunique()),
                               "judge_model": judge_model, "judge_snapshot": snapshot, "endpoint": kind,
                               "window_end": window_end, "run_key": run_dir.name, **sentinel_values(grades),
                               "cost_usd": round(cost_usd, 8)}
    earlier = _earlier_weeks(run_dir, sha, kind, window_end)
    reasons: list[str] = []
    comparison = pd.DataFrame(columns=COMPARISON_COLUMNS)
    if not earlier:
        flag, summary["previous"] = BASELINE, None
        reasons.append("baseline: no earlier week with a sentinel of this gold set and endpoint kind")
    else:
        prev_dir, prev = earlier[-1]
        comparison = compare_weeks(grades, [(read_sentinel_grades(f), s) for f, s in earlier])
        summary["previous"] = {"run_key": prev_dir.name, "judge_model": prev.get("judge_model", ""),
                               "judge_snapshot": prev.get("judge_snapshot", ""), "weeks_before": len(earlier)}
        for row in comparison.itertuples(index=False):
            if row.moved == "yes":
                reasons.append(f"{MEASURES[row.measure]} moved {row.move:+.3f} since {prev_dir.name} (threshold "
                               f"{row.threshold:.3f}, {row.n_paired} paired items of {row.n_answers} answers)")
        drift = bool(reasons)
        for what, old, new in (("judge model", prev.get("judge_model", ""), judge_model),
                               ("judge snapshot", prev.get("judge_snapshot", ""), snapshot)):
            if old != new:
                reasons.append(f"{what} changed since {prev_dir.name}: {old or '(unknown)'} → {new or '(unknown)'}")
        flag = DRIFT if drift else JUDGE_CHANGED if reasons else STABLE
        if flag == STABLE:
            reasons.append(f"within noise of {prev_dir.name}")
    summary.update(flag=flag, flagged=flag in (DRIFT, JUDGE_CHANGED), reasons=reasons,
                   comparison=json.loads(comparison.to_json(orient="records")), written=_now())
    return Sentinel(grades, summary, comparison)


@dataclass(frozen=True)
class SentinelOptions:
    """What a sentinel pass was asked to do."""

    judge_model: str | None = None  # None: the week's judge (``scores.csv``), else the default judge
    seed: int = 0  # rubric-order seed
    jobs: int = 2  # answers graded at once
    max_retries: int = 4
    timeout: float = 120.0


def run_sentinel(run_dir: str | Path, gold_path: str | Path, options: SentinelOptions, ctx: PassContext) -> Sentinel:
    """Grade the gold set with the week's judge, compare with the earlier weeks, write the sentinel's two files.

    Args:
        run_dir: the week (``SUITE_DIR/weekly/<run_key>/``; its siblings are the earlier weeks).
        gold_path: ``SUITE_DIR/judge-gold/gold.jsonl``.
        options: the judge model, seed, concurrency and retries.
        ctx: the Messages endpoint (its kind is recorded when the week has no manifest; else the manifest's, as
            the history's), the log.

    Raises:
        GoldError: the gold set cannot be read.
    """
    from skillbench.calibration._run import _ledger_judge, grade_repeats
    from skillbench.judge import JudgeClient, resolve_judge_model
    from skillbench.ledgers import atomic_write_json, atomic_write_text

    run_dir, gold_path = Path(run_dir), Path(gold_path)
    gold = read_gold(gold_path)
    model = resolve_judge_model(options.judge_model, _ledger_judge(run_dir))
    with ctx.open_endpoint() as ep:
        client = JudgeClient(ep.base_url, ep.api_key, model, max_retries=options.max_retries, timeout=options.timeout)
        try:
            raw, evidence, cost = grade_repeats([g.run_answer(gold_path.parent) for g in gold], client, [1], model,
                                                seed=options.seed, jobs=options.jobs)
        finally:
            client.close()
    grades = score_against_gold(raw, gold)
    sentinel = judge_sentinel(run_dir, grades, gold_path, judge_model=model, snapshot=client.snapshot,
                              endpoint=ep.kind, cost_usd=cost)
    sentinel.summary["evidence"] = json.loads(evidence.to_json(orient="records"))
    atomic_write_text(run_dir / SENTINEL_GRADES_FILE, grades.to_csv(index=False))
    atomic_write_json(run_dir / SENTINEL_FILE, sentinel.summary)
    return sentinel


def sentinel_current(run_dir: str | Path, gold_path: str | Path, judge_model: str | None = None) -> bool:
    """True when ``sentinel.json`` graded this gold file (same hash) with this judge model (default: the week's)."""
    from skillbench.calibration._run import _ledger_judge
    from skillbench.judge import resolve_judge_model

    summary = read_sentinel(run_dir)
    if summary is None or not Path(gold_path).is_file() or not (Path(run_dir) / SENTINEL_GRADES_FILE).is_file():
        return False
    model = resolve_judge_model(judge_model, _ledger_judge(Path(run_dir)))
    return summary.get("gold_sha") == gold_sha(gold_path) and summary.get("judge_model") == model
