"""How every page skillbench writes prints a number, a missing value, a money amount and a table.

One way for the scorecard, the calibration and study reports, lint-skills, compare and the notebooks, so their
pages read alike. A bottom module (it imports nothing of skillbench): the scorecard renders its page with it, and
the report, which draws the scorecard's frames, sits above the scorecard.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd


def is_missing(x: Any) -> bool:
    """None, ``pd.NA`` and non-finite floats."""
    return x is None or x is pd.NA or (isinstance(x, float | np.floating) and not np.isfinite(x))


def fmt(x: Any, nd: int = 3) -> str:
    """``0.590``; ``n/a`` when missing."""
    return "n/a" if is_missing(x) else f"{float(x):.{nd}f}"


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


def md_cell(text: Any) -> str:
    """One table cell on one line, its pipes escaped."""
    return str(text).replace("\r", " ").replace("\n", " ").replace("|", "\\|")


def md_table(headers: list[str], rows: list[list[Any]]) -> str:
    """A GitHub-markdown table with columns padded to their widest cell, readable as raw text."""
    cells = [[str(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(values: list[str]) -> str:
        return "| " + " | ".join(v.ljust(widths[i]) for i, v in enumerate(values)) + " |"

    return "\n".join([line(headers), "| " + " | ".join("-" * w for w in widths) + " |", *map(line, cells)])


def frame_table(frame: pd.DataFrame, columns: Sequence[str], headers: Sequence[str] | None = None) -> str:
    """``md_table`` of a DataFrame's ``columns``, each cell through :func:`cell_text`."""
    rows = [[md_cell(cell_text(row[c])) for c in columns] for _, row in frame.iterrows()]
    return md_table(list(headers or columns), rows)


def markdown_sections(markdown: str, *titles: str, level: int = 4) -> str:
    """The named ``## `` sections of a markdown document, their headings moved to ``level``.

    For showing parts of ``scorecard.md`` or ``calibration.md`` under a notebook's own headings.
    """
    parts = re.split(r"(?m)^(?=## )", markdown)
    keep = [p for p in parts if any(p.startswith(f"## {t}") for t in titles)]
    text = "\n".join(keep)
    return re.sub(r"(?m)^(#{2,})(?= )", lambda m: "#" * min(level + len(m.group(1)) - 2, 6), text)
