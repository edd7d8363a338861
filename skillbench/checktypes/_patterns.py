"""A check's regular expression: refused at validate when it is pathological, searched under a time limit always.

Python's ``re`` cannot be interrupted: a pattern with catastrophic backtracking (``(a+)+$`` against a long run of
``a``) holds the grading thread for hours. The ``regex`` package (a well-kept drop-in engine for ``re``'s syntax)
takes a ``timeout``, so every search here is bounded: grading reports a timed-out search as the check's ``error``,
never a verdict. Validate refuses a pattern a static rule could not judge well (real specs nest quantifiers safely:
``(?:\\s+-\\w+)*``), so it tries the pattern instead: against runs of each character the pattern names and a few
common ones (the inputs that make backtracking explode), each under :data:`TRIAL_TIMEOUT_S`. A pattern that takes
that long on :data:`TRIAL_CHARS` characters would take far longer on a real answer or file.

The syntax stays ``re``'s (documented for every spec): a pattern is compiled by ``re`` first, so one ``re`` refuses
is refused whatever ``regex`` would accept. ``regex`` expands counted repeats when it compiles, and compiling cannot
be interrupted either: ``(?:(?:a{1000}){1000}){1000}`` would compile for hours. So before ``regex`` sees a pattern,
``re``'s parse of it (the tree ``re.compile`` builds; ``rstr`` reads the same one) is measured, and a pattern whose
repeats expand beyond :data:`MAX_EXPANSION` items is refused, at validate and when grading alike.
"""

from __future__ import annotations

import re
import re._constants as sre_constants
import re._parser as sre_parser
import string
import time
from functools import lru_cache
from typing import Any

import regex

SEARCH_TIMEOUT_S = 10.0  # one search while grading (an answer, a file of up to 16 MiB: linear takes milliseconds)
# A trial: the engine turns most nested repeats into a high-degree polynomial (``(a+)+$``, ``(x+x+)+y``: seconds on
# a thousand characters, minutes on two thousand), the rest stay exponential; a real pattern is linear or at worst
# quadratic (``(?m)^\s*…`` on a run of newlines: under 0.1 s here). A second on a thousand characters parts them with
# a margin of ten either side, so a loaded machine does not refuse a real pattern.
TRIAL_TIMEOUT_S = 1.0
TRIAL_BUDGET_S = 10.0  # all trials of one pattern (a real one takes a tenth of a second in all)
TRIAL_CHARS = 1000
_COMMON = "a0 \n-_./x"
MAX_EXPANSION = 100_000  # items a pattern stands for once its counted repeats are expanded (a real one: hundreds)
_REPEATS = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT)
_SUFFIXES = ("", "\x00")  # a run that ends the match, and one that makes it fail at the very end


class PatternTimeout(Exception):
    """A search took longer than its limit (catastrophic backtracking)."""


class _TooLarge(Exception):
    pass


def _parts(value: Any) -> list[Any]:
    """The sub-patterns held by one parsed item's argument (a branch's alternatives, a group's body, …)."""
    if isinstance(value, sre_parser.SubPattern):
        return [value]
    if isinstance(value, tuple | list):
        return [part for item in value for part in _parts(item)]
    return []


def _expanded(tree: Any) -> int:
    total = 0
    for op, arg in tree:
        if op in _REPEATS:
            low, high, body = arg
            total += max(low if high == sre_constants.MAXREPEAT else high, 1) * _expanded(body)
        else:
            total += 1 + sum(_expanded(part) for part in _parts(arg))
        if total > MAX_EXPANSION:
            raise _TooLarge
    return total


@lru_cache(maxsize=512)
def _compile_problem(pattern: str) -> str:
    """Why ``pattern`` must not be compiled by ``regex`` ('' when it may): ``re`` refuses it, it nests too deeply
    for ``re``'s parser, or its repeats expand beyond :data:`MAX_EXPANSION`."""
    try:
        re.compile(pattern)
        _expanded(sre_parser.parse(pattern))
    except re.error as exc:
        return f"invalid regular expression ({exc})"
    except RecursionError:
        return "invalid regular expression (its groups nest too deeply)"
    except _TooLarge:
        return f"pathological: its counted repeats expand to more than {MAX_EXPANSION} items"
    return ""


def search(pattern: str, text: str, timeout_s: float | None = None) -> bool:
    """``re.search(pattern, text) is not None``, bounded in time.

    Raises:
        PatternTimeout: the search took longer than ``timeout_s`` (default :data:`SEARCH_TIMEOUT_S`).
        re.error: the pattern does not compile, or would take too long to (:func:`pattern_problem` refuses both).
        regex.error: the grader's engine refuses it.
    """
    if problem := _compile_problem(pattern):
        raise re.error(problem)
    timeout_s = SEARCH_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        return regex.search(pattern, text, timeout=timeout_s) is not None
    except TimeoutError:
        raise PatternTimeout(f"took longer than {timeout_s:g}s (catastrophic backtracking)") from None


def _trial_chars(pattern: str) -> list[str]:
    named = [c for c in dict.fromkeys(pattern) if c in string.printable and c not in "\t\r\x0b\x0c"]
    return list(dict.fromkeys([*named, *_COMMON]))


def pattern_problem(pattern: str) -> str:
    """Why ``pattern`` cannot be a check's regular expression ('' when it can): it does not compile, or a trial
    search on a run of one character takes longer than :data:`TRIAL_TIMEOUT_S` (or all of them longer than
    :data:`TRIAL_BUDGET_S`)."""
    if problem := _compile_problem(pattern):
        return problem
    try:
        compiled = regex.compile(pattern)
    except regex.error as exc:
        return f"not supported by the grader's engine ({exc})"
    started = time.monotonic()
    for char in _trial_chars(pattern):
        for suffix in _SUFFIXES:
            text = char * TRIAL_CHARS + suffix
            try:
                compiled.search(text, timeout=TRIAL_TIMEOUT_S)
            except TimeoutError:
                return (f"pathological: searching {TRIAL_CHARS} × {char!r}{' and a NUL' if suffix else ''} took "
                        f"longer than {TRIAL_TIMEOUT_S:g}s (catastrophic backtracking)")
            if time.monotonic() - started > TRIAL_BUDGET_S:
                return f"pathological: trial searches took longer than {TRIAL_BUDGET_S:g}s in all"
    return ""


__all__ = ["SEARCH_TIMEOUT_S", "PatternTimeout", "pattern_problem", "search"]
