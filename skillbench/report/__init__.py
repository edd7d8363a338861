"""The report: HTML pages and the figures (:mod:`skillbench.report.figures`) that plot the frames the scorecard
computed. The markdown helpers every page shares are :mod:`skillbench.markdown`, below the scorecard.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys((
        "export_notebook_html", "write_markdown_page", "write_week_index",
        "write_reports_index", "read_state", "write_state", "markdown_to_html"
    ), "pages"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.report.pages import (
        export_notebook_html,
        markdown_to_html,
        read_state,
        write_markdown_page,
        write_reports_index,
        write_state,
        write_week_index,
    )
