"""Skill quality before the runs: static checks of each SKILL.md, PluginEval's anchored dimensions judged by a
model (kappa between samples, a weighted composite), measured triggering beside the predicted, and a description
optimizer tested on held-out triggers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("lint_suite", "write_quality", "LintResult"), "lint"),
    **dict.fromkeys(("static_findings",), "static"),
    **dict.fromkeys(("skill_units",), "units"),
    **dict.fromkeys(("CATEGORY_TARGETS", "skill_category", "quality_settings"), "categories"),
    **dict.fromkeys(("DIMENSIONS",), "anchored"),
    **dict.fromkeys(("AnchoredJudge", "judge_units"), "anchored_judge"),
    **dict.fromkeys(("kappa_by_dimension",), "kappa"),
    **dict.fromkeys(("composite_scores", "normalisation_note"), "composite"),
    **dict.fromkeys((
        "measured_triggering", "write_trigger_f1", "measured_vs_predicted", "disagreement_reading",
        "predicted_triggering", "TRIGGER_F1_COLUMNS"
    ), "trigger_f1"),
    **dict.fromkeys((
        "build_trigger_set", "check_splittable", "TriggerSet", "Query", "TriggerSetError", "GENERATED"
    ), "trigger_set"),
    **dict.fromkeys(("measure_description", "RunSpec", "TriggerRuns", "with_description"), "trigger_runs"),
    **dict.fromkeys(("optimize", "OptimizeResult", "Candidate"), "optimizer"),
    **dict.fromkeys(("write_outputs",), "optimize_report"),
    **dict.fromkeys(("near_miss_request", "parse_near_misses"), "near_miss"),
    **dict.fromkeys(("SKILL_QUALITY_TOOL", "DESCRIPTION_TOOL", "NEAR_MISS_TOOL"), "payload"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.quality.anchored import (
        DIMENSIONS,
    )
    from skillbench.quality.anchored_judge import (
        AnchoredJudge,
        judge_units,
    )
    from skillbench.quality.categories import (
        CATEGORY_TARGETS,
        quality_settings,
        skill_category,
    )
    from skillbench.quality.composite import (
        composite_scores,
        normalisation_note,
    )
    from skillbench.quality.kappa import (
        kappa_by_dimension,
    )
    from skillbench.quality.lint import (
        LintResult,
        lint_suite,
        write_quality,
    )
    from skillbench.quality.near_miss import (
        near_miss_request,
        parse_near_misses,
    )
    from skillbench.quality.optimize_report import (
        write_outputs,
    )
    from skillbench.quality.optimizer import (
        Candidate,
        OptimizeResult,
        optimize,
    )
    from skillbench.quality.payload import (
        DESCRIPTION_TOOL,
        NEAR_MISS_TOOL,
        SKILL_QUALITY_TOOL,
    )
    from skillbench.quality.static import (
        static_findings,
    )
    from skillbench.quality.trigger_f1 import (
        TRIGGER_F1_COLUMNS,
        disagreement_reading,
        measured_triggering,
        measured_vs_predicted,
        predicted_triggering,
        write_trigger_f1,
    )
    from skillbench.quality.trigger_runs import (
        RunSpec,
        TriggerRuns,
        measure_description,
        with_description,
    )
    from skillbench.quality.trigger_set import (
        GENERATED,
        Query,
        TriggerSet,
        TriggerSetError,
        build_trigger_set,
        check_splittable,
    )
    from skillbench.quality.units import (
        skill_units,
    )
