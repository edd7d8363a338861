"""``skill-quality.md``: the lint's page — composite and dimensions, κ per dimension, static findings, cost.

Contract: :func:`quality_page` renders a :class:`~skillbench.quality.lint.LintResult` as markdown (tables through
:mod:`skillbench.markdown`); it states where the files were written, the category targets and their source,
the composite's weight normalisation, κ's reading and target, and every unverified quote or ungraded score. With
measured triggering (a week) the measured F1 sits beside the judge's predicted triggering score.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from skillbench.markdown import md_cell, md_table
from skillbench.quality.anchored import DIMENSIONS
from skillbench.quality.categories import CATEGORY_TARGETS, TARGET_SOURCE
from skillbench.quality.composite import normalisation_note
from skillbench.quality.kappa import KAPPA_TARGET

if TYPE_CHECKING:
    from skillbench.quality.lint import LintResult

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
        cells = [family, cats.get(family, ""), *(_f(row[d.id]) for d in DIMENSIONS),
                 f"**{_f(result.composite.get(family))}**"]
        if measured is not None:
            if family in measured.index:
                m = measured.loc[family]
                cells += [_f(m["f1"]), f"{m['tp']}/{m['should_n']}, {m['fp']}/{m['should_not_n']}"]
            else:
                cells += ["—", "no counted run"]
        rows.append(cells)
    out = ["## Composite and dimensions", "",
           "Each dimension is the mean over the judge's samples of an anchor 0, 0.25, 0.5, 0.75 or 1. "
           + normalisation_note(), ""]
    if measured is not None:
        out += ["*Triggering* is the judge's **prediction** from the description; *measured trigger F1* is the "
                "week's activation (should: the family's own prompts in the skill arms; should not: dormancy prompts "
                "and other families' prompts in the plugin arm). A gap between them is the point of showing both.",
                ""]
    return out + [md_table(headers, rows)]


def _kappa_section(result: LintResult) -> list[str]:
    if result.judge is None:
        return []
    k = result.kappa
    stat = "Cohen's κ (2 samples)" if result.judge.samples == 2 else (
        "Fleiss' κ (3+ samples)" if result.judge.samples >= 3 else "κ needs 2 or more samples (`--judges K`)")
    rows = [[_SHORT.get(r.dimension, r.dimension), r.statistic or "—", _f(r.kappa), r.reading,
             "yes" if r.meets_target else "no", r.n_units, _f(r.raw_agreement)] for r in k.itertuples()]
    return ["## Agreement between judge samples (κ per dimension)", "",
            f"{stat} over the suite's families on the five anchor bands. Reading: ≥ 0.80 strong, 0.60–0.79 "
            f"moderate, 0.40–0.59 fair, < 0.40 poor; target ≥ {KAPPA_TARGET:.2f}. With few families κ is "
            "imprecise, and it is undefined when every rating falls in one band; high agreement with a low κ means the "
            "ratings crowd one band (chance agreement is then high).", "",
            md_table(["dimension", "statistic", "κ", "reading", f"≥ {KAPPA_TARGET:.2f}", "families",
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
        rows = [[r.family, r.sample, _SHORT.get(r.dimension, r.dimension),
                 "ungraded" if pd.isna(r.score) else f"{r.score:g} (unverified)",
                 md_cell((r.evidence or r.reason)[:160])] for r in bad.itertuples()]
        out += ["", md_table(["family", "sample", "dimension", "score", "quote / reason"], rows)]
    return out


def _static_section(result: LintResult) -> list[str]:
    st = result.static
    by_family = []
    for u in result.units:
        f = st[st["family"] == u.family]
        val = {r.finding: r.value for r in f[f["level"] == "hub"].itertuples()}
        worst = f["severity"].map(_ORDER).min()
        by_family.append([u.family, u.category.label, val.get("size", ""), f"{u.category.target[0]}–"
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
    rows = [[r.skill, r.finding, r.severity, md_cell(r.value), md_cell(r.target), md_cell(r.detail)]
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
