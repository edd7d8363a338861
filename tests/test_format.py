"""The one number formatter (``skillbench.markdown``), empty tables, cut text and the notebooks' cell ids.

The formatter's cases are data (``tests/data/format_cases.json``, each with its ``why``): every kind of number
prints one way whatever page shows it.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup

from skillbench import markdown
from skillbench.markdown import ELLIPSIS, NONE, frame_table, md_table, md_text
from skillbench.paths import NOTEBOOKS_DIR
from skillbench.report import markdown_to_html

CASES = json.loads((Path(__file__).parent / "data" / "format_cases.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[f"{c['kind']}-{c['want']}" for c in CASES])
def test_every_kind_of_number_prints_one_way(case: dict) -> None:
    assert getattr(markdown, case["kind"])(*case["args"]) == case["want"], case["why"]


def test_an_empty_table_says_none() -> None:
    """Headers over no rows read as a table that failed to fill; the page says there is nothing."""
    import pandas as pd

    assert md_table(["a", "b"], []) == NONE
    assert frame_table(pd.DataFrame(columns=["x"]), ["x"]) == NONE
    assert BeautifulSoup(markdown_to_html(NONE), "html.parser").get_text().strip() == "none"


HOSTILE = 'an answer <script>alert(1)</script> "quoted" `code` [go](javascript:alert(2)) a|b & &amp; ] \\ ' + "x" * 60


def test_cut_text_ends_in_an_ellipsis_and_keeps_the_whole_on_hover() -> None:
    cut = md_text(HOSTILE, 30)
    table = md_table(["evidence", "n"], [[cut, "1"], [md_text("short", 30), "2"]])
    soup = BeautifulSoup(markdown_to_html(table), "html.parser")
    assert not soup.find_all(["script", "a", "img"])  # the cut is no link, and the content made none
    span = soup.find("span", class_="cut")
    assert span.get_text() == HOSTILE[:30] + ELLIPSIS
    assert span["title"] == " ".join(HOSTILE.split())  # the full text, exactly, as an escaped attribute
    assert [len(tr.find_all(["td", "th"])) for tr in soup.find_all("tr")] == [2, 2, 2]  # shape kept
    assert md_text("short", 30) == "short" and md_text("x" * 30, 30) == "x" * 30  # at the limit: not cut
    # the raw markdown pads to the uncut cells: a long title does not widen the table
    assert len(table.splitlines()[3]) < 40


def test_every_notebook_has_cell_ids() -> None:
    """nbformat 4.5 cell ids: without them every run prints MissingIDFieldWarning and rewrites the ids."""
    notebooks = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
    assert notebooks
    for path in notebooks:
        raw = json.loads(path.read_text(encoding="utf-8"))
        assert (raw["nbformat"], raw["nbformat_minor"]) >= (4, 5), path.name
        ids = [cell.get("id") for cell in raw["cells"]]
        assert all(ids) and len(set(ids)) == len(ids), f"{path.name}: a cell without an id, or a repeated one"
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # MissingIDFieldWarning, or any other nbformat complaint, fails here
            nbformat.validate(nbformat.reads(path.read_text(encoding="utf-8"), as_version=4))
