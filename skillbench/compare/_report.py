"""``compare.md``: the merge report, decision first; ``compare-comment.md``: its decision and what does not pass,
fit to paste as a pull-request comment.

Order: the decision (the worst finding, how many records read each of dotnet's plain verdicts, every invalid
record), the verdict per family × model with its machine state; then measurement health (expected / observed /
written runs, judge errors, underpowered records, the commits every run came from); then only the records that did
not pass or that carry a warning, each with its evidence and its repair action; the per-stimulus votes and the
dormancy contracts of the changed families (:mod:`skillbench.scorecard._render_stimuli`, from the comparison's
scorecard); then what changed. Every verdict it states is in ``results.json`` too
(:mod:`skillbench.compare._results`). A family, prompt, model or file name came from a pull request: it enters the
page through :func:`skillbench.markdown.md_text` or :func:`~skillbench.markdown.md_code`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from skillbench.compare._results import CompareResults, FamilyVerdict
from skillbench.compare._verdicts import FINDINGS, IMPROVEMENT
from skillbench.markdown import CutTable, capped_page, md_code, md_table, md_text, signed
from skillbench.scorecard import (
    StimulusTables,
    dormancy_markdown,
    dormancy_rows,
    error_control_line,
    invalid_lines,
    label_counts,
    p_cell,
    stimulus_markdown,
    stimulus_rows,
    verdict_label,
    with_icon,
)
from skillbench.vocab import MIN_STIMULI, SIMULATED

if TYPE_CHECKING:
    from skillbench.suite import Ownership

MAX_FILES_LISTED = 20
NEW_FAMILY = "new: head vs no-skill"


def plain_label(v: FamilyVerdict) -> str:
    """The record's verdict in dotnet's plain words (the one verdict specification's)."""
    return verdict_label(v.state, v.reason, v.n, v.wins, v.losses)


def headline(results: CompareResults) -> str:
    """The one-line decision: the worst finding, and how many records read each plain verdict."""
    if not results.verdicts:
        return "No skill family changed between the two versions: nothing to evaluate."
    counts = {f: sum(v.finding == f for v in results.verdicts) for f in FINDINGS}
    worst = next(f for f in FINDINGS if counts[f])
    n = len(results.verdicts)
    return (f"**{worst.upper()}** — {label_counts([plain_label(v) for v in results.verdicts])} "
            f"({n} family × model record{'' if n == 1 else 's'})")


def _short(commit: str) -> str:
    return commit[:12] if commit else "(none)"


def _family(results: CompareResults, family: str) -> str:
    """A family's cell: its name, and ``(new: head vs no-skill)`` when the base does not have it."""
    return md_text(family) + (f" ({NEW_FAMILY})" if family in results.changes.added else "")


def _title(results: CompareResults) -> str:
    b, h = results.base, results.head
    dirty = f" + working-tree diff {md_text(h.diff)}" if h.diff else ""
    return (f"# skillbench compare: {md_code(h.ref)} ({md_text(_short(h.commit))}{dirty}) vs {md_code(b.ref)} "
            f"({md_text(_short(b.commit))})")


def _decision(results: CompareResults) -> list[str]:
    """The first lines: the simulated banner, the headline, ``--fail-on``'s exit and every invalid record."""
    lines = []
    if results.endpoint == SIMULATED:
        lines += ["> **Simulated endpoint**: these numbers test the harness, not the skill.", ""]
    lines += [headline(results), ""]
    if results.fail_on:
        lines += [f"`--fail-on {results.fail_on}`: exit code **{results.exit_code}**.", ""]
    frame = pd.DataFrame([v.model_dump() for v in results.verdicts],
                         columns=["skill_family", "model", "state", "reason", "evidence"])
    invalid = invalid_lines(frame)
    if invalid:
        lines += ["No verdict on the skill for these — fix the measurement first:", *invalid, ""]
    g = results.generalization
    tuned = [f"{md_text(r.skill_family)} × {md_text(r.model)}" for r in g.records if r.flagged] if g else []
    if tuned:  # report-only, beside the verdicts: never a verdict, never --fail-on
        lines += [f"⚠️ **May be tuned to the test**: {', '.join(tuned)} — the scored prompts lift and the held-out "
                  "ones do not (see “Generalization: held-out prompts”; report-only, the verdicts stand).", ""]
    return lines


def _verdict_rows(results: CompareResults, *, failing_only: bool = False) -> tuple[list[str], list[list[str]]]:
    rows = []
    for v in results.verdicts:
        if failing_only and v.finding == IMPROVEMENT and not v.reason:
            continue
        row = [with_icon(plain_label(v)), _family(results, v.skill_family), md_text(v.model),
               md_code(v.verdict), p_cell(v), md_text(v.evidence)]
        rows.append(row + ([md_text(v.repair)] if failing_only else
                           [signed(v.must_lift) if v.must_lift is not None else "n/a"]))
    last = "repair" if failing_only else "must lift (head − base)"
    return ["verdict", "skill family", "model", "state", "p (raw → Holm)", "evidence", last], rows


def error_control_lines(results: CompareResults) -> list[str]:
    """Which records Holm corrected together: the changed families' (head vs base) and the new families' (head vs
    no-skill) are two comparisons, each corrected among its own records."""
    frame = pd.DataFrame([v.model_dump() for v in results.verdicts],
                         columns=["skill_family", "model", "state", "reason", "p_value", "p_adjusted", "new"])
    groups = [(frame[~frame["new"].astype(bool)], "the changed families (head vs base)"),
              (frame[frame["new"].astype(bool)], "the new families (head vs no-skill, corrected apart)")]
    return [error_control_line(part.astype({"p_adjusted": float}), scope) for part, scope in groups if len(part)]


def noise_floor_lines(results: CompareResults) -> list[str]:
    """The suite's weekly noise floor: how often its A/A arm passed where nothing changed (nominal 5 %)."""
    if not results.noise_floor:
        return [f"Noise floor: no weekly A/A record of this suite on the {md_text(results.endpoint or 'same')} "
                "endpoint yet, so the gate's false-pass rate here is the nominal 5 % per record, unmeasured.", ""]
    return ["Noise floor (this suite's weekly A/A runs, where nothing changed): "
            + "; ".join(md_text(line) if line.startswith("the weekly") else line for line in results.noise_floor)
            + ".", ""]


def ownership_lines(ownership: Ownership | None, *, level: str = "##", note: bool = True) -> list[str]:
    """The changed families' rubric-ownership warnings (:mod:`skillbench.suite._ownership`), report-only: a
    section under the verdicts, which stand as they are; ``note``: also the one line of what the history said
    (why it was not read, or how many families overlap)."""
    if ownership is None or not (ownership.overlaps or note):
        return []
    lines = [f"{level} Rubric ownership", "",
             "Report-only, the verdicts stand: a rubric written by the skill's own author tends to measure conformity "
             "to the skill, its mistakes included — have someone else write or review these rubrics.", ""]
    lines += [f"- **{md_text(o.family)}**: {md_text(o.problem)}" for o in ownership.overlaps]
    return lines + ([f"- {md_text(ownership.note())}"] if note else []) + [""]


def render_compare(results: CompareResults, *, tables: StimulusTables | None = None, scorecard_path: str = "",
                   results_path: str = "", ownership: Ownership | None = None) -> str:
    """The whole ``compare.md``; ``tables``: the comparison's per-stimulus votes and dormancy contracts (None: a
    comparison that ran nothing); ``ownership``: who wrote the changed families' skills and rubrics."""
    a = results.arms
    lines = [_title(results), "", *_decision(results)]
    if results.verdicts:
        headers, rows = _verdict_rows(results)
        versus = (f"Head against base ({md_text(a.treatment)} vs {md_text(a.control)}), one vote per prompt; the "
                  "verdict in dotnet/skills' plain words, the machine state beside it.")
        if any(v.new for v in results.verdicts):
            versus += f" A new family has no base: head against no-skill ({md_text(a.treatment)} vs no-skill)."
        lines += ["## Verdicts", "", versus, "", md_table(headers, rows), ""]
        lines += [part for line in error_control_lines(results) for part in (line, "")]
        lines += noise_floor_lines(results)
    lines += ownership_lines(ownership)
    lines += generalization_lines(results)
    if results.notes:  # said before any run: where the config came from, which family can never pass
        lines += ["## Before the runs", "", *(f"- {md_text(note)}" for note in results.notes), ""]
    lines += health_section(results)
    details = [v for v in results.verdicts if v.finding != IMPROVEMENT or v.reason]
    if details:
        lines += ["## What needs attention", ""]
        for v in details:
            lines += [f"- **{md_text(v.skill_family)} × {md_text(v.model)}: {plain_label(v)}** — "
                      f"{md_code(v.verdict)}; {md_text(v.evidence)}." + (f" Repair: {md_text(v.repair)}." if v.repair
                                                                          else "")]
        lines.append("")
    lines += stimuli_sections(results, tables)
    lines += changes_section(results)
    where = [f"run directory {md_code(results.run_dir)}"]
    if results_path:
        where.append(f"results {md_code(results_path)}")
    if scorecard_path:
        where.append(f"scorecard {md_code(scorecard_path)}")
    lines += ["---", f"<sub>skillbench compare · {' · '.join(where)} · results schema v{results.schema_version}</sub>",
              ""]
    return "\n".join(lines)


def stimuli_sections(results: CompareResults, tables: StimulusTables | None) -> list[str]:
    """The changed families' per-stimulus votes and dormancy contracts ([] without tables)."""
    if tables is None:
        return []
    mine = tables.for_families(results.changes.families)
    lines = []
    stimuli, dormancy = stimulus_markdown(mine), dormancy_markdown(mine)
    if stimuli:
        lines += ["## Per stimulus", "", stimuli, "",
                  f"_Reps: each rep's pairwise outcome for {md_text(results.arms.treatment)}, judged in both orders "
                  "(W, T, L; E: the judge call failed). Vote: the stimulus vote the gate counted. Checks, shown when "
                  "prompts have them: the deterministic checks' pass rate in each arm (passed / graded; – none "
                  "graded)._", ""]
    if dormancy:
        lines += ["## Dormancy contracts", "", dormancy, "",
                  "_A dormancy prompt must leave the family's skill dormant: a head or plugin run that activates it "
                  "fails the activation contract._", ""]
    return lines


def render_compare_comment(results: CompareResults, *, full_report: str, tables: StimulusTables | None = None,
                           ownership: Ownership | None = None) -> str:
    """``compare-comment.md``: the decision lines, then only what does not pass — verdicts, stimuli, dormancy
    contracts, health problems, rubric-ownership warnings — under GitHub's comment limit, a cut always said
    (:func:`skillbench.markdown.capped_page`)."""
    parts: list[str | CutTable] = [_title(results), "", *_decision(results)]
    parts += [part for line in error_control_lines(results) for part in (line, "")]
    hl = results.health
    if not hl.complete:
        parts += [f"- Runs: **INCOMPLETE** — expected {hl.expected}, observed {hl.observed}, written {hl.written}; "
                  f"{len(hl.missing)} missing."]
    if hl.commit_mismatches:
        parts += [f"- Commits: **{len(hl.commit_mismatches)} run(s) from another commit than declared**."]
    if hl.judge_errors:
        parts += [f"- Judge: {hl.judge_errors} pairwise error(s)."]
    if not hl.complete or hl.commit_mismatches or hl.judge_errors:
        parts.append("")
    headers, rows = _verdict_rows(results, failing_only=True)
    if rows:
        parts.append(CutTable("### Verdicts that are not Improved", headers, rows))
    if tables is not None:
        mine = tables.for_families(results.changes.families)
        for title, (heads, body) in (("### Stimuli that do not pass", stimulus_rows(mine, failing_only=True)),
                                     ("### Dormancy contracts broken", dormancy_rows(mine, failing_only=True))):
            if body:
                parts.append(CutTable(title, heads, body))
    if results.verdicts and not rows:
        parts += ["Every changed family × model Improved.", ""]
    parts += ownership_lines(ownership, level="###", note=False)
    parts += generalization_lines(results, level="###", brief=True)
    c = results.changes
    if c.added:
        parts += [f"New at the head ({NEW_FAMILY}): {', '.join(md_text(f) for f in c.added)}", ""]
    parts += [f"Full report: {md_code(full_report)} (every stimulus and contract, health, what changed)."]
    return capped_page(parts, full_report=full_report)


def _interval(low: float | None, high: float | None) -> str:
    return "n/a" if low is None or high is None else f"[{signed(low)}, {signed(high)}]"


def _lift(value: float | None) -> str:
    return "n/a" if value is None else signed(value)


def generalization_lines(results: CompareResults, *, level: str = "##", brief: bool = False) -> list[str]:
    """The held-out check (``--generalization``): per family × model the scored lift, the held-out lift and their
    gap with its interval, the reading, the rule, and the held-out prompts' wear. ``brief`` (the comment): only
    the flagged records, the described-only ones and the wear warning. Nothing without the option."""
    g = results.generalization
    if g is None:
        return []
    lines = [f"{level} Generalization: held-out prompts", ""]
    if not brief:
        lines += ["Asked for with `--generalization`: the changed families' held-out prompts ran in the pair of arms "
                  "the lift compares, in a week of their own, judged by the same rubric judge — never part of the "
                  "verdicts above, the gate or any history. Held-out prompts are validated and never run unless "
                  "asked; this use is recorded.", ""]
    if not g.records:
        return lines + ["No changed family was run: nothing to check.", ""]
    rows = []
    for r in g.records:
        if brief and not (r.flagged or not r.tested):
            continue
        reading = f"⚠️ **{r.reading}**" if r.flagged else md_text(r.reading)
        rows.append([md_text(r.skill_family), md_text(r.model),
                     f"{_lift(r.scored_lift)} {_interval(r.scored_low, r.scored_high)} (n={r.n_scored})",
                     f"{_lift(r.heldout_lift)} {_interval(r.heldout_low, r.heldout_high)} (n={r.n_heldout})",
                     f"{_lift(r.gap)} " + (_interval(r.gap_low, r.gap_high) if r.tested else "(not tested)"),
                     reading])
    if rows:
        lines += [md_table(["skill family", "model", "scored lift (head − base)", "held-out lift", "gap", "reading"],
                           rows), ""]
    elif brief:
        lines += ["No family × model is flagged “may be tuned to the test”.", ""]
    small = sorted({r.skill_family for r in g.records if not r.tested})
    if small:
        lines += [f"Fewer than {MIN_STIMULI} held-out prompts (or 2 scored ones): the gap of "
                  f"{', '.join(md_text(f) for f in small)} is described only — never tested nor flagged; add "
                  "held-out prompts to test it.", ""]
    if g.worn:
        shown = ", ".join(f"{md_text(w.prompt)} ({w.decisions})" for w in g.worn[:10])
        more = f" and {len(g.worn) - 10} more" if len(g.worn) > 10 else ""
        lines += [f"⚠️ **Worn held-out prompts**: {shown}{more} have informed more than {g.wear_limit} decisions "
                  "(`[suite] heldout_wear`): edits were judged against them, so they no longer measure "
                  "generalization — write fresh held-out prompts.", ""]
    if not brief:
        lines += [f"- Rule: {md_text(g.rule)}.", f"- Intervals: {md_text(g.interval)}.",
                  f"- Use record: {md_text(g.record)}."]
        lines += [*([f"- Held-out runs: {g.runs}."] if g.runs else []), ""]
    elif not g.complete:
        lines += [f"- Held-out runs: {g.runs}.", ""]
    elif g.record.startswith("the held-out use record could not be read"):
        lines += [f"- {md_text(g.record)}", ""]
    return lines


def health_section(results: CompareResults) -> list[str]:
    """Measurement health: can the verdicts be trusted?"""
    hl, b, h = results.health, results.base, results.head
    state = "complete" if hl.complete else f"**INCOMPLETE** ({len(hl.missing)} missing)"
    lines = ["## Measurement health", "",
             f"- Runs: expected {hl.expected} · observed {hl.observed} · written {hl.written} — {state}",
             f"- Judge: {hl.judge_errors} pairwise error(s), {hl.ungraded} ungraded rubric item(s)",
             f"- Underpowered (n < {MIN_STIMULI}): "
             f"{', '.join(md_text(u) for u in hl.underpowered) if hl.underpowered else 'none'}"]
    if hl.commit_mismatches:
        shown = ", ".join(md_text(r) for r in hl.commit_mismatches[:5]) + (" …" if len(hl.commit_mismatches) > 5
                                                                            else "")
        lines.append(f"- Commits: **{len(hl.commit_mismatches)} run(s) from another commit than declared** ({shown})")
    else:
        lines.append(f"- Commits: base {md_code(b.ref)} = {md_text(_short(b.commit))}, head {md_code(h.ref)} = "
                     f"{md_text(_short(h.commit))}" + (f" + diff {md_text(h.diff)}" if h.diff else "")
                     + "; every version-arm run came from its declared commit")
    if hl.missing:
        lines.append(f"- Missing runs: {', '.join(md_text(m) for m in hl.missing[:5])}"
                     + (" …" if len(hl.missing) > 5 else ""))
    return lines + [""]


def _names(names: list[str]) -> str:
    return ", ".join(md_text(x) for x in names)


def changes_section(results: CompareResults) -> list[str]:
    """What differs between the versions."""
    c = results.changes
    lines = ["## What changed", "",
             f"- Families compared: {_names(c.families) if c.families else 'none'}"]
    if c.added:
        lines.append(f"- New at the head ({NEW_FAMILY}: the base has no such family): {_names(c.added)}")
    if c.unmeasured:
        lines.append(f"- Not run (no preference-eligible prompt at the head): {_names(c.unmeasured)}")
    if c.removed:
        lines.append(f"- Removed at the head (not compared): {_names(c.removed)}")
    if c.prompts:
        lines.append(f"- Prompts changed: {_names(c.prompts)}")
    more = f" (and {len(c.files) - MAX_FILES_LISTED} more)" if len(c.files) > MAX_FILES_LISTED else ""
    lines.append(f"- Files: {', '.join(md_code(f) for f in c.files[:MAX_FILES_LISTED]) or 'none'}{more}")
    return lines + [""]
