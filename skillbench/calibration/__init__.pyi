from ._agreement import (
    CLUSTER_BY as CLUSTER_BY,
    MIN_CLUSTERS as MIN_CLUSTERS,
    UNANIMOUS_MUSTS_BAR as UNANIMOUS_MUSTS_BAR,
    agreement_intervals as agreement_intervals,
    agreement_rows as agreement_rows,
    bar_state as bar_state,
    cohen_kappa as cohen_kappa,
    fleiss_kappa as fleiss_kappa,
    flipping_items as flipping_items,
    krippendorff_alpha as krippendorff_alpha,
    krippendorff_reading as krippendorff_reading,
    landis_koch as landis_koch,
    multi_agreement as multi_agreement,
    pabak as pabak,
    pair_agreement as pair_agreement,
    self_agreement as self_agreement,
    unanimity_interval as unanimity_interval,
)
from ._bias import (
    BIAS_COLUMNS as BIAS_COLUMNS,
    empty_bias as empty_bias,
    pair_facts as pair_facts,
    pairwise_bias as pairwise_bias,
    week_pairwise_bias as week_pairwise_bias,
)
from ._gold import (
    GoldAnswer as GoldAnswer,
    GoldError as GoldError,
    build_gold as build_gold,
    gold_sha as gold_sha,
    read_gold as read_gold,
    suite_gold_path as suite_gold_path,
    write_gold as write_gold,
)
from ._intervals import (
    STATISTICS as STATISTICS,
    Interval as Interval,
    cluster_interval as cluster_interval,
    confusion_by_run as confusion_by_run,
    lenient_by_run as lenient_by_run,
    paired_interval as paired_interval,
    unanimity_by_run as unanimity_by_run,
)
from ._labels import (
    INTER_HUMAN as INTER_HUMAN,
    INTER_HUMAN_ALL as INTER_HUMAN_ALL,
    LabelsError as LabelsError,
    MergedLabels as MergedLabels,
    SheetOptions as SheetOptions,
    companion_path as companion_path,
    disagreement_items as disagreement_items,
    export_labels as export_labels,
    human_grades as human_grades,
    inter_human as inter_human,
    merge_labels as merge_labels,
    read_grades as read_grades,
    read_labels as read_labels,
)
from ._recommendation import (
    DEFAULT_MARGIN as DEFAULT_MARGIN,
    Recommendation as Recommendation,
    recommend as recommend,
    rule_text as rule_text,
)
from ._run import (
    Calibration as Calibration,
    CalibrationOptions as CalibrationOptions,
    bias_section as bias_section,
    calibrate as calibrate,
    calibration_current as calibration_current,
    grade_repeats as grade_repeats,
    ledger_grades as ledger_grades,
    render_markdown as render_markdown,
    write_calibration as write_calibration,
)
from ._sample import (
    MUST_FLOOR as MUST_FLOOR,
    SampleRecord as SampleRecord,
    draw as draw,
    looks as looks,
    max_passing_flips as max_passing_flips,
    musts_to_pass as musts_to_pass,
    pass_probability as pass_probability,
    sample_key as sample_key,
    stratified_order as stratified_order,
)
from ._sentinel import (
    DRIFT as DRIFT,
    DRIFT_BANNER as DRIFT_BANNER,
    JUDGE_CHANGED as JUDGE_CHANGED,
    Sentinel as Sentinel,
    SentinelOptions as SentinelOptions,
    read_sentinel as read_sentinel,
    run_sentinel as run_sentinel,
    sentinel_current as sentinel_current,
)
from ._study import (
    JudgeStudy as JudgeStudy,
    StudyOptions as StudyOptions,
    StudyPlan as StudyPlan,
    judge_study as judge_study,
    plan_study as plan_study,
    study_pairwise as study_pairwise,
)
from ._study_report import (
    execute_study_notebook as execute_study_notebook,
    plot_kappas as plot_kappas,
    render_study as render_study,
    study_dir as study_dir,
    study_frames as study_frames,
    write_study as write_study,
)
