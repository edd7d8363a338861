"""Judge calibration: agreement statistics, the calibration run, human labels, the pairwise judge's bias, judge
studies (several judges, intervals, a recommendation) and the weekly drift sentinel on a frozen gold set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys((
        "cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "krippendorff_reading",
        "landis_koch", "pabak", "pair_agreement", "multi_agreement", "self_agreement",
        "flipping_items", "agreement_rows", "UNANIMOUS_MUSTS_BAR"
    ), "agreement"),
    **dict.fromkeys((
        "Calibration", "CalibrationOptions", "calibrate", "calibration_current",
        "grade_repeats", "ledger_grades"
    ), "run"),
    **dict.fromkeys(("export_labels", "read_labels", "LabelsError", "inter_human", "INTER_HUMAN",
                     "INTER_HUMAN_ALL", "companion_path", "human_grades", "merge_labels", "MergedLabels",
                     "read_grades", "disagreement_items"), "labels"),
    **dict.fromkeys(("render_markdown", "write_calibration", "bias_section"), "run"),
    **dict.fromkeys(("pairwise_bias", "week_pairwise_bias", "pair_facts", "empty_bias", "BIAS_COLUMNS"), "bias"),
    **dict.fromkeys(("Interval", "cluster_interval", "paired_interval", "confusion_by_run", "unanimity_by_run",
                     "lenient_by_run", "STATISTICS"), "intervals"),
    **dict.fromkeys(("StudyOptions", "StudyPlan", "JudgeStudy", "plan_study", "judge_study", "study_pairwise"),
                    "study"),
    **dict.fromkeys(("Recommendation", "recommend", "rule_text", "DEFAULT_MARGIN"), "recommendation"),
    **dict.fromkeys(("write_study", "render_study", "study_frames", "plot_kappas", "execute_study_notebook"),
                    "study_report"),
    **dict.fromkeys(("GoldAnswer", "GoldError", "build_gold", "read_gold", "write_gold", "gold_sha",
                     "suite_gold_path"), "gold"),
    **dict.fromkeys(("Sentinel", "run_sentinel", "read_sentinel", "sentinel_current", "DRIFT_BANNER"), "sentinel"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.calibration.agreement import (
        UNANIMOUS_MUSTS_BAR,
        agreement_rows,
        cohen_kappa,
        fleiss_kappa,
        flipping_items,
        krippendorff_alpha,
        krippendorff_reading,
        landis_koch,
        multi_agreement,
        pabak,
        pair_agreement,
        self_agreement,
    )
    from skillbench.calibration.bias import (
        BIAS_COLUMNS,
        empty_bias,
        pair_facts,
        pairwise_bias,
        week_pairwise_bias,
    )
    from skillbench.calibration.gold import (
        GoldAnswer,
        GoldError,
        build_gold,
        gold_sha,
        read_gold,
        suite_gold_path,
        write_gold,
    )
    from skillbench.calibration.intervals import (
        STATISTICS,
        Interval,
        cluster_interval,
        confusion_by_run,
        lenient_by_run,
        paired_interval,
        unanimity_by_run,
    )
    from skillbench.calibration.labels import (
        INTER_HUMAN,
        INTER_HUMAN_ALL,
        LabelsError,
        MergedLabels,
        companion_path,
        disagreement_items,
        export_labels,
        human_grades,
        inter_human,
        merge_labels,
        read_grades,
        read_labels,
    )
    from skillbench.calibration.recommendation import (
        DEFAULT_MARGIN,
        Recommendation,
        recommend,
        rule_text,
    )
    from skillbench.calibration.run import (
        Calibration,
        CalibrationOptions,
        bias_section,
        calibrate,
        calibration_current,
        grade_repeats,
        ledger_grades,
        render_markdown,
        write_calibration,
    )
    from skillbench.calibration.sentinel import (
        DRIFT_BANNER,
        Sentinel,
        read_sentinel,
        run_sentinel,
        sentinel_current,
    )
    from skillbench.calibration.study import (
        JudgeStudy,
        StudyOptions,
        StudyPlan,
        judge_study,
        plan_study,
        study_pairwise,
    )
    from skillbench.calibration.study_report import (
        execute_study_notebook,
        plot_kappas,
        render_study,
        study_frames,
        write_study,
    )
