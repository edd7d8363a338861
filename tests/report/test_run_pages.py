"""The run pages (``reports/<run_key>/runs/``): what one shows, that nothing under evaluation becomes markup on it,
that the report's names link to it, and the rule of a very large week.

Each test builds a small week by hand in ``tmp_path`` (two arms × two reps of one prompt, plus a dormancy prompt):
milliseconds, no simulation. The session's weekly chain checks the pages of a real week
(``tests/report/test_report_screenshot.py``).
"""

from __future__ import annotations

import csv
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from skillbench.cli import main
from skillbench.ledgers import (
    CHECKS_COLUMNS,
    MANIFEST_COLUMNS,
    PAIRS_COLUMNS,
    PLAN_COLUMNS,
    SCORES_COLUMNS,
    TEST_PROMPT_FILE,
    TRANSCRIPT_FILE,
    slug,
)
from skillbench.report import (
    link_run_pages,
    link_to_week,
    read_run_links,
    table_script,
    write_report_run_pages,
    write_run_pages,
)
from skillbench.report._run_pages import (
    SHOWN_CHARS,
    link_cells,
    marked_answer,
    quote_spans,
    run_href,
    transcript_steps,
)
from skillbench.signals import parse_transcript_text
from tests.helpers.shared import QDRANT, require

# What a pull request can put in a name, an answer, a rubric item, a check's output or a transcript.
HOSTILE = ('<script>alert(1)</script> <img src=x onerror=alert(2)> <a href="javascript:alert(3)">x</a> '
           '[y](javascript:alert(4)) </details></pre></table> " onmouseover="alert(5)')
PROMPT = "javascript:alert(1)//../../<b>p</b>"
FAMILY = "<img src=x onerror=alert(9)>"
MODEL = "haiku"
QUOTE = "Use encoding='cp1252' <script>alert(1)</script>"


def _answer(condition: str, rep: int) -> str:
    return f"Answer of {condition} r{rep}.\n{QUOTE} — then\n\n{HOSTILE}\nDone."


def _events(condition: str, rep: int, long_output: str = "") -> list[dict[str, Any]]:
    return [
        {"type": "system", "subtype": "init", "model": "claude-haiku", "tools": ["Bash"], "skills": [HOSTILE]},
        {"type": "assistant", "message": {"model": "claude-haiku", "content": [
            {"type": "text", "text": f"Looking. {HOSTILE}"},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": f"echo '{HOSTILE}'"}}]}},
        {"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": long_output or HOSTILE}]}},
        {"type": "assistant", "message": {"model": "claude-haiku", "content": [
            {"type": "text", "text": _answer(condition, rep)}]}},
        {"type": "result", "subtype": "success", "result": _answer(condition, rep), "num_turns": 3,
         "total_cost_usd": 0.0123},
    ]


def _write_csv(path: Path, columns: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(columns))
        writer.writeheader()
        for row in rows:
            writer.writerow({c: row.get(c, "") for c in columns})


def build_week(run_dir: Path, *, prompts: tuple[str, ...] = (PROMPT,), long_output: str = "") -> Path:
    """A week of ``prompts`` × no-skill/with-skill × 2 reps and one dormancy prompt, its ledgers and run folders."""
    run_dir.mkdir(parents=True)
    manifest, scores, pairs, checks = [], [], [], []
    cells = [(p, c, r) for p in prompts for c in ("no-skill", "with-skill") for r in (1, 2)]
    cells += [("dormancy-x", "with-skill", 1)]
    for prompt, condition, rep in cells:
        run_id = slug(f"{prompt}-{MODEL}-{condition}-r{rep}-k1")
        folder = run_dir / run_id
        folder.mkdir()
        (folder / TRANSCRIPT_FILE).write_text(
            "".join(json.dumps(e) + "\n" for e in _events(condition, rep, long_output)), encoding="utf-8")
        (folder / TEST_PROMPT_FILE).write_text(json.dumps({
            "name": prompt, "product_area": "x", "skill_url": "https://x.test/s", "prompt": f"Question? {HOSTILE}",
            "rubric": [{"type": "must", "text": f"Says cp1252 {HOSTILE}"}, {"type": "avoid", "text": "Ignores"}]}))
        dormancy = prompt == "dormancy-x"
        manifest.append({
            "prompt": prompt, "skill_family": FAMILY, "skill_leaf": "", "model": MODEL, "condition": condition,
            "rep": rep, "run_id": run_id, "exit_code": 0, "timestamp": "20261130T080000Z", "skill_available": 1,
            "skill_activation": "skill_tool" if condition == "with-skill" else "none", "reached_leaf": 1,
            "fetched_site": 0, "fetched_count": 0, "total_cost_usd": 0.0123, "num_turns": 3,
            "result_subtype": "success", "budget_hit": 0, "signals_ok": 1, "duration_ms": 1500,
            "dormancy": int(dormancy), "is_error": 0, "run_state": "finished", "trigger_only": 0})
        if dormancy:
            continue
        verdict = "violated" if condition == "no-skill" and rep == 1 else "clean"
        scores += [
            {"prompt": prompt, "skill": FAMILY, "model": MODEL, "condition": condition, "rep": rep,
             "item_type": "must", "item_text": f"Says cp1252 {HOSTILE}", "verdict": "met", "credit": 1.0,
             "contribution": 1.0, "contested": "", "evidence_quote": QUOTE.upper(), "run_id": run_id,
             "item_index": 0, "evidence_verified": 1},
            {"prompt": prompt, "skill": FAMILY, "model": MODEL, "condition": condition, "rep": rep,
             "item_type": "avoid", "item_text": f"Ignores {HOSTILE}", "verdict": verdict,
             "credit": 1.0 if verdict == "violated" else 0.0,
             "contribution": -1.0 if verdict == "violated" else 0.0, "contested": "1",
             "evidence_quote": "</details></pre></table>" if verdict == "violated" else "", "run_id": run_id,
             "item_index": 1, "evidence_verified": 1 if verdict == "violated" else ""}]
        checks.append({"prompt": prompt, "model": MODEL, "condition": condition, "rep": rep, "run_id": run_id,
                       "check_id": f"c-{HOSTILE}", "check_type": "command",
                       "status": "failed" if rep == 2 else "passed", "detail": HOSTILE * (30 if rep == 2 else 1)})
    for prompt in prompts:
        pairs += [{"run_key": "k1", "skill_family": FAMILY, "prompt": prompt, "model": MODEL, "rep": rep,
                   "winner_ab": "A", "winner_ba": "B" if rep == 1 else "A", "outcome": "W" if rep == 1 else "T",
                   "judge_model": "claude-opus"} for rep in (1, 2)]
    _write_csv(run_dir / "manifest.csv", MANIFEST_COLUMNS, manifest)
    _write_csv(run_dir / "scores.csv", SCORES_COLUMNS, scores)
    _write_csv(run_dir / "pairs.csv", PAIRS_COLUMNS, pairs)
    _write_csv(run_dir / "checks.csv", CHECKS_COLUMNS, checks)
    (run_dir / "run.json").write_text(json.dumps({"run_key": "k1"}), encoding="utf-8")
    return run_dir


class Markup(HTMLParser):
    """Every tag, attribute and link of a page, as a browser's parser reads them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.ends: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        self.ends.append(tag)

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag]


def parse(page: Path) -> Markup:
    parser = Markup()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def assert_inert(page: Path, *, csp: bool = True) -> Markup:
    """No script, image, frame or event handler; every link relative, inside the report; details balanced."""
    m = parse(page)
    tags = {t for t, _ in m.tags}
    assert not tags & {"img", "iframe", "object", "embed", "form", "base"}, page.name
    # the one script is the report's table sorter, which the CSP allows by its hash (tests/report/test_pages_tables)
    text = page.read_text(encoding="utf-8")
    assert len(m.named("script")) == text.count(f"<script>{table_script()}</script>") <= 1, page.name
    for tag, attrs in m.tags:
        assert not any(k.startswith("on") for k in attrs), (page.name, tag, attrs)
    for attrs in m.named("a"):
        href = str(attrs.get("href"))
        assert ":" not in href.split("#")[0] and not href.startswith("/"), (page.name, href)
        assert "../" not in href.replace("../index.html", "").replace("../scorecard.html", ""), (page.name, href)
    assert len(m.named("details")) == m.ends.count("details"), page.name
    assert len(m.named("pre")) == m.ends.count("pre"), page.name
    assert not csp or 'http-equiv="Content-Security-Policy"' in page.read_text(encoding="utf-8")
    return m


@pytest.fixture
def week(tmp_path: Path) -> tuple[Path, Path]:
    return build_week(tmp_path / "week"), tmp_path / "report"


def test_a_run_page_shows_every_part_and_none_of_the_content_as_markup(week):
    run_dir, report = week
    links = write_run_pages(run_dir, report)
    page = report / "runs" / links.pages[(PROMPT, MODEL)]
    assert page.parent == report / "runs" and ".." not in page.name and ":" not in page.name
    m = assert_inert(page)
    text = page.read_text(encoding="utf-8")
    # the prompt, the pairwise judgement both ways, each rep's arms side by side, the checks, the facts
    assert "Question? &lt;script&gt;" in text
    assert "with-skill as A: winner" in text and ">win<" in text and ">tie<" in text
    assert text.count('<section class="arm">') == 4 and 'id="rep-1"' in text and 'id="rep-2"' in text
    assert "activation <b>skill_tool</b>" in text and "$0.0123" in text and "turns 3" in text
    assert "failed" in text and "contested" in text and "verified" in text
    # every verdict's quote marked inside the escaped answer (case and quotes as the judge's check matches them)
    marks = [a for a in m.named("mark")]
    assert len(marks) == 5  # the must of each of 4 runs, the avoid violation of no-skill r1
    assert "Use encoding=&#39;cp1252&#39; &lt;script&gt;alert(1)&lt;/script&gt;<sup>M1</sup></mark>" in text
    assert 'class="avoid" title="A2"' in text
    # a transcript per run, every step collapsed, the long check output behind its own <details>
    assert len([a for a in m.named("details") if a.get("class") == "transcript"]) == 4
    assert not any("open" in a for a in m.named("details"))


def test_hostile_names_give_harmless_relative_links(week):
    run_dir, report = week
    links = write_run_pages(run_dir, report)
    index = report / "runs" / "index.html"
    m = assert_inert(index)
    text = index.read_text(encoding="utf-8")  # each cell's evidence: failed checks; the dormancy prompt fired
    assert "2 failed checks" in text and "fired in 1" in text and "WT" in text and "1 violation<" in text
    hrefs = [str(a["href"]) for a in m.named("a")]
    assert links.pages[(PROMPT, MODEL)] in hrefs
    assert all((index.parent / h.split("#")[0]).resolve().is_relative_to(report) for h in hrefs)
    assert run_href("javascript:alert(1)#x y") == "javascript%3Aalert%281%29#x%20y"
    for name in links.pages.values():
        assert (report / "runs" / name).is_file()


def test_an_evidence_quote_is_found_as_the_judge_finds_it_and_marked_after_escaping():
    answer = "Intro.\nUse  “cp1252”\nencoding <b>now</b>. Tail & more."
    spans = quote_spans(answer, [("M1", 'use "CP1252" encoding <b>now</b>.'), ("B2", "nowhere"),
                                 ("A3", "encoding <b>")])
    assert spans == [(7, answer.index("</b>") + 4, ["M1", "A3"])]
    html = str(marked_answer(answer, [("M1", "<b>now</b>"), ("A3", "Tail")]))
    assert html == ('Intro.\nUse  “cp1252”\nencoding <mark class="hit" title="M1">&lt;b&gt;now&lt;/b&gt;<sup>M1</sup>'
                    '</mark>. <mark class="avoid" title="A3">Tail<sup>A3</sup></mark> &amp; more.')


def test_a_long_tool_output_is_cut_with_an_ellipsis_and_kept_whole_behind_it():
    long = "x" * (SHOWN_CHARS + 50)
    steps = transcript_steps(parse_transcript_text("".join(json.dumps(e) + "\n" for e in _events("a", 1, long))))
    kinds = [s.kind for s in steps]
    assert kinds == ["system", "assistant", "tool call", "tool result", "assistant", "result"]
    result = steps[3]
    assert result.text.endswith("…") and len(result.text) == SHOWN_CHARS + 1 and result.full == long
    assert result.title.endswith("…") and len(result.title) <= 120
    # events of shapes the CLI never writes are shown as they are, never fail the page
    odd = [{"type": "assistant", "message": "x"}, {"type": "system", "subtype": "init", "tools": 5},
           {"type": "user", "message": {"content": [{"type": "tool_result", "content": [[[{"a": 1}]]]}]}}]
    steps = transcript_steps(parse_transcript_text("".join(json.dumps(e) + "\n" for e in odd)))
    assert [s.kind for s in steps] == ["unreadable", "unreadable", "tool result"]
    assert steps[2].text == '[[{"a": 1}]]'


def test_the_reports_names_link_to_the_run_pages(week, tmp_path):
    run_dir, report = week
    links = write_run_pages(run_dir, report)
    page = report / "scorecard.html"
    esc_prompt = "javascript:alert(1)//../../&lt;b&gt;p&lt;/b&gt;"
    page.write_text(
        "<table><tr><th>prompt</th><th>model</th></tr>"
        f"<tr><td>{esc_prompt}</td><td>haiku</td></tr>"
        f"<tr><td>&lt;img src=x onerror=alert(9)&gt;</td><td>haiku</td><td>⚠️ Invalid or underpowered</td>"
        "<td>n=1</td></tr>"
        f"<tr><td><a href='x.html'>{esc_prompt}</a></td><td>sonnet</td></tr></table>", encoding="utf-8")
    assert link_run_pages(page, links) == 3
    assert link_run_pages(page, links) == 0  # idempotent: a linked cell is left as it is
    m = assert_inert(page, csp=False)  # a fragment here; the report's pages carry the policy
    hrefs = [str(a["href"]) for a in m.named("a")]
    assert hrefs == [f"runs/{links.pages[(PROMPT, MODEL)]}", f"runs/index.html#f-{slug(FAMILY)}",
                     f"runs/index.html#f-{slug(FAMILY)}", "x.html"]
    assert read_run_links(report) == links
    # outside tables: a bold or code name, or "family × model" (a verdict line), never inside a link already
    fam = "&lt;img src=x onerror=alert(9)&gt;"
    page.write_text(f"<ul><li><strong>{fam} × haiku</strong> — <code>{esc_prompt}</code>; "
                    f"<a href='y.html'><code>{esc_prompt}</code></a> <strong>other</strong></li></ul>")
    assert link_run_pages(page, links) == 2
    hrefs = [str(a["href"]) for a in assert_inert(page, csp=False).named("a")]
    assert hrefs == [f"runs/index.html#f-{slug(FAMILY)}", f"runs/index.html#p-{slug(PROMPT)}", "y.html"]
    # any table: the target decides per row, the cell keeps its own markup
    assert link_cells("<tr><td><code>a</code></td><td>b</td></tr>", lambda t: {0: "p.html"} if t[1] == "b" else {}) \
        == '<tr><td><a class="run-link" href="p.html"><code>a</code></a></td><td>b</td></tr>'


def test_a_page_beside_the_weeks_links_to_the_newest_weeks_run_pages(week, tmp_path):
    run_dir, report = week
    write_run_pages(run_dir, report)
    explore = tmp_path / "demo" / "explore_weeks.html"
    explore.parent.mkdir()
    explore.write_text("<table><tr><td>haiku</td><td>dormancy-x</td><td>+0.50</td></tr></table>", encoding="utf-8")
    assert link_to_week(explore, report) == 2  # the mover's prompt and its number
    hrefs = {str(a["href"]) for a in parse(explore).named("a")}
    assert hrefs == {"../report/runs/dormancy-x--haiku.html"} and (explore.parent / hrefs.pop()).is_file()
    assert link_to_week(explore, tmp_path / "no-week") == 0


def test_a_very_large_week_gets_pages_only_for_what_the_scorecard_points_at(tmp_path):
    run_dir = build_week(tmp_path / "week", prompts=("quiet", "loud"))
    scores = (run_dir / "scores.csv").read_text(encoding="utf-8").replace(",violated,1.0,-1.0,", ",clean,0.0,0.0,")
    scores_rows = [line for line in scores.splitlines() if not line.startswith("quiet,")]
    (run_dir / "scores.csv").write_text("\n".join(scores_rows) + "\n", encoding="utf-8")
    (run_dir / "checks.csv").write_text((run_dir / "checks.csv").read_text(encoding="utf-8")
                                        .replace(",failed,", ",passed,"), encoding="utf-8")
    pairs = (run_dir / "pairs.csv").read_text(encoding="utf-8").replace("loud,haiku,2,A,A,T", "loud,haiku,2,A,A,L")
    (run_dir / "pairs.csv").write_text(pairs, encoding="utf-8")
    links = write_run_pages(run_dir, tmp_path / "report", limit=4)
    assert set(links.pages) == {("loud", MODEL)}  # a pairwise loss; "quiet" has nothing the scorecard points at
    index = (tmp_path / "report" / "runs" / "index.html").read_text(encoding="utf-8")
    assert "pages are written only for the prompts × models the scorecard points at" in index
    assert "skillbench run-pages RUN_DIR --prompts NAME" in index
    # on demand: one more prompt, beside the pages already there
    write_run_pages(run_dir, tmp_path / "report", prompts=["quiet"], limit=4)
    assert {("loud", MODEL), ("quiet", MODEL)} <= set(read_run_links(tmp_path / "report").pages)


def test_a_damaged_week_never_reads_as_a_clean_one_and_keeps_its_earlier_pages(week):
    run_dir, report = week
    write_run_pages(run_dir, report)
    # a planned run without its manifest row: every page and the index say the week is incomplete
    ids = [r["run_id"] for r in csv.DictReader((run_dir / "manifest.csv").open(encoding="utf-8"))]
    _write_csv(run_dir / "plan.csv", PLAN_COLUMNS, [{"run_id": i} for i in [*ids, "lost-run"]])
    links = write_run_pages(run_dir, report)
    for name in ("index.html", *links.pages.values()):
        assert "INCOMPLETE week" in (report / "runs" / name).read_text(encoding="utf-8"), name
    # a ledger its reader refuses: one line, and the pages already written stay whole
    (run_dir / "pairs.csv").write_text("run_key\nk1\n", encoding="utf-8")
    assert "pairs.csv" in (write_report_run_pages(run_dir, report) or "")
    assert sorted(p.name for p in (report / "runs").iterdir()) == sorted(
        ["index.html", "links.json", *links.pages.values()])


def test_run_pages_command_refuses_in_one_line(week, capsys):
    run_dir, report = week
    assert main(["run-pages", str(run_dir.parent / "nothing"), "--report", str(report)]) == 2
    assert main(["run-pages", str(run_dir), "--report", str(report), "--prompts", "nope"]) == 2
    (run_dir / "scores.csv").write_text("prompt\nx\n", encoding="utf-8")
    assert main(["run-pages", str(run_dir), "--report", str(report)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("skillbench run-pages: ") for line in err), err
    assert "Traceback" not in "".join(err)
    # the weekly chain's call says why in one line and writes nothing
    assert "scores.csv" in (write_report_run_pages(run_dir, report) or "")


def test_qdrants_published_week_gets_its_verdicts_on_its_run_pages(tmp_path):
    """qdrant's week-1 ledgers (no run folders, no run ids in scores.csv): each page still shows every verdict of
    its runs, found by the run's key, and says the answers are not in the week."""
    week = require(QDRANT / "evals" / "weekly" / "20260808")
    scores = pd.read_csv(week / "scores.csv", dtype=str)
    prompt, model = scores[["prompt", "model"]].iloc[0]
    links = write_run_pages(week, tmp_path, prompts=[prompt])
    page = (tmp_path / "runs" / links.pages[(prompt, model)]).read_text(encoding="utf-8")
    mine = scores[(scores["prompt"] == prompt) & (scores["model"] == model)]
    assert page.count('<tr class="must ') + page.count('<tr class="bonus ') + page.count('<tr class="avoid ') \
        == len(mine) > 0
    assert "its ledgers keep the verdicts only" in page
    assert len(read_run_links(tmp_path).prompts) == scores["prompt"].nunique()
