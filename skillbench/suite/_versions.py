"""A suite's skills at a git ref: resolved, materialized with ``git archive``, hashed as installed.

A version arm (``with-skill@REF``, :mod:`skillbench.arms`) installs the prompt's family as it is at ``REF`` of the
suite's repository. The files come from ``git archive`` of the resolved commit into the run directory
(``RUN_DIR/_versions/<commit>/``), never from a checkout of the user's tree, so the tree is never touched.

``@HEAD`` is special: its files are the working tree's. A working tree whose skills or prompts differ from
``HEAD`` is refused (:class:`VersionError`) unless the caller allows it (``--allow-dirty``), and then the run
records the hash of the difference (``skills_diff``). A plain arm (``with-skill``) runs the working tree as it is,
so it records the same three facts: the commit it is on and the hash of any difference.

What a run records (``metadata.json``, then the manifest's columns after qdrant's): ``skills_ref`` (as given),
``skills_commit`` (the full commit), ``skills_tree`` (:func:`tree_hash` of the families installed) and
``skills_diff``.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from skillbench.arms import arm_ref
from skillbench.suite._format import Suite
from skillbench.suite._layouts import layout_named

HEAD = "HEAD"
GIT_TIMEOUT_S = 60.0


class VersionError(ValueError):
    """A ref that cannot be run: not a git repository, an unknown ref, or a dirty tree for ``@HEAD``."""


def git(repo: Path, *args: str, binary: bool = False) -> str | bytes:
    """``git -C repo ARGS``' standard output; :class:`VersionError` with git's own first line when it fails."""
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as exc:
        raise VersionError(f"git {' '.join(args[:2])}: {exc}") from exc
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise VersionError(f"git {' '.join(args)}: {why[0] if why else f'exit {done.returncode}'}")
    return done.stdout if binary else done.stdout.decode("utf-8", "replace").strip()


def repo_root(suite: Suite) -> Path:
    """The top folder of the git repository that holds the suite.

    Raises:
        VersionError: the suite is not inside a git repository.
    """
    try:
        top = git(suite.suite_dir, "rev-parse", "--show-toplevel")
    except VersionError as exc:
        raise VersionError(f"{suite.suite_dir}: not inside a git repository, so a version arm (@REF) has no refs "
                           f"to run ({exc})") from exc
    return Path(str(top)).resolve()


def resolve_commit(repo: Path, ref: str) -> str:
    """The full commit a ref names.

    Raises:
        VersionError: the ref names no commit of the repository (one line naming it).
    """
    try:
        return str(git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"))
    except VersionError:
        raise VersionError(f"ref {ref!r} names no commit of {repo} (try a branch, a tag, a commit or HEAD~1)") from None


def run_paths(suite: Suite, repo: Path) -> list[str]:
    """What a run of the suite reads, relative to the repository: every family folder, every prompt file and the
    fixture roots of the suite's layout (``git`` pathspecs). Anything else in the tree (the weekly results) is not a
    version of the skills."""
    paths = {suite.family_dir(f) for f in suite.families} | {p.path for p in suite.prompts}
    paths |= set(layout_named(suite.layout).roots(suite).fixtures)
    return sorted({_rel(p, repo) for p in paths})


def _rel(path: Path, repo: Path) -> str:
    """``path`` relative to the repository, as a git pathspec."""
    return Path(os.path.relpath(Path(path).resolve(), repo)).as_posix()


def dirty_paths(repo: Path, paths: Sequence[str]) -> list[str]:
    """Files under ``paths`` whose working-tree state differs from ``HEAD`` (changed, staged or untracked)."""
    out = git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *paths, binary=True)
    entries = out.decode("utf-8", "replace").split("\0")  # type: ignore[union-attr]
    found, skip = [], False
    for entry in entries:
        if skip:  # the source path of a rename: the entry before it named the destination
            skip = False
            continue
        if len(entry) > 3:
            found.append(entry[3:])
            skip = entry[0] in "RC"
    return found


def diff_hash(repo: Path, paths: Sequence[str]) -> str:
    """SHA-256 (16 hex) of the working tree's difference from ``HEAD`` under ``paths`` (untracked files included),
    ``""`` when there is none."""
    changed = dirty_paths(repo, paths)
    if not changed:
        return ""
    digest = hashlib.sha256(git(repo, "diff", "--binary", "HEAD", "--", *paths, binary=True))  # type: ignore[arg-type]
    for rel in sorted(changed):
        path = repo / rel
        if path.is_file():
            digest.update(rel.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def tree_hash(dirs: Iterable[Path]) -> str:
    """SHA-256 (16 hex) of the installed families' files: each family's name, each file's path and bytes (a link's
    target), in order. The same files hash alike wherever they come from (a commit or the working tree)."""
    digest = hashlib.sha256()
    found = False
    for family in sorted((Path(d) for d in dirs), key=lambda d: d.name):
        if not family.is_dir():
            continue
        found = True
        digest.update(b"family\0" + family.name.encode() + b"\0")
        for path in sorted(family.rglob("*")):
            rel = path.relative_to(family).as_posix().encode()
            if path.is_symlink():
                digest.update(b"link\0" + rel + b"\0" + os.readlink(path).encode() + b"\0")
            elif path.is_file():
                digest.update(b"file\0" + rel + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16] if found else ""


@dataclass(frozen=True)
class SkillsVersion:
    """Where one arm's skill files come from.

    Attributes:
        ref: the ref as given (``""`` for a plain arm: the working tree).
        commit: the full commit (``""`` outside a git repository).
        root: the folder that stands for the suite's folder at that commit (the suite itself for the working tree).
        suite_dir: the suite's own folder, which ``root`` replaces.
        diff: :func:`diff_hash` of the working tree when its files are installed, else ``""``.
    """

    ref: str
    commit: str
    root: Path
    suite_dir: Path
    diff: str = ""

    def family_dir(self, suite: Suite, family: str) -> Path | None:
        """The family's folder in this version, ``None`` when the family does not exist there (a new skill)."""
        here = suite.family_dir(family).resolve()
        # relpath, not relative_to: a skills root beside the suite (qdrant's ../skills) maps into the same copy
        path = (self.root / os.path.relpath(here, self.suite_dir.resolve())) if self.root != self.suite_dir else here
        return path if (path / "SKILL.md").is_file() else None

    def as_json(self) -> dict[str, str]:
        """The version's entry in ``run.json``'s ``versions``."""
        return {"ref": self.ref, "commit": self.commit, "diff": self.diff}


@dataclass(frozen=True)
class SuiteRepo:
    """The git repository a loaded suite is a version of.

    Attributes:
        repo: the repository's top folder.
        rel: the suite's folder inside it (``.`` at the top).
        suite_dir: the folder the :class:`Suite` was loaded from: the suite in the working tree, or a materialized
            copy of it at another commit (``skillbench compare --head REF``).
        archived: the folders inside it that a ref is materialized from (``git archive`` pathspecs): what the
            suite's layout says (:meth:`skillbench.suite._layouts.Layout.archived`).
    """

    repo: Path
    rel: str
    suite_dir: Path
    archived: tuple[str, ...]

    @classmethod
    def of(cls, suite: Suite) -> SuiteRepo:
        """The repository of a suite loaded from the working tree.

        Raises:
            VersionError: the suite is not inside a git repository.
        """
        repo = repo_root(suite)
        layout = layout_named(suite.layout)
        archived = tuple(_rel(p, repo) for p in layout.archived(layout.roots(suite)))
        if outside := [p for p in archived if p == ".." or p.startswith("../")]:
            raise VersionError(f"{outside[0]}: the {suite.layout} suite reads it, but it lies outside the git "
                               f"repository {repo}, so no ref holds it")
        return cls(repo, _rel(suite.suite_dir, repo), suite.suite_dir, archived)

    def materialize(self, commit: str, cache_dir: Path) -> Path:
        """:func:`materialize` of :attr:`archived` at ``commit``: the folder that stands for the repository."""
        return materialize(self.repo, commit, self.archived, cache_dir)

    def commit(self, ref: str) -> str:
        """:func:`resolve_commit` in this repository."""
        return resolve_commit(self.repo, ref)

    def at_commit(self, ref: str, commit: str, cache_dir: Path | None) -> SkillsVersion:
        """The suite's files at ``commit``, materialized into ``cache_dir`` (none: a check that writes nothing)."""
        root = self.materialize(commit, cache_dir) if cache_dir is not None else self.suite_dir
        return SkillsVersion(ref, commit, (root / self.rel if self.rel != "." else root)
                             if cache_dir is not None else self.suite_dir, self.suite_dir)


def working_tree(suite: Suite) -> SkillsVersion:
    """The version a plain arm runs: the working tree, on its ``HEAD`` commit, with the hash of any difference."""
    try:
        repo = repo_root(suite)
        commit = resolve_commit(repo, HEAD)
    except VersionError:
        return SkillsVersion("", "", suite.suite_dir, suite.suite_dir)
    return SkillsVersion("", commit, suite.suite_dir, suite.suite_dir, diff_hash(repo, run_paths(suite, repo)))


def resolve_version(suite: Suite, ref: str, *, allow_dirty: bool = False, cache_dir: Path | None = None,
                    repo: SuiteRepo | None = None) -> SkillsVersion:
    """One version arm's files: ``@HEAD`` is the working tree (refused when dirty unless ``allow_dirty``), any
    other ref the commit's files, materialized into ``cache_dir/<commit>/`` (none with ``cache_dir=None``: a check
    before anything is written).

    Raises:
        VersionError: not a repository, an unknown ref, or a dirty tree for ``@HEAD`` without ``allow_dirty``.
    """
    repo = repo or SuiteRepo.of(suite)
    commit = repo.commit(ref)
    if ref == HEAD and repo.suite_dir.resolve() == suite.suite_dir.resolve():
        paths = run_paths(suite, repo.repo)
        dirty = dirty_paths(repo.repo, paths)
        if dirty and not allow_dirty:
            more = f" and {len(dirty) - 3} more" if len(dirty) > 3 else ""
            raise VersionError(f"@HEAD: the working tree differs from HEAD ({', '.join(dirty[:3])}{more}); commit "
                               "the change, or pass --allow-dirty to run the working tree (its diff hash is recorded)")
        return SkillsVersion(ref, commit, suite.suite_dir, suite.suite_dir,
                             diff_hash(repo.repo, paths) if dirty else "")
    return repo.at_commit(ref, commit, cache_dir)


def materialize(repo: Path, commit: str, rels: Sequence[str], cache_dir: Path) -> Path:
    """``git archive COMMIT -- RELS…`` unpacked into ``cache_dir/<commit>/`` (kept: a resume reuses it).

    The archive is unpacked beside its final name and renamed into place, so a kill leaves no half a version.
    """
    dest = cache_dir / commit
    if dest.is_dir():
        return dest
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = cache_dir / f".tmp-{commit}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    present = present_paths(repo, commit, rels)
    if present:  # a commit may predate a root (the skills folder came later): git archive refuses a missing path
        data = git(repo, "archive", "--format=tar", commit, "--", *present, binary=True)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:  # type: ignore[arg-type]
            tar.extractall(tmp, filter="data")  # a repository's own archive: no absolute or escaping members
    try:
        os.replace(tmp, dest)
    except OSError:  # another pass put the same commit in place first: the same files
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def present_paths(repo: Path, commit: str, rels: Sequence[str]) -> list[str]:
    """The pathspecs of ``rels`` that name something at ``commit`` (``.``, the repository's top, always does)."""
    found = []
    for rel in rels:
        try:
            if rel == "." or git(repo, "cat-file", "-t", f"{commit}:{rel.rstrip('/')}"):
                found.append(rel)
        except VersionError:  # not at that commit
            continue
    return found


def resolve_versions(suite: Suite, conditions: Sequence[str], *, allow_dirty: bool = False,
                     cache_dir: Path | None = None, repo: SuiteRepo | None = None) -> dict[str, SkillsVersion]:
    """Every condition's version: a version arm's :func:`resolve_version`, a plain arm's :func:`working_tree`.

    Raises:
        VersionError: as :func:`resolve_version`, for the first version arm that cannot be run.
    """
    refs = {c: arm_ref(c) for c in conditions}
    plain = working_tree(suite) if any(not r for r in refs.values()) else None
    by_ref: dict[str, SkillsVersion] = {}
    for ref in sorted({r for r in refs.values() if r}):
        by_ref[ref] = resolve_version(suite, ref, allow_dirty=allow_dirty, cache_dir=cache_dir, repo=repo)
    return {c: (by_ref[r] if r else plain) for c, r in refs.items()}  # type: ignore[misc]


def changed_files(repo: Path, base: str, head: str | None, paths: Sequence[str]) -> list[str]:
    """Files under ``paths`` that differ between commit ``base`` and ``head`` (``None``: the working tree,
    untracked files included), relative to the repository."""
    if head is None:
        changed = str(git(repo, "diff", "--name-only", base, "--", *paths)).splitlines()
        untracked = str(git(repo, "ls-files", "--others", "--exclude-standard", "--", *paths)).splitlines()
        return sorted({p for p in changed + untracked if p})
    return sorted(p for p in str(git(repo, "diff", "--name-only", base, head, "--", *paths)).splitlines() if p)
