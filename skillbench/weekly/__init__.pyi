from .across import (
    Weeks as Weeks,
    activation_by_week as activation_by_week,
    load_weeks as load_weeks,
    never_triggered_in_weeks as never_triggered_in_weeks,
    prompt_movers as prompt_movers,
)
from .chain import (
    KERNEL_NAME as KERNEL_NAME,
    WeeklyOptions as WeeklyOptions,
    WeeklyResult as WeeklyResult,
    check_kernel as check_kernel,
    run_weekly as run_weekly,
)
from .endpoint import (
    model_endpoint as model_endpoint,
)
from .notebook import (
    StageError as StageError,
    collapsed_progress as collapsed_progress,
    manifest_if_any as manifest_if_any,
    markdown_sections as markdown_sections,
    notebook_setup as notebook_setup,
    reconciliation_table as reconciliation_table,
    require_sound as require_sound,
    resolve_run_dir as resolve_run_dir,
    run_health as run_health,
)
from .progress import (
    ProgressRelay as ProgressRelay,
)
from .stage_run import (
    STAGES as STAGES,
    Stage as Stage,
    StageResult as StageResult,
    WeeklyError as WeeklyError,
    execute_stage as execute_stage,
    notebook_parameters as notebook_parameters,
)
from .stages import (
    JudgeOutcome as JudgeOutcome,
    StageRuntime as StageRuntime,
    WeekScorecard as WeekScorecard,
    calibrate_week as calibrate_week,
    cli_preview as cli_preview,
    generate_week as generate_week,
    grade_week as grade_week,
    judge_week as judge_week,
    pair_week as pair_week,
    plan_matrix as plan_matrix,
    plan_week as plan_week,
    run_generation as run_generation,
    scorecard_week as scorecard_week,
    signals_week as signals_week,
    write_signals as write_signals,
)
from .tables import (
    calibration_tables as calibration_tables,
    judge_tables as judge_tables,
)
