"""Static findings: what can be read off each SKILL.md before any run, one row per (skill, finding).

Contract: :func:`static_findings` returns one row per check and skill, passing or not (``severity`` ``ok``,
``info``, ``warning`` or ``error``), with ``value`` (a number or a word), ``target`` (with its source) and
``detail`` (one line saying what was found and what to do). The hub's row carries the family's checks; each
sub-skill gets its own rows. The findings:

========================  =====================  ==============================================================
finding                   on                     rule
========================  =====================  ==============================================================
``category``              hub                    the category and where it came from
                                                 (:mod:`skillbench.quality._categories`); info when not set,
                                                 warning when ``category:`` names no known category
``trigger-contexts``      hub, sub-skills        "Use when" contexts and quoted trigger phrases, split by the
                                                 simulated model's reading rule
                                                 (:func:`skillbench.suite._description.read_description`, the suite's
                                                 common words out); target ≥ 3; 0 is a warning on a hub
``negative-contexts``     hub                    "Do not use for" / "Not for" exclusions, split the same way;
                                                 target ≥ 1; 0 is info
``description-chars``     hub, sub-skills        ≤ 1024 characters (Agent Skills specification); over: warning
``description-words``     hub, sub-skills        ≥ 20 words (skillbench: fewer rarely say what *and* when);
                                                 under: warning on a hub, info on a sub-skill
``lines``                 hub, sub-skills        the file's own lines against the category's upper bound; over:
                                                 warning
``size``                  hub                    hub + sub-skills lines against the category's range; over:
                                                 warning, under: info
``links``                 hub, sub-skills        relative Markdown links (outside code), and links to the suite's
                                                 published site (``<site_base>/…/SKILL.md``, the tree's file),
                                                 resolve to a file or folder; a missing target is an error, one
                                                 outside the family's folder (never installed with it) a warning
``reachable``             sub-skills             reachable from the hub by following SKILL.md links; else warning
``references``            hub                    needed when the size is over the category's upper bound; met by
                                                 a non-empty ``references/`` folder, or a hub within the bound
                                                 (the extra material then sits in sub-skills, loaded on demand);
                                                 else warning
========================  =====================  ==============================================================
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from skillbench.ledgers import SKILL_FILE
from skillbench.quality._units import SkillDoc, SkillUnit
from skillbench.suite import MAX_DESCRIPTION_CHARS, common_words, read_description, segments

STATIC_COLUMNS = ["family", "skill", "level", "finding", "severity", "value", "target", "detail"]
SEVERITIES = ("ok", "info", "warning", "error")
MIN_CONTEXTS = 3
MIN_EXCLUSIONS = 1
MIN_DESCRIPTION_WORDS = 20
CONTEXTS_TARGET = f"≥ {MIN_CONTEXTS} (skillbench: fewer leave most paraphrases to the topic words)"
EXCLUSIONS_TARGET = f"≥ {MIN_EXCLUSIONS} (skillbench: nearby prompts otherwise read as on-topic)"
CHARS_TARGET = f"≤ {MAX_DESCRIPTION_CHARS} characters (Agent Skills specification)"
WORDS_TARGET = f"≥ {MIN_DESCRIPTION_WORDS} words (skillbench: fewer rarely say what and when)"
REFERENCES_DIR = "references"

_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^\"']*[\"'])?\s*\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|#|/)", re.I)


@dataclass(frozen=True)
class Finding:
    """One row of the static table."""

    family: str
    skill: str
    level: str  # hub | sub-skill
    finding: str
    severity: str
    value: str
    target: str
    detail: str


def _row(unit: SkillUnit, doc: SkillDoc, finding: str, severity: str, value: object, target: str,
         detail: str) -> Finding:
    level = "hub" if doc is unit.hub else "sub-skill"
    return Finding(unit.family, doc.label, level, finding, severity, str(value), target, detail)


def relative_links(text: str, site_base: str = "") -> list[str]:
    """The relative link targets of a Markdown text, outside code, without their ``#anchor``, in order.

    A link to a SKILL.md on the suite's published site (``<site_base>/<leaf>``) counts too, as the URL: it names a
    file of the skills tree (:func:`_resolve` maps it back); other pages of the site are documentation, not links.
    """
    prose = _INLINE_CODE.sub("", _FENCE.sub("", text))
    site = site_base.rstrip("/") + "/" if site_base else ""
    out = []
    for target in _LINK.findall(prose):
        path = target.split("#", 1)[0].split("?", 1)[0]
        if _EXTERNAL.match(target) and not (site and target.startswith(site) and path.endswith("/" + SKILL_FILE)):
            continue
        if path:
            out.append(path)
    return out


def _resolve(doc: SkillDoc, target: str, unit: SkillUnit | None = None) -> Path:
    site = unit.site_base.rstrip("/") + "/" if unit is not None and unit.site_base else ""
    if site and target.startswith(site) and unit is not None and unit.skills_root is not None:
        return (unit.skills_root / target[len(site):]).resolve()
    return (doc.folder / target).resolve()


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def _description_rows(unit: SkillUnit, doc: SkillDoc, common: frozenset[str]) -> list[Finding]:
    hub = doc is unit.hub
    desc = doc.skill.description
    read = read_description(doc.skill.name, desc, common)
    parts, _ = segments(desc)
    quoted = sum(len(re.findall(r"\x00\d+\x00", text)) for kind, text in parts if kind == "pos")
    n = len(read.contexts)
    sev = "ok" if n >= MIN_CONTEXTS else ("warning" if n == 0 and hub else "info")
    rows = [_row(unit, doc, "trigger-contexts", sev, n, CONTEXTS_TARGET,
                 f"{n} context(s) after a 'Use when' cue, {quoted} of them quoted phrases"
                 + ("" if n else " — say when to use the skill: Use when … 'a phrase a user would type'"))]
    if hub:
        k = len(read.exclusions)
        rows.append(_row(unit, doc, "negative-contexts", "ok" if k >= MIN_EXCLUSIONS else "info", k,
                         EXCLUSIONS_TARGET, f"{k} exclusion(s) after a 'Do not use for' / 'Not for' cue"
                         + ("" if k else " — name the nearby requests it does not cover")))
    chars, words = len(desc), len(desc.split())
    rows.append(_row(unit, doc, "description-chars", "ok" if chars <= MAX_DESCRIPTION_CHARS else "warning", chars,
                     CHARS_TARGET, f"{chars} characters" + ("" if chars <= MAX_DESCRIPTION_CHARS else
                                                           " — the listing may cut it: shorten it")))
    short = words < MIN_DESCRIPTION_WORDS
    rows.append(_row(unit, doc, "description-words", ("warning" if hub else "info") if short else "ok", words,
                     WORDS_TARGET, f"{words} words" + (" — say what it does and when to use it" if short else "")))
    return rows


def _link_rows(unit: SkillUnit, doc: SkillDoc) -> list[Finding]:
    links = relative_links(doc.text, unit.site_base)
    missing = [t for t in links if not _resolve(doc, t, unit).exists()]
    outside = [t for t in links if t not in missing and not _inside(_resolve(doc, t, unit), unit.folder)]
    ok = len(links) - len(missing) - len(outside)
    sev = "error" if missing else ("warning" if outside else "ok")
    detail = f"{ok} of {len(links)} relative link(s) resolve inside the skill folder"
    if missing:
        detail += f"; missing: {', '.join(missing)} — fix the path or add the file"
    if outside:
        detail += f"; outside the skill folder (not installed with it): {', '.join(outside)}"
    return [_row(unit, doc, "links", sev, f"{ok}/{len(links)}", "every relative link resolves inside the folder",
                 detail)]


def _skill_file(path: Path) -> Path | None:
    if path.is_dir() and (path / SKILL_FILE).is_file():
        return (path / SKILL_FILE).resolve()
    return path.resolve() if path.name == SKILL_FILE and path.is_file() else None


def reachable_docs(unit: SkillUnit) -> set[Path]:
    """The SKILL.md files of ``unit`` reachable from its hub by following relative links (the hub included)."""
    by_path = {d.skill.path.resolve(): d for d in unit.docs}
    seen = {unit.hub.skill.path.resolve()}
    todo = [unit.hub]
    while todo:
        doc = todo.pop()
        for target in relative_links(doc.text, unit.site_base):
            path = _skill_file(_resolve(doc, target, unit))
            if path is not None and path in by_path and path not in seen:
                seen.add(path)
                todo.append(by_path[path])
    return seen


def _size_rows(unit: SkillUnit) -> list[Finding]:
    cat = unit.category
    lo, hi = cat.target
    rows = []
    for doc in unit.docs:
        over = doc.lines > hi
        note = f" — over the {cat.label} upper bound {hi}: split it" if over else ""
        rows.append(_row(unit, doc, "lines", "warning" if over else "ok", doc.lines, f"≤ {hi} lines ({cat.label})",
                         f"{doc.lines} lines{note}"))
    size, k = unit.size, len(unit.subs)
    sev = "warning" if size > hi else ("info" if size < lo else "ok")
    where = "over" if size > hi else ("under" if size < lo else "within")
    rows.append(_row(unit, unit.hub, "size", sev, size, cat.target_text(),
                     f"{size} lines: the hub and {k} sub-skill(s), {where} the target"))
    refs = unit.folder / REFERENCES_DIR
    n_refs = sum(1 for p in refs.rglob("*") if p.is_file()) if refs.is_dir() else 0
    if size <= hi:
        rows.append(_row(unit, unit.hub, "references", "ok", "not needed", f"references/ when over {hi} lines",
                         "the size is within the category's upper bound"))
    elif n_refs:
        rows.append(_row(unit, unit.hub, "references", "ok", f"present ({n_refs} files)",
                         f"references/ when over {hi} lines", "extended material sits in references/"))
    elif unit.hub.lines <= hi:
        rows.append(_row(unit, unit.hub, "references", "ok", "sub-skills", f"references/ when over {hi} lines",
                         f"the hub is within {hi} lines; the rest is in {k} sub-skill(s), loaded on demand"))
    else:
        rows.append(_row(unit, unit.hub, "references", "warning", "absent", f"references/ when over {hi} lines",
                         f"{size} lines and the hub alone {unit.hub.lines}: move extended material to references/"))
    return rows


def unit_findings(unit: SkillUnit, common: frozenset[str] = frozenset()) -> list[Finding]:
    """Every finding of one family (hub first, then each sub-skill)."""
    cat = unit.category
    if cat.written:
        cat_row = _row(unit, unit.hub, "category", "warning", cat.label, cat.source,
                       f"frontmatter category {cat.written!r} is not one of the known categories; using "
                       f"{cat.label} ({cat.source})")
    elif cat.name is None:
        cat_row = _row(unit, unit.hub, "category", "info", cat.label, cat.source,
                       "no category: set 'category:' in the frontmatter or [quality].categories in skillbench.toml")
    else:
        cat_row = _row(unit, unit.hub, "category", "ok", cat.label, cat.source, f"category from {cat.source}")
    rows = [cat_row]
    reach = reachable_docs(unit)
    for doc in unit.docs:
        rows += _description_rows(unit, doc, common)
        rows += _link_rows(unit, doc)
        if doc is not unit.hub:
            hit = doc.skill.path.resolve() in reach
            rows.append(_row(unit, doc, "reachable", "ok" if hit else "warning", "yes" if hit else "no",
                             "reachable from the hub by links",
                             "linked from the hub or a linked sub-skill" if hit else
                             "no chain of links from the hub reaches it: the model never loads it — link it"))
    rows += _size_rows(unit)
    return rows


def suite_common_words(units: Iterable[SkillUnit]) -> frozenset[str]:
    """The words most hubs' descriptions share (the simulated model's reading ignores them)."""
    return common_words((u.hub.skill.name, u.hub.skill.description) for u in units)


def static_findings(units: list[SkillUnit]) -> pd.DataFrame:
    """The static table of every unit (:data:`STATIC_COLUMNS`), hubs and sub-skills in family order."""
    common = suite_common_words(units)
    rows = [asdict(f) for u in units for f in unit_findings(u, common)]
    return pd.DataFrame(rows, columns=STATIC_COLUMNS)
