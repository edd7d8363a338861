"""Whether the simulated model reaches for a listed skill: its description read the way the guidance says a model does.

Contract: :func:`relevance` reads one prompt against one skill's description (name and description as the CLI
lists them) and returns a multiplier of the profile's activation probabilities; :func:`trigger_probability` is
``min(1, trigger × relevance)``, the chance of a Skill tool call. The agent (:mod:`skillbench.sim.agent`) draws
against it keyed on (seed, run, decision) like every other decision, and caps the multiplier at 1 for the
fallbacks (``file_read``, ``self_serve``), so an off-topic prompt does not reach the skill by another route.

A description is split as a model reads it (:func:`read_description`):

* **contexts** — what follows "Use when" / "Use for" / "Use this when" (and the like): each quoted trigger phrase
  and each clause between commas, semicolons, parentheses and "or";
* **exclusions** — what follows "Do not use for" / "Don't use when" / "Not for" (and the like), split the same way,
  a parenthesised list item by item;
* **topic** — the stems of the name and of everything that is not an exclusion (the description's positive part).

The rule, first match wins (every number a field of :class:`~skillbench.sim.profiles.AgentProfile`):

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
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from skillbench.sim.profiles import AgentProfile

Reason = Literal["exclusion", "use_when", "topic"]

_WORD = re.compile(r"[a-z][a-z0-9]{2,}")
_STOP = frozenset(
    "the and for with that this from into when what which your you use using used how can are was were "
    "will would should could have has had not but all any each its our they them then than there their "
    "about also just only more most some such very does did doing get got make made want need like why "
    "who whom whose where here out over under after before between while until because been being one "
    "two three new now way ways work works working someone something anything thing things don doesn "
    "isn aren didn won per via etc yes too much many ask asks asked say says said tell tells "
    "mention mentions without within".split()
)
# Cues are matched on the text with quoted phrases masked, so a quoted "not for" is never a cue.
_CUE = re.compile(
    r"\b(?P<neg>(?:do not|don't|never) use(?: (?:this|it))?(?: skill)?(?= (?:for|when|if|on|to|with)\b)"
    r"|not (?:meant |intended )?for)\b"
    r"|\b(?P<pos>use(?: (?:this|it))?(?: skill)?(?= (?:when|whenever|for|if)\b))",
    re.IGNORECASE,
)
_QUOTE = re.compile(r"(?<!\w)'(.+?)'(?!\w)|\"(.+?)\"|“(.+?)”|‘(.+?)’")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_CLAUSE = re.compile(r"[,;()]|\bor\b", re.IGNORECASE)
_MASK = "\x00{}\x00"


def stem(word: str) -> str:
    """A light stem, so ``fits``/``fitting``/``fitted`` and ``schedule``/``scheduling`` meet."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]
    return word


def content_words(text: str) -> frozenset[str]:
    """The stems of the content words of ``text`` (lower case, stop words out)."""
    return frozenset(stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP)


@dataclass(frozen=True)
class Description:
    """A skill description split the way a model reads it (stems, the suite's common words already out)."""

    topic: frozenset[str]
    contexts: tuple[frozenset[str], ...]
    exclusions: tuple[frozenset[str], ...]


def _phrases(segment: str, quoted: list[str], common: frozenset[str]) -> list[frozenset[str]]:
    """Each quoted phrase of a segment, then each clause of the rest, as word sets (empty ones dropped)."""
    parts = [quoted[int(i)] for i in re.findall(r"\x00(\d+)\x00", segment)]
    parts += _CLAUSE.split(re.sub(r"\x00\d+\x00", ",", segment))
    words = (content_words(p) - common for p in parts)
    return [w for w in words if w]


def _segments(description: str) -> tuple[list[tuple[str, str]], list[str]]:
    """``(kind, text)`` per cue-delimited stretch of each sentence (kind: topic, pos or neg), and the quotes.

    Quoted phrases are masked first so that neither a cue nor a sentence break inside a quote counts.
    """
    quoted: list[str] = []

    def mask(m: re.Match[str]) -> str:
        quoted.append(next(g for g in m.groups() if g is not None))
        return _MASK.format(len(quoted) - 1)

    masked = _QUOTE.sub(mask, description)
    out: list[tuple[str, str]] = []
    for sentence in _SENTENCE.split(masked):
        kind, start = "topic", 0
        for cue in _CUE.finditer(sentence):
            out.append((kind, sentence[start:cue.start()]))
            kind, start = ("neg" if cue.group("neg") else "pos"), cue.end()
        out.append((kind, sentence[start:]))
    return out, quoted


def read_description(name: str, description: str, common: frozenset[str] = frozenset()) -> Description:
    """Split ``description`` into topic, contexts and exclusions (module docstring)."""
    segments, quoted = _segments(description)
    contexts: list[frozenset[str]] = []
    exclusions: list[frozenset[str]] = []
    topic = set(content_words(name.replace("-", " ")))
    for kind, text in segments:
        if kind == "neg":
            exclusions += _phrases(text, quoted, common)
            continue
        if kind == "pos":
            contexts += _phrases(text, quoted, common)
        topic |= content_words(re.sub(r"\x00(\d+)\x00", lambda m: " " + quoted[int(m.group(1))] + " ", text))
    return Description(frozenset(topic) - common, tuple(contexts), tuple(exclusions))


def common_words(skills: Iterable[tuple[str, str]]) -> frozenset[str]:
    """Words in more than half of the ``(name, description)`` pairs' topics (none with fewer than three skills)."""
    docs = [read_description(n, d).topic for n, d in skills]
    counts: dict[str, int] = {}
    for doc in docs:
        for w in doc:
            counts[w] = counts.get(w, 0) + 1
    return frozenset(w for w, n in counts.items() if len(docs) >= 3 and n > len(docs) / 2)


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
