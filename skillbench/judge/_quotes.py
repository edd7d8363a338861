"""Verbatim quotes: the one rule by which a judge's evidence quote is found in the answer it quotes.

Whitespace is collapsed, typographic quote characters are unified and case is folded on both sides
(:func:`normalize_quote`), so a quote the judge copied faithfully is never rejected for its typography, and
one it paraphrased is. The judge's evidence check, the calibration's evidence rates and the simulated agent
and judge all match quotes through this module.

A verbatim quote can still fail to show what it is meant to prove. For a violated ``avoid`` item the protocol asks
for the span that commits the harm; :func:`claim_gap` says when the quote cannot carry that claim on its own — a
bare number or symbol, or a fragment too short to state anything that shares no word with the item. The
violation keeps its credit (the judge may have read the answer rightly); the quote is flagged
(:data:`skillbench.vocab.EVIDENCE_NO_CLAIM`), shown on the scorecard's avoid table and counted per judge and model.
It is read from the ledger's item text and quote whenever a ledger is read, so every week — an old one, qdrant's —
gets it.
"""

from __future__ import annotations

import re
import unicodedata

from skillbench.suite import content_words

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
                         "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"', "`": "'"})


def normalize_quote(text: str) -> str:
    """Whitespace collapsed, quote characters unified, case folded: the form quotes are matched in."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    return " ".join(text.split()).casefold()


def quote_in_answer(quote: str, answer: str) -> bool:
    """True when a non-empty ``quote`` occurs in ``answer`` after :func:`normalize_quote` on both."""
    q = normalize_quote(quote).strip(" .…")
    return bool(q) and q in normalize_quote(answer)


# Fewer content words than this and none shared with the item: too short to state a harm. On qdrant's published
# week 1, 22 of its 29 violated-avoid quotes share a content word with their item; of the 7 that do not, 6 carry
# three or more content words (a clause that states the harm in other words: "don't write your own …") and one
# is a two-word lead-in ("here's a … for each …"). Requiring a shared word alone would flag those six; this rule
# flags the lead-in and every bare number.
MIN_CLAIM_WORDS = 3
_LETTERS = re.compile(r"[^\W\d_]{2,}")  # a word: two or more letters (so "819.9", "#3", "→ 36" carry none)
_COMPOUND = re.compile(r"\w+(?:[=.:/]\w+)+")  # a setting or a name as written: m=0, hnsw_config.m, v1.2


def _terms(text: str) -> frozenset[str]:
    """What a quote and an item can share: content-word stems, and settings and names as written (``m=0``)."""
    return content_words(text) | frozenset(_COMPOUND.findall(text.casefold()))


def claim_gap(quote: str, item: str) -> str:
    """Why a verbatim ``quote`` for a violated avoid ``item`` cannot show the harm on its own; ``""`` when it can.

    Words are :func:`skillbench.suite.content_words` (light stems, stop words out). The quote cannot show the harm
    when it has no word of two letters at all (a bare number, a symbol, punctuation), or when it has fewer than
    :data:`MIN_CLAIM_WORDS` content words and shares none of them — nor a setting or name as written, ``m=0`` —
    with the item (a fragment or a generic lead-in).
    An empty quote is not judged here (no quote is the evidence check's case, not this one).
    """
    text = normalize_quote(quote)
    if not text:
        return ""
    if not _LETTERS.search(text):
        return "a bare number or symbol: no words that could state the harm"
    words = content_words(text)
    if len(words) < MIN_CLAIM_WORDS and not _terms(text) & _terms(item):
        return (f"{len(words)} content word{'' if len(words) == 1 else 's'}, none of the item's: too short or "
                f"generic to state the harm")
    return ""
