"""How a model reads a skill's description: its topic, its "Use when" contexts and its "Do not use for" exclusions.

One reading, shared by whatever needs it: the simulated model's triggering (:mod:`skillbench.sim._triggering`,
whose docstring states the rule), lint-skills' static checks (:mod:`skillbench.quality._static`) and the simulated
skill judge and rewriter. A description is split into sentences and, within each, into cue-delimited stretches
(:func:`segments`: ``topic``, ``pos`` after "Use when"/"Use for"…, ``neg`` after "Do not use for"/"Not for"…),
quoted phrases masked first so a cue inside a quote never counts; :func:`read_description` turns them into word
sets of light stems (:func:`stem`), stop words and the suite's common words (:func:`common_words`) left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

MAX_DESCRIPTION_CHARS = 1024  # the Agent Skills specification's (and the CLI's) limit on a description
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


def segments(description: str) -> tuple[list[tuple[str, str]], list[str]]:
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
    parts, quoted = segments(description)
    contexts: list[frozenset[str]] = []
    exclusions: list[frozenset[str]] = []
    topic = set(content_words(name.replace("-", " ")))
    for kind, text in parts:
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


__all__ = ["MAX_DESCRIPTION_CHARS", "Description", "common_words", "content_words", "read_description", "segments",
           "stem"]
