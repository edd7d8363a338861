"""The report is control plane: content under evaluation shown on a page stays text (issue 29, item 8).

A hostile pull request controls the agent's answers (the judge's evidence quotes), the rubric items, the skill
family and prompt names and the checks (ids and details). Each test puts script, an event handler, a
``javascript:`` link, a remote image, a pipe and a line break into those fields, renders every kind of page the
report writes — the scorecard page from a week scored as ``skillbench scorecard`` does, a notebook page the way the
weekly chain exports it, the week and reports indexes, and the markdown tables every page prints — and parses the
HTML: no element or attribute of the content's is live, the tables keep their shape, and the text is still shown.
"""

from __future__ import annotations

import base64
import csv
import json
import shutil
import subprocess
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from bs4 import BeautifulSoup, Tag
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from skillbench.cli import main
from skillbench.markdown import frame_table, markdown_sections, md_code, md_table, md_text
from skillbench.report import (
    export_notebook_html,
    markdown_to_html,
    table_script,
    table_script_hash,
    write_markdown_page,
    write_reports_index,
    write_week_index,
)
from tests.helpers.shared import TINY_SUITE
from tests.scorecard import test_objective_scorecard as objective, test_scorecard_sim as sim

# One payload per field, each naming its field so a leak says where it came from; the rubric item fits the
# scorecard's 80 characters, the quote its 120 and the check detail its 100.
ANSWER = "<script>alert('answer')</script> [go](javascript:alert(1)) a|b\n## Forged heading"
ITEM = "<img src=x onerror=alert('item')> | ![i](https://evil.test/i.png)"
FAMILY = "fam<script>alert('family')</script>|x"
PROMPT = "a1<img src=x onerror=alert('prompt')>"
CHECK_ID = "no-web<svg onload=alert('check')>"
DETAIL = "WebFetch <img src=x onerror=alert('detail')> \\| [x](javascript:alert(2))\n| forged | row |"
SNAPSHOT = "claude-`x`<script>alert('snapshot')</script>"
RAW_MARKDOWN = ("<script>alert('raw')</script> [go](javascript:alert(1)) ![s](secret.png) ![i](https://evil.test/i.png)"
                " <img src=x onerror=alert('raw')> [x](data:text/html;base64,PHNjcmlwdD4=)")
# What a page must still show of each (a line break reads as a space; the rest as written).
SHOWN = {"answer": "<script>alert('answer')</script> [go](javascript:alert(1)) a|b ## Forged heading",
         "item": ITEM, "family": FAMILY, "prompt": PROMPT, "check": CHECK_ID,
         "detail": "WebFetch <img src=x onerror=alert('detail')> \\| [x](javascript:alert(2)) | forged | row |",
         "snapshot": SNAPSHOT}


def _rewrite(path: Path, change) -> None:
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        columns, rows = list(reader.fieldnames or []), list(reader)
    for row in rows:
        change(row)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def _hostile(row: dict[str, str]) -> None:
    """The names, answers, rubric items and checks a hostile suite and agent control, in every ledger row."""
    if row.get("prompt") == "a1":
        row["prompt"] = PROMPT
    for column in ("skill_family", "skill"):
        if row.get(column) == "fam-b":
            row[column] = FAMILY
    if row.get("item_type") == "avoid":
        row["item_text"] = ITEM
    if row.get("verdict") == "violated":
        row["evidence_quote"] = ANSWER
    if row.get("check_id") == "no-web":
        row["check_id"] = CHECK_ID
    if row.get("status") in ("failed", "error"):
        row["detail"] = DETAIL
    if "model_snapshot" in row and row.get("model") == "haiku":
        row["model_snapshot"] = SNAPSHOT


@pytest.fixture()
def hostile_week(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The objective scorecard's hand-made week (checks included), its content replaced by hostile text; scored."""
    monkeypatch.setattr(sim, "PROMPTS", objective.PROMPTS)
    run_dir = tmp_path / "weekly" / sim.KEY
    sim._build(run_dir, complete=True)
    objective._add_checks(run_dir)
    for name in ("manifest.csv", "scores.csv", "pairs.csv", "checks.csv"):
        _rewrite(run_dir / name, _hostile)
    assert main(["scorecard", str(run_dir), "--bootstrap", "200"]) == 0
    return run_dir


def _soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def assert_inert(html: str) -> BeautifulSoup:
    """No live element or attribute came from the content, and the page carries the report's CSP."""
    soup = _soup(html)
    ours = _only_our_script(soup)
    assert not [t for t in soup.find_all(["script", "iframe", "object", "embed", "svg", "base", "form"])
                if t is not ours], "a live element"
    for tag in soup.find_all(True):
        handlers = [name for name in tag.attrs if name.lower().startswith("on")]
        assert not handlers, f"<{tag.name}> has {handlers}"
        for name in ("href", "src", "action", "formaction"):
            value = str(tag.get(name, "")).strip().lower()
            assert not value.startswith(("javascript:", "vbscript:", "data:text")), f"<{tag.name} {name}={value}>"
    for img in soup.find_all("img"):  # a figure, or a relative name the CSP below keeps from loading
        src = str(img.get("src", ""))
        assert src.startswith("data:image/png") or ":" not in src, f"an image from elsewhere: {img}"
    csp = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})
    assert csp is not None and csp.find_parent("head") is not None
    policy = dict(part.strip().split(" ", 1) for part in csp["content"].split(";"))
    assert policy["default-src"] == "'none'" and policy["img-src"] == "data:"
    assert policy["script-src"] == f"'{table_script_hash()}'", "the policy allows more than the table script"
    assert not [h for h in soup.find_all(["h1", "h2", "h3"]) if "Forged" in h.get_text()], "a forged heading"
    for table in soup.find_all("table"):
        widths = {len(tr.find_all(["th", "td"], recursive=False)) for tr in table.find_all("tr")}
        assert len(widths) == 1, f"a table lost its shape: {widths}"
    return soup


def _only_our_script(soup: BeautifulSoup) -> Tag:
    """The page's one script: in the head, exactly the report's table script, whose sha256 the policy names."""
    scripts = soup.find_all("script")
    assert len(scripts) == 1, f"{len(scripts)} scripts"
    assert scripts[0].find_parent("head") is not None and scripts[0].string == table_script()
    return scripts[0]


def _text(soup: BeautifulSoup) -> str:
    return " ".join(soup.get_text(" ").split())


def test_the_scorecard_page_shows_hostile_content_as_text(hostile_week: Path, tmp_path: Path) -> None:
    md = (hostile_week / "scorecard.md").read_text()
    assert "\n## Forged heading" not in md and "\n| forged | row |" not in md  # no line of the content's own
    page = write_markdown_page(hostile_week / "scorecard.md", tmp_path / "scorecard.html", title="T").read_text()
    soup = assert_inert(page)
    text = _text(soup)
    for field, shown in SHOWN.items():
        assert " ".join(shown.split()) in text, f"the {field} is not shown as written"
    # the hostile cells sit in the tables they belong to, one row each
    avoid = next(h for h in soup.find_all("h2") if "violations" in h.get_text()).find_next("table")
    assert "<script>alert('answer')</script>" in _text(avoid) and ITEM in _text(avoid)
    assert not avoid.find("a")


def test_a_notebook_page_shows_hostile_outputs_as_text(hostile_week: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The stage notebooks display scorecard and calibration sections as markdown, and frames as HTML tables."""
    # Markdown no skillbench writer escaped (a notebook displaying content as is): still no script, link or image;
    # nbconvert would embed the image's file from the working folder into the page.
    monkeypatch.chdir(tmp_path)
    secret = b"host file the report must not carry"
    (tmp_path / "secret.png").write_bytes(secret)
    md = (hostile_week / "scorecard.md").read_text()
    sections = markdown_sections(md, "Per-prompt", "`avoid` violations", "Objective checks", "Provenance")
    scores = pd.read_csv(hostile_week / "scores.csv")
    violated = scores[scores["verdict"].eq("violated")][["prompt", "skill", "item_text", "evidence_quote"]]
    nb = new_notebook(cells=[
        new_markdown_cell("## The week\n\nWhat the scorecard says."),
        new_code_cell("display(Markdown(...))", outputs=[
            new_output("display_data", data={"text/markdown": sections, "text/plain": "<Markdown>"}),
            new_output("display_data", data={"text/markdown": RAW_MARKDOWN, "text/plain": "<Markdown>"}),
            new_output("display_data", data={"text/html": violated.head(3)._repr_html_(), "text/plain": "df"}),
            new_output("display_data", data={"application/javascript": "alert('js')", "text/plain": "js output"}),
            new_output("stream", name="stdout", text=ANSWER),
        ]),
    ])
    nbformat.write(nb, tmp_path / "05_scorecard.ipynb")
    page = export_notebook_html(tmp_path / "05_scorecard.ipynb", tmp_path / "05_scorecard.html").read_text()
    soup = assert_inert(page)
    text = _text(soup)
    for field in ("answer", "item", "family", "prompt", "check", "detail"):
        assert " ".join(SHOWN[field].split()) in text, f"the {field} is not shown as written"
    assert secret.decode() not in page and base64.b64encode(secret).decode() not in page
    assert "js output" in text  # a script output shows its plain text instead


def test_the_index_pages_escape_state_and_take_no_scheme_in_links(tmp_path: Path) -> None:
    """``weekly.json`` carries a failing stage's error (which may quote an answer) and names the pages it links."""
    week = tmp_path / "reports" / "20261130"
    week.mkdir(parents=True)
    state = {"run_key": "20261130", "status": "failed", "failed_stage": "javascript:alert(1)//",
             "error": ANSWER, "scorecard_title": ITEM, "suite_dir": PROMPT, "backend": "sim",
             "endpoint_kind": "simulated", "models": [FAMILY], "reps": 1, "sandbox": "docker", "sandboxes_used": [],
             "started": "now",
             "finished": None, "kernel_name": "python3", "run_dir": "/x", "seconds": 1.0, "overhead_seconds": 0.5,
             "stages": [{"number": 1, "title": CHECK_ID, "status": "failed", "seconds": 1.0,
                         "html": "javascript:alert('stage')", "notebook": "data:text/html,<script>alert(1)</script>"}],
             # the decision block quotes family names and validator lines (content under evaluation)
             "decision": {"run_key": "20261130", "endpoint": "simulated", "level": "amber",
                          "models": [{"model": FAMILY, "lift": 0.1, "low": None, "high": None, "n_prompts": 2,
                                      "excludes_zero": "no", "previous": None, "delta": None, "threshold": None,
                                      "call": "not yet", "call_text": f"not yet: {ANSWER}"}],
                          "families": [{"skill_family": FAMILY, "model": PROMPT, "label": ITEM, "state": "x",
                                        "reason": "invalid_spec", "cause": DETAIL}],
                          "flags": [{"key": "invalid_families", "level": "amber", "text": ANSWER,
                                     "link": "javascript:alert('flag')"}]}}
    (week / "weekly.json").write_text(json.dumps(state))
    (week / "scorecard.html").write_text("")
    pages = [write_week_index(week, state, notes=[DETAIL]).read_text(),
             write_reports_index(tmp_path / "reports").read_text()]
    for page in pages:
        soup = assert_inert(page)
        for a in soup.find_all("a"):
            assert ":" not in a["href"], f"a link with a scheme: {a['href']}"
    text = _text(_soup(pages[0]))
    for field in ("answer", "item", "family", "prompt", "check"):
        assert " ".join(SHOWN[field].split()) in text, f"the {field} is not shown as written"


@pytest.mark.parametrize("cell", [ANSWER, ITEM, DETAIL, "a\\|b", "a\\\\|b", "x\r\ny\u2028z", "`a|b`"])
def test_a_table_keeps_its_shape_whatever_a_cell_holds(cell: str) -> None:
    """``md_table`` is how every page prints a table: no cell adds a column, a row or a line, escaped or not."""
    for value in (cell, md_text(cell), md_code(cell)):
        table = md_table(["a", "b", "c"], [["1", value, "3"], [value, "2", value]])
        assert len(table.splitlines()) == 4
        soup = _soup(markdown_to_html(table))
        rows = soup.find_all("tr")
        assert len(rows) == 3 and all(len(tr.find_all(["th", "td"])) == 3 for tr in rows)
        assert not soup.find_all("script")
        if value is not cell:  # escaped, the content makes no link or image either
            assert not soup.find_all(["img", "a"])


@pytest.mark.parametrize("text", [ANSWER, ITEM, FAMILY, PROMPT, CHECK_ID, DETAIL, SNAPSHOT, "&lt;b&gt; R&D",
                                  "use `List<T>` here", "C:\\dir\\<x>", "[a][b] ![c](d) <http://e.test>"])
def test_md_text_shows_exactly_the_text(text: str) -> None:
    """Rendered, ``md_text`` of content reads as the content itself (one line), with no element of its own."""
    soup = _soup(markdown_to_html(md_text(text)))
    assert not soup.find_all(["script", "img", "a", "h2"])
    shown = " ".join(text.split())
    if "`" not in text:  # a code span's backticks are markup the content keeps (qdrant's pages show them)
        assert _text(soup) == shown
    cell = _soup(markdown_to_html(frame_table(pd.DataFrame({"x": [text]}), ["x"])))
    assert not cell.find_all(["script", "img", "a"]) and len(cell.find_all("td")) == 1


def test_a_code_span_of_content_cannot_end_early() -> None:
    for text in (SNAPSHOT, "``` <b>", "`"):
        soup = _soup(markdown_to_html(f"- model {md_code(text)} here"))
        assert soup.find("code").get_text() == text and not soup.find_all(["script", "b"])


def test_the_pages_policy_stops_a_script_that_got_in(tmp_path: Path) -> None:
    """The last layer, in a real browser: a page with the report's CSP runs no inline script, event handler or
    ``javascript:`` URL and loads no remote image, should any ever get past the escaping."""
    from skillbench.report._pages import _jinja
    from tests.report.test_report_screenshot import chromium

    marker = "document.getElementById('p').textContent='SCRIPT RAN'"
    body = (f"<p id=\"p\">static</p><script>{marker}</script><img src=x onerror=\"{marker}\">"
            f"<iframe src=\"javascript:parent.{marker}\"></iframe>")
    pages = {"with": f"<html><head>{_jinja().get_template('_csp.html.j2').render()}</head><body>{body}</body></html>",
             "without": f"<html><body>{body}</body></html>"}  # the check itself: without the policy it runs
    shown = {}
    for name, html in pages.items():
        page = tmp_path / f"{name}.html"
        page.write_text(html)
        cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={tmp_path / 'profile'}",
               "--virtual-time-budget=2000", "--dump-dom", page.as_uri()]
        dom = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout
        shown[name] = _soup(dom).find(id="p").get_text()
    assert shown == {"with": "static", "without": "SCRIPT RAN"}


def test_the_skill_quality_page_shows_a_hostile_skill_as_text(tmp_path: Path) -> None:
    """lint-skills quotes a skill's own text (here a broken link's target) on ``skill-quality.html``."""
    suite = Path(shutil.copytree(TINY_SUITE, tmp_path / "suite"))
    hub = suite / "skills" / "dates" / "SKILL.md"
    target = "gone<img/src=x/onerror=alert.call|x.md"  # the lint reads a target up to a space, ")" or ">"
    hub.write_text(hub.read_text() + f"\nSee [gone]({target}).\n")
    out = tmp_path / "out"
    assert main(["lint-skills", str(suite), "--out", str(out)]) == 1  # the broken link is a static error
    soup = assert_inert((out / "skill-quality.html").read_text())
    assert f"missing: {target}" in _text(soup)
