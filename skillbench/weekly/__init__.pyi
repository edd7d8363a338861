from ._across import (
    Weeks as Weeks,
    activation_by_week as activation_by_week,
    compared_weeks as compared_weeks,
    load_weeks as load_weeks,
    movers_correction as movers_correction,
    never_triggered_in_weeks as never_triggered_in_weeks,
    prompt_movers as prompt_movers,
    select_weeks as select_weeks,
    slice_line as slice_line,
)
from ._chain import (
    DEFAULT_JOBS as DEFAULT_JOBS,
    KERNEL_NAME as KERNEL_NAME,
    WeeklyOptions as WeeklyOptions,
    WeeklyResult as WeeklyResult,
    check_kernel as check_kernel,
    run_weekly as run_weekly,
)
from ._demo import DemoOptions as DemoOptions, run_demo as run_demo
from ._demo_story import (
    DEFAULT_DRAFT_GAIN as DEFAULT_DRAFT_GAIN,
    DEFAULT_DRIFT as DEFAULT_DRIFT,
    DEFAULT_JUDGE_LENIENCY as DEFAULT_JUDGE_LENIENCY,
)
from ._endpoint import (
    model_endpoint as model_endpoint,
)
from ._notebook import (
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
from ._optimize_stage import (
    DEFAULT_REWRITER_MODEL as DEFAULT_REWRITER_MODEL,
    OptimizeError as OptimizeError,
    OptimizeOptions as OptimizeOptions,
    run_optimize as run_optimize,
)
from ._progress import (
    ProgressRelay as ProgressRelay,
)
from ._quality_stage import (
    LintOptions as LintOptions,
    QualityError as QualityError,
    lint_skills as lint_skills,
    preflight_quality as preflight_quality,
)
from ._stage_run import (
    STAGES as STAGES,
    Stage as Stage,
    StageResult as StageResult,
    WeeklyError as WeeklyError,
    execute_stage as execute_stage,
    notebook_parameters as notebook_parameters,
)
from ._stages import (
    JudgeOutcome as JudgeOutcome,
    StageRuntime as StageRuntime,
    WeekScorecard as WeekScorecard,
    calibrate_week as calibrate_week,
    cli_preview as cli_preview,
    generate_week as generate_week,
    gold_path as gold_path,
    grade_week as grade_week,
    identifiers_week as identifiers_week,
    judge_week as judge_week,
    pair_week as pair_week,
    plan_matrix as plan_matrix,
    plan_week as plan_week,
    run_generation as run_generation,
    scorecard_week as scorecard_week,
    sentinel_week as sentinel_week,
    signals_week as signals_week,
    study_week as study_week,
    write_signals as write_signals,
)
from ._tables import (
    calibration_tables as calibration_tables,
    judge_tables as judge_tables,
)
