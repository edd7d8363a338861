from ._pages import (
    export_notebook_html as export_notebook_html,
    format_seconds as format_seconds,
    markdown_to_html as markdown_to_html,
    read_state as read_state,
    week_block as week_block,
    write_markdown_page as write_markdown_page,
    write_reports_index as write_reports_index,
    write_state as write_state,
    write_week_index as write_week_index,
)
