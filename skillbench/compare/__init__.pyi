from ._changes import (
    Changes as Changes,
    discover_changes as discover_changes,
    prompt_inputs as prompt_inputs,
)
from ._comparison import (
    COMPARE_DIR as COMPARE_DIR,
    CompareError as CompareError,
    Comparison as Comparison,
    plan_comparison as plan_comparison,
    run_key_for as run_key_for,
)
from ._notebook import (
    comparison_frames as comparison_frames,
    execute_compare_notebook as execute_compare_notebook,
)
from ._report import (
    render_compare as render_compare,
    render_compare_comment as render_compare_comment,
)
from ._results import (
    SCHEMA_VERSION as SCHEMA_VERSION,
    CompareResults as CompareResults,
    json_schema as json_schema,
    shipped_schema as shipped_schema,
)
from ._run import (
    COMPARE_REPORT_FILE as COMPARE_REPORT_FILE,
    RESULTS_FILE as RESULTS_FILE,
    CompareOptions as CompareOptions,
    CompareOutcome as CompareOutcome,
    compare as compare,
)
from ._verdicts import (
    FAIL_ON as FAIL_ON,
    commit_mismatches as commit_mismatches,
    compare_verdicts as compare_verdicts,
    exit_code as exit_code,
    preference_loss as preference_loss,
)
