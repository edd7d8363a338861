"""The report pages' tables and layout: the one script the CSP allows (sortable, filterable tables), the table of
contents and the figures beside their sections.

Cheap: each page is written from a few lines of markdown; one test drives the installed Chromium once.
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
from pathlib import Path

from bs4 import BeautifulSoup

from skillbench.markdown import md_table, md_text
from skillbench.report import table_script, table_script_hash, write_markdown_page
from skillbench.report._pages import _jinja

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()
PAGE = "\n".join([
    "# Weekly Skill Scorecard — 20261130", "", "## Decision", "", "**✅ act**", "",
    "## Lift per model (with-skill − no-skill)", "",
    md_table(["model", "must lift"], [["haiku", "+0.300"], ["sonnet", "–"], ["opus", "-0.100"]]), "",
    "## Per-prompt (must_coverage; with-skill lift)", "",
    md_table(["prompt", "lift"], [[md_text(f"p{i} <script>alert({i})</script>"), f"+0.{i}00"] for i in range(6)]),
    "", "## `avoid` violations (most damaging failures)", "", "_None._", "", "## Coverage", "", "- dropped: **0**", ""])


def _page(tmp_path: Path, **kwargs) -> BeautifulSoup:
    md = tmp_path / "scorecard.md"
    md.write_text(PAGE, encoding="utf-8")
    out = write_markdown_page(md, tmp_path / "scorecard.html", title="t", **kwargs)
    return BeautifulSoup(out.read_text(encoding="utf-8"), "html.parser")


def test_the_policy_allows_exactly_the_table_script_by_its_hash(tmp_path: Path) -> None:
    soup = _page(tmp_path)
    script = soup.find_all("script")
    assert len(script) == 1 and script[0].string == table_script()
    digest = base64.b64encode(hashlib.sha256(script[0].string.encode()).digest()).decode()
    policy = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})["content"]
    assert f"script-src 'sha256-{digest}';" in policy and table_script_hash() == f"sha256-{digest}"
    assert "innerHTML" not in table_script() and "insertAdjacentHTML" not in table_script()
    assert "<script>alert(1)</script>" in soup.get_text()  # a cell's script is text


def test_contents_after_the_decision_block_and_anchors_as_github_names_them(tmp_path: Path) -> None:
    soup = _page(tmp_path)
    ids = [h["id"] for h in soup.find_all("h2")]
    assert ids == ["decision", "lift-per-model-with-skill--no-skill", "per-prompt-must_coverage-with-skill-lift",
                   "avoid-violations-most-damaging-failures", "coverage"]
    nav = soup.find("nav", class_="contents")
    assert [a["href"] for a in nav.find_all("a")] == [f"#{i}" for i in ids]
    assert nav.find_previous("h2")["id"] == "decision" and nav.find_next("h2")["id"] == ids[1]


def test_figures_sit_under_the_section_they_illustrate(tmp_path: Path) -> None:
    soup = _page(tmp_path, figures={"Per-prompt": [PNG], "No such section": [PNG]})
    imgs = soup.find_all("img")
    assert len(imgs) == 1 and imgs[0]["src"] == f"data:image/png;base64,{PNG}"
    assert imgs[0].find_previous("h2")["id"].startswith("per-prompt")


def test_the_script_runs_under_the_policy_in_chromium(tmp_path: Path) -> None:
    """In a real browser the hash admits our script (it marks the tables sortable and adds a filter box to the
    six-row one) while the policy still blocks a script that got into the page."""
    from tests.report.test_report_screenshot import chromium

    head = _jinja().get_template("_csp.html.j2").render()
    rows = "".join(f"<tr><td>{v}</td></tr>" for v in ("0.5", "–", "10", "2", "x", "-1"))
    body = (f"<p id='p'>static</p><script>document.getElementById('p').textContent='RAN'</script>"
            f"<table><thead><tr><th>v</th></tr></thead><tbody>{rows}</tbody></table>")
    page = tmp_path / "page.html"
    page.write_text(f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>", encoding="utf-8")
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={tmp_path / 'profile'}",
           "--virtual-time-budget=2000", "--dump-dom", page.as_uri()]
    dom = BeautifulSoup(subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout, "html.parser")
    assert dom.find(id="p").get_text() == "static"
    assert "sb-sortable" in dom.find("table")["class"] and dom.find("input", attrs={"type": "search"}) is not None


def test_a_legend_sits_beside_its_bars_not_over_them() -> None:
    import pandas as pd

    from skillbench.report.figures import pair_outcomes

    fig = pair_outcomes(pd.DataFrame({"skill_family": ["a", "b"], "model": ["haiku", "haiku"], "W": [5, 0],
                                      "T": [0, 0], "L": [0, 5]}))
    fig.canvas.draw()
    ax = fig.axes[0]
    legend, plot = ax.get_legend().get_window_extent(), ax.get_window_extent()
    assert legend.x0 >= plot.x1  # the bars fill the axes' whole width: a legend inside would cover them
