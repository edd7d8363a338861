"""How every page skillbench writes prints a number, a missing value, a money amount, a table and text from
content under evaluation.

One way for the scorecard, the calibration and study reports, lint-skills, compare and the notebooks, so their
pages read alike. A bottom module (it imports nothing of skillbench): the scorecard renders its page with it, and
the report, which draws the scorecard's frames, sits above the scorecard.

The report is control plane and what a pull request wrote is data: an answer, a quote, a rubric item, a skill or
prompt name, a check's detail enters a page through :func:`md_text` (or :func:`md_code`), which cannot make a link,
an image, raw HTML or a line of its own, and every table through :func:`md_table`, which no cell can reshape.

**One number formatter.** Each kind of number has one printed form, whatever page shows it:

==========================================  ====================  ==============================================
kind                                        function              example
==========================================  ====================  ==============================================
rate, coverage, share, lift, F1, κ, SE      :func:`fmt`           ``0.590`` (:data:`RATE_DIGITS` = 3 decimals)
a change of one of those (a delta, a lift)  :func:`signed`        ``+0.319``, ``-0.125`` (always a sign)
its interval                                :func:`span`          ``[0.410, 0.790]`` (the value's decimals)
p-value                                     :func:`p_value`       ``0.0156``, ``0.00391``, ``1.00`` (3 significant
                                                                  figures), ``< 0.001`` below
money (a week's spend)                      :func:`money`         ``$11.15``
money per run, and its change               :func:`money`,        ``$0.0798``, ``+$0.0265`` (:data:`COST_DIGITS`)
                                            :func:`signed_money`
count                                       ``str(int)``          ``26``
missing                                     —                     ``n/a`` in text, ``–`` in a table cell
==========================================  ====================  ==============================================

qdrant's own tables (lift, per-cell, per-prompt) keep the decimals of qdrant's published page, which the
reproduction test pins: mean avoid violations per run at 2 decimals, turns at 1, cost per run at 4 (its header
says ``($)``).

**Cut text** (:func:`md_text` with a ``limit``) ends in ``…`` and carries its full text as the title of a link to
:data:`CUT_TARGET`: GitHub shows it on hover, and the report's pages turn that link into a plain ``<span title>``.
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


RATE_DIGITS = 3  # rates, coverages, lifts, F1, κ, their SEs and intervals
COST_DIGITS = 4  # a cost per run (cents matter: a run costs $0.01–$0.20)
P_FIGURES = 3  # significant figures of a p-value
P_FLOOR = 0.001  # below it a p-value prints as "< 0.001"


def fmt(x: Any, nd: int = RATE_DIGITS) -> str:
    """``0.590``; ``n/a`` when missing."""
    return "n/a" if is_missing(x) else f"{float(x):.{nd}f}"


def span(low: Any, high: Any, nd: int = RATE_DIGITS) -> str:
    """An interval as every page prints it: ``[0.410, 0.790]``; ``""`` when either end is missing."""
    return "" if is_missing(low) or is_missing(high) else f"[{float(low):.{nd}f}, {float(high):.{nd}f}]"


def with_span(text: str, low: Any, high: Any, nd: int = RATE_DIGITS) -> str:
    """A value's text and its interval, ``0.620 [0.410, 0.790]``; the text alone when there is no interval."""
    interval = span(low, high, nd)
    return f"{text} {interval}" if interval else text


def signed(x: Any, nd: int = RATE_DIGITS) -> str:
    """``+0.319``; ``n/a`` when missing."""
    return "n/a" if is_missing(x) else f"{float(x):+.{nd}f}"


def money(x: Any, nd: int = 2) -> str:
    """``$11.15`` (``nd=COST_DIGITS`` for a cost per run: ``$0.0798``); ``n/a`` when missing."""
    return "n/a" if is_missing(x) else f"${float(x):.{nd}f}"


def signed_money(x: Any, nd: int = COST_DIGITS) -> str:
    """A change of cost: ``+$0.0265``, ``-$0.0012``; ``n/a`` when missing."""
    if is_missing(x):
        return "n/a"
    return f"{'-' if float(x) < 0 else '+'}${abs(float(x)):.{nd}f}"


def p_value(p: Any) -> str:
    """A p-value as every page prints it: 3 significant figures (``0.0156``, ``0.00391``, ``1.00``), ``< 0.001``
    below :data:`P_FLOOR`; ``–`` when no test was read."""
    if is_missing(p):
        return "–"
    value = float(p)
    if value < P_FLOOR:
        return f"< {P_FLOOR:g}"
    return f"{value:#.{P_FIGURES}g}"  # '#' keeps the trailing zeros: 0.500, 1.00; no exponent above 1e-4


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


ELLIPSIS = "…"
CUT_TARGET = "#cut"  # the link of a cut text, whose title is the full text; no page has that anchor
CUT_TITLE_CHARS = 1000  # the most of a cut text its title carries (a page quotes, it does not archive)
_CUT_MARK = f"]({CUT_TARGET} \""


def md_text(x: Any, limit: int | None = None) -> str:
    """Text from content under evaluation (an answer, a quote, a name, a rubric item, a check's detail) as inline
    markdown on one line, cut to ``limit`` characters first, that can make no link, image, raw HTML or table cell.

    Text longer than ``limit`` is cut to its first ``limit`` characters and ``…`` and wrapped in a link to
    :data:`CUT_TARGET` whose title is the full text (:func:`_cut`), so the whole is a hover away.

    Every page renders markdown to HTML, so text that came from a pull request must not be read as markup: a line
    break (which would end a table row or start a heading) becomes a space, and outside code spans the characters
    of :data:`_ACTIVE_MARKUP` are escaped. A code span (a backtick run closed by one as long, as CommonMark pairs
    them) is kept as written: markdown shows its content literally, so an answer's ``List<T>`` in backticks gains no
    backslash. Safe in a table cell and in running text.
    """
    full = _one_line(str(x))
    if limit is not None and len(full) > limit:
        return _cut(_inline(full[:limit]) + ELLIPSIS, full)
    return _inline(full)


def _cut(shown: str, full: str) -> str:
    """``[shown…](#cut "full text")``. In the title every ASCII punctuation character is escaped with a backslash
    (CommonMark lets any be, and reads the escape as the character), so no quote ends the title early and no
    backtick or ``<`` there opens a code span or a tag that would outrank the link; ``shown`` is already
    :func:`_inline` text, its brackets escaped too, so it can end the link text nowhere but where we end it."""
    title = _PUNCTUATION.sub(lambda m: "\\" + m.group(), full[:CUT_TITLE_CHARS])
    text = re.sub(r"(?<!\\)((?:\\\\)*)([\[\]])", lambda m: m.group(1) + "\\" + m.group(2), shown)
    return f'[{text}]({CUT_TARGET} "{title}")'


_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")


def _inline(text: str) -> str:
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


NONE = "_none_"  # a table without rows: said, not printed as bare headers


def md_table(headers: list[str], rows: list[list[Any]]) -> str:
    """A GitHub-markdown table with columns padded to their widest cell, readable as raw text; :data:`NONE` when
    there are no rows (headers over nothing read as a table that failed to fill).

    Whatever a cell holds, the table keeps its shape: a line break becomes a space and a pipe not already escaped
    is escaped, so no cell can end its row or add a column. Cells of content under evaluation go through
    :func:`md_text` first, which also keeps them from being read as markup.
    """
    if not rows:
        return NONE
    known: dict[str, str] = {}  # each distinct cell escaped (and below padded) once: long tables repeat cells
    columns = [[known[t] if (t := str(c)) in known else known.setdefault(t, _table_cell(t)) for c in column]
               for column in zip(*rows, strict=True)]
    # a cut cell carries its full text as a link title: padding every row to it would bury the table
    widths = [max([len(h)] + [len(v) for v in column if _CUT_MARK not in v]) for h, column in
              zip(headers, columns, strict=True)]
    padded = []
    for width, column in zip(widths, columns, strict=True):
        pads: dict[str, str] = {}
        padded.append([pads[v] if v in pads else pads.setdefault(v, v.ljust(width)) for v in column])

    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(values) + " |"

    return "\n".join([line([h.ljust(w) for h, w in zip(headers, widths, strict=True)]),
                      line(["-" * w for w in widths]), *map(line, zip(*padded, strict=True))])


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
