"""The weekly report's HTML: executed notebooks without code, the scorecard page, and the two index pages.

Everything here renders files that already exist (executed notebooks, ``scorecard.md``, ``calibration.md``,
``weekly.json``); nothing computes a number. The pages are self-contained: figures are inline PNGs and no page
loads a script or stylesheet from the network (nbconvert's RequireJS, MathJax and Mermaid tags are dropped by
``templates/notebook.html.j2``), so a report opens offline and a screenshot never leaves the machine.

The report is control plane; what it shows of content under evaluation (answers, quotes, rubric items, check
details, skill and prompt names) is data. Three layers keep that data inert: ``markdown.md_text`` writes it into
markdown as literal text and ``markdown.md_table`` keeps every table's shape; every markdown → HTML step here
escapes raw HTML and drops unsafe link targets (:func:`markdown_to_html`, :func:`_notebook_markdown`), and the
Jinja pages autoescape; and every page carries ``templates/_csp.html.j2``, a Content-Security-Policy that runs no
script and loads nothing but ``data:`` images.

Layout (``reports/`` is git-ignored)::

    reports/index.html                   every week, newest first
    reports/<run_key>/index.html         the week: status, headline lift, links to stages and scorecard
    reports/<run_key>/weekly.json        what the chain did (stages, timings, options), read by the indexes
    reports/<run_key>/NN_<stage>.ipynb   the executed notebook
    reports/<run_key>/NN_<stage>.html    the same without code
    reports/<run_key>/scorecard.html     scorecard.md rendered
    reports/<run_key>/calibration.html   calibration.md rendered
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2

from skillbench.ledgers import CALIBRATION_HTML, INDEX_FILE, SCORECARD_HTML, STATE_FILE, atomic_write_text
from skillbench.markdown import format_seconds

TEMPLATES = Path(__file__).resolve().parent / "templates"
NOTEBOOK_TEMPLATE = "notebook.html.j2"
# The output types a notebook page shows, best first: nbconvert's own order without JavaScript and widget views,
# which would put a <script> of an output into the page (the pages run no script; none of ours draws with one).
OUTPUT_TYPES = ["text/html", "text/markdown", "image/svg+xml", "text/latex", "image/png", "image/jpeg", "text/plain"]


def _jinja() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=True,
                             lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["seconds"] = format_seconds
    env.filters["link"] = _relative_link
    env.filters["signed"] = lambda x, nd=3: "–" if x is None else f"{x:+.{nd}f}"
    return env


def _relative_link(path: str) -> str:
    """An ``href`` to a file of the report: every link a page writes is a relative path, so it is percent-encoded
    as one (``/`` and ``.`` kept) and a ``javascript:`` or ``data:`` value becomes a harmless relative name."""
    page, sep, anchor = str(path).partition("#")  # an anchor stays an anchor; each part is encoded on its own
    return quote(page, safe="/._-~") + (sep + quote(anchor, safe="-_") if sep else "")


class _InlineImagesOnly:
    """A mistune renderer's images: drawn only from a ``data:image/`` URI, otherwise their alt text.

    The pages load nothing (a remote image would call out when the page opens, a relative one shows a file beside
    it), and no markdown skillbench writes has an image; a figure is a notebook output, not markdown.
    """

    def image(self, text: str, url: str, title: str | None = None) -> str:
        if url.strip().lower().startswith("data:image/"):
            return str(super().image(text, url, title))  # type: ignore[misc]  # the renderer it is mixed into
        return text


@functools.cache
def _page_markdown() -> Callable[[str], Any]:
    import mistune

    class PageRenderer(_InlineImagesOnly, mistune.HTMLRenderer):
        pass

    return mistune.create_markdown(renderer=PageRenderer(escape=True), plugins=["table", "strikethrough"])


def markdown_to_html(text: str) -> str:
    """Render GitHub-style markdown (tables included) to an HTML fragment, raw HTML escaped.

    Uses ``mistune``, which nbconvert already depends on. Escaping matters: the scorecard quotes model
    answers (avoid-violation evidence), and an answer must not be able to inject markup into the report. A link
    keeps its URL only when mistune's allow-list takes it (http, https, mailto, a relative path, …):
    ``javascript:``, ``data:`` and ``file:`` become ``#harmful-link``; an image shows as its alt text.
    """
    return str(_page_markdown()(text))


def _notebook_markdown(source: str) -> str:
    """nbconvert's ``markdown2html`` for the report: markdown cells and every ``display(Markdown(...))`` output.

    nbconvert's own filter passes raw HTML through, keeps ``javascript:`` links and, with image embedding on, reads
    any file under the working folder that a markdown image names into the page; the notebooks display
    ``scorecard.md`` and the calibration, study and compare pages, which quote answers, rubric items and names
    from content under evaluation. So here, as in :func:`markdown_to_html`: raw HTML escaped, links through
    mistune's allow-list, images only from ``data:`` URIs and never embedded from disk (the figures are outputs,
    embedded by the template).
    """
    from mistune.plugins import import_plugin
    from nbconvert.filters.markdown_mistune import MarkdownWithMath

    renderer = _notebook_renderer()(escape=True, allow_harmful_protocols=False, embed_images=False)
    # without the bare-URL autolinks (``url``), as the other pages: a link on a page is one skillbench wrote
    plugins = [import_plugin(name) for name in MarkdownWithMath.DEFAULT_PLUGINS if name != "url"]
    return str(MarkdownWithMath(renderer=renderer, plugins=plugins).render(source))


@functools.cache
def _notebook_renderer() -> type:
    from nbconvert.filters.markdown_mistune import IPythonRenderer

    class NotebookRenderer(_InlineImagesOnly, IPythonRenderer):
        pass

    return NotebookRenderer


def export_notebook_html(notebook: str | Path, html: str | Path, *, show_code: bool = False) -> Path:
    """Write an executed notebook as a self-contained HTML page.

    Args:
        notebook: the executed ``.ipynb``.
        html: where to write the page.
        show_code: keep the code cells (used for a failed stage, so the failing cell is visible).
    """
    import nbformat
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    exporter = HTMLExporter(template_name="lab", extra_template_paths=[str(TEMPLATES)],
                            template_file=NOTEBOOK_TEMPLATE, exclude_input=not show_code,
                            exclude_input_prompt=True, exclude_output_prompt=True,
                            filters={"markdown2html": _notebook_markdown},
                            config=Config({"NbConvertBase": {"display_data_priority": OUTPUT_TYPES}}))
    nb = nbformat.read(str(notebook), as_version=4)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": Path(notebook).stem}})
    out = Path(html)
    out.write_text(body, encoding="utf-8")
    return out


def write_markdown_page(markdown_file: str | Path, html: str | Path, *, title: str, back: str = INDEX_FILE) -> Path:
    """Render a markdown ledger (``scorecard.md``, ``calibration.md``) as a report page."""
    text = Path(markdown_file).read_text(encoding="utf-8")
    page = _jinja().get_template("markdown_page.html.j2").render(title=title, body=markdown_to_html(text), back=back)
    out = Path(html)
    out.write_text(page, encoding="utf-8")
    return out


def read_state(report_dir: str | Path) -> dict[str, Any] | None:
    """A week's ``weekly.json``, or None when it has none (or it is unreadable)."""
    path = Path(report_dir) / STATE_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_state(report_dir: str | Path, state: Mapping[str, Any]) -> Path:
    """Write ``weekly.json`` atomically (the indexes read it while a later week runs)."""
    path = Path(report_dir) / STATE_FILE
    atomic_write_text(path, json.dumps(state, indent=2, sort_keys=True, default=str))
    return path


def week_block(state: Mapping[str, Any]) -> dict[str, Any] | None:
    """The week's decision block as the pages show it: the scorecard's ``decision.json`` (copied into
    ``weekly.json`` by the chain) with the chain's own red flag when a stage failed; None before a scorecard."""
    from skillbench.scorecard import RED, level_of, section_anchor

    dec = state.get("decision")
    if not isinstance(dec, Mapping):
        return None
    flags = [dict(f) for f in dec.get("flags") or [] if isinstance(f, Mapping)]
    if state.get("failed_stage"):
        flags.insert(0, {"key": "stage_failed", "level": RED, "link": f"{state['failed_stage']}.html",
                         "text": f"Stage {state['failed_stage']} failed: the numbers below are from an earlier "
                                 "pass of this run key, or missing"})
    return {**dec, "flags": flags, "level": level_of(flags),
            "gate_anchor": section_anchor("Preference gate (paired, per skill family × model)")}


def _block_context() -> dict[str, Any]:
    from skillbench.scorecard import LEVEL_WORDS

    return {"words": LEVEL_WORDS}


def write_week_index(report_dir: str | Path, state: Mapping[str, Any], *, notes: Sequence[str] = ()) -> Path:
    """``reports/<run_key>/index.html``: the decision block first, then notes, and links to every stage.

    Args:
        report_dir: the week's report folder.
        state: the chain's ``weekly.json`` content (its ``decision``: the scorecard's ``decision.json``).
        notes: sentences the reader must see first (local sandbox, a part of the suite, …).
    """
    report_dir = Path(report_dir)
    dec = week_block(state)
    flagged = {f["key"] for f in dec["flags"]} if dec else set()
    page = _jinja().get_template("week_index.html.j2").render(
        s=state, dec=dec, notes=list(notes), base="", **_block_context(),
        calibration_flag="calibration_failed" in flagged or "calibration_not_shown" in flagged,
        has_scorecard=(report_dir / SCORECARD_HTML).is_file(),
        has_calibration=(report_dir / CALIBRATION_HTML).is_file(),
    )
    out = report_dir / INDEX_FILE
    out.write_text(page, encoding="utf-8")
    return out


TREND_WEEKS = 8  # the weeks a trend line on the reports index spans (the newest and the ones before it)


def _trends(weeks: list[dict[str, Any]]) -> None:
    """Give each week, per model, the points of a small trend line of its lift over up to :data:`TREND_WEEKS`
    weeks ending with it (oldest first; an SVG polyline on the index, numbers only)."""
    lifts: dict[str, list[float]] = {}
    for week in reversed(weeks):  # oldest first
        week["trends"] = {}
        for m in (week.get("block") or {}).get("models") or []:
            if m.get("lift") is None:
                continue
            series = lifts.setdefault(str(m["model"]), [])
            series.append(float(m["lift"]))
            week["trends"][str(m["model"])] = _polyline(series[-TREND_WEEKS:])


def _polyline(values: list[float], width: int = 80, height: int = 18) -> str:
    if len(values) < 2:
        return ""
    low, high = min(values + [0.0]), max(values + [0.0])  # zero on the scale: a lift's sign shows
    scale = (high - low) or 1.0
    step = width / (len(values) - 1)
    return " ".join(f"{i * step:.1f},{height - (v - low) / scale * height:.1f}" for i, v in enumerate(values))


def write_reports_index(reports_dir: str | Path) -> Path:
    """``reports/index.html``: every week that has a ``weekly.json``, newest run key first, with the newest week's
    decision block on top and each week's lifts, changes and calls."""
    reports_dir = Path(reports_dir)
    weeks = []
    for folder in sorted((p for p in reports_dir.iterdir() if p.is_dir()), key=lambda p: p.name, reverse=True):
        state = read_state(folder)
        if state is not None:
            weeks.append({"dir": folder.name, **state, "block": week_block(state)})
    _trends(weeks)
    latest = next((w for w in weeks if w["block"] is not None), None)
    page = _jinja().get_template("reports_index.html.j2").render(
        weeks=weeks, latest=latest, **_block_context(),
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))
    out = reports_dir / INDEX_FILE
    out.write_text(page, encoding="utf-8")
    return out
