"""Rubric items as plain claims: the sentence an answer uses to satisfy (or commit) an item, and the
phrase a reader looks for to recognise it.

A rubric item is usually a third-person description of the answer ("Recommends X", "Explains that Y",
"Uses Z"). The simulated agent turns it into a sentence that says it to the user ("I recommend X.",
"Keep in mind that Y.", "Use Z."), keeping the item's own words as the sentence's *core*. The simulated
judge, which sees only the rubric and the answer, recognises the item by finding that core verbatim in a
line of the answer. Both sides derive the core with :func:`claim`, so a judge can grade an answer it did
not write, and a human reading the answer sees a plain statement of the item.

An absence item (a must graded by absence, :mod:`skillbench.suite._absence`) is the exception: what an answer
can state is its *violation*, so :func:`violation` is the sentence that commits it and
:func:`line_violates` recognises that sentence (and never the item's own wording, which states compliance).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillbench.judge import normalize_quote

# Reporting verbs: the item describes what the answer says; the sentence just says it.
_REPORTING = {
    "mentions", "notes", "states", "explains", "says", "clarifies", "acknowledges", "describes",
    "discusses", "highlights", "emphasizes", "emphasises", "stresses", "flags", "points", "notices",
    "covers", "addresses", "tells", "reminds", "distinguishes", "identifies", "names", "lists",
}
_ADVISING = {"recommends": "I recommend", "suggests": "I suggest", "advises": "I advise",
             "proposes": "I propose", "encourages": "I encourage", "prefers": "I prefer"}
_WARNING = {"warns", "cautions"}
_NEGATIONS = re.compile(r"^(?:does not|doesn't|fails to|never|neglects to|forgets to|omits to)\s+", re.I)
_LEAD_ADVERB = re.compile(r"^(?:clearly|explicitly|correctly|properly|briefly|also|still)\s+", re.I)
_FIRST_WORD = re.compile(r"^([A-Za-z]+)\b\s*")
_THAT = re.compile(r"^(?:out\s+)?that\s+", re.I)
_NOT_VERBS = {"pandas", "statsmodels", "series", "process", "analysis", "basis", "class", "access", "bias",
              "axis", "this", "status", "is", "was", "has", "does", "its", "us", "as", "less", "stats",
              "glms", "dtypes", "values", "items", "results", "columns", "rows", "models", "errors"}


@dataclass(frozen=True)
class Claim:
    """How one rubric item is said in an answer."""

    lead: str  # words before the core ("I recommend", "Keep in mind that", "Use", "")
    core: str  # the item's own words that a reader looks for

    @property
    def sentence(self) -> str:
        core = self.core.rstrip(" .;:")
        if not self.lead:
            return f"{core[:1].upper()}{core[1:]}."
        return f"{self.lead} {core}."

    @property
    def key(self) -> str:
        """The normalised core, as matched against a normalised answer line."""
        return normalize_quote(self.core).rstrip(" .;:")


def _imperative(verb: str) -> str:
    """``Uses`` → ``Use``, ``Applies`` → ``Apply``, ``Fixes`` → ``Fix``."""
    v = verb.lower()
    if v.endswith("ies") and len(v) > 4:
        v = v[:-3] + "y"
    elif v.endswith(("sses", "shes", "ches", "xes", "zzes")):
        v = v[:-2]
    elif v.endswith("s") and not v.endswith("ss"):
        v = v[:-1]
    return v.capitalize()


def claim(item_text: str) -> Claim:
    """The sentence lead and core of a rubric item (deterministic; used by the agent and the judge)."""
    text = " ".join(item_text.split()).rstrip(" .;")
    text = _LEAD_ADVERB.sub("", text)
    if m := _NEGATIONS.match(text):
        rest = text[m.end():]
        return Claim("There is", f"no need to {rest}")
    m = _FIRST_WORD.match(text)
    if not m:
        return Claim("", text)
    word = m.group(1)
    low = word.lower()
    rest = text[m.end():]
    if low in _ADVISING and rest:
        return Claim(_ADVISING[low], rest)
    if low in _REPORTING and rest:
        if t := _THAT.match(rest):
            return Claim("Keep in mind that", rest[t.end():])
        rest = re.sub(r"^out\s+", "", rest, flags=re.I)
        return Claim("Keep in mind", rest) if rest else Claim("", text)
    if low in _WARNING and rest:
        if t := re.match(r"^(?:against|about|that|of)\s+", rest, re.I):
            return Claim("Be careful:", rest[t.end():])
        return Claim("Be careful:", rest)
    looks_like_verb = (word[:1].isupper() and low.endswith("s") and not low.endswith(("ss", "us", "is"))
                       and low not in _NOT_VERBS and len(low) > 3)
    if looks_like_verb and rest:
        return Claim(_imperative(word), rest)
    return Claim("", text)


def violation(requirement: str) -> Claim:
    """The sentence that commits what an absence requirement rules out (the agent writes it; the judge quotes it).

    It quotes the requirement, so it is specific to the item and never occurs in a line that merely states
    the requirement.
    """
    return Claim("", f'I went against "{" ".join(requirement.split()).rstrip(" .;")}" here')


def line_violates(line: str, requirement: str) -> bool:
    """True when an answer line commits the violation of an absence requirement (:func:`violation`)."""
    return violation(requirement).key in normalize_quote(line)


def line_matches(line: str, item_text: str) -> bool:
    """True when an answer line states the item (its core occurs in the line)."""
    key = claim(item_text).key
    return bool(key) and key in normalize_quote(line)
