"""The skills lint-skills reads: one unit per family (its hub SKILL.md and the sub-skills in its folder).

Contract: a family is what is installed as ``~/.claude/skills/<family>/`` (:attr:`skillbench.suite.Suite.families`,
its folder :meth:`~skillbench.suite.Suite.family_dir`); its **hub** is the family's own SKILL.md and its
**sub-skills** every other SKILL.md below the family folder, in path order. A unit's **size** is the hub's lines
plus every sub-skill's (a hub's size counts the hub with its sub-skills). A file's lines are its text's
``splitlines()`` count, frontmatter included (what the model loads). The frontmatter is read as
:func:`skillbench.suite._format.read_skill` reads it (the same block, ``yaml.safe_load``), keeping every key so
``category:`` can be seen. Nothing is written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from skillbench.ledgers import PROMPTS_DIR, SKILL_FILE
from skillbench.quality._categories import Category, QualitySettings, skill_category
from skillbench.suite import FRONTMATTER, Skill, Suite


@dataclass(frozen=True)
class SkillDoc:
    """One SKILL.md of a family."""

    skill: Skill
    rel: str  # path relative to the family folder ("SKILL.md", "minimize-latency/SKILL.md")
    text: str
    frontmatter: dict[str, Any]

    @property
    def lines(self) -> int:
        return len(self.text.splitlines())

    @property
    def folder(self) -> Path:
        return self.skill.path.parent

    @property
    def label(self) -> str:
        """The skill's name in tables: the family, or ``family/sub/path`` for a sub-skill."""
        return self.skill.leaf[: -len("/" + SKILL_FILE)] if self.skill.leaf.endswith("/" + SKILL_FILE) \
            else self.skill.leaf


@dataclass(frozen=True)
class SkillUnit:
    """A family: its hub, its sub-skills and its category."""

    family: str
    folder: Path
    hub: SkillDoc
    subs: tuple[SkillDoc, ...]
    category: Category
    skills_root: Path | None = None
    site_base: str = ""  # a link to <site_base>/<leaf> is a link to skills_root/<leaf>

    @property
    def docs(self) -> tuple[SkillDoc, ...]:
        return (self.hub, *self.subs)

    @property
    def size(self) -> int:
        return sum(d.lines for d in self.docs)


def frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter mapping of a SKILL.md text ({} when it has none; the suite's preflight reports that)."""
    match = FRONTMATTER.match(text)
    if not match:
        return {}
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return {}
    return meta if isinstance(meta, dict) else {}


def _doc(skill: Skill, folder: Path) -> SkillDoc:
    text = skill.path.read_text(encoding="utf-8")
    try:
        rel = skill.path.relative_to(folder).as_posix()
    except ValueError:  # a dotnet tree whose skills sit elsewhere: keep the leaf
        rel = skill.leaf
    return SkillDoc(skill, rel, text, frontmatter(text))


def site_base_of(suite: Suite) -> tuple[str, str]:
    """The published site base links may use, and where it came from.

    ``[suite].site_base`` when set; else the part of the first test prompt's ``skill_url`` before
    ``/<family>/`` (qdrant's suite ships no config), else "".
    """
    if suite.site_base:
        return suite.site_base, "[suite].site_base"
    for path in sorted((suite.suite_dir / PROMPTS_DIR).glob("*.json")):
        try:
            url = str(json.loads(path.read_text(encoding="utf-8")).get("skill_url", ""))
        except (OSError, ValueError, AttributeError):
            continue
        for family in suite.families:
            if (cut := url.find(f"/{family}/")) > 0:
                return url[:cut], f"the skill_url of {path.name}"
    return "", "none"


def skill_units(suite: Suite, settings: QualitySettings, families: list[str] | None = None,
                site_base: str | None = None) -> list[SkillUnit]:
    """One unit per family of ``suite`` (or of ``families``), in family order.

    ``site_base``: the published site links may use (None: :func:`site_base_of`).
    """
    site = site_base_of(suite)[0] if site_base is None else site_base
    units = []
    for family in families or suite.families:
        folder = suite.family_dir(family)
        hub_leaf = f"{family}/{SKILL_FILE}"
        hub = suite.skills.get(hub_leaf)
        if hub is None:
            continue
        subs = sorted((s for leaf, s in suite.skills.items() if leaf.startswith(f"{family}/") and leaf != hub_leaf),
                      key=lambda s: s.leaf)
        hub_doc = _doc(hub, folder)
        units.append(SkillUnit(family, folder, hub_doc, tuple(_doc(s, folder) for s in subs),
                               skill_category(family, hub_doc.frontmatter, settings), suite.skills_root, site))
    return units
