from ._execute import execute_notebook as execute_notebook, kernel_config as kernel_config
from ._indexes import (
    week_block as week_block,
    write_reports_index as write_reports_index,
    write_week_index as write_week_index,
)
from ._pages import (
    export_notebook_html as export_notebook_html,
    format_seconds as format_seconds,
    markdown_to_html as markdown_to_html,
    notebook_figures as notebook_figures,
    read_state as read_state,
    table_script as table_script,
    table_script_hash as table_script_hash,
    write_markdown_page as write_markdown_page,
    write_state as write_state,
)
from ._run_pages import (
    RUN_PAGES_LIMIT as RUN_PAGES_LIMIT,
    RunLinks as RunLinks,
    link_run_pages as link_run_pages,
    link_to_week as link_to_week,
    read_run_links as read_run_links,
    write_report_run_pages as write_report_run_pages,
    write_run_pages as write_run_pages,
)
