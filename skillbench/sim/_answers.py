"""The prose of a simulated answer: one plain line per covered item or committed violation, and filler.

Lines are markdown bullets so every claim is one line a reader (or the simulated judge) can quote.
Filler is neutral advice that states no rubric item.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence

from skillbench.judge import normalize_quote
from skillbench.sim._claims import claim, violation

OPENINGS = (
    "Here is how I would approach this.",
    "Short version first, then the details.",
    "This comes up often; here is what I would do.",
    "A few concrete points, in the order I would apply them.",
    "Here is a practical plan for this.",
)
CLOSINGS = (
    "Adjust the details to the size and shape of your data.",
    "If any step behaves differently on your data, share a small sample and the exact output.",
    "That should cover the main cases; the edge cases depend on your data.",
    "Start with the first point and re-measure before moving on.",
)
FILLER = (
    "Work on a small, representative sample first so each attempt takes seconds, not minutes.",
    "Write the intermediate results down so you can compare runs.",
    "Keep the original data untouched and derive new columns or tables from it.",
    "Name intermediate variables after what they hold, not after the step that made them.",
    "Check the shape of the result after each step; silent row changes are the usual surprise.",
    "Pin the library versions in the project so results can be reproduced later.",
    "Put the steps in a function once they work, so the notebook stays readable.",
    "Leave a short comment where a choice was made for a reason that is not obvious.",
    "Re-run the whole pipeline from a clean start before trusting the numbers.",
    "Plot the data once before modelling; it catches problems no summary shows.",
)
GENERIC = (
    "I do not have specific guidance for this question, so here are general steps.",
    "Break the problem into small steps and check each one on a sample.",
    "Compare the result against a case you can compute by hand.",
)


def _strip_bullet(line: str) -> str:
    text = line.strip()
    for prefix in ("- ", "* ", "• "):
        if text.startswith(prefix):
            return text[len(prefix):].strip()
    return text


def answer_lines(answer: str) -> list[str]:
    """The quotable lines of an answer (bullets stripped, blank lines dropped)."""
    return [t for t in (_strip_bullet(line) for line in answer.splitlines()) if t]


def compose(
    items: Sequence[tuple[str, str]],
    stated: Sequence[int],
    rnd: random.Random,
    verbosity: float,
    absence: Collection[int] = (),
) -> str:
    """An answer that states exactly the items at the ``stated`` indexes, with neutral filler.

    Args:
        items: ``(type, text)`` per rubric item, in file order.
        stated: indexes of covered must/bonus items and committed avoid items.
        rnd: the run's private random source (order and filler choice).
        verbosity: filler scale (0 means no filler).
        absence: indexes of the musts graded by absence: covered means nothing is said, not covered means the
            answer commits the violation (:func:`skillbench.sim._claims.violation`), as the judge hunts for it.
    """
    keys = [(violation(text) if i in absence else claim(text)).key for i, (_, text) in enumerate(items)]
    covered = set(stated)
    lines = [claim(items[i][1]).sentence for i in stated if i not in absence]
    lines += [violation(items[i][1]).sentence for i in sorted(absence) if i not in covered]
    safe_filler = [f for f in FILLER if not any(k and k in normalize_quote(f) for k in keys)]
    n_filler = min(len(safe_filler), round(verbosity * rnd.uniform(1.0, 3.0)))
    lines += rnd.sample(safe_filler, n_filler)
    rnd.shuffle(lines)
    if not lines:
        lines = [rnd.choice(GENERIC[1:])]
    body = "\n".join(f"- {line}" for line in lines)
    return f"{rnd.choice(OPENINGS)}\n\n{body}\n\n{rnd.choice(CLOSINGS)}"


def generic_answer(rnd: random.Random, verbosity: float) -> str:
    """An answer to a prompt the endpoint has no rubric for."""
    n = max(1, min(len(FILLER), round(verbosity * 2)))
    body = "\n".join(f"- {line}" for line in [*GENERIC[1:], *rnd.sample(FILLER, n)])
    return f"{GENERIC[0]}\n\n{body}\n\n{rnd.choice(CLOSINGS)}"
