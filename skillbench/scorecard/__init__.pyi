from ._compute import (
    ScorecardData as ScorecardData,
    compute_scorecard as compute_scorecard,
    endpoint_kind as endpoint_kind,
    incomplete_reasons as incomplete_reasons,
    objective_frames as objective_frames,
)
from ._controls import (
    Controls as Controls,
    comparison_lift as comparison_lift,
    control_checks as control_checks,
    control_pairs as control_pairs,
    rubric_gate as rubric_gate,
    rubric_votes as rubric_votes,
    satisfied_items as satisfied_items,
)
from ._gate import (
    collapse_votes as collapse_votes,
    preference_gate as preference_gate,
)
from ._history import (
    HistoryError as HistoryError,
    WeekOverWeek as WeekOverWeek,
    endpoints_path as endpoints_path,
    numeric_history as numeric_history,
    read_history as read_history,
    update_history as update_history,
    week_over_week as week_over_week,
    write_history as write_history,
)
from ._inference import (
    BH as BH,
    HOLM as HOLM,
    RateInterval as RateInterval,
    adjust as adjust,
    family_words as family_words,
    rate_interval as rate_interval,
    rate_intervals as rate_intervals,
)
from ._labels import arm_names as arm_names, arm_order as arm_order
from ._noise import (
    between_noise as between_noise,
    moved as moved,
    threshold as threshold,
    within_noise as within_noise,
)
from ._objective import (
    arm_rates as arm_rates,
    objective_loss_test as objective_loss_test,
    objective_record_table as objective_record_table,
    objective_records as objective_records,
    pass_at_k as pass_at_k,
    pass_hat_k as pass_hat_k,
    pass_k_table as pass_k_table,
    run_outcomes as run_outcomes,
    stimulus_outcomes as stimulus_outcomes,
    task_lift as task_lift,
    tool_violations as tool_violations,
    transition_counts as transition_counts,
    transitions as transitions,
    unrunnable_checks as unrunnable_checks,
)
from ._render import (
    DRIFT_BANNER as DRIFT_BANNER,
    render_comment as render_comment,
    render_markdown as render_markdown,
    sentinel_markdown as sentinel_markdown,
)
from ._render_stimuli import (
    LABEL_ICONS as LABEL_ICONS,
    StimulusTables as StimulusTables,
    dormancy_markdown as dormancy_markdown,
    dormancy_rows as dormancy_rows,
    error_control_line as error_control_line,
    gate_rows as gate_rows,
    invalid_lines as invalid_lines,
    label_counts as label_counts,
    next_action as next_action,
    p_cell as p_cell,
    record_label as record_label,
    stimulus_markdown as stimulus_markdown,
    stimulus_rows as stimulus_rows,
    stimulus_tables as stimulus_tables,
    with_icon as with_icon,
)
from ._scoring import (
    cell_scores as cell_scores,
    composite_score as composite_score,
    cost_cells as cost_cells,
    cost_eligible as cost_eligible,
    prompt_cost_deltas as prompt_cost_deltas,
    prompt_rep_scores as prompt_rep_scores,
    prompt_scores as prompt_scores,
)
from ._simulation import (
    CREDITED as CREDITED,
    JUDGE_ACCURACY_FLOOR as JUDGE_ACCURACY_FLOOR,
    SimulationCheck as SimulationCheck,
    simulation_check as simulation_check,
    truth_scores as truth_scores,
)
from ._stats import (
    DEFAULT_RESAMPLES as DEFAULT_RESAMPLES,
    DEFAULT_SEED as DEFAULT_SEED,
    bootstrap_lift as bootstrap_lift,
    lift_table as lift_table,
    minimum_detectable_effect as minimum_detectable_effect,
    paired_differences as paired_differences,
    t_critical as t_critical,
    uncertainty_table as uncertainty_table,
)
from ._verdicts import (
    GATE_RULES as GATE_RULES,
    INVALID_LABEL as INVALID_LABEL,
    MIN_STIMULI as MIN_STIMULI,
    NOT_PROVEN_LABEL as NOT_PROVEN_LABEL,
    OBJECTIVE_RULES as OBJECTIVE_RULES,
    PREFERENCE_LOSS_LABEL as PREFERENCE_LOSS_LABEL,
    GateDecision as GateDecision,
    GateRecord as GateRecord,
    ObjectiveRecord as ObjectiveRecord,
    VerdictRule as VerdictRule,
    Wording as Wording,
    decide as decide,
    gate_rule as gate_rule,
    verdict_label as verdict_label,
    verdicts_table as verdicts_table,
)
from ._write import (
    ScorecardResult as ScorecardResult,
    default_history_path as default_history_path,
    scorecard_frames as scorecard_frames,
    week_history as week_history,
    write_scorecard as write_scorecard,
)
