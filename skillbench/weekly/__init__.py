"""The weekly chain: parametrized notebooks run by papermill, the stage functions they (and the CLI) call,
notebook helpers, and the analysis across weeks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys((
        "run_weekly", "WeeklyOptions", "WeeklyResult", "KERNEL_NAME", "check_kernel"
    ), "chain"),
    **dict.fromkeys((
        "Stage", "STAGES", "StageResult", "WeeklyError", "notebook_parameters", "execute_stage"
    ), "stage_run"),
    **dict.fromkeys(("ProgressRelay",), "progress"),
    **dict.fromkeys(("model_endpoint",), "endpoint"),
    **dict.fromkeys(("judge_tables", "calibration_tables"), "tables"),
    **dict.fromkeys((
        "plan_week", "plan_matrix", "cli_preview", "run_generation", "generate_week",
        "signals_week", "grade_week", "pair_week", "judge_week",
        "calibrate_week", "scorecard_week", "JudgeOutcome", "StageRuntime",
        "WeekScorecard", "write_signals"
    ), "stages"),
    **dict.fromkeys((
        "notebook_setup", "collapsed_progress", "require_sound", "manifest_if_any",
        "resolve_run_dir", "reconciliation_table", "run_health", "markdown_sections",
        "StageError"
    ), "notebook"),
    **dict.fromkeys((
        "Weeks", "load_weeks", "prompt_movers", "activation_by_week", "never_triggered_in_weeks"
    ), "across"),
    **dict.fromkeys(("utc_run_key",), "skillbench.ledgers.keys"),
    **dict.fromkeys(("NOTEBOOKS_DIR", "REPORTS_DIR", "DEFAULT_SUITE",), "skillbench.paths"),
}
_DEPRECATED: dict[str, tuple[str, str]] = {
    "never_triggered": ("skillbench.weekly.across", "never_triggered_in_weeks"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _DEPRECATED)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.ledgers.keys import (
        utc_run_key,
    )
    from skillbench.paths import (
        DEFAULT_SUITE,
        NOTEBOOKS_DIR,
        REPORTS_DIR,
    )
    from skillbench.weekly.across import (
        Weeks,
        activation_by_week,
        load_weeks,
        never_triggered_in_weeks,
        prompt_movers,
    )
    from skillbench.weekly.chain import KERNEL_NAME, WeeklyOptions, WeeklyResult, check_kernel, run_weekly
    from skillbench.weekly.endpoint import model_endpoint
    from skillbench.weekly.notebook import (
        StageError,
        collapsed_progress,
        manifest_if_any,
        markdown_sections,
        notebook_setup,
        reconciliation_table,
        require_sound,
        resolve_run_dir,
        run_health,
    )
    from skillbench.weekly.progress import ProgressRelay
    from skillbench.weekly.stage_run import (
        STAGES,
        Stage,
        StageResult,
        WeeklyError,
        execute_stage,
        notebook_parameters,
    )
    from skillbench.weekly.stages import (
        JudgeOutcome,
        StageRuntime,
        WeekScorecard,
        calibrate_week,
        cli_preview,
        generate_week,
        grade_week,
        judge_week,
        pair_week,
        plan_matrix,
        plan_week,
        run_generation,
        scorecard_week,
        signals_week,
        write_signals,
    )
    from skillbench.weekly.tables import calibration_tables, judge_tables
