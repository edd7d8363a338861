"""How every page skillbench writes prints a number, a missing value, a money amount, a table and text from
content under evaluation.

One way for the scorecard, the calibration and study reports, lint-skills, compare and the notebooks, so their
pages read alike. A bottom module (it imports nothing of skillbench): the scorecard renders its page with it, and
the report, which draws the scorecard's frames, sits above the scorecard.

The report is control plane and what a pull request wrote is data: an answer, a quote, a rubric item, a skill or
prompt name, a check's detail enters a page through :func:`md_text` (or :func:`md_code`), which cannot make a link,
an image, raw HTML or a line of its own, and every table through :func:`md_table`, which no cell can reshape.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd


def is_missing(x: Any) -> bool:
    """None, ``pd.NA`` and non-finite floats."""
    return x is None or x is pd.NA or (isinstance(x, float | np.floating) and not np.isfinite(x))


def fmt(x: Any, nd: int = 3) -> str:
    """``0.590``; ``n/a`` when missing."""
    return "n/a" if is_missing(x) else f"{float(x):.{nd}f}"


def span(low: Any, high: Any, nd: int = 2) -> str:
    """An interval as every page prints it: ``[0.41, 0.79]``; ``""`` when either end is missing."""
    return "" if is_missing(low) or is_missing(high) else f"[{float(low):.{nd}f}, {float(high):.{nd}f}]"


def with_span(text: str, low: Any, high: Any, nd: int = 2) -> str:
    """A value's text and its interval, ``0.62 [0.41, 0.79]``; the text alone when there is no interval."""
    interval = span(low, high, nd)
    return f"{text} {interval}" if interval else text


def signed(x: Any, nd: int = 3) -> str:
    """``+0.319``; ``n/a`` when missing."""
    return "n/a" if is_missing(x) else f"{float(x):+.{nd}f}"


def money(x: float) -> str:
    """``$11.15``."""
    return f"${x:.2f}"


def format_seconds(value: float | None) -> str:
    """``95.2`` → ``1 min 35 s``; None → ``–``."""
    if value is None:
        return "–"
    if value < 60:
        return f"{value:.1f} s"
    minutes, seconds = divmod(round(value), 60)
    return f"{minutes} min {seconds:02d} s"


def cell_text(x: Any, digits: int = 3) -> str:
    """A table cell of any type: ``–`` when missing, yes/no, integers as such, floats to ``digits``."""
    if is_missing(x):
        return "–"
    if isinstance(x, bool | np.bool_):
        return "yes" if x else "no"
    if isinstance(x, int | np.integer):
        return str(int(x))
    if isinstance(x, float | np.floating):
        return f"{x:.{digits}f}"
    return str(x)


# What in inline markdown could make a link, an image, raw HTML or a new cell, each escaped with a backslash
# (CommonMark lets any ASCII punctuation be escaped): backslashes themselves (so no escape of ours can be undone),
# pipes, the ``](`` / ``][`` that makes a link or image, a ``<`` that opens a tag or an autolink, and an ``&`` that
# starts an entity (``&lt;`` shows as written). Emphasis and code spans stay as they are: qdrant's pages show an
# answer's ``**bold**`` as bold, and neither can carry a URL or a tag.
_ACTIVE_MARKUP = re.compile(r"[\\|]|\](?=[(\[])|<(?=[A-Za-z/!?])|&(?=#?\w+;)")
_BACKTICKS = re.compile(r"`+")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)((?:\\\\)*)\|")


def _one_line(text: str) -> str:
    return " ".join(text.splitlines())


def _escape_active(text: str) -> str:
    return _ACTIVE_MARKUP.sub(lambda m: "\\" + m.group(), text)


def md_text(x: Any, limit: int | None = None) -> str:
    """Text from content under evaluation (an answer, a quote, a name, a rubric item, a check's detail) as inline
    markdown on one line, cut to ``limit`` characters first, that can make no link, image, raw HTML or table cell.

    Every page renders markdown to HTML, so text that came from a pull request must not be read as markup: a line
    break (which would end a table row or start a heading) becomes a space, and outside code spans the characters
    of :data:`_ACTIVE_MARKUP` are escaped. A code span (a backtick run closed by one as long, as CommonMark pairs
    them) is kept as written: markdown shows its content literally, so an answer's ``List<T>`` in backticks gains no
    backslash. Safe in a table cell and in running text.
    """
    text = _one_line(str(x))[:limit]
    out, pos = [], 0
    while (opening := _BACKTICKS.search(text, pos)) is not None:
        out.append(_escape_active(text[pos:opening.start()]))
        closing = next((m for m in _BACKTICKS.finditer(text, opening.end()) if len(m.group()) == len(opening.group())),
                       None)
        end = closing.end() if closing else opening.end()  # an unmatched run is literal backticks
        out.append(text[opening.start():end])
        pos = end
    out.append(_escape_active(text[pos:]))
    return "".join(out)


def md_code(x: Any) -> str:
    """Text from content under evaluation (a model snapshot, a CLI version) as one inline code span showing exactly
    that text: fenced by more backticks than any run inside it, so a backtick in it cannot end the span early."""
    text = _one_line(str(x))
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_table(headers: list[str], rows: list[list[Any]]) -> str:
    """A GitHub-markdown table with columns padded to their widest cell, readable as raw text.

    Whatever a cell holds, the table keeps its shape: a line break becomes a space and a pipe not already escaped
    is escaped, so no cell can end its row or add a column. Cells of content under evaluation go through
    :func:`md_text` first, which also keeps them from being read as markup.
    """
    cells = [[_table_cell(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(values: list[str]) -> str:
        return "| " + " | ".join(v.ljust(widths[i]) for i, v in enumerate(values)) + " |"

    return "\n".join([line(headers), "| " + " | ".join("-" * w for w in widths) + " |", *map(line, cells)])


def _table_cell(x: Any) -> str:
    # A pipe after an even number of backslashes still splits the row; one more backslash escapes it.
    return _UNESCAPED_PIPE.sub(lambda m: m.group(1) + "\\|", _one_line(str(x)))


def frame_table(frame: pd.DataFrame, columns: Sequence[str], headers: Sequence[str] | None = None) -> str:
    """``md_table`` of a DataFrame's ``columns``, each cell through :func:`cell_text`."""
    rows = [[md_text(cell_text(row[c])) for c in columns] for _, row in frame.iterrows()]
    return md_table(list(headers or columns), rows)


def markdown_sections(markdown: str, *titles: str, level: int = 4) -> str:
    """The named ``## `` sections of a markdown document, their headings moved to ``level``.

    For showing parts of ``scorecard.md`` or ``calibration.md`` under a notebook's own headings.
    """
    parts = re.split(r"(?m)^(?=## )", markdown)
    keep = [p for p in parts if any(p.startswith(f"## {t}") for t in titles)]
    text = "\n".join(keep)
    return re.sub(r"(?m)^(#{2,})(?= )", lambda m: "#" * min(level + len(m.group(1)) - 2, 6), text)


GITHUB_COMMENT_LIMIT = 65_536  # the characters GitHub accepts in one pull-request or issue comment
_CUT_NOTE_ROOM = 600  # kept free for the note that says what was cut (its counts and titles are short)


def _length(text: str) -> int:
    """A comment's length as the strictest count takes it: UTF-16 code units (an emoji outside the BMP, 📉, is two),
    never fewer than Python's code points, so a page that fits here fits whichever way GitHub counts."""
    return len(text.encode("utf-16-le")) // 2


@dataclass(frozen=True)
class CutTable:
    """A table a capped page may shorten from the bottom: the line above it (a heading), headers and rows."""

    title: str
    headers: list[str]
    rows: list[list[Any]]


def capped_page(parts: Sequence[str | CutTable], *, full_report: str, limit: int = GITHUB_COMMENT_LIMIT) -> str:
    """The parts, one per line, in at most ``limit`` characters: a PR comment GitHub will take.

    Parts go in order while they fit: a text part whole or not at all, a :class:`CutTable` with as many of its
    first rows as fit (with none, it is left out with its title). Whatever was cut is said on the last line — how
    many table rows (and of which tables) and how many lines, and where the full report (``full_report``) is — so
    a cut is never silent.
    """
    budget = limit - _CUT_NOTE_ROOM - _length(full_report)
    out: list[str] = []
    used, cut_lines, cut_rows = 0, 0, {}

    def fits(text: str) -> bool:
        return used + _length(text) + 1 <= budget

    for part in parts:
        if isinstance(part, str):
            if fits(part):
                out.append(part)
                used += _length(part) + 1
            else:
                cut_lines += part.count("\n") + 1
            continue
        # the most leading rows whose table (with its title) still fits: bisect, since md_table pads to the widest
        low, high = 0, len(part.rows)
        while low < high:
            mid = (low + high + 1) // 2
            if fits(f"{part.title}\n\n{md_table(part.headers, part.rows[:mid])}\n"):
                low = mid
            else:
                high = mid - 1
        if low:
            text = f"{part.title}\n\n{md_table(part.headers, part.rows[:low])}\n"
            out.append(text)
            used += _length(text) + 1
        if low < len(part.rows):
            cut_rows[part.title.lstrip("# ").strip()] = len(part.rows) - low
    if cut_rows or cut_lines:
        what = [f"{n} row(s) of “{title}”" for title, n in cut_rows.items()]
        what += [f"{cut_lines} line(s)"] if cut_lines else []
        out.append(f"_Cut to stay under GitHub's {limit:,}-character comment limit: {', '.join(what)}. "
                   f"The full report is {md_code(full_report)}._")
    return "\n".join(out) + "\n"
