"""The weekly report's HTML: executed notebooks without code, the scorecard page, and the two index pages.

Everything here renders files that already exist (executed notebooks, ``scorecard.md``, ``calibration.md``,
``weekly.json``); nothing computes a number. The pages are self-contained: figures are inline PNGs and no page
loads a script or stylesheet from the network (nbconvert's RequireJS, MathJax and Mermaid tags are dropped by
``templates/notebook.html.j2``), so a report opens offline and a screenshot never leaves the machine.

The report is control plane; what it shows of content under evaluation (answers, quotes, rubric items, check
details, skill and prompt names) is data. Three layers keep that data inert: ``markdown.md_text`` writes it into
markdown as literal text and ``markdown.md_table`` keeps every table's shape; every markdown → HTML step here
escapes raw HTML and drops unsafe link targets (:func:`markdown_to_html`, :func:`_notebook_markdown`), and the
Jinja pages autoescape; and every page carries ``templates/_csp.html.j2``, a Content-Security-Policy that loads
nothing but ``data:`` images and runs one script: ours, ``templates/_tables.js`` (click a header to sort, type to
filter rows), allowed by the sha256 of its text (:func:`table_script_hash`). It reads cells' text and moves rows,
never writing markup, so a cell stays the escaped text it was rendered as; any other script that got into a page
has another hash and does not run.

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

import base64
import functools
import hashlib
import html
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from skillbench.ledgers import (
    INDEX_FILE,
    STATE_FILE,
    atomic_write_text,
)
from skillbench.markdown import CUT_TARGET, format_seconds

TEMPLATES = Path(__file__).resolve().parent / "templates"
NOTEBOOK_TEMPLATE = "notebook.html.j2"
# The output types a notebook page shows, best first: nbconvert's own order without JavaScript and widget views,
# which would put a <script> of an output into the page (the pages run no script; none of ours draws with one).
OUTPUT_TYPES = ["text/html", "text/markdown", "image/svg+xml", "text/latex", "image/png", "image/jpeg", "text/plain"]
TABLE_SCRIPT = "_tables.js"


@functools.cache
def table_script() -> str:
    """The report's one script (``templates/_tables.js``: sortable, filterable tables), as every page inlines it."""
    return (TEMPLATES / TABLE_SCRIPT).read_text(encoding="utf-8")


def table_script_hash() -> str:
    """``sha256-…`` of :func:`table_script`: the one source the pages' CSP allows. Computed from the text each time
    a page renders, so an edit of the script can never leave a page with a stale hash (the script would not run)."""
    return "sha256-" + base64.b64encode(hashlib.sha256(table_script().encode("utf-8")).digest()).decode("ascii")


def _script_globals() -> dict[str, Any]:
    return {"table_script": Markup(table_script()), "table_script_sha256": table_script_hash()}


def _jinja() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=True,
                             lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["seconds"] = format_seconds
    env.filters["link"] = _relative_link
    env.filters["signed"] = lambda x, nd=3: "–" if x is None else f"{x:+.{nd}f}"
    env.globals.update(_script_globals())
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

    def link(self, text: str, url: str, title: str | None = None) -> str:
        """A text :func:`skillbench.markdown.md_text` cut (a link to ``#cut``): the shown part with the full text
        on hover, not a link that goes nowhere. The title arrives unescaped; it is content, so it is escaped here."""
        if url == CUT_TARGET:
            return f'<span class="cut" title="{html.escape(title or "", quote=True)}">{text}</span>'
        return str(super().link(text, url, title))  # type: ignore[misc]  # the renderer it is mixed into


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
    exporter.environment.globals.update(_script_globals())
    nb = nbformat.read(str(notebook), as_version=4)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": Path(notebook).stem}})
    out = Path(html)
    out.write_text(body, encoding="utf-8")
    return out


def write_markdown_page(markdown_file: str | Path, html: str | Path, *, title: str, back: str = INDEX_FILE,
                        figures: Mapping[str, Sequence[str]] | None = None) -> Path:
    """Render a markdown ledger (``scorecard.md``, ``calibration.md``) as a report page: every ``##``/``###``
    heading gets its anchor (:func:`skillbench.scorecard.section_anchor`, as GitHub names it), a page of more than
    two sections a table of contents (after the decision block when the page opens with one), and ``figures``
    (section title prefix → PNG images as base64, :func:`notebook_figures`) go under the heading of the first
    section whose title starts with that prefix, so each plot sits beside its table."""
    text = Path(markdown_file).read_text(encoding="utf-8")
    body = _with_figures(_with_anchors(markdown_to_html(text)), figures or {})
    page = _jinja().get_template("markdown_page.html.j2").render(title=title, body=_with_contents(body), back=back)
    out = Path(html)
    out.write_text(page, encoding="utf-8")
    return out


# A heading as the page renders it: our markdown's own (content cannot make one: md_text keeps it on one line of
# running text, and raw HTML is escaped), so a pattern over the rendered page finds exactly the page's sections.
_HEADING = re.compile(r"<h([23])>(.*?)</h\1>", re.S)
_TAG = re.compile(r"<[^>]+>")
# The sections the table of contents comes after: the decision block, which answers before any contents
CONTENTS_AFTER = ("decision",)
MIN_CONTENTS = 3  # fewer sections than this need no table of contents


def _heading_text(inner: str) -> str:
    return html.unescape(_TAG.sub("", inner)).strip()


def _with_anchors(body: str) -> str:
    from skillbench.scorecard import section_anchor  # the decision block's links name sections by it

    seen: dict[str, int] = {}

    def anchored(m: re.Match[str]) -> str:
        anchor = section_anchor(_heading_text(m.group(2)))
        n = seen.get(anchor, 0)
        seen[anchor] = n + 1
        unique = f"{anchor}-{n}" if n else anchor  # GitHub's rule for a repeated heading
        return f'<h{m.group(1)} id="{html.escape(unique)}">{m.group(2)}</h{m.group(1)}>'

    return _HEADING.sub(anchored, body)


_H2 = re.compile(r'<h2 id="([^"]*)">(.*?)</h2>', re.S)


def _with_contents(body: str) -> str:
    """A list of the page's ``##`` sections, linked, before the first one that is not the decision block."""
    sections = list(_H2.finditer(body))
    if len(sections) < MIN_CONTENTS:
        return body
    at = next((m for m in sections if m.group(1) not in CONTENTS_AFTER), None)
    if at is None:
        return body
    items = "".join(f'<li><a href="#{m.group(1)}">{m.group(2)}</a></li>' for m in sections)
    return body[:at.start()] + f'<nav class="contents"><b>Contents</b><ol>{items}</ol></nav>\n' + body[at.start():]


def _with_figures(body: str, figures: Mapping[str, Sequence[str]]) -> str:
    for prefix, images in figures.items():
        match = next((m for m in _H2.finditer(body) if _heading_text(m.group(2)).startswith(prefix)), None)
        if match is None or not images:
            continue
        imgs = "".join(f'<img alt="{html.escape(prefix)}" src="data:image/png;base64,{_base64(png)}">'
                       for png in images)
        body = body[:match.end()] + f'\n<figure class="plots">{imgs}</figure>' + body[match.end():]
    return body


def _base64(png: str) -> str:
    """A notebook's PNG output, checked to be base64 and nothing else (it goes into an attribute)."""
    text = "".join(png.split())
    if not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", text):
        raise ValueError("a figure is not base64 PNG data")
    return text


FIGURE_SECTION = "scorecard_section"  # a notebook cell's metadata key: the scorecard section its figures illustrate


def notebook_figures(notebook: str | Path) -> dict[str, list[str]]:
    """The PNG figures of an executed notebook's cells that name a scorecard section (their metadata
    :data:`FIGURE_SECTION`), by that section's title prefix; {} when the notebook is missing or unreadable (a page
    without its plots still shows every number)."""
    import nbformat

    try:
        nb = nbformat.read(str(notebook), as_version=4)
    except (OSError, ValueError):
        return {}
    out: dict[str, list[str]] = {}
    for cell in nb.cells:
        section = cell.get("metadata", {}).get(FIGURE_SECTION)
        if cell.cell_type != "code" or not isinstance(section, str):
            continue
        pngs = [o["data"]["image/png"] for o in cell.get("outputs", [])
                if isinstance(o.get("data"), Mapping) and isinstance(o["data"].get("image/png"), str)]
        if pngs:
            out.setdefault(section, []).extend(pngs)
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
