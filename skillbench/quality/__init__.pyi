from ._anchored import (
    ANCHORS as ANCHORS,
    DIMENSIONS as DIMENSIONS,
    RequestView as RequestView,
    parse_request as parse_request,
)
from ._anchored_judge import (
    AnchoredJudge as AnchoredJudge,
    judge_units as judge_units,
)
from ._categories import (
    CATEGORY_TARGETS as CATEGORY_TARGETS,
    CategoryError as CategoryError,
    quality_settings as quality_settings,
    skill_category as skill_category,
)
from ._composite import (
    composite_scores as composite_scores,
    normalisation_note as normalisation_note,
)
from ._kappa import (
    kappa_by_dimension as kappa_by_dimension,
)
from ._lint import (
    LintResult as LintResult,
    lint_suite as lint_suite,
    write_quality as write_quality,
)
from ._near_miss import (
    MAX_QUERY_CHARS as MAX_QUERY_CHARS,
    near_miss_payload as near_miss_payload,
    near_miss_request as near_miss_request,
    parse_near_misses as parse_near_misses,
    read_near_miss_payload as read_near_miss_payload,
)
from ._optimize_report import (
    write_outputs as write_outputs,
)
from ._optimizer import (
    Candidate as Candidate,
    LoopBudget as LoopBudget,
    OptimizeResult as OptimizeResult,
    optimize as optimize,
    score_text as score_text,
)
from ._payload import (
    DESCRIPTION_TOOL as DESCRIPTION_TOOL,
    NEAR_MISS_TOOL as NEAR_MISS_TOOL,
    SKILL_QUALITY_TOOL as SKILL_QUALITY_TOOL,
)
from ._rewriter import (
    parse_description as parse_description,
    read_rewrite_payload as read_rewrite_payload,
    rewrite_request as rewrite_request,
)
from ._static import (
    static_findings as static_findings,
)
from ._trigger_f1 import (
    disagreement_reading as disagreement_reading,
    measured_triggering as measured_triggering,
    measured_vs_predicted as measured_vs_predicted,
    predicted_triggering as predicted_triggering,
    write_trigger_f1 as write_trigger_f1,
)
from ._trigger_runs import (
    RunSpec as RunSpec,
    TriggerRuns as TriggerRuns,
    measure_description as measure_description,
    with_description as with_description,
)
from ._trigger_set import (
    GENERATED as GENERATED,
    Query as Query,
    TriggerSet as TriggerSet,
    TriggerSetError as TriggerSetError,
    build_trigger_set as build_trigger_set,
    check_splittable as check_splittable,
)
from ._trigger_stats import (
    MIN_TEST_QUERIES as MIN_TEST_QUERIES,
    f1_interval as f1_interval,
    mcnemar_exact_p as mcnemar_exact_p,
    paired_test as paired_test,
    winner_call as winner_call,
)
from ._units import (
    frontmatter as frontmatter,
    site_base_of as site_base_of,
    skill_units as skill_units,
)
