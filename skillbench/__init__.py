"""skillbench: does this skill make the model answer better, by how much, at what cost, and can we trust it?

The pipeline is one sub-package per stage (see ARCHITECTURE.md): :mod:`skillbench.suite` → :mod:`~skillbench.generation`
→ :mod:`~skillbench.signals` → :mod:`~skillbench.judge` → :mod:`~skillbench.calibration` → :mod:`~skillbench.scorecard`
→ :mod:`~skillbench.report`, run week by week by :mod:`~skillbench.weekly`, with :mod:`~skillbench.ledgers` (the run
directory's files) and :mod:`~skillbench.sim` (the simulated endpoint) beside them. This namespace holds the entry
points a notebook user needs; everything else is reached through its sub-package. Names that were importable
from here before the layout change still resolve, with a :class:`DeprecationWarning` naming their new home.

Names are imported on first use (PEP 562), so ``skillbench validate`` does not pay for pandas, scipy and the SDKs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

__version__ = "0.1.0"

# The entry points, by pipeline stage.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("load_suite", "preflight", "Suite", "load_config"), "skillbench.suite"),
    **dict.fromkeys(("make_plan", "generate", "GenerateOptions"), "skillbench.generation"),
    **dict.fromkeys(("write_manifest", "read_transcript", "trigger_health"), "skillbench.signals"),
    **dict.fromkeys(("judge_run_dir", "JudgeOptions", "judge_pairs"), "skillbench.judge"),
    **dict.fromkeys(("calibrate", "CalibrationOptions", "export_labels"), "skillbench.calibration"),
    **dict.fromkeys(("load_week", "read_manifest", "read_scores"), "skillbench.ledgers"),
    **dict.fromkeys((
        "compute_scorecard", "write_scorecard", "scorecard_frames", "read_history", "preference_gate",
    ), "skillbench.scorecard"),
    **dict.fromkeys(("run_weekly", "WeeklyOptions", "load_weeks", "model_endpoint"), "skillbench.weekly"),
    **dict.fromkeys(("simulated_endpoint", "SimServer"), "skillbench.sim"),
}
# Importable from here before the sub-packages: old name -> (new home, name there).
_DEPRECATED: dict[str, tuple[str, str]] = {
    "activation_summary": ("skillbench.signals", "activation_summary"),
    "BackendError": ("skillbench.generation", "BackendError"),
    "bootstrap_lift": ("skillbench.scorecard", "bootstrap_lift"),
    "build_judge_request": ("skillbench.judge", "build_judge_request"),
    "build_pair_request": ("skillbench.judge", "build_pair_request"),
    "Calibration": ("skillbench.calibration", "Calibration"),
    "cell_scores": ("skillbench.scorecard", "cell_scores"),
    "cohen_kappa": ("skillbench.calibration", "cohen_kappa"),
    "collapse_votes": ("skillbench.scorecard", "collapse_votes"),
    "CONFIG_FILENAME": ("skillbench.suite", "CONFIG_FILENAME"),
    "ConfigError": ("skillbench.suite", "ConfigError"),
    "cost_cells": ("skillbench.scorecard", "cost_cells"),
    "decide": ("skillbench.scorecard", "decide"),
    "DEFAULT_JUDGE_MODEL": ("skillbench.judge", "DEFAULT_JUDGE_MODEL"),
    "Defect": ("skillbench.suite", "Defect"),
    "Endpoint": ("skillbench.generation", "Endpoint"),
    "evidence_summary": ("skillbench.judge", "evidence_summary"),
    "find_pairs": ("skillbench.judge", "find_pairs"),
    "fleiss_kappa": ("skillbench.calibration", "fleiss_kappa"),
    "flipping_items": ("skillbench.calibration", "flipping_items"),
    "GateDecision": ("skillbench.scorecard", "GateDecision"),
    "HistoryError": ("skillbench.scorecard", "HistoryError"),
    "judge_headers": ("skillbench.judge", "judge_headers"),
    "judge_prompt_sha": ("skillbench.judge", "judge_prompt_sha"),
    "JudgeClient": ("skillbench.judge", "JudgeClient"),
    "JudgeReport": ("skillbench.judge", "JudgeReport"),
    "krippendorff_alpha": ("skillbench.calibration", "krippendorff_alpha"),
    "krippendorff_reading": ("skillbench.calibration", "krippendorff_reading"),
    "landis_koch": ("skillbench.calibration", "landis_koch"),
    "LedgerError": ("skillbench.ledgers", "LedgerError"),
    "lift_table": ("skillbench.scorecard", "lift_table"),
    "load_run": ("skillbench.ledgers", "load_week"),
    "minimum_detectable_effect": ("skillbench.scorecard", "minimum_detectable_effect"),
    "pabak": ("skillbench.calibration", "pabak"),
    "pair_agreement": ("skillbench.calibration", "pair_agreement"),
    "paired_differences": ("skillbench.scorecard", "paired_differences"),
    "pairs_frame": ("skillbench.judge", "pairs_frame"),
    "parse_preference": ("skillbench.judge", "parse_preference"),
    "parse_skill_url": ("skillbench.suite", "parse_skill_url"),
    "parse_verdicts": ("skillbench.judge", "parse_verdicts"),
    "position_agreement": ("skillbench.judge", "position_agreement"),
    "PreferenceInput": ("skillbench.judge", "PreferenceInput"),
    "PreflightReport": ("skillbench.suite", "PreflightReport"),
    "price": ("skillbench.prices", "price"),
    "prompt_rep_scores": ("skillbench.scorecard", "prompt_rep_scores"),
    "prompt_scores": ("skillbench.scorecard", "prompt_scores"),
    "PromptSpec": ("skillbench.suite", "PromptSpec"),
    "read_judge_skips": ("skillbench.ledgers", "read_judge_skips"),
    "read_labels": ("skillbench.calibration", "read_labels"),
    "read_pairs": ("skillbench.ledgers", "read_pairs"),
    "read_reconciliation": ("skillbench.ledgers", "read_reconciliation"),
    "reconcile": ("skillbench.generation", "reconcile"),
    "Reconciliation": ("skillbench.ledgers", "Reconciliation"),
    "render_markdown": ("skillbench.scorecard", "render_markdown"),
    "resolve_backend": ("skillbench.generation", "resolve_backend"),
    "RubricItem": ("skillbench.suite", "RubricItem"),
    "RubricJudge": ("skillbench.judge", "RubricJudge"),
    "run_signals": ("skillbench.signals", "run_signals"),
    "RunLedgers": ("skillbench.ledgers", "WeekLedgers"),
    "ScorecardData": ("skillbench.scorecard", "ScorecardData"),
    "ScorecardResult": ("skillbench.scorecard", "ScorecardResult"),
    "select_runs": ("skillbench.judge", "select_runs"),
    "self_agreement": ("skillbench.calibration", "self_agreement"),
    "self_served_baseline": ("skillbench.signals", "self_served_baseline"),
    "Skill": ("skillbench.suite", "Skill"),
    "SuiteConfig": ("skillbench.suite", "SuiteConfig"),
    "SuiteError": ("skillbench.suite", "SuiteError"),
    "TestPrompt": ("skillbench.suite", "TestPrompt"),
    "Transcript": ("skillbench.signals", "Transcript"),
    "uncertainty_table": ("skillbench.scorecard", "uncertainty_table"),
    "update_history": ("skillbench.scorecard", "update_history"),
    "usage_cost": ("skillbench.prices", "usage_cost"),
    "VerdictsInput": ("skillbench.judge", "VerdictsInput"),
    "week_over_week": ("skillbench.scorecard", "week_over_week"),
    "WeekOverWeek": ("skillbench.scorecard", "WeekOverWeek"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _DEPRECATED)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.calibration import (
        CalibrationOptions,
        calibrate,
        export_labels,
    )
    from skillbench.generation import (
        GenerateOptions,
        generate,
        make_plan,
    )
    from skillbench.judge import (
        JudgeOptions,
        judge_pairs,
        judge_run_dir,
    )
    from skillbench.ledgers import (
        load_week,
        read_manifest,
        read_scores,
    )
    from skillbench.scorecard import (
        compute_scorecard,
        preference_gate,
        read_history,
        scorecard_frames,
        write_scorecard,
    )
    from skillbench.signals import (
        read_transcript,
        trigger_health,
        write_manifest,
    )
    from skillbench.sim import (
        SimServer,
        simulated_endpoint,
    )
    from skillbench.suite import (
        Suite,
        load_config,
        load_suite,
        preflight,
    )
    from skillbench.weekly import (
        WeeklyOptions,
        load_weeks,
        model_endpoint,
        run_weekly,
    )
