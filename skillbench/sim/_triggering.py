"""Whether the simulated model reaches for a listed skill: its description read the way the guidance says a model does.

Contract: :func:`relevance` reads one prompt against one skill's description (name and description as the CLI
lists them) and returns a multiplier of the profile's activation probabilities; :func:`trigger_probability` is
``min(1, trigger × relevance)``, the chance of a Skill tool call. The agent (:mod:`skillbench.sim._agent`) draws
against it keyed on (seed, run, decision) like every other decision, and caps the multiplier at 1 for the
fallbacks (``file_read``, ``self_serve``), so an off-topic prompt does not reach the skill by another route.

A description is split as a model reads it (:func:`read_description`):

* **contexts** — what follows "Use when" / "Use for" / "Use this when" (and the like): each quoted trigger phrase
  and each clause between commas, semicolons, parentheses and "or";
* **exclusions** — what follows "Do not use for" / "Don't use when" / "Not for" (and the like), split the same way,
  a parenthesised list item by item;
* **topic** — the stems of the name and of everything that is not an exclusion (the description's positive part).

The rule, first match wins (every number a field of :class:`~skillbench.sim._profiles.AgentProfile`):

1. the prompt matches an exclusion → ``trigger_floor × exclusion_scale`` (below any off-topic prompt);
2. the prompt matches a context → ``use_when_gain``;
3. else by topic overlap → ``trigger_floor + (1 − trigger_floor) × min(1, shared / overlap_saturation)``.

A phrase matches when the prompt holds at least ``phrase_match`` of its content words (at least one). Words are
lower-case stems (plural, ``-ing``/``-ed`` and a final ``e`` dropped); words common to most of the suite's
descriptions (``pandas`` in a pandas suite) are left out of every comparison, since they say nothing about which
skill fits.
"""

from __future__ import annotations

import math
from typing import Literal

from skillbench.sim._profiles import AgentProfile
from skillbench.suite import Description, common_words, content_words, read_description, stem

Reason = Literal["exclusion", "use_when", "topic"]

def _matches(phrase: frozenset[str], words: frozenset[str], share: float) -> bool:
    return len(phrase & words) >= max(1, math.ceil(share * len(phrase)))


def relevance(prof: AgentProfile, prompt: str, desc: Description) -> tuple[float, Reason]:
    """The multiplier of the activation probabilities for ``prompt``, and which rule decided it."""
    words = content_words(prompt)
    if any(_matches(p, words, prof.phrase_match) for p in desc.exclusions):
        return prof.trigger_floor * prof.exclusion_scale, "exclusion"
    if any(_matches(p, words, prof.phrase_match) for p in desc.contexts):
        return prof.use_when_gain, "use_when"
    shared = len(words & desc.topic)
    return prof.trigger_floor + (1 - prof.trigger_floor) * min(1.0, shared / prof.overlap_saturation), "topic"


def trigger_probability(prof: AgentProfile, prompt: str, desc: Description) -> float:
    """p(the Skill tool is called) for ``prompt``: ``trigger × relevance``, at most 1."""
    return min(1.0, prof.trigger * relevance(prof, prompt, desc)[0])


__all__ = ["Description", "common_words", "content_words", "read_description", "relevance", "stem",
           "trigger_probability"]
