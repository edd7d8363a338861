"""Which version of a skill the simulated model has installed: a key from the description the CLI lists.

Contract: a skill version's key is the first :data:`KEY_LENGTH` hex digits of the SHA-256 of the skill's
description *as the CLI's skill listing carries it* (``- <name>: <description>`` in every request, read into
``Conversation.listing`` by :mod:`skillbench.sim._conversation`). The profile file's ``skill_versions`` section
(:class:`skillbench.sim._profiles.SkillVersion`) maps such keys to a ``gain``, the multiplier of the skill's
gain in context for a prompt of the family whose hub skill is listed with that description
(``Agent.share``). That is how ``skillbench compare --base A --head B`` gets a known true direction: the two
refs install SKILL.md files with different descriptions, so the endpoint tells the versions apart from the
request alone, with no state and no header.

The listing does not carry the frontmatter text verbatim (the pinned CLI, ``../shared/reference/claude-code``
README §1.2): a multi-line description is collapsed to one line, and one longer than about 1 535 characters is
cut and ends with ``…`` (the observed entry was 1 536 characters after ``- <name>: ``). So the key is taken of
:func:`listed_description`, which reproduces both, and which is idempotent: :func:`version_key` gives the same
key for a frontmatter description and for the listing's copy of it. The cut length was seen once, not
bisected; a description near 1 536 characters may key differently from what the CLI sends, so a version that
must be told apart should differ within its first 1 500 characters (a short description always does).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from skillbench.ledgers import SKILL_FILE
from skillbench.suite import read_skill

KEY_LENGTH = 12
KEY_PATTERN = re.compile(rf"[0-9a-f]{{{KEY_LENGTH}}}")
LISTED_MAX = 1536  # characters of a listed description, the ellipsis included, as the pinned CLI cut one
ELLIPSIS = "…"


def listed_description(description: str) -> str:
    """A description as the CLI's skill listing shows it: one line, cut to :data:`LISTED_MAX` characters.

    Lines are stripped and joined with one space (blank lines dropped), the way the CLI collapses a multi-line
    YAML description; a longer result keeps its first ``LISTED_MAX - 1`` characters and gains ``…``.
    """
    text = " ".join(line.strip() for line in description.splitlines() if line.strip())
    if len(text) > LISTED_MAX:
        text = text[: LISTED_MAX - 1] + ELLIPSIS
    return text


def version_key(description: str) -> str:
    """The version key of a skill description (frontmatter text or the listing's copy: the same key).

    Returns:
        The first :data:`KEY_LENGTH` lowercase hex digits of ``sha256(listed_description(description))``.
    """
    return hashlib.sha256(listed_description(description).encode("utf-8")).hexdigest()[:KEY_LENGTH]


def skill_version_key(path: str | Path) -> str:
    """The version key of a SKILL.md file (its folder), from its frontmatter ``description``.

    Args:
        path: a ``SKILL.md`` file, or the skill folder holding one.

    Raises:
        FrontmatterError: the file has no valid frontmatter or no ``name``/``description``.
        OSError: the file cannot be read.
    """
    file = Path(path)
    if file.is_dir():
        file = file / SKILL_FILE
    # The suite's own reader, so the key is of the description the suite (and the CLI) reads.
    return version_key(read_skill(file, f"{file.parent.name}/{SKILL_FILE}").description)


def is_version_key(text: str) -> bool:
    """True for exactly :data:`KEY_LENGTH` lowercase hex digits."""
    return KEY_PATTERN.fullmatch(text) is not None
