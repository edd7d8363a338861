"""One broken spec does not stop the others: a preflight's errors split by the skill family they make invalid.

A week (``weekly``, ``generate``) runs every family whose specs are sound and records the rest as invalid, each
with the validator's lines, so one eval with an unknown assertion type or one prompt with a bad rubric costs its
own family's verdict (``INVALID_INCONCLUSIVE (invalid_spec)``) and nothing else. ``validate`` still exits 1 on any
error, and ``compare`` still refuses a broken suite (:func:`skillbench.suite.load_suite`): a pull request must not
turn a regressing family into an inconclusive one by breaking its spec.

An error belongs to a family when its file does: a file under the family's folder (its SKILL.md, a skill-creator
``evals/evals.json``), an eval the layout read for that family's skill (dotnet), a prompt the layout loaded for it,
or a prompt file whose ``skill_url`` names it (a qdrant prompt that failed validation was not loaded). An error
that belongs to no family (the config, the skills root, a prompt whose ``skill_url`` cannot be read) stops the whole
suite as before: it cannot be held apart, so nothing runs on it.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from skillbench.suite._defects import Defect, display_path
from skillbench.suite._format import SkillUrlError, Suite, parse_skill_url
from skillbench.suite._nesting import NestingError, load_json
from skillbench.suite._task_checks import CANNOT_START
from skillbench.suite._validation import PreflightReport, SuiteError, SuiteOverrides, preflight


def defect_family(defect: Defect, report: PreflightReport) -> str | None:
    """The skill family ``defect``'s file belongs to, or None when it belongs to none (it stops the suite)."""
    suite = report.suite
    shown = defect.path
    where = _absolute(shown)  # a link is judged where it is, not where it points (a link out is the defect)
    for family in suite.families:
        if where.is_relative_to(_absolute(suite.family_dir(family))):
            return family
    root = _absolute(suite.skills_root)
    if not suite.family_dirs and where.is_relative_to(root) and len(where.relative_to(root).parts) > 1:
        return where.relative_to(root).parts[0]  # a family folder whose SKILL.md could not be read
    for info in suite.evals:  # dotnet: each eval is its skill's, whatever is wrong inside it
        if display_path(info.path) == shown:
            return info.skill
    for spec in suite.prompts:
        if display_path(spec.path) == shown and spec.family:
            return spec.family
    for path in report.prompt_files:
        if display_path(path) == shown:
            return _named_family(path, suite)
    return None


def _absolute(path: str | Path) -> Path:
    return Path(os.path.abspath(path))


def _named_family(path: Path, suite: Suite) -> str | None:
    """The family a prompt file's ``skill_url`` names (qdrant's format), None when it names none readably."""
    try:
        raw = load_json(path.read_text(encoding="utf-8"))
    except (NestingError, json.JSONDecodeError, OSError, UnicodeDecodeError):
        return None
    url = raw.get("skill_url") if isinstance(raw, dict) else None
    if not isinstance(url, str) or not url.strip():
        return None
    try:
        family, _ = parse_skill_url(url, suite.site_base)
    except SkillUrlError:
        return None
    return family or None


def split_families(report: PreflightReport) -> Suite:
    """Cut ``report``'s suite to its sound families; the rest go to :attr:`Suite.invalid_families`, each with the
    validator's lines (``path: field: problem — fix``, relative to the suite) in the report's order. A family with
    a prompt whose setup cannot start in this sandbox (a program the image lacks: ``validate`` warns) is held out
    the same way, its line saying so: its runs could not run, never a pass or a loss. An invalid family is neither
    run nor installed (not even by an arm that installs every family).

    Raises:
        SuiteError: an error that belongs to no family (named first), a config that could not be read, or no sound
            family left.
    """
    if report.stopped:
        raise SuiteError(report)
    invalid: dict[str, list[str]] = {}
    for defect in report.errors:
        family = defect_family(defect, report)
        if family is None:
            first = [defect, *(d for d in report.defects if d is not defect)]
            raise SuiteError(PreflightReport(report.suite, first, report.prompt_files))
        invalid.setdefault(family, []).append(_recorded(defect, report.suite.suite_dir))
    for defect in report.warnings:  # a prompt whose setup cannot start in this sandbox: its family could not run
        if CANNOT_START in defect.problem and (family := defect_family(defect, report)) is not None:
            invalid.setdefault(family, []).append(_recorded(defect, report.suite.suite_dir))
    if not invalid:
        return report.suite
    whole = report.suite
    # Nothing of an invalid family is installed, in any arm: its error may be the skill itself (a link out of the
    # tree, an unreadable SKILL.md), and an arm that installs every family must not carry it into a run.
    suite = dataclasses.replace(
        whole, prompts=[p for p in whole.prompts if p.family not in invalid],
        skills={leaf: skill for leaf, skill in whole.skills.items() if skill.family not in invalid},
        family_dirs={f: d for f, d in whole.family_dirs.items() if f not in invalid},
        plugin_of={f: p for f, p in whole.plugin_of.items() if f not in invalid},
        invalid_families=dict(sorted(invalid.items())))
    if not suite.scored_prompts:
        raise SuiteError(report)
    return suite


def _recorded(defect: Defect, suite_dir: Path) -> str:
    """The defect's line with its path relative to the suite folder: the week records it, and a path relative to
    wherever the pass happened to run would name nothing once read elsewhere."""
    where, root = _absolute(defect.path), _absolute(suite_dir)
    shown = where.relative_to(root).as_posix() if where.is_relative_to(root) else defect.path
    return str(dataclasses.replace(defect, path=shown))


def load_families(suite_dir: str | Path = "evals", overrides: SuiteOverrides | None = None) -> Suite:
    """Read a suite for a week: preflight it (with the command line's ``overrides``) and keep what is sound
    (:func:`split_families`).

    Raises:
        SuiteError: an error no family can be held to, or no sound family.
    """
    return split_families(preflight(suite_dir, overrides))
