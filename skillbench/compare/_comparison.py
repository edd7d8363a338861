"""A comparison of two versions of a suite's skills: the refs resolved, the changes found, the arms planned.

``skillbench compare --base REF [--head REF]`` plans only the changed families (:mod:`skillbench.compare._changes`)
in three arms: ``with-skill@BASE`` and ``with-skill@HEAD`` — the pair every later stage compares, head against
base — and ``no-skill``, the reference that keeps the lift readable. The prompts are the head's: with the default
``--head HEAD`` they are the working tree's (refused when it differs from ``HEAD`` unless ``allow_dirty``), with
another head they come from that commit, materialized like a version arm's files.

Everything is checked before anything is written: an unknown ref, a dirty tree, and a changed family without a
preference-eligible prompt (it could never get a verdict) are each one line (:class:`CompareError`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from skillbench.arms import ArmPair, version_arm
from skillbench.compare._changes import Changes, discover_changes
from skillbench.ledgers import SKILL_FILE, VERSIONS_DIR
from skillbench.suite import HEAD, SkillsVersion, Suite, SuiteRepo, VersionError, git, resolve_version
from skillbench.vocab import NO_SKILL, WITH_SKILL

COMPARE_DIR = "compare"  # SUITE_DIR/compare/<run_key>/: a comparison's run directory (never weekly/)


class CompareError(ValueError):
    """A comparison that cannot be planned; the message is one line naming the ref, family or file."""


@dataclass(frozen=True)
class Comparison:
    """Everything a comparison's stages need, decided before the first run.

    Attributes:
        suite: the head's suite, keeping only the changed families' prompts.
        repo: the repository both versions come from.
        base, head: the two versions (refs as given, commits, the head's diff hash).
        changes: what differs between them.
        arms: ``with-skill@HEAD`` (treatment) against ``with-skill@BASE`` (control), ``no-skill`` for reference.
    """

    suite: Suite
    repo: SuiteRepo
    base: SkillsVersion
    head: SkillsVersion
    changes: Changes

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

    def versions(self, run_dir: Path) -> dict[str, SkillsVersion]:
        """Each condition's files, the base's materialized under ``run_dir/_versions/`` (a resume reuses them)."""
        base = self.repo.at_commit(self.base.ref, self.base.commit, Path(run_dir) / VERSIONS_DIR)
        base = dataclasses.replace(base, suite_dir=self.suite.suite_dir)
        nothing = SkillsVersion("", "", self.suite.suite_dir, self.suite.suite_dir)
        return {NO_SKILL: nothing, self.arms.control: base, self.arms.treatment: self.head}


def run_key_for(base_commit: str, head_commit: str, diff: str = "") -> str:
    """``compare-<base>-<head>`` (12 hex each; ``-dirty-<diff>`` for a working tree): one folder per pair of
    commits, so rerunning a comparison resumes it."""
    dirty = f"-dirty-{diff[:8]}" if diff else ""
    return f"compare-{base_commit[:12]}-{head_commit[:12]}{dirty}"


def families_at(repo: SuiteRepo, commit: str, suite: Suite) -> set[str]:
    """The head's families (and any other folder with a SKILL.md under the skills root) that exist at ``commit``."""
    prefix = "" if repo.rel == "." else repo.rel.rstrip("/") + "/"
    listed = str(git(repo.repo, "ls-tree", "-r", "--name-only", commit, "--", repo.rel)).splitlines()
    here = {p[len(prefix):] for p in listed if p.startswith(prefix)}
    root = suite.suite_dir.resolve()
    def hub(family: str) -> str:
        rel = suite.family_dir(family).resolve().relative_to(root).as_posix()
        return SKILL_FILE if rel == "." else f"{rel}/{SKILL_FILE}"

    found = {f for f in suite.families if hub(f) in here}
    if not suite.skills_root.resolve().is_relative_to(root):  # a skill-creator skill: its root is its parent
        return found
    skills = suite.skills_root.resolve().relative_to(root).as_posix()
    found |= {p[len(skills) + 1:].split("/", 1)[0] for p in here
              if p.startswith(skills + "/") and p.count("/") == skills.count("/") + 2 and p.endswith(f"/{SKILL_FILE}")}
    return found


def plan_comparison(suite: Suite, base_ref: str, head_ref: str = HEAD, *, allow_dirty: bool = False,
                    cache_dir: Path | None = None, load=None) -> Comparison:
    """Resolve both refs, find the changes and keep only the changed families' prompts.

    Args:
        suite: the suite as loaded from the working tree.
        base_ref, head_ref: git refs of the suite's repository (``head_ref`` default ``HEAD``: the working tree).
        allow_dirty: the head may be a working tree that differs from ``HEAD`` (its diff hash is recorded).
        cache_dir: where another head's files are materialized (needed only when ``head_ref`` is not ``HEAD``).
        load: ``load(suite_dir) -> Suite`` for a materialized head (default :func:`skillbench.suite.load_suite`).

    Raises:
        CompareError: a bad ref, a dirty tree, the same commit twice, or a changed family that has no
            preference-eligible prompt.
    """
    try:
        repo = SuiteRepo.of(suite)
        base = repo.at_commit(base_ref, repo.commit(base_ref), None)  # the commit's files; nothing written yet
        if head_ref == HEAD:
            head = resolve_version(suite, HEAD, allow_dirty=allow_dirty, repo=repo)
            head_suite = suite
        else:
            if cache_dir is None:
                raise CompareError(f"--head {head_ref}: a head other than HEAD needs a folder to hold its files")
            commit = repo.commit(head_ref)
            rel_root = repo.materialize(commit, Path(cache_dir))
            folder = rel_root / repo.rel if repo.rel != "." else rel_root
            if load is None:
                from skillbench.suite import load_suite as load
            head_suite = load(folder)
            head = SkillsVersion(head_ref, commit, folder, folder)
            repo = dataclasses.replace(repo, suite_dir=folder)
    except VersionError as exc:
        raise CompareError(str(exc)) from exc
    if base.commit == head.commit and not head.diff:
        raise CompareError(f"--base {base_ref} and --head {head_ref} are the same commit ({base.commit[:12]}): "
                           "nothing to compare")
    base_families = families_at(repo, base.commit, head_suite)
    changes = discover_changes(head_suite, repo, base.commit,
                               None if head.diff else head.commit, base_families=base_families)
    for family in changes.families:
        eligible = [p for p in head_suite.preference_eligible_prompts if p.family == family]
        if not eligible:
            raise CompareError(f"skill family {family} changed between {base_ref} and {head_ref} but has no "
                               "preference-eligible prompt (a scored, non-dormancy prompt of the family), so it could "
                               "never get a verdict — add one under test-prompts/, or leave the family unchanged")
    keep = set(changes.families)
    restricted = dataclasses.replace(head_suite, prompts=[p for p in head_suite.prompts if p.family in keep])
    base = dataclasses.replace(base, suite_dir=head_suite.suite_dir)
    return Comparison(suite=restricted, repo=repo, base=base, head=head, changes=changes)
