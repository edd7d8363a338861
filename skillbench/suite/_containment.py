"""Where a task's workspace files may come from, and where they may go: the one rule validate and install share.

A spec is content under evaluation: its ``src`` / ``source`` / ``files`` / ``copy_test_files`` name files that are
copied into a run's workspace, and from there the agent's answer carries their text into the ledgers. So every such
file must be the suite's own. :func:`contained_source` resolves a named file or folder — and every entry under a
folder, at any depth, following links — and refuses the first that resolves outside the prompt's roots (the suite
folder, its skills root; :attr:`~skillbench.suite._format.PromptSpec.source_roots`) or into what the agent must never
see (the prompt file itself, its solutions). Preflight calls it to refuse the spec before any model call; task
preparation (:func:`skillbench.generation.prepare_task`) calls it again and copies only the entries it returned, so a
file swapped for a link after validation is still refused.

:func:`dest_problem` is the destination's rule: a plain relative path that neither is the workspace root nor lies
under ``.claude/`` (the CLI's project settings, hooks and skills: a spec must not write them, even inert).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

CLAUDE_DIR = ".claude"  # the CLI's project folder: settings, hooks, skills, commands


class SourceEscape(ValueError):
    """A workspace source that leaves the suite's roots, or reaches what the agent must not see (one line)."""


@dataclass(frozen=True)
class SourceEntry:
    """One entry a contained source puts in the workspace.

    Attributes:
        rel: its path below the named source, POSIX (``""`` for the source itself).
        real: the resolved file to read, or None for a folder.
    """

    rel: str
    real: Path | None


def _inside(real: Path, roots: Sequence[Path]) -> bool:
    return any(real.is_relative_to(root) for root in roots)


def _shown(roots: Sequence[Path]) -> str:
    return ", ".join(str(r) for r in roots)


def _check(path: Path, shown: str, roots: Sequence[Path], hidden: Sequence[Path], what: str) -> Path:
    """``path`` resolved, or :class:`SourceEscape` when it (or the link it is) leaves the roots or is hidden."""
    link = " (a link)" if path.is_symlink() else ""
    try:
        real = path.resolve()  # every link on the way, nested ones included
    except (OSError, RuntimeError):  # a link loop never resolves
        raise SourceEscape(f"{shown}{link} never resolves (a loop of links)") from None
    if not _inside(real, roots):
        raise SourceEscape(f"{shown}{link} resolves to {real}, outside {what} ({_shown(roots)})")
    if any(real == h or real.is_relative_to(h) or (path.is_dir() and h.is_relative_to(real)) for h in hidden):
        raise SourceEscape(f"{shown}{link} holds the suite's test prompts or solutions")
    return real


def contained_source(source: Path, roots: Iterable[Path], hidden: Iterable[Path] = (),
                     shown: str | None = None, what: str = "the suite's roots") -> list[SourceEntry]:
    """Every entry copying ``source`` into a workspace takes, each resolved inside ``roots``.

    Args:
        source: the named file or folder (as the spec's base joined with its path; it may be a link).
        roots: the folders a workspace file may come from (resolved here).
        hidden: files and folders the agent must never see (the prompt file, its solutions).
        shown: how the problem line names the source (default ``source`` itself).
        what: how the problem line names the roots.

    Returns:
        The source itself (a file, or a folder), then for a folder every folder and regular file below it, sorted
        and depth first (a link to a folder inside the roots is followed; a link cycle is refused; anything that is
        neither a file nor a folder — a FIFO, a socket — is left out, as ``git`` cannot hold one).

    Raises:
        SourceEscape: ``source`` or an entry below it resolves outside ``roots``, or into ``hidden``.
    """
    roots = tuple(Path(r).resolve() for r in roots)
    hidden = tuple(Path(h).resolve() for h in hidden)
    name = shown or str(source)
    real = _check(source, name, roots, hidden, what)
    if not real.is_dir():
        return [SourceEntry("", real)]
    out = [SourceEntry("", None)]
    stack: list[tuple[Path, str, tuple[Path, ...]]] = [(source, "", (real,))]
    while stack:
        folder, rel, above = stack.pop()
        children = sorted(folder.iterdir(), key=lambda p: p.name)
        pending = []
        for child in children:
            child_rel = f"{rel}/{child.name}" if rel else child.name
            child_real = _check(child, f"{name}/{child_rel}", roots, hidden, what)
            if child_real.is_dir():
                if child_real in above:
                    raise SourceEscape(f"{name}/{child_rel} is a link to a folder above it (a cycle)")
                out.append(SourceEntry(child_rel, None))
                pending.append((child, child_rel, (*above, child_real)))
            elif child_real.is_file():
                out.append(SourceEntry(child_rel, child_real))
        stack.extend(reversed(pending))
    return out


def skill_folder_problem(folder: Path) -> str:
    """Why a skill folder cannot be installed as it is ('' when it can): it, or a link in it, resolves outside
    it (the folder itself: outside its parent). A run copies the folder into the agent's HOME and never follows a
    link out of it (:func:`skillbench.generation.skill_entries`); preflight refuses what that copy would refuse."""
    try:
        real = folder.resolve()
        if not real.is_relative_to(folder.parent.resolve()):
            return f"{folder.name} is a link to {real}, outside {folder.parent}"
        contained_source(folder, (real,), shown=folder.name, what="its skill folder")
    except (OSError, RuntimeError):
        return f"{folder.name} never resolves (a loop of links)"
    except SourceEscape as exc:
        return str(exc)
    return ""


def relative_path_problem(path: str) -> str:
    """Why ``path`` is not a plain path inside the workspace ('' when it is)."""
    if not path.strip():
        return "is empty"
    pure = PurePosixPath(path)
    if pure.is_absolute() or path.startswith("~"):
        return f"{path!r} is absolute"
    if any(part == ".." for part in pure.parts):
        return f"{path!r} leaves the workspace ('..')"
    if "\\" in path:
        return f"{path!r} uses backslashes"
    return ""


def dest_problem(raw: str) -> str:
    """Why ``raw`` is not a workspace destination ('' when it is): it must be a plain relative path below the
    workspace root, outside ``.claude/``."""
    if problem := relative_path_problem(raw):
        return problem
    pure = PurePosixPath(raw)
    if not pure.parts:
        return f"{raw!r} is the workspace root itself (it would overwrite the whole workspace)"
    if pure.parts[0].casefold() == CLAUDE_DIR:
        return f"{raw!r} writes into the workspace's {CLAUDE_DIR}/ (the CLI's project settings, hooks and skills)"
    return ""


def claude_files(paths: Iterable[str]) -> list[str]:
    """The workspace paths that sit in a ``.claude/`` folder at any depth (settings, hooks, skills), sorted."""
    return sorted(p for p in paths if CLAUDE_DIR in (part.casefold() for part in PurePosixPath(p).parts[:-1]))


__all__ = ["CLAUDE_DIR", "SourceEntry", "SourceEscape", "claude_files", "contained_source", "dest_problem",
           "skill_folder_problem"]
