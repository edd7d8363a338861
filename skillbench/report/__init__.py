"""The report: markdown helpers shared by every page, HTML pages, and the figures (:mod:`skillbench.report.figures`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys((
        "export_notebook_html", "write_markdown_page", "write_week_index",
        "write_reports_index", "read_state", "write_state", "markdown_to_html"
    ), "pages"),
    **dict.fromkeys((
        "fmt", "signed", "money", "md_table", "md_cell", "frame_table", "cell_text",
        "markdown_sections", "format_seconds"
    ), "markdown"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.report.markdown import (
        cell_text,
        fmt,
        format_seconds,
        frame_table,
        markdown_sections,
        md_cell,
        md_table,
        money,
        signed,
    )
    from skillbench.report.pages import (
        export_notebook_html,
        markdown_to_html,
        read_state,
        write_markdown_page,
        write_reports_index,
        write_state,
        write_week_index,
    )
