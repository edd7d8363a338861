from .anchored import (
    DIMENSIONS as DIMENSIONS,
)
from .anchored_judge import (
    AnchoredJudge as AnchoredJudge,
    judge_units as judge_units,
)
from .categories import (
    CATEGORY_TARGETS as CATEGORY_TARGETS,
    quality_settings as quality_settings,
    skill_category as skill_category,
)
from .composite import (
    composite_scores as composite_scores,
    normalisation_note as normalisation_note,
)
from .kappa import (
    kappa_by_dimension as kappa_by_dimension,
)
from .lint import (
    LintResult as LintResult,
    lint_suite as lint_suite,
    write_quality as write_quality,
)
from .near_miss import (
    near_miss_request as near_miss_request,
    parse_near_misses as parse_near_misses,
)
from .optimize_report import (
    write_outputs as write_outputs,
)
from .optimizer import (
    Candidate as Candidate,
    OptimizeResult as OptimizeResult,
    optimize as optimize,
)
from .payload import (
    DESCRIPTION_TOOL as DESCRIPTION_TOOL,
    NEAR_MISS_TOOL as NEAR_MISS_TOOL,
    SKILL_QUALITY_TOOL as SKILL_QUALITY_TOOL,
)
from .static import (
    static_findings as static_findings,
)
from .trigger_f1 import (
    TRIGGER_F1_COLUMNS as TRIGGER_F1_COLUMNS,
    disagreement_reading as disagreement_reading,
    measured_triggering as measured_triggering,
    measured_vs_predicted as measured_vs_predicted,
    predicted_triggering as predicted_triggering,
    write_trigger_f1 as write_trigger_f1,
)
from .trigger_runs import (
    RunSpec as RunSpec,
    TriggerRuns as TriggerRuns,
    measure_description as measure_description,
    with_description as with_description,
)
from .trigger_set import (
    GENERATED as GENERATED,
    Query as Query,
    TriggerSet as TriggerSet,
    TriggerSetError as TriggerSetError,
    build_trigger_set as build_trigger_set,
    check_splittable as check_splittable,
)
from .units import (
    skill_units as skill_units,
)
