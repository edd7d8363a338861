"""lint-skills' orchestration: the suite's skills → static findings, the anchored judge, κ, the composite, and
(with a week) measured triggering, as tidy frames; then ``skill-quality.csv``, ``.json`` and ``.md`` (+ ``.html``).

Contract: :func:`lint_suite` reads and computes, writing nothing; :func:`write_quality` writes the three files (and
the HTML page) atomically into one folder. ``skill-quality.csv`` is tidy — one row per observation, its ``source``
saying which: ``static`` (one row per skill × finding), ``judge`` (one per family × sample × dimension: the
anchor, its evidence and whether the quote was verified), ``composite`` (per family: each dimension's mean over
the graded samples, then ``composite``, sample ``mean``) and ``measured`` (with a week: the family's trigger
``f1``, ``precision`` and ``recall`` from the week's runs, :func:`skillbench.quality.trigger_f1.measured_triggering`,
imported only then). ``skill-quality.json`` records the options, the judge (model, snapshot, samples, calls,
tokens, cost), the rubric's hash, the weights and their normalisation, κ per dimension and the counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from skillbench.ledgers.atomic import atomic_write_json, atomic_write_text
from skillbench.ledgers.files import SKILL_QUALITY_FILE, SKILL_QUALITY_JSON, SKILL_QUALITY_MD
from skillbench.quality.anchored import DIMENSION_IDS, DIMENSIONS, rubric_sha
from skillbench.quality.anchored_judge import JudgePass
from skillbench.quality.composite import (
    RAW_WEIGHTS,
    WEIGHT_SUM,
    WEIGHTS,
    composite_scores,
    dimension_means,
    normalisation_note,
)
from skillbench.quality.kappa import KAPPA_TARGET, kappa_by_dimension
from skillbench.quality.static import SEVERITIES, static_findings
from skillbench.quality.units import SkillUnit

QUALITY_COLUMNS = ["family", "skill", "level", "source", "measure", "sample", "value", "target", "severity",
                   "detail", "evidence", "evidence_verified"]
SKILL_QUALITY_HTML = SKILL_QUALITY_MD.removesuffix(".md") + ".html"
MEASURED = ("f1", "precision", "recall")


@dataclass
class LintResult:
    """Everything one lint computed."""

    suite_dir: Path
    units: list[SkillUnit]
    static: pd.DataFrame
    judge: JudgePass | None = None
    scores: pd.DataFrame = field(default_factory=pd.DataFrame)  # family, sample, dimension, score, evidence, …
    kappa: pd.DataFrame = field(default_factory=pd.DataFrame)
    means: pd.DataFrame = field(default_factory=pd.DataFrame)  # families × dimensions
    composite: pd.Series = field(default_factory=lambda: pd.Series(dtype=float))
    measured: pd.DataFrame | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def severity_counts(self) -> dict[str, int]:
        counts = self.static["severity"].value_counts()
        return {s: int(counts.get(s, 0)) for s in reversed(SEVERITIES)}

    @property
    def unverified(self) -> int:
        return int((self.scores.get("evidence_verified", pd.Series(dtype=str)) == "0").sum())

    @property
    def ungraded(self) -> int:
        return int(self.scores["score"].isna().sum()) if "score" in self.scores else 0


def lint_suite(suite_dir: Path, units: list[SkillUnit], *, judge: JudgePass | None = None,
               measured: pd.DataFrame | None = None, options: dict[str, Any] | None = None) -> LintResult:
    """The frames of one lint: static findings always, the judge's scores, κ and composite when ``judge`` ran."""
    result = LintResult(Path(suite_dir), units, static_findings(units), judge=judge, measured=measured,
                        options=dict(options or {}))
    if judge is not None:
        result.scores = pd.DataFrame([vars(s) for s in judge.scores],
                                     columns=["family", "sample", "dimension", "score", "evidence",
                                              "evidence_verified", "reason"])
        result.scores["score"] = pd.to_numeric(result.scores["score"], errors="coerce")
        result.kappa = kappa_by_dimension(result.scores)
        result.means = dimension_means(result.scores).reindex([u.family for u in units])
        result.composite = composite_scores(result.means)
    return result


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return ""
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def quality_rows(result: LintResult) -> pd.DataFrame:
    """``skill-quality.csv``'s rows (:data:`QUALITY_COLUMNS`, every cell a string)."""
    rows: list[dict[str, str]] = []
    for r in result.static.itertuples(index=False):
        rows.append({"family": r.family, "skill": r.skill, "level": r.level, "source": "static",
                     "measure": r.finding, "value": r.value, "target": r.target, "severity": r.severity,
                     "detail": r.detail})
    for s in result.scores.itertuples(index=False):
        sev = "ungraded" if pd.isna(s.score) else ("unverified" if s.evidence_verified == "0" else "")
        rows.append({"family": s.family, "skill": s.family, "level": "hub", "source": "judge", "measure": s.dimension,
                     "sample": str(s.sample), "value": _text(s.score), "target": "0|0.25|0.5|0.75|1",
                     "severity": sev, "detail": s.reason, "evidence": s.evidence,
                     "evidence_verified": s.evidence_verified})
    for family, row in result.means.iterrows():
        for dim in DIMENSION_IDS:
            rows.append({"family": family, "skill": family, "level": "hub", "source": "composite", "measure": dim,
                         "sample": "mean", "value": _text(row[dim]), "target": f"weight {WEIGHTS[dim]:.4f}"})
        rows.append({"family": family, "skill": family, "level": "hub", "source": "composite",
                     "measure": "composite", "sample": "mean", "value": _text(result.composite.get(family)),
                     "target": "0–1", "detail": f"weights normalised from {WEIGHT_SUM:.2f} to 1"})
    if result.measured is not None:
        for m in result.measured.itertuples(index=False):
            detail = (f"tp {m.tp}, fn {m.fn}, fp {m.fp}, tn {m.tn} (should {m.should_n}, should not "
                      f"{m.should_not_n})")
            for measure in MEASURED:
                rows.append({"family": m.family, "skill": m.family, "level": "hub", "source": "measured",
                             "measure": f"trigger_{measure}", "value": _text(float(getattr(m, measure))),
                             "detail": detail})
    frame = pd.DataFrame(rows, columns=QUALITY_COLUMNS)
    return frame.fillna("")


def quality_json(result: LintResult, written: dict[str, str] | None = None) -> dict[str, Any]:
    """``skill-quality.json``: options, judge, rubric, weights, κ and counts."""
    judge = result.judge
    data: dict[str, Any] = {
        "options": result.options, "suite_dir": str(result.suite_dir), "families": [u.family for u in result.units],
        "sub_skills": sum(len(u.subs) for u in result.units), "static": result.severity_counts,
        "weights": {"raw": RAW_WEIGHTS, "raw_sum": WEIGHT_SUM, "normalised": WEIGHTS, "note": normalisation_note()},
        "dimensions": [{"id": d.id, "name": d.name, "weight": d.weight, "anchors": list(d.anchors)}
                       for d in DIMENSIONS],
        "rubric_sha": rubric_sha(), "kappa_target": KAPPA_TARGET, "files": written or {},
    }
    if judge is not None:
        data["judge"] = {"model": judge.judge_model, "snapshot": judge.snapshot, "samples": judge.samples,
                         "calls": len(judge.calls), "reasks": sum(c.get("purpose") == "re-ask" for c in judge.calls),
                         "failed_calls": sum(bool(c.get("error")) for c in judge.calls),
                         "usage": judge.usage, "cost_usd": round(judge.cost_usd, 6),
                         "unverified": result.unverified, "ungraded": result.ungraded}
        data["kappa"] = [{k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in row.items()}
                         for row in result.kappa.to_dict(orient="records")]
        data["composite"] = {f: (None if pd.isna(v) else round(float(v), 4)) for f, v in result.composite.items()}
    if result.measured is not None:
        data["measured_triggering"] = result.measured.to_dict(orient="records")
    return data


def write_quality(result: LintResult, out_dir: Path, *, html: bool = True) -> dict[str, Path]:
    """Write ``skill-quality.csv``, ``.json``, ``.md`` (and ``.html``) into ``out_dir``; returns their paths."""
    from skillbench.quality.lint_report import quality_page

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"csv": out_dir / SKILL_QUALITY_FILE, "json": out_dir / SKILL_QUALITY_JSON,
             "md": out_dir / SKILL_QUALITY_MD}
    if html:
        paths["html"] = out_dir / SKILL_QUALITY_HTML
    atomic_write_text(paths["csv"], quality_rows(result).to_csv(index=False))
    atomic_write_text(paths["md"], quality_page(result, out_dir))
    atomic_write_json(paths["json"], quality_json(result, {k: p.name for k, p in paths.items()}))
    if html:
        from skillbench.report.pages import write_markdown_page

        write_markdown_page(paths["md"], paths["html"], title="Skill quality")
    return paths
