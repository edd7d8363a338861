"""A comparison of two versions of a suite's skills: the refs resolved, the changes found, the arms planned.

``skillbench compare --base REF [--head REF]`` plans only the changed families (:mod:`skillbench.compare._changes`)
in three arms: ``with-skill@BASE`` and ``with-skill@HEAD`` — the pair every later stage compares, head against
base — and ``no-skill``, the reference that keeps the lift readable. The prompts are the head's: with the default
``--head HEAD`` they are the working tree's (refused when it differs from ``HEAD`` unless ``allow_dirty``), with
another head they come from that commit, materialized like a version arm's files — every root the suite's layout
archives (a skills root beside the suite too) — and read with the working tree's config when the commit has none.
A family the head adds has no base version: it runs head against ``no-skill`` in a week of its own
(:meth:`Comparison.weeks`).

Everything is checked before anything is written: an unknown ref and a dirty tree are each one line
(:class:`CompareError`). A changed family with fewer than ``MIN_STIMULI`` preference-eligible prompts can never
pass: that is said before any run (:attr:`Comparison.notes`), and one with none is not run at all.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from skillbench.arms import ArmPair, version_arm
from skillbench.compare._changes import Changes, discover_changes, suite_relative
from skillbench.ledgers import CONFIG_FILE, HELDOUT_DIR, SKILL_FILE, VERSIONS_DIR
from skillbench.suite import (
    HEAD,
    PreflightReport,
    SkillsVersion,
    Suite,
    SuiteOverrides,
    SuiteRepo,
    VersionError,
    changed_files,
    git,
    resolve_version,
)
from skillbench.vocab import MIN_STIMULI, NO_SKILL, WITH_SKILL

# RUN_DIR/_new/: the week of the families the head adds, head against no-skill ("_": never taken for a run folder)
NEW_DIR = "_new"
COMPARE_DIR = "compare"  # SUITE_DIR/compare/<run_key>/: a comparison's run directory (never weekly/)


class CompareError(ValueError):
    """A comparison that cannot be planned; the message is one line naming the ref, family or file."""


@dataclass(frozen=True)
class ComparedWeek:
    """One week a comparison runs, in its own run directory.

    The changed families that exist at the base run head against base (``no-skill`` for reference) in the
    comparison's run directory; the families the head adds have no base version, so they run head against
    ``no-skill`` in :data:`NEW_DIR` below it — their base arm would install nothing and measure nothing.

    Attributes:
        families: the families it runs, sorted.
        suite: the head's suite, keeping only those families' prompts.
        arms: the pair it judges.
        versions: each condition's files.
        run_key: its run key (the new families' ends in ``-new``).
        run_dir: its run directory.
    """

    families: list[str]
    suite: Suite
    arms: ArmPair
    versions: dict[str, SkillsVersion]
    run_key: str
    run_dir: Path
    new: bool = False
    pair_only: bool = False  # a held-out week: only the pair its lift compares (no-skill is no lift's arm there)

    @property
    def conditions(self) -> list[str]:
        if self.new or self.pair_only:
            return list(dict.fromkeys([self.arms.control, self.arms.treatment]))
        return [NO_SKILL, self.arms.control, self.arms.treatment]


@dataclass(frozen=True)
class Comparison:
    """Everything a comparison's stages need, decided before the first run.

    Attributes:
        suite: the head's suite, keeping only the prompts of the changed families that can be measured.
        repo: the repository both versions come from.
        base, head: the two versions (refs as given, commits, the head's diff hash).
        changes: what differs between them.
        notes: what the report says about the plan before any run: where the config came from, and every
            changed family that can never pass (fewer than ``MIN_STIMULI`` preference-eligible prompts).
        arms: ``with-skill@HEAD`` (treatment) against ``with-skill@BASE`` (control), ``no-skill`` for reference.
    """

    suite: Suite
    repo: SuiteRepo
    base: SkillsVersion
    head: SkillsVersion
    changes: Changes
    notes: tuple[str, ...] = ()

    @property
    def arms(self) -> ArmPair:
        return ArmPair(treatment=version_arm(WITH_SKILL, self.head.ref), control=version_arm(WITH_SKILL, self.base.ref),
                       reference=NO_SKILL)

    @property
    def conditions(self) -> list[str]:
        return [NO_SKILL, self.arms.control, self.arms.treatment]

    @property
    def run_key(self) -> str:
        return run_key_for(self.base.commit, self.head.commit, self.head.diff)

    @property
    def measured(self) -> list[str]:
        """The changed families that run: those with at least one preference-eligible prompt at the head."""
        return sorted({p.family for p in self.suite.preference_eligible_prompts})

    def versions(self, run_dir: Path) -> dict[str, SkillsVersion]:
        """Each condition's files, the base's materialized under ``run_dir/_versions/`` (a resume reuses them)."""
        base = self.repo.at_commit(self.base.ref, self.base.commit, Path(run_dir) / VERSIONS_DIR)
        base = dataclasses.replace(base, suite_dir=self.suite.suite_dir)
        nothing = SkillsVersion("", "", self.suite.suite_dir, self.suite.suite_dir)
        return {NO_SKILL: nothing, self.arms.control: base, self.arms.treatment: self.head}

    def weeks(self, run_dir: Path) -> list[ComparedWeek]:
        """The weeks to run (none empty): the families of the base (head against base) in ``run_dir``, the new
        ones (head against no-skill) in ``run_dir/_new/``."""
        added = set(self.changes.added)
        out = []
        for new, families in ((False, [f for f in self.measured if f not in added]),
                              (True, [f for f in self.measured if f in added])):
            if not families:
                continue
            keep = set(families)
            suite = dataclasses.replace(self.suite, prompts=[p for p in self.suite.prompts if p.family in keep])
            arms = ArmPair(treatment=self.arms.treatment, control=NO_SKILL) if new else self.arms
            folder = Path(run_dir) / NEW_DIR if new else Path(run_dir)
            versions = self.versions(run_dir)
            if new:
                versions.pop(self.arms.control)
            out.append(ComparedWeek(families, suite, arms, versions, f"{self.run_key}-new" if new else self.run_key,
                                    folder, new))
        return out


def heldout_week(week: ComparedWeek) -> ComparedWeek | None:
    """The held-out prompts of ``week``'s families, run in the pair of arms its lift compares (head and base; head
    and no-skill for a new family) as a week of their own below it (``<week>/_heldout/``, run key
    ``<week's>-heldout``); None when those families have none. The no-skill reference arm is left out: no lift
    reads it, and it would cost a third more runs.

    Held out by construction: the scored week's ledgers, gate and scorecard never see these runs. Inside their own
    week the prompts are planned like scored ones (generation plans only scored prompts), which is the one place
    they are.
    """
    keep = set(week.families)
    held = [dataclasses.replace(p, heldout=False) for p in week.suite.prompts if p.heldout and p.family in keep]
    if not held:
        return None
    return ComparedWeek(week.families, dataclasses.replace(week.suite, prompts=held), week.arms, week.versions,
                        f"{week.run_key}-heldout", Path(week.run_dir) / HELDOUT_DIR, week.new, pair_only=True)


def heldout_prompts(suite: Suite, families: list[str]) -> list[tuple[str, str]]:
    """``(family, prompt)`` of every held-out prompt of ``families``, in the suite's order."""
    keep = set(families)
    return [(p.family, p.name) for p in suite.prompts if p.heldout and p.family in keep]


def run_key_for(base_commit: str, head_commit: str, diff: str = "") -> str:
    """``compare-<base>-<head>`` (12 hex each; ``-dirty-<diff>`` for a working tree): one folder per pair of
    commits, so rerunning a comparison resumes it."""
    dirty = f"-dirty-{diff[:8]}" if diff else ""
    return f"compare-{base_commit[:12]}-{head_commit[:12]}{dirty}"


def families_at(repo: SuiteRepo, commit: str, suite: Suite) -> set[str]:
    """The head's families (and any other folder with a SKILL.md under the skills root) that exist at ``commit``,
    looked up in every root the layout archives (a skills root beside the suite too)."""
    listed = str(git(repo.repo, "ls-tree", "-r", "--name-only", commit, "--", *repo.archived)).splitlines()
    here = {suite_relative(p, repo) for p in listed}
    root = suite.suite_dir.resolve()

    def rel(path: Path) -> str:
        return Path(os.path.relpath(path.resolve(), root)).as_posix()

    def hub(family: str) -> str:
        folder = rel(suite.family_dir(family))
        return SKILL_FILE if folder == "." else f"{folder}/{SKILL_FILE}"

    found = {f for f in suite.families if hub(f) in here}
    skills = rel(suite.skills_root)
    if skills == ".." or skills.endswith("/.."):  # a skill-creator skill: its root is its parent, not archived
        return found
    prefix = "" if skills == "." else skills + "/"
    depth = prefix.count("/") + 1
    found |= {p[len(prefix):].split("/", 1)[0] for p in here
              if p.startswith(prefix) and p.count("/") == depth and p.endswith(f"/{SKILL_FILE}")}
    return found


def plan_comparison(suite: Suite, base_ref: str, head_ref: str = HEAD, *, allow_dirty: bool = False,
                    cache_dir: Path | None = None, overrides: SuiteOverrides | None = None) -> Comparison:
    """Resolve both refs, find the changes and keep only the changed families' prompts.

    Args:
        suite: the suite as loaded from the working tree (with the command's flags).
        base_ref, head_ref: git refs of the suite's repository (``head_ref`` default ``HEAD``: the working tree).
        allow_dirty: the head may be a working tree that differs from ``HEAD`` (its diff hash is recorded).
        cache_dir: where another head's files are materialized (needed only when ``head_ref`` is not ``HEAD``).
        overrides: the suite flags ``suite`` was read with; a materialized head is read with them too, its skills
            root where the working tree's is, and the working tree's config when the head has none.

    Raises:
        CompareError: a bad ref, a dirty tree or the same commit twice. A changed family that can never pass is
            not refused: it is a note (and, with no preference-eligible prompt at all, not run).
    """
    notes: list[str] = []
    try:
        repo = SuiteRepo.of(suite)
        base = repo.at_commit(base_ref, repo.commit(base_ref), None)  # the commit's files; nothing written yet
        if head_ref == HEAD:
            head = resolve_version(suite, HEAD, allow_dirty=allow_dirty, repo=repo)
            head_suite = suite
            if not (suite.suite_dir / CONFIG_FILE).is_file():
                notes.append(f"config: the working tree has no {CONFIG_FILE}: "
                             + ("the --config file" if (overrides and overrides.config) else "the defaults")
                             + " and the command-line flags apply")
        else:
            if cache_dir is None:
                raise CompareError(f"--head {head_ref}: a head other than HEAD needs a folder to hold its files")
            commit = repo.commit(head_ref)
            rel_root = repo.materialize(commit, Path(cache_dir))
            folder = rel_root / repo.rel if repo.rel != "." else rel_root
            touched = {(rel_root / f).resolve() for f in changed_files(repo.repo, base.commit, commit, repo.archived)}
            base_root = repo.materialize(base.commit, Path(cache_dir))  # the same copy the base arm installs from
            head_suite = _load_head(suite, head_ref, overrides or SuiteOverrides(), notes,
                                    Materialized(rel_root, base_root, repo.rel, frozenset(touched)))
            head = SkillsVersion(head_ref, commit, folder, folder)
            repo = dataclasses.replace(repo, suite_dir=folder)
    except VersionError as exc:
        raise CompareError(str(exc)) from exc
    if base.commit == head.commit and not head.diff:
        raise CompareError(f"--base {base_ref} and --head {head_ref} are the same commit ({base.commit[:12]}): "
                           f"nothing to compare — to review what a commit or a merge brought, compare it with its "
                           f"first parent: --base {head_ref}^1 (what compare does when --base is left out)")
    base_families = families_at(repo, base.commit, head_suite)
    changes = discover_changes(head_suite, repo, base.commit,
                               None if head.diff else head.commit, base_families=base_families)
    eligible = {f: sum(p.family == f for p in head_suite.preference_eligible_prompts) for f in changes.families}
    for family, n in eligible.items():
        if n < MIN_STIMULI:
            ran = "it runs, but" if n else "it is not run:"
            notes.append(f"{family}: {n} preference-eligible prompt(s) at {head_ref}; the gate needs {MIN_STIMULI}, "
                         f"so {ran} it can never pass — add {MIN_STIMULI - n} scored, non-dormancy prompt(s) for it")
    keep = {f for f, n in eligible.items() if n}
    restricted = dataclasses.replace(head_suite, prompts=[p for p in head_suite.prompts if p.family in keep])
    base = dataclasses.replace(base, suite_dir=head_suite.suite_dir)
    return Comparison(suite=restricted, repo=repo, base=base, head=head, changes=changes, notes=tuple(notes))


@dataclass(frozen=True)
class Materialized:
    """The two versions' copies of the repository, for reading the head: where each is, the suite's folder in
    them, and the files of the head's copy that the change touched."""

    head: Path
    base: Path
    rel: str
    touched: frozenset[Path]

    def suite_dir(self, root: Path) -> Path:
        return root / self.rel if self.rel != "." else root


def _load_head(suite: Suite, head_ref: str, overrides: SuiteOverrides, notes: list[str], at: Materialized) -> Suite:
    """The suite at a materialized head, read with the command's flags: its skills root where the working tree's
    is, and the working tree's config when the head has none (a repository that never committed one, or a commit
    from before it).

    An error the change did not cause — in a file it did not touch, and the same error at the base (a prompt
    already broken there, e.g. an old ``skill_url`` form) — leaves that prompt out and is a note. Any other error
    refuses the comparison: a change cannot drop its own prompts, nor an untouched one by breaking what it names.

    Raises:
        CompareError: the head has an error the change is answerable for (one line, naming the commit's file).
    """
    from skillbench.suite import preflight

    folder = at.suite_dir(at.head)
    skills = folder / os.path.relpath(suite.skills_root, suite.suite_dir)
    config = overrides.config
    if config is None and not (folder / CONFIG_FILE).is_file():
        here = suite.suite_dir / CONFIG_FILE
        config = str(here) if here.is_file() else None
        notes.append(f"config: {head_ref} has no {CONFIG_FILE}: "
                     + (f"the working tree's ({here}) applies" if config else "the defaults apply")
                     + ", with the command-line flags over it")

    # the base is read with the head's settings: an error then differs only where the files do
    settings = config if config is not None or not (folder / CONFIG_FILE).is_file() else str(folder / CONFIG_FILE)

    def read(root: Path) -> PreflightReport:
        at_root = at.suite_dir(root)
        return preflight(at_root, dataclasses.replace(overrides, skills_root=str(at_root / os.path.relpath(
            skills, folder)), config=settings))

    def named(defect: object, root: Path) -> str:  # paths in the repository, not in the materialized copy
        return str(defect).replace(os.path.relpath(root) + os.sep, "")

    report = read(at.head)
    errors = report.errors
    if not errors:
        return report.suite
    before = {named(d, at.base) for d in read(at.base).errors}
    answerable = [d for d in errors if report.stopped or Path(d.path).resolve() in at.touched
                  or not Path(d.path).is_file() or named(d, at.head) not in before]
    if answerable:
        more = len(answerable) - 1
        raise CompareError(f"the suite at --head {head_ref} has errors: {head_ref}:{named(answerable[0], at.head)}"
                           + (f" (and {more} more)" if more else "")
                           + " — check the flags fit that commit, or check it out and run `skillbench validate`")
    notes += [f"left out at {head_ref} (already broken at the base, not touched by the change): "
              f"{head_ref}:{named(d, at.head)}" for d in errors]
    return report.suite
