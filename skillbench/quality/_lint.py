"""lint-skills' orchestration: the suite's skills → static findings, the anchored judge, κ, the composite, and
(with a week) measured triggering, as tidy frames; then ``skill-quality.csv``, ``.json`` and ``.md`` (+ ``.html``).

Contract: :func:`lint_suite` reads and computes, writing nothing; :func:`write_quality` writes the three files (and
the HTML page) atomically into one folder. ``skill-quality.csv`` is tidy — one row per observation, its ``source``
saying which: ``static`` (one row per skill × finding), ``judge`` (one per family × sample × dimension: the
anchor, its evidence and whether the quote was verified), ``composite`` (per family: each dimension's mean over
the graded samples, then ``composite``, sample ``mean``) and ``measured`` (with a week: the family's trigger
``f1``, ``precision`` and ``recall`` from the week's runs, :func:`skillbench.quality._trigger_f1.measured_triggering`,
imported only then). ``skill-quality.json`` records the options, the judge (model, snapshot, samples, calls,
tokens, cost), the rubric's hash, the weights and their normalisation, κ per dimension and the counts.

The page, ``skill-quality.md`` (:func:`quality_page`): composite and dimensions, κ per dimension, static findings,
cost, as markdown tables (:mod:`skillbench.markdown`); it states where the files were written, the category targets
and their source, the composite's weight normalisation, κ's reading and target, and every unverified quote or
ungraded score. With measured triggering (a week) the measured F1 sits beside the judge's predicted triggering score.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from skillbench.calibration import MIN_CLUSTERS
from skillbench.ledgers import (
    SKILL_QUALITY_FILE,
    SKILL_QUALITY_JSON,
    SKILL_QUALITY_MD,
    atomic_write_json,
    atomic_write_text,
)
from skillbench.markdown import md_table, md_text, span, with_span
from skillbench.quality._anchored import DIMENSION_IDS, DIMENSIONS, rubric_sha
from skillbench.quality._anchored_judge import JudgePass
from skillbench.quality._categories import CATEGORY_TARGETS, TARGET_SOURCE
from skillbench.quality._composite import (
    RAW_WEIGHTS,
    WEIGHT_SUM,
    WEIGHTS,
    composite_scores,
    dimension_means,
    normalisation_note,
)
from skillbench.quality._kappa import KAPPA_TARGET, kappa_by_dimension
from skillbench.quality._static import SEVERITIES, static_findings
from skillbench.quality._trigger_stats import F1_WORDS
from skillbench.quality._units import SkillUnit

QUALITY_COLUMNS = ["family", "skill", "level", "source", "measure", "sample", "value", "target", "severity",
                   "detail", "evidence", "evidence_verified"]
SKILL_QUALITY_HTML = SKILL_QUALITY_MD.removesuffix(".md") + ".html"
MEASURED = ("f1", "precision", "recall")
# each measured value's interval ends, rows of their own (measure trigger_<m>_low/_high; method in the detail)
MEASURED_INTERVALS = ("f1_low", "f1_high", "precision_low", "precision_high", "recall_low", "recall_high")


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
            for measure in MEASURED_INTERVALS:  # absent from a frame of an older trigger-f1.csv
                if hasattr(m, measure):
                    method = m.f1_method if measure.startswith("f1") else m.rate_method
                    rows.append({"family": m.family, "skill": m.family, "level": "hub", "source": "measured",
                                 "measure": f"trigger_{measure}", "value": _text(float(getattr(m, measure))),
                                 "detail": f"95 % interval: {method}"})
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
        from skillbench.report import write_markdown_page

        write_markdown_page(paths["md"], paths["html"], title="Skill quality")
    return paths


# -- the page: skill-quality.md ----------------------------------------------------------------------------------------
_SHORT = {"triggering_accuracy": "triggering", "orchestration_fitness": "orchestration",
          "output_quality": "output", "scope_calibration": "scope"}
_ORDER = {"error": 0, "warning": 1, "info": 2, "ok": 3}


def _f(x: Any, nd: int = 2) -> str:
    return "—" if x is None or pd.isna(x) else f"{float(x):.{nd}f}"


def _summary(result: LintResult, out_dir: Path) -> list[str]:
    c = result.severity_counts
    subs = sum(len(u.subs) for u in result.units)
    lines = [f"{len(result.units)} skill families ({subs} sub-skills) of `{result.suite_dir}`. Static checks: "
             f"**{c['error']} errors, {c['warning']} warnings**, {c['info']} notes, {c['ok']} passed.",
             f"Written to `{out_dir}`."]
    opts = result.options
    if opts.get("site_base"):
        lines.append(f"Published site base for links: `{opts['site_base']}` ({opts.get('site_base_source', '')}).")
    j = result.judge
    if j is not None:
        lines.append(f"Anchored judge: `{j.judge_model}`{f' ({j.snapshot})' if j.snapshot else ''}, {j.samples} "
                     f"independent sample(s) per family, on the {opts.get('endpoint_kind', '')} endpoint; "
                     f"{len(j.calls)} calls, {sum(j.usage.values()):,} tokens, **${j.cost_usd:.4f}** "
                     "(skillbench.prices).")
    return lines


def _composite_section(result: LintResult) -> list[str]:
    if result.judge is None:
        return ["## Anchored judge", "", "Not run (pass `--judge`)."]
    measured = result.measured.set_index("family") if result.measured is not None else None
    headers = ["family", "category", *(_SHORT[d.id] for d in DIMENSIONS), "composite"]
    if measured is not None:
        headers += ["measured trigger F1", "(tp/should, fp/should not)"]
    rows = []
    cats = {u.family: u.category.label for u in result.units}
    for family, row in result.means.iterrows():
        cells = [md_text(family), cats.get(family, ""), *(_f(row[d.id]) for d in DIMENSIONS),
                 f"**{_f(result.composite.get(family))}**"]
        if measured is not None:
            if family in measured.index:
                m = measured.loc[family]
                cells += [_f1_text(m), f"{m['tp']}/{m['should_n']}, {m['fp']}/{m['should_not_n']}"]
            else:
                cells += ["—", "no counted run"]
        rows.append(cells)
    out = ["## Composite and dimensions", "",
           "Each dimension is the mean over the judge's samples of an anchor 0, 0.25, 0.5, 0.75 or 1. "
           + normalisation_note(), ""]
    if measured is not None:
        out += ["*Triggering* is the judge's **prediction** from the description; *measured trigger F1* is the "
                "week's activation (should: the family's own prompts in the skill arms; should not: dormancy prompts "
                "and other families' prompts in the plugin arm). A gap between them is the point of showing both. "
                f"{F1_WORDS} A week's units are its prompts (the runs of a prompt stay together); the exact path "
                "counts runs.", ""]
    return out + [md_table(headers, rows)]


def _f1_text(m: pd.Series) -> str:
    """The measured F1 with its interval (``0.67 [0.17, 0.93]``), its method's short word beside it."""
    if pd.isna(m["f1"]):
        return "—"
    if "f1_low" not in m or pd.isna(m["f1_low"]):  # a frame of an older trigger-f1.csv: no interval
        return _f(m["f1"])
    short = "exact" if str(m["f1_method"]).startswith("exact") else "bootstrap"
    return f"{with_span(_f(m['f1']), m['f1_low'], m['f1_high'])} ({short})"


def _kappa_range(r: Any) -> str:
    """κ's interval, or why there is none (too few families, degenerate)."""
    low, high = getattr(r, "kappa_low", None), getattr(r, "kappa_high", None)
    if span(low, high):
        return span(low, high)
    method = str(getattr(r, "interval_method", "") or "")
    return method if method.startswith("none") else "—"


def _kappa_section(result: LintResult) -> list[str]:
    if result.judge is None:
        return []
    k = result.kappa
    stat = "Cohen's κ (2 samples)" if result.judge.samples == 2 else (
        "Fleiss' κ (3+ samples)" if result.judge.samples >= 3 else "κ needs 2 or more samples (`--judges K`)")
    rows = [[_SHORT.get(r.dimension, r.dimension), r.statistic or "—", _f(r.kappa), _kappa_range(r), r.reading,
             "yes" if r.meets_target else "no", r.n_units, _f(r.raw_agreement)] for r in k.itertuples()]
    return ["## Agreement between judge samples (κ per dimension)", "",
            f"{stat} over the suite's families on the five anchor bands. Reading: ≥ 0.80 strong, 0.60–0.79 "
            f"moderate, 0.40–0.59 fair, < 0.40 poor; target ≥ {KAPPA_TARGET:.2f}. With few families κ is "
            "imprecise, and it is undefined when every rating falls in one band; high agreement with a low κ means the "
            "ratings crowd one band (chance agreement is then high). κ's 95 % interval is a bootstrap over the "
            f"families (BCa; each family with all its samples); with fewer than {MIN_CLUSTERS} families none is "
            "printed — so few cannot say how far κ would move on other skills — and the target is then read on the "
            "estimate alone.", "",
            md_table(["dimension", "statistic", "κ", "95 % interval", "reading", f"≥ {KAPPA_TARGET:.2f}", "families",
                      "all samples agree"], rows)]


def _evidence_section(result: LintResult) -> list[str]:
    if result.judge is None:
        return []
    s = result.scores
    bad = s[(s["evidence_verified"] == "0") | s["score"].isna()]
    out = ["## Evidence", "",
           f"Every score quotes the skill's documents; a quote not found verbatim is asked again once. "
           f"{result.unverified} score(s) kept with an **unverified** quote, {result.ungraded} ungraded "
           "(the call failed twice: no score, never a low one)."]
    if not bad.empty:
        rows = [[md_text(r.family), r.sample, _SHORT.get(r.dimension, r.dimension),
                 "ungraded" if pd.isna(r.score) else f"{r.score:g} (unverified)",
                 md_text(r.evidence or r.reason, 160)] for r in bad.itertuples()]
        out += ["", md_table(["family", "sample", "dimension", "score", "quote / reason"], rows)]
    return out


def _static_section(result: LintResult) -> list[str]:
    st = result.static
    by_family = []
    for u in result.units:
        f = st[st["family"] == u.family]
        val = {r.finding: r.value for r in f[f["level"] == "hub"].itertuples()}
        worst = f["severity"].map(_ORDER).min()
        by_family.append([md_text(u.family), u.category.label, val.get("size", ""), f"{u.category.target[0]}–"
                          f"{u.category.target[1]}", val.get("trigger-contexts", ""), val.get("negative-contexts", ""),
                          val.get("description-chars", ""), len(u.subs),
                          int((f["severity"].isin(["error", "warning"])).sum()),
                          next(k for k, v in _ORDER.items() if v == worst) if pd.notna(worst) else ""])
    targets = ", ".join(f"{k} {lo}–{hi}" for k, (lo, hi) in CATEGORY_TARGETS.items())
    out = ["## Static checks", "",
           f"Line targets by category ({TARGET_SOURCE}): {targets}; a family's size counts the hub with its "
           "sub-skills. Without a category (frontmatter `category:` or `[quality].categories`) the loosest band, "
           "100–500, applies.", "",
           md_table(["family", "category", "lines", "target", "use-when contexts", "exclusions", "description chars",
                     "sub-skills", "errors + warnings", "worst"], by_family), ""]
    shown = st[st["severity"] != "ok"].assign(_o=lambda f: f["severity"].map(_ORDER)).sort_values(
        ["_o", "family", "skill"], kind="stable")
    if shown.empty:
        return out + ["Every check passed."]
    rows = [[md_text(r.skill), r.finding, r.severity, md_text(r.value), md_text(r.target), md_text(r.detail)]
            for r in shown.itertuples()]
    return out + [f"### Findings ({len(shown)} of {len(st)} checks; the rest passed)", "",
                  md_table(["skill", "finding", "severity", "value", "target", "detail"], rows)]


def quality_page(result: LintResult, out_dir: Path) -> str:
    """The markdown of ``skill-quality.md``."""
    parts = ["# Skill quality", "", *_summary(result, out_dir), "", *_composite_section(result), "",
             *_kappa_section(result), "", *_evidence_section(result), "", *_static_section(result), ""]
    text = "\n".join(parts)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text
