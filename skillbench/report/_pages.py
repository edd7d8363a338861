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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2

from skillbench.ledgers import (
    INDEX_FILE,
    STATE_FILE,
    atomic_write_text,
)
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
