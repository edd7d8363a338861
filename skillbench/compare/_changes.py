"""Change discovery: which skill families and prompts differ between the base and the head of a comparison.

A family is **changed** when a file under its folder differs between the two commits, or when one of its prompts
does (the prompt file, or a workspace file it copies from beside it or from ``fixtures/``): an edited prompt
measures the family anew, so its family is compared too. A family the head adds has no base version: its base
arm installs nothing, and the comparison says so. A family the head removed cannot run (its prompts went with
it) and is listed, not compared. Files outside the families and the prompts' inputs (the weekly results, a
README) change nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from skillbench.ledgers import FIXTURES_DIR
from skillbench.suite import PromptSpec, Suite, SuiteRepo, changed_files


@dataclass(frozen=True)
class Changes:
    """What differs between the base and the head.

    Attributes:
        files: the changed files, relative to the suite's folder.
        families: changed families that exist at the head, sorted (the ones a comparison plans).
        prompts: changed prompts of the head, sorted.
        added: changed families that do not exist at the base (their base arm installs nothing).
        removed: families of the base whose folder is gone at the head (listed, never compared).
    """

    files: list[str]
    families: list[str]
    prompts: list[str]
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def prompt_inputs(suite: Suite, spec: PromptSpec) -> list[Path]:
    """The files a prompt's runs read from the suite: its own file and the workspace files it copies."""
    paths = [spec.path]
    for item in spec.test.workspace or []:
        if item.src:
            paths += [spec.path.parent / item.src, suite.suite_dir / FIXTURES_DIR / item.src]
    return paths


def suite_relative(path: str, repo: SuiteRepo) -> str:
    """A repository-relative path relative to the suite's folder instead (``../skills/x`` for qdrant's layout)."""
    return Path(os.path.relpath(path, repo.rel)).as_posix() if repo.rel != "." else path


def _under(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or inside it (``.``: the suite's own folder, e.g. a skill-creator skill)."""
    return folder == "." or path == folder or path.startswith(folder.rstrip("/") + "/")


def discover_changes(suite: Suite, repo: SuiteRepo, base_commit: str, head_commit: str | None,
                     base_families: set[str] | None = None) -> Changes:
    """The families and prompts that differ between ``base_commit`` and ``head_commit`` (``None``: the working tree).

    Args:
        suite: the suite at the head (its prompts and families are the head's).
        repo: the repository the suite is a version of.
        base_commit: the base's full commit.
        head_commit: the head's commit, or ``None`` to compare the working tree (``--allow-dirty``).
        base_families: the families that exist at the base (``None``: assume all of the head's do).
    """
    # every root the layout archives (a skills root beside the suite too), each file relative to the suite's folder
    files = [suite_relative(f, repo) for f in changed_files(repo.repo, base_commit, head_commit, list(repo.archived))]
    root = suite.suite_dir.resolve()

    def rel(path: Path) -> str:
        return Path(os.path.relpath(Path(path).resolve(), root)).as_posix()

    families = {f for f in suite.families if any(_under(x, rel(suite.family_dir(f))) for x in files)}
    prompts = set()
    for spec in suite.prompts:
        inputs = [rel(p) for p in prompt_inputs(suite, spec)]
        if any(_under(x, i) for x in files for i in inputs):
            prompts.add(spec.name)
            if spec.family in suite.families:
                families.add(spec.family)
    skills_rel = rel(suite.skills_root)
    gone = {x[len(skills_rel) + 1:].split("/", 1)[0] for x in files if _under(x, skills_rel) and x != skills_rel}
    removed = sorted(g for g in gone if g and g not in suite.families and base_families is not None
                     and g in base_families)
    added = sorted(f for f in families if base_families is not None and f not in base_families)
    return Changes(files=sorted(files), families=sorted(families), prompts=sorted(prompts), added=added,
                   removed=removed)
