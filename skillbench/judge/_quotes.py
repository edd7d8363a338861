"""Verbatim quotes: the one rule by which a judge's evidence quote is found in the answer it quotes.

Whitespace is collapsed, typographic quote characters are unified and case is folded on both sides
(:func:`normalize_quote`), so a quote the judge copied faithfully is never rejected for its typography, and
one it paraphrased is. The judge's evidence check, the calibration's evidence rates and the simulated agent
and judge all match quotes through this module.
"""

from __future__ import annotations

import unicodedata

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
