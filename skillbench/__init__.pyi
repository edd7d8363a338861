from .calibration import (
    CalibrationOptions as CalibrationOptions,
    calibrate as calibrate,
    export_labels as export_labels,
)
from .generation import (
    GenerateOptions as GenerateOptions,
    generate as generate,
    make_plan as make_plan,
)
from .judge import (
    JudgeOptions as JudgeOptions,
    judge_pairs as judge_pairs,
    judge_run_dir as judge_run_dir,
)
from .ledgers import (
    load_week as load_week,
    read_manifest as read_manifest,
    read_scores as read_scores,
)
from .scorecard import (
    compute_scorecard as compute_scorecard,
    preference_gate as preference_gate,
    read_history as read_history,
    scorecard_frames as scorecard_frames,
    write_scorecard as write_scorecard,
)
from .signals import (
    read_transcript as read_transcript,
    trigger_health as trigger_health,
    write_manifest as write_manifest,
)
from .sim import (
    SimServer as SimServer,
    simulated_endpoint as simulated_endpoint,
)
from .suite import (
    Suite as Suite,
    SuiteOverrides as SuiteOverrides,
    load_config as load_config,
    load_suite as load_suite,
    preflight as preflight,
)
from .weekly import (
    WeeklyOptions as WeeklyOptions,
    load_weeks as load_weeks,
    model_endpoint as model_endpoint,
    run_weekly as run_weekly,
)
