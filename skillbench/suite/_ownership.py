"""Rubric ownership: who wrote each family's skill and who wrote its prompts' rubrics, read from git history.

A rubric written by the skill's own author tends to measure conformity to the skill, its mistakes included (qdrant's
scoring design asks for rubrics owned by someone else for that reason). Git knows who touched what, so preflight
and the merge report warn, per family, where one person authored commits on both sides — never an error: the
history cannot be fixed by editing the suite, only weighed by whoever reads the verdicts.

What is read: one ``git log`` per suite over the families' folders and the folders holding their prompt/eval files
(the loaded :class:`~skillbench.suite._format.Suite` says which files those are, for every layout), each commit's
author after ``.mailmap`` (``%aN``/``%aE``) and the files it touched, parsed once. A family's *rubric files* are
the files its prompts were loaded from (qdrant's ``test-prompts/<name>.json``, a dotnet ``eval.yaml``, a
skill-creator ``evals/evals.json``); its *skill files* are the rest of its folder (eval material kept inside it,
a skill-creator skill's ``evals/``, is on neither side). People are merged by e-mail
address, compared case-insensitively, after the mailmap (one address under two names is one person). Only files
that exist in the suite as read count, so a deleted prompt's authors do not own today's rubrics.

Renames are followed inside the folders read (``-M`` with ``--name-status``, mapped from newest to oldest): one call
for every file, where ``--follow`` takes a single path. A family folder renamed as a whole, or a file moved in from
outside those folders, starts its history at the move. Merge commits contribute no files (their content is in the
commits merged); ``Co-authored-by`` trailers are not read; bot identities (a name ending ``[bot]``) write no
rubric and are left out.

No git, a suite outside any repository, or a shallow clone (whose oldest commit seems to add every file) is one
line saying ownership was not checked, never a defect.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from skillbench.suite._defects import display_path
from skillbench.suite._format import Suite

GIT_TIMEOUT_S = 30.0
MAX_FILES_NAMED = 3  # files named per side in a warning line; the rest are counted
FIX = "have someone other than the skill's author write or review these rubrics"
_RECORD, _UNIT = "\x1e", "\x1f"  # separators no name, e-mail or path holds (git quotes nothing under -z)


@dataclass(frozen=True)
class Overlap:
    """One person who authored commits on both a family's skill files and its rubric files."""

    family: str
    author: str
    skill_files: tuple[str, ...]  # repository-relative, sorted
    rubric_files: tuple[str, ...]

    @property
    def problem(self) -> str:
        return (f"{self.author} wrote both the skill ({_named(self.skill_files)}) and its prompts' rubrics "
                f"({_named(self.rubric_files)})")

    def __str__(self) -> str:
        return f"rubric ownership: {self.family}: {self.problem} — {FIX}"


@dataclass(frozen=True)
class Ownership:
    """What the history says about a suite's rubric ownership.

    Attributes:
        overlaps: one per family × person who wrote both sides, by family then person.
        unread: why the history was not read (no git, not a repository, a shallow clone); ``""`` when it was.
        commits: the commits read.
        families: the families whose skill files and rubric files both have history.
    """

    overlaps: tuple[Overlap, ...] = ()
    unread: str = ""
    commits: int = 0
    families: tuple[str, ...] = ()
    asked: tuple[str, ...] = ()  # the families that have rubric files: none, nothing to say

    def note(self) -> str:
        """One line: why ownership was not checked, or how many families overlap."""
        if not self.asked:
            return "rubric ownership: no family has a prompt with a rubric"
        if self.unread:
            return f"rubric ownership not checked: {self.unread}"
        n, mixed = len(self.families), len({o.family for o in self.overlaps})
        read = f"(from {self.commits} commit{'' if self.commits == 1 else 's'} of git history)"
        if not n:
            return f"rubric ownership: no family has committed history on both its skill and its rubrics {read}"
        if not mixed:
            return (f"rubric ownership: the rubrics of all {n} families have owners other than their skills' "
                    f"authors {read}")
        return f"rubric ownership: {mixed} of {n} families have a rubric author who also wrote the skill {read}"

    def lines(self) -> list[str]:
        """What ``validate`` prints: one ``warning:`` line per overlap, then the ``note:`` line (nothing for a suite
        without a rubric)."""
        if not self.asked:
            return []
        return [f"warning: {o}" for o in self.overlaps] + [f"note: {self.note()}"]


def _printable(text: str) -> str:
    """``text`` with its control characters escaped: a name or a path from history (a pull request's) stays on one
    line and cannot drive a terminal (``\\n``, ``\\x1b``)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _named(files: tuple[str, ...]) -> str:
    more = len(files) - MAX_FILES_NAMED
    return ", ".join(files[:MAX_FILES_NAMED]) + (f" and {more} more" if more > 0 else "")


@dataclass(frozen=True)
class _Sides:
    """A family's files, repository-relative: its skill folder and its rubric files."""

    folder: str
    rubrics: frozenset[str]

    @cached_property
    def eval_dirs(self) -> tuple[str, ...]:
        """The folders of the rubric files inside the skill's folder (a skill-creator skill's ``evals/``): what else
        is there (``evals/files/``) is eval material, neither the skill nor a rubric."""
        parents = {r.rsplit("/", 1)[0] if "/" in r else "" for r in self.rubrics}
        return tuple(sorted(p for p in parents if p != self.folder and _under(p, self.folder)))

    def side(self, path: str) -> str | None:
        if path in self.rubrics:
            return "rubric"
        if _under(path, self.folder) and not any(_under(path, d) for d in self.eval_dirs):
            return "skill"
        return None


def _under(path: str, folder: str) -> bool:
    return folder in ("", ".") or path.startswith(folder + "/")


def rubric_ownership(suite: Suite, families: Iterable[str] | None = None, *, repo: Path | None = None,
                     commit: str = "HEAD", checkout: Path | None = None) -> Ownership:
    """Who wrote which side of each family, from the history of the repository holding the suite.

    Args:
        suite: the loaded suite (its prompts and family folders say which files are whose).
        families: the families to read (default: every family of the suite).
        repo: the git repository (default: the one the suite's folder is in).
        commit: the history read ends here (default ``HEAD``).
        checkout: the folder that stands for the repository's top in the suite's paths: a copy materialized at
            ``commit`` (default: the repository itself).

    Returns:
        :class:`Ownership`; never raises for a missing git, a folder outside any repository or a failing git.
    """
    rubrics = _rubric_files(suite, families)
    asked = tuple(sorted(rubrics))
    if not asked:
        return Ownership()
    if shutil.which("git") is None:
        return Ownership(unread="git is not installed (or not on PATH)", asked=asked)
    if repo is None and not _has_git_above(suite.suite_dir):  # no subprocess for the common case of a plain folder
        return Ownership(unread=f"{_shown(suite.suite_dir)} is not inside a git repository", asked=asked)
    where = repo if repo is not None else suite.suite_dir
    try:
        top, shallow = _git(where, "rev-parse", "--show-toplevel", "--is-shallow-repository").splitlines()[:2]
    except (_GitFailed, ValueError) as exc:  # e.g. a repository owned by another user (git's safe.directory)
        return Ownership(unread=f"git cannot read the repository of {_shown(suite.suite_dir)}: "
                                f"{_printable(str(exc)) or 'no output'}", asked=asked)
    if shallow.strip() == "true":
        return Ownership(unread=f"the repository at {_printable(top)} is a shallow clone, so its history is "
                                "incomplete (its oldest commit seems to add every file) — `git fetch --unshallow` "
                                "to read who wrote what", asked=asked)
    root = Path(checkout or top).resolve()
    sides = _family_sides(suite, rubrics, root)
    if not sides:
        return Ownership(unread=f"the families' files are outside the repository {_shown(Path(top))}", asked=asked)
    specs = sorted({s.folder for s in sides.values()} | {str(Path(r).parent.as_posix()) for s in sides.values()
                                                          for r in s.rubrics})
    try:
        # --no-show-signature and --no-color: a user's log.showSignature or color.ui=always would mix lines in
        out = _git(Path(top), "log", "--use-mailmap", "-M", "--name-status", "-z", "--no-show-signature",
                   "--no-color", f"--format={_RECORD}%aN{_UNIT}%aE", commit, "--", *specs)
    except _GitFailed as exc:
        return Ownership(unread=f"git log: {_printable(str(exc))}", asked=asked)
    return dataclasses.replace(_overlaps(_parse_log(out), sides, root), asked=asked)


def _has_git_above(folder: Path) -> bool:
    """A ``.git`` (folder, or a worktree's file) in ``folder`` or above it."""
    here = Path(os.path.abspath(folder))
    return any((p / ".git").exists() for p in (here, *here.parents))


def _shown(path: Path) -> str:
    return _printable(display_path(path))


class _GitFailed(Exception):
    """git could not run, or said no; the message is its first line."""


def _git(where: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as exc:
        raise _GitFailed(str(exc)) from exc
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise _GitFailed(why[0] if why else f"exit {done.returncode}")
    return done.stdout.decode("utf-8", "replace")  # not stripped: the separators count as whitespace


def _rubric_files(suite: Suite, families: Iterable[str] | None) -> dict[str, set[Path]]:
    """Each family's rubric files (none: the family is not asked about): its prompts' files and, for dotnet, every
    eval file of its skill (its broken stimuli's too)."""
    wanted = set(suite.families if families is None else families)
    rubrics: dict[str, set[Path]] = defaultdict(set)
    for spec in suite.prompts:
        if spec.family in wanted and not spec.trigger_only:  # a trigger query has no rubric
            rubrics[spec.family].add(spec.path)
    for info in suite.evals:
        if info.skill in wanted:
            rubrics[info.skill].add(info.path)
    return rubrics


def _family_sides(suite: Suite, rubrics: dict[str, set[Path]], root: Path) -> dict[str, _Sides]:
    """Each family's folder and rubric files relative to ``root`` (a family outside it has no history here)."""

    def rel(path: Path) -> str | None:
        here = Path(path).resolve()  # as the root is: a suite reached through a link still maps into it
        try:
            return here.relative_to(root).as_posix()
        except ValueError:
            return None

    out = {}
    for family, paths in sorted(rubrics.items()):
        folder = rel(suite.family_dir(family))
        inside = frozenset(r for p in paths if (r := rel(p)) is not None)
        if folder is not None and inside:
            out[family] = _Sides(folder, inside)
    return out


@dataclass
class _Commit:
    name: str
    email: str
    files: list[str] = field(default_factory=list)  # as they are named today (renames followed)


def _parse_log(out: str) -> list[_Commit]:
    """``git log -z --name-status`` records, newest first, each file named as it is today.

    Read from newest to oldest, a rename ``old → new`` makes older commits' ``old`` today's name of ``new``; an
    addition ends a name's history (an older file of that name was another file).
    """
    today: dict[str, str | None] = {}
    commits = []
    for record in out.split(_RECORD)[1:]:
        head, _, body = record.partition("\0")
        name, _, email = head.partition(_UNIT)
        commit = _Commit(name.strip(), email.strip())
        tokens = body.lstrip("\n").split("\0")
        i = 0
        while i < len(tokens) and tokens[i]:
            status = tokens[i]
            if status[:1] in "RC" and i + 2 < len(tokens):
                old, new = tokens[i + 1], tokens[i + 2]
                now = today.get(new, new)
                if now is not None:
                    commit.files.append(now)
                if status[0] == "R":
                    today[old] = now
                today[new] = None
                i += 3
                continue
            path = tokens[i + 1] if i + 1 < len(tokens) else ""
            now = today.get(path, path)
            if now is not None and path:
                commit.files.append(now)
            if status[:1] == "A":
                today[path] = None
            i += 2
        commits.append(commit)
    return commits


def _overlaps(commits: list[_Commit], sides: dict[str, _Sides], root: Path) -> Ownership:
    """Merge identities by e-mail and find, per family, the people on both sides."""
    names: dict[str, Counter[str]] = defaultdict(Counter)
    touched: dict[tuple[str, str, str], set[str]] = defaultdict(set)  # (family, side, person) -> files
    exists: dict[str, bool] = {}
    for commit in commits:
        if commit.name.endswith("[bot]"):
            continue
        person = commit.email.lower() or commit.name
        names[person][commit.name] += 1
        for path in commit.files:
            if path not in exists:
                exists[path] = (root / path).exists()
            if not exists[path]:
                continue
            for family, s in sides.items():
                if (side := s.side(path)) is not None:
                    touched[family, side, person].add(path)
    people: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for family, side, person in touched:
        people[family][side].add(person)
    overlaps = []
    for family in sorted(people):
        for person in people[family]["skill"] & people[family]["rubric"]:
            overlaps.append(Overlap(family, _printable(names[person].most_common(1)[0][0]),
                                    tuple(sorted(_printable(f) for f in touched[family, "skill", person])),
                                    tuple(sorted(_printable(f) for f in touched[family, "rubric", person]))))
    both = tuple(f for f in sorted(people) if people[f]["skill"] and people[f]["rubric"])
    overlaps.sort(key=lambda o: (o.family, o.author.lower()))
    return Ownership(tuple(overlaps), commits=len(commits), families=both)
