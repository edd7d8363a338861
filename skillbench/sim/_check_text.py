"""Answer text for output checks: a string generated from a regex, and the answer with the check lines in it.

An ``output_matches`` check the simulated agent decides to pass is satisfied by a string generated from its
pattern with ``rstr`` (a well-kept generator, not a hand-written one). rstr picks from a ``set`` for negated
classes, whose order changes with Python's hash seed, so :class:`TameXeger` sorts those candidates (the same
seed gives the same string in every process) and keeps generated text on one line of plain characters (so a
check line never splits the answer's bullets). Every generated string is verified with ``re.search``.

:func:`place_lines` puts the check lines into a composed answer and tries a second layout (anchored patterns
at the very start or end) when the first does not give the decided outcomes; :func:`output_outcome` is what a
correct grader finds, which is what truth records.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable, Sequence
from typing import Any

import rstr

from skillbench.checktypes import Check

# Printable, one line, no control characters: what ``.`` and negated classes draw from.
PLAIN = string.ascii_letters + string.digits + " " + "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
REPEAT_SPAN = 8  # an open-ended repeat (``*``, ``+``, ``{2,}``) adds at most this many beyond its minimum
TRIES = 5  # generated strings tried per pattern before giving up


class _AnswerOnly:
    """The :class:`~skillbench.checktypes.SimRun` of an answer scored on its own: output checks read nothing else."""

    solved = False

    def used_tools(self) -> list[str]:
        return []

    def num_turns(self) -> int:
        return 0

    def final_files(self) -> dict[str, str]:
        return {}


_NO_RUN = _AnswerOnly()


class TameXeger(rstr.Rstr):  # type: ignore[misc, valid-type]
    """rstr's regex generator, deterministic per seed across processes and kept to plain one-line text."""

    def __init__(self, rnd: random.Random):
        super().__init__(rnd)
        self._alphabets["whitespace"] = " "  # \s: a space, never a line break
        self._alphabets["nonword"] = "".join(c for c in PLAIN if not (c.isalnum() or c == "_"))
        self._alphabets["nonwhitespace"] = PLAIN.replace(" ", "")
        self._alphabets["nondigits"] = "".join(c for c in PLAIN if not c.isdigit())
        self._cases = {**self._cases, "any": lambda _x: self._random.choice(PLAIN)}

    def _handle_in(self, value: Any) -> Any:
        candidates = list(_chain(self._handle_state(i) for i in value))
        if candidates and candidates[0] is False:  # a negated class: plain characters not excluded, sorted
            excluded = set(candidates[1:])
            pool = sorted(set(PLAIN) - excluded) or sorted(set(string.printable) - excluded)
            return self._random.choice(pool)
        return self._random.choice(candidates)

    def _handle_repeat(self, start_range: int, end_range: int, value: Any) -> str:
        end = min(end_range, start_range + REPEAT_SPAN)
        times = self._random.randint(start_range, end)
        return "".join("".join(self._handle_state(i) for i in value) for _ in range(times))


def _chain(parts: Any) -> Any:
    for part in parts:
        yield from part


def string_for(pattern: str, rng_for: Callable[[int], random.Random]) -> str | None:
    """A string that ``re.search(pattern, ·)`` matches, generated from the pattern, or None.

    Args:
        pattern: a Python regular expression.
        rng_for: the run's random source for try ``n`` (deterministic per run, check and try).
    """
    for n in range(TRIES):
        try:
            text = TameXeger(rng_for(n)).xeger(pattern)
            if re.search(pattern, text) is not None:
                return text
        except (re.error, KeyError, IndexError, ValueError, RecursionError):
            return None  # a construct rstr cannot generate: the check cannot be satisfied on purpose
    return None


def output_outcome(check: Check, answer: str) -> bool:
    """True when an output check passes on this final answer (its record's rule, as the simulated truth applies it)."""
    return bool(check.kind.simulate(check, _NO_RUN, answer, False))  # an output check always runs


def _anchor(pattern: str) -> str:
    """``start`` / ``end`` for a pattern anchored at the text's start or end without multiline, else ``""``."""
    body = re.sub(r"^\(\?[aiLmsux]+\)", "", pattern)
    if "(?m)" in pattern or re.match(r"^\(\?[a-zA-Z]*m", pattern):
        return ""
    if body.startswith(("^", r"\A")):
        return "start"
    if body.endswith(("$", r"\Z", r"\z")):
        return "end"
    return ""


def place_lines(answer: str, lines: Sequence[tuple[Check, str]], wanted: dict[str, bool],
                checks: Sequence[Check]) -> str:
    """The answer with each check line in it, laid out so the decided outcomes hold where they can.

    Args:
        answer: the composed answer (opening, bullets, closing).
        lines: (check, text) to put in, in check order.
        wanted: decided outcome (True = passes) per check id, for every output check.
        checks: the output checks, in file order.
    """
    if not lines:
        return answer
    head, sep, closing = answer.rpartition("\n\n")
    head, closing = (head, closing) if sep else (answer, "")

    def score(text: str) -> int:
        return sum(output_outcome(c, text) == wanted[c.check_id] for c in checks)

    def join(*parts: str) -> str:
        return "\n\n".join(p for p in parts if p).strip()

    middle = "\n".join(t for _, t in lines)
    first = join(head, middle, closing)
    if score(first) == len(checks):
        return first
    front = "\n".join(t for c, t in lines if _anchor(c.pattern or "") == "start")
    back = "\n".join(t for c, t in lines if _anchor(c.pattern or "") == "end")
    rest = "\n".join(t for c, t in lines if not _anchor(c.pattern or ""))
    second = join(front, head, rest, closing, back)
    return second if score(second) > score(first) else first


def lines_for(checks: Sequence[Check], wanted: dict[str, bool],
              rng_for: Callable[[str, int], random.Random]) -> list[tuple[Check, str]]:
    """The text each output check needs in the answer: a contained value or a matching string, when wanted.

    Each check type's record says which text (:class:`~skillbench.checktypes.AnswerLine`): ``output_contains`` /
    ``output_matches`` get their line when decided to pass; ``output_not_contains`` / ``output_not_matches`` only
    when decided to fail. A pattern rstr cannot satisfy gets no line.

    Args:
        checks: the prompt's checks (only output checks are read).
        wanted: decided outcome (True = passes) per check id.
        rng_for: the run's random source for (check id, try).
    """
    out: list[tuple[Check, str]] = []
    for c in checks:
        line = c.kind.answer_line
        if c.check_id not in wanted or line is None or wanted[c.check_id] != line.when:
            continue
        if line.option == "value":
            out.append((c, c.value or ""))
        elif (text := string_for(c.pattern or "", lambda n, cid=c.check_id: rng_for(cid, n))) is not None:
            out.append((c, text))
    return out
