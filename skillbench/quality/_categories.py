"""PluginEval's skill categories and their line-count targets, and which category a skill is.

Contract: a skill's category comes from, first match wins,

1. its hub SKILL.md's frontmatter ``category:`` (e.g. ``category: workflow``);
2. the suite's ``skillbench.toml`` ``[quality].categories`` table (family → category, e.g.
   ``qdrant-scaling = "reference"``);
3. ``[quality].default_category``;
4. none: the targets are then the loosest band of all categories (:data:`ANY_CATEGORY`, 100–500 lines) and every
   page says the category was not set.

The targets are PluginEval's (as quoted in issue 19): reference/documentation 200–500 lines, workflow 150–300, code
generator 100–200, diagnostic 200–400, integration 150–350, coordination 100–200. A category is matched after lower
case with spaces and underscores read as hyphens, so ``Code generator`` and ``code_generator`` are
``code-generator``; ``documentation`` is ``reference``.

``[quality]`` is a table of :class:`skillbench.suite._config.SuiteConfig` (so preflight accepts it);
:func:`quality_settings` reads it tolerant of its absence and refuses an unknown category name in one line.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillbench.ledgers import CONFIG_FILE

TARGET_SOURCE = "PluginEval category targets (issue 19)"
CATEGORY_TARGETS: dict[str, tuple[int, int]] = {
    "reference": (200, 500),
    "workflow": (150, 300),
    "code-generator": (100, 200),
    "diagnostic": (200, 400),
    "integration": (150, 350),
    "coordination": (100, 200),
}
ALIASES = {"documentation": "reference", "reference-documentation": "reference", "codegen": "code-generator",
           "code-generation": "code-generator", "generator": "code-generator"}
# No category: the smallest lower bound and the largest upper bound of every category.
ANY_CATEGORY = (min(lo for lo, _ in CATEGORY_TARGETS.values()), max(hi for _, hi in CATEGORY_TARGETS.values()))


class CategoryError(ValueError):
    """A category or a ``[quality]`` table that cannot be used; the message names the file and the field."""


def normalise(name: str) -> str | None:
    """The category a written name means, or None when it is none of :data:`CATEGORY_TARGETS`."""
    key = "-".join(str(name).strip().lower().replace("_", " ").replace("/", " ").split())
    key = ALIASES.get(key, key)
    return key if key in CATEGORY_TARGETS else None


@dataclass(frozen=True)
class QualitySettings:
    """The suite's ``[quality]`` table."""

    categories: dict[str, str] = field(default_factory=dict)  # family -> category
    default_category: str | None = None
    path: Path | None = None


def quality_settings(suite_dir: str | Path) -> QualitySettings:
    """``[quality]`` of ``SUITE_DIR/skillbench.toml`` (empty settings when the file or the table is absent).

    Raises:
        CategoryError: the table is not a table, or names a category that is not one of :data:`CATEGORY_TARGETS`.
    """
    path = Path(suite_dir) / CONFIG_FILE
    if not path.is_file():
        return QualitySettings()
    try:
        raw: Any = tomllib.loads(path.read_text(encoding="utf-8")).get("quality")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return QualitySettings()  # preflight reports an unreadable config; the linter needs only this table
    if raw is None:
        return QualitySettings(path=path)
    if not isinstance(raw, dict):
        raise CategoryError(f"{path}: quality: is not a table — write [quality] with categories / default_category")
    cats = raw.get("categories") or {}
    if not isinstance(cats, dict):
        raise CategoryError(f"{path}: quality.categories: is not a table of family = \"category\"")
    known = ", ".join(CATEGORY_TARGETS)
    out: dict[str, str] = {}
    for family, name in cats.items():
        got = normalise(str(name))
        if got is None:
            raise CategoryError(f"{path}: quality.categories.{family}: unknown category {name!r} (one of: {known})")
        out[str(family)] = got
    default = raw.get("default_category")
    if default is not None and normalise(str(default)) is None:
        raise CategoryError(f"{path}: quality.default_category: unknown category {default!r} (one of: {known})")
    return QualitySettings(out, normalise(str(default)) if default is not None else None, path)


@dataclass(frozen=True)
class Category:
    """A skill's category, its line target and where the category came from."""

    name: str | None  # None: not set
    source: str  # "frontmatter", "[quality].categories", "[quality].default_category", "not set"
    target: tuple[int, int]
    written: str = ""  # the frontmatter's value when it named no known category

    @property
    def label(self) -> str:
        return self.name or "not set"

    def target_text(self) -> str:
        lo, hi = self.target
        if self.name is None:
            return f"{lo}–{hi} lines (any category: no category set)"
        return f"{lo}–{hi} lines ({self.name}, {TARGET_SOURCE})"


def skill_category(family: str, frontmatter: dict[str, Any], settings: QualitySettings) -> Category:
    """The category of ``family`` (module docstring's order); an unknown frontmatter value falls through, noted."""
    written = frontmatter.get("category")
    if written is not None and (name := normalise(str(written))) is not None:
        return Category(name, "frontmatter", CATEGORY_TARGETS[name])
    unknown = str(written) if written is not None else ""
    if family in settings.categories:
        name = settings.categories[family]
        return Category(name, "[quality].categories", CATEGORY_TARGETS[name], unknown)
    if settings.default_category:
        name = settings.default_category
        return Category(name, "[quality].default_category", CATEGORY_TARGETS[name], unknown)
    return Category(None, "not set", ANY_CATEGORY, unknown)
