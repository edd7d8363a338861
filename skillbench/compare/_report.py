"""``compare.md``: the merge report, decision first, fit to paste as a pull-request comment.

Order: the decision and the verdict per family × model; then measurement health (expected / observed / written
runs, judge errors, underpowered records, the commits every run came from); then only the records that did not
pass or that carry a warning, each with its evidence and its repair action; then what changed. Everything it
says is in ``results.json`` too (:mod:`skillbench.compare._results`).
"""

from __future__ import annotations

from skillbench.compare._results import CompareResults
from skillbench.compare._verdicts import FINDINGS, IMPROVEMENT, INVALID, PREFERENCE_LOSS, REGRESSION
from skillbench.markdown import md_table, signed
from skillbench.vocab import MIN_STIMULI, SIMULATED

MAX_FILES_LISTED = 20
ICONS = {IMPROVEMENT: "✅", REGRESSION: "❌", INVALID: "⚠️", PREFERENCE_LOSS: "🔻", "no change": "➖"}


def headline(results: CompareResults) -> str:
    """The one-line decision: the worst finding, and how many records have each finding."""
    if not results.verdicts:
        return "No skill family changed between the two versions: nothing to evaluate."
    counts = {f: sum(v.finding == f for v in results.verdicts) for f in FINDINGS}
    worst = next(f for f in FINDINGS if counts[f])
    parts = ", ".join(f"{counts[f]} {f}" for f in FINDINGS if counts[f])
    return f"**{worst.upper()}** — {parts} ({len(results.verdicts)} family × model record(s))"


def _short(commit: str) -> str:
    return commit[:12] if commit else "(none)"


def render_compare(results: CompareResults, *, scorecard_path: str = "", results_path: str = "") -> str:
    """The whole ``compare.md``."""
    b, h, a = results.base, results.head, results.arms
    dirty = f" + working-tree diff {h.diff}" if h.diff else ""
    lines = [f"# skillbench compare: `{h.ref}` ({_short(h.commit)}{dirty}) vs `{b.ref}` ({_short(b.commit)})", ""]
    if results.endpoint == SIMULATED:
        lines += ["> **Simulated endpoint**: these numbers test the harness, not the skill.", ""]
    lines += [headline(results), ""]
    if results.fail_on:
        lines += [f"`--fail-on {results.fail_on}`: exit code **{results.exit_code}**.", ""]
    if results.verdicts:
        rows = [[f"{ICONS.get(v.finding, '')} {v.finding}", v.skill_family + (" (new)" if v.new else ""), v.model,
                 v.verdict, v.evidence,
                 signed(v.must_lift) if v.must_lift is not None else "n/a"] for v in results.verdicts]
        versus = f"Head against base ({a.treatment} vs {a.control}), one vote per prompt."
        if any(v.new for v in results.verdicts):
            versus += f" A new family has no base: head against no-skill ({a.treatment} vs no-skill)."
        lines += ["## Verdicts", "", versus, "",
                  md_table(["finding", "skill family", "model", "verdict", "evidence", "must lift (head − base)"],
                           rows), ""]
    if results.notes:  # said before any run: where the config came from, which family can never pass
        lines += ["## Before the runs", "", *(f"- {note}" for note in results.notes), ""]
    lines += health_section(results)
    details = [v for v in results.verdicts if v.finding != IMPROVEMENT or v.reason]
    if details:
        lines += ["## What needs attention", ""]
        for v in details:
            lines += [f"- **{v.skill_family} × {v.model}: {v.finding}** — {v.verdict}; {v.evidence}."
                      + (f" Repair: {v.repair}." if v.repair else "")]
        lines.append("")
    lines += changes_section(results)
    where = [f"run directory `{results.run_dir}`"]
    if results_path:
        where.append(f"results `{results_path}`")
    if scorecard_path:
        where.append(f"scorecard `{scorecard_path}`")
    lines += ["---", f"<sub>skillbench compare · {' · '.join(where)} · results schema v{results.schema_version}</sub>",
              ""]
    return "\n".join(lines)


def health_section(results: CompareResults) -> list[str]:
    """Measurement health: can the verdicts be trusted?"""
    hl, b, h = results.health, results.base, results.head
    state = "complete" if hl.complete else f"**INCOMPLETE** ({len(hl.missing)} missing)"
    lines = ["## Measurement health", "",
             f"- Runs: expected {hl.expected} · observed {hl.observed} · written {hl.written} — {state}",
             f"- Judge: {hl.judge_errors} pairwise error(s), {hl.ungraded} ungraded rubric item(s)",
             f"- Underpowered (n < {MIN_STIMULI}): {', '.join(hl.underpowered) if hl.underpowered else 'none'}"]
    if hl.commit_mismatches:
        shown = ", ".join(hl.commit_mismatches[:5]) + (" …" if len(hl.commit_mismatches) > 5 else "")
        lines.append(f"- Commits: **{len(hl.commit_mismatches)} run(s) from another commit than declared** ({shown})")
    else:
        lines.append(f"- Commits: base `{b.ref}` = {_short(b.commit)}, head `{h.ref}` = {_short(h.commit)}"
                     + (f" + diff {h.diff}" if h.diff else "")
                     + "; every version-arm run came from its declared commit")
    if hl.missing:
        lines.append(f"- Missing runs: {', '.join(hl.missing[:5])}" + (" …" if len(hl.missing) > 5 else ""))
    return lines + [""]


def changes_section(results: CompareResults) -> list[str]:
    """What differs between the versions."""
    c = results.changes
    lines = ["## What changed", "",
             f"- Families compared: {', '.join(c.families) if c.families else 'none'}"]
    if c.added:
        lines.append(f"- New at the head (no base: head against no-skill): {', '.join(c.added)}")
    if c.unmeasured:
        lines.append(f"- Not run (no preference-eligible prompt at the head): {', '.join(c.unmeasured)}")
    if c.removed:
        lines.append(f"- Removed at the head (not compared): {', '.join(c.removed)}")
    if c.prompts:
        lines.append(f"- Prompts changed: {', '.join(c.prompts)}")
    more = f" (and {len(c.files) - MAX_FILES_LISTED} more)" if len(c.files) > MAX_FILES_LISTED else ""
    lines.append(f"- Files: {', '.join(f'`{f}`' for f in c.files[:MAX_FILES_LISTED]) or 'none'}{more}")
    return lines + [""]
