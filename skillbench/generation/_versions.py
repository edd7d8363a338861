"""Which files each arm of a pass installs, held to the commits the week first ran (:mod:`skillbench.suite._versions`).

A week runs one commit per arm. The first pass records every condition's version in ``run.json``
(``versions``: the ref as given, the commit, the working tree's diff hash); a later pass whose refs now resolve to
other commits (a branch moved, a new commit on ``HEAD``) is refused before any run starts, because its runs
would mix two versions under one label. A new run key starts a new comparison.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from skillbench.arms import arm_kind
from skillbench.generation._plan import PlanError, installed_families
from skillbench.ledgers import PLACEBO_DIR, RUN_FILE, VERSIONS_DIR
from skillbench.suite import SkillsVersion, Suite, VersionError, materialize_placebo, resolve_versions, tree_hash
from skillbench.vocab import PLACEBO


def arm_versions(suite: Suite, conditions: Sequence[str], out_dir: Path | None, *, allow_dirty: bool = False,
                 given: Mapping[str, SkillsVersion] | None = None, recorded: Mapping[str, Any] | None = None
                 ) -> dict[str, SkillsVersion]:
    """Every condition's :class:`SkillsVersion`, materialized under ``out_dir/_versions/`` (``None``: resolved
    only, nothing written), and held against the versions ``run.json`` recorded.

    Args:
        suite: the suite as loaded.
        conditions: the plan's condition labels.
        out_dir: the run directory, or ``None`` for a check that writes nothing.
        allow_dirty: ``@HEAD`` may run a working tree that differs from ``HEAD``.
        given: versions the caller resolved already (``skillbench compare``); the rest are resolved here.
        recorded: ``run.json``'s ``versions`` from an earlier pass, if any.

    Raises:
        PlanError: a ref that cannot be run, or one that resolves to another commit than the week recorded.
    """
    given = dict(given or {})
    rest = [c for c in conditions if c not in given]
    try:
        found = resolve_versions(suite, rest, allow_dirty=allow_dirty,
                                 cache_dir=out_dir / VERSIONS_DIR if out_dir is not None else None) if rest else {}
    except VersionError as exc:
        raise PlanError(str(exc)) from exc
    versions = {c: given.get(c) or found[c] for c in conditions}
    for label, before in (recorded or {}).items():
        now = versions.get(label)
        if now is None or not isinstance(before, Mapping) or not now.ref:
            continue
        if before.get("commit") and before.get("commit") != now.commit:
            where = out_dir / RUN_FILE if out_dir is not None else RUN_FILE
            raise PlanError(f"{where}: {label} ran commit {str(before['commit'])[:12]} and now resolves to "
                            f"{now.commit[:12]}: a week runs one commit per arm — start a new run key (or "
                            f"--out-dir) to compare the new commit")
        if str(before.get("diff") or "") != now.diff:
            raise PlanError(f"{label}: the working tree changed since the week's first pass (diff "
                            f"{before.get('diff') or 'none'} → {now.diff or 'none'}) — start a new run key")
    return versions


def install_dirs(suite: Suite, version: SkillsVersion, family: str, condition: str, *,
                 out_dir: Path | None = None) -> list[Path]:
    """The family folders a run installs from its arm's version; a family that does not exist at that version
    (a skill the head adds) installs nothing.

    A ``placebo`` run installs the family's placebo instead, generated into ``out_dir/_placebo/`` and reused
    (:func:`skillbench.suite._placebo.materialize_placebo`); the run's ``skills_tree`` is then the placebo's tree
    hash, which names its folder there.

    Raises:
        PlanError: a placebo without a run directory to generate it into, or a hub without frontmatter.
    """
    dirs = [version.family_dir(suite, f) for f in installed_families(suite, family, condition)]
    found = [d for d in dirs if d is not None]
    if arm_kind(condition) != PLACEBO:
        return found
    if out_dir is None:
        raise PlanError(f"{condition}: a placebo is generated into the run directory, and none was given")
    try:
        return [materialize_placebo(d, out_dir / PLACEBO_DIR) for d in found]
    except ValueError as exc:
        raise PlanError(f"{family}: cannot make its placebo ({exc})") from exc


def version_metadata(version: SkillsVersion, dirs: Sequence[Path]) -> dict[str, str]:
    """A run's ``skills_ref``, ``skills_commit``, ``skills_tree`` and ``skills_diff`` (the manifest's columns)."""
    return {"skills_ref": version.ref, "skills_commit": version.commit if dirs or version.ref else "",
            "skills_tree": tree_hash(dirs), "skills_diff": version.diff if dirs else ""}


def versions_json(versions: Mapping[str, SkillsVersion]) -> dict[str, dict[str, str]]:
    """``run.json``'s ``versions``: each version arm's ref, commit and diff hash (plain arms are not recorded)."""
    return {label: v.as_json() for label, v in sorted(versions.items()) if v.ref}
