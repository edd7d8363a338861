"""The scorecard: qdrant's scoring maths, lift statistics, dotnet's preference gate, the history and its noise band,
the simulation check (a simulated week against its truth) and the placebo / A/A controls. Every verdict, its
precedence and its plain words: :mod:`skillbench.scorecard.verdicts` (:func:`verdicts_table` for the docs).

:func:`write_scorecard` writes ``scorecard.md`` and upserts the history; :func:`scorecard_frames` hands a notebook
the tidy DataFrames behind every table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys((
        "prompt_rep_scores", "prompt_scores", "cell_scores", "cost_cells", "cost_eligible",
        "prompt_cost_deltas", "composite_score"
    ), "scoring"),
    **dict.fromkeys((
        "lift_table", "paired_differences", "bootstrap_lift", "minimum_detectable_effect",
        "uncertainty_table", "t_critical"
    ), "stats"),
    **dict.fromkeys(("preference_gate", "collapse_votes", "objective_records"), "gate"),
    **dict.fromkeys((
        "decide", "GateDecision", "GateRecord", "ObjectiveRecord", "VerdictRule", "GATE_RULES", "OBJECTIVE_RULES",
        "gate_rule", "verdicts_table"
    ), "verdicts"),
    **dict.fromkeys((
        "pass_at_k", "pass_hat_k", "run_outcomes", "arm_rates", "stimulus_outcomes", "pass_k_table",
        "transitions", "transition_counts", "task_lift", "tool_violations", "objective_record_table",
        "unrunnable_checks"
    ), "objective"),
    **dict.fromkeys((
        "read_history", "update_history", "write_history", "week_over_week", "WeekOverWeek",
        "HistoryError", "endpoints_path"
    ), "history"),
    **dict.fromkeys(("within_noise", "between_noise", "threshold", "moved",), "noise"),
    **dict.fromkeys((
        "ScorecardData", "compute_scorecard", "endpoint_kind", "incomplete_reasons", "objective_frames"
    ), "compute"),
    **dict.fromkeys((
        "SimulationCheck", "simulation_check", "truth_scores", "JUDGE_ACCURACY_FLOOR"
    ), "simulation"),
    **dict.fromkeys((
        "Controls", "control_checks", "control_pairs", "comparison_lift", "rubric_votes", "rubric_gate",
        "satisfied_items"
    ), "controls"),
    **dict.fromkeys(("render_markdown",), "render"),
    **dict.fromkeys((
        "write_scorecard", "scorecard_frames", "ScorecardResult", "default_history_path"
    ), "write"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.scorecard.compute import (
        ScorecardData,
        compute_scorecard,
        endpoint_kind,
        incomplete_reasons,
        objective_frames,
    )
    from skillbench.scorecard.controls import (
        Controls,
        comparison_lift,
        control_checks,
        control_pairs,
        rubric_gate,
        rubric_votes,
        satisfied_items,
    )
    from skillbench.scorecard.gate import (
        collapse_votes,
        objective_records,
        preference_gate,
    )
    from skillbench.scorecard.history import (
        HistoryError,
        WeekOverWeek,
        endpoints_path,
        read_history,
        update_history,
        week_over_week,
        write_history,
    )
    from skillbench.scorecard.noise import (
        between_noise,
        moved,
        threshold,
        within_noise,
    )
    from skillbench.scorecard.objective import (
        arm_rates,
        objective_record_table,
        pass_at_k,
        pass_hat_k,
        pass_k_table,
        run_outcomes,
        stimulus_outcomes,
        task_lift,
        tool_violations,
        transition_counts,
        transitions,
        unrunnable_checks,
    )
    from skillbench.scorecard.render import (
        render_markdown,
    )
    from skillbench.scorecard.scoring import (
        cell_scores,
        composite_score,
        cost_cells,
        cost_eligible,
        prompt_cost_deltas,
        prompt_rep_scores,
        prompt_scores,
    )
    from skillbench.scorecard.simulation import (
        JUDGE_ACCURACY_FLOOR,
        SimulationCheck,
        simulation_check,
        truth_scores,
    )
    from skillbench.scorecard.stats import (
        bootstrap_lift,
        lift_table,
        minimum_detectable_effect,
        paired_differences,
        t_critical,
        uncertainty_table,
    )
    from skillbench.scorecard.verdicts import (
        GATE_RULES,
        OBJECTIVE_RULES,
        GateDecision,
        GateRecord,
        ObjectiveRecord,
        VerdictRule,
        decide,
        gate_rule,
        verdicts_table,
    )
    from skillbench.scorecard.write import (
        ScorecardResult,
        default_history_path,
        scorecard_frames,
        write_scorecard,
    )
