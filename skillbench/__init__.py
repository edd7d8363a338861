"""skillbench: does this skill make the model answer better, by how much, at what cost, and can we trust it?

The public API is re-exported here; notebooks and the ``skillbench`` CLI call the same functions. Names are
imported on first use (PEP 562), so ``skillbench validate`` does not pay for pandas, scipy and the SDKs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "activation_summary": "skillbench.trigger",
    "BackendError": "skillbench.backend",
    "bootstrap_lift": "skillbench.stats",
    "build_judge_request": "skillbench.judge_protocol",
    "build_pair_request": "skillbench.judge_protocol",
    "calibrate": "skillbench.calibration",
    "Calibration": "skillbench.calibration",
    "CalibrationOptions": "skillbench.calibration",
    "cell_scores": "skillbench.scoring",
    "cohen_kappa": "skillbench.calibration",
    "collapse_votes": "skillbench.gate",
    "compute_scorecard": "skillbench.scorecard",
    "CONFIG_FILENAME": "skillbench.config",
    "ConfigError": "skillbench.config",
    "cost_cells": "skillbench.scoring",
    "decide": "skillbench.gate",
    "DEFAULT_JUDGE_MODEL": "skillbench.judge",
    "Defect": "skillbench.validation",
    "Endpoint": "skillbench.backend",
    "evidence_summary": "skillbench.judge",
    "export_labels": "skillbench.labels",
    "find_pairs": "skillbench.pairs",
    "fleiss_kappa": "skillbench.calibration",
    "flipping_items": "skillbench.calibration",
    "GateDecision": "skillbench.gate",
    "generate": "skillbench.generation",
    "GenerateOptions": "skillbench.generation",
    "HistoryError": "skillbench.history",
    "judge_headers": "skillbench.judge_protocol",
    "judge_pairs": "skillbench.pairs",
    "judge_prompt_sha": "skillbench.judge_protocol",
    "judge_run_dir": "skillbench.judge",
    "JudgeClient": "skillbench.judge",
    "JudgeOptions": "skillbench.judge",
    "JudgeReport": "skillbench.judge",
    "krippendorff_alpha": "skillbench.calibration",
    "krippendorff_reading": "skillbench.calibration",
    "landis_koch": "skillbench.calibration",
    "LedgerError": "skillbench.ledgers",
    "lift_table": "skillbench.stats",
    "load_config": "skillbench.config",
    "load_run": "skillbench.ledgers",
    "load_suite": "skillbench.validation",
    "make_plan": "skillbench.plan",
    "minimum_detectable_effect": "skillbench.stats",
    "model_endpoint": "skillbench.backend",
    "pabak": "skillbench.calibration",
    "pair_agreement": "skillbench.calibration",
    "paired_differences": "skillbench.stats",
    "pairs_frame": "skillbench.pairs",
    "parse_preference": "skillbench.judge_protocol",
    "parse_skill_url": "skillbench.suite",
    "parse_verdicts": "skillbench.judge_protocol",
    "position_agreement": "skillbench.pairs",
    "preference_gate": "skillbench.gate",
    "PreferenceInput": "skillbench.judge_protocol",
    "preflight": "skillbench.validation",
    "PreflightReport": "skillbench.validation",
    "price": "skillbench.prices",
    "prompt_rep_scores": "skillbench.scoring",
    "prompt_scores": "skillbench.scoring",
    "PromptSpec": "skillbench.suite",
    "read_history": "skillbench.history",
    "read_judge_skips": "skillbench.ledgers",
    "read_labels": "skillbench.labels",
    "read_manifest": "skillbench.ledgers",
    "read_pairs": "skillbench.ledgers",
    "read_reconciliation": "skillbench.ledgers",
    "read_scores": "skillbench.ledgers",
    "read_transcript": "skillbench.transcript",
    "reconcile": "skillbench.reconciliation",
    "Reconciliation": "skillbench.ledgers",
    "render_markdown": "skillbench.scorecard",
    "resolve_backend": "skillbench.backend",
    "RubricItem": "skillbench.suite",
    "RubricJudge": "skillbench.judge",
    "run_signals": "skillbench.signals",
    "RunLedgers": "skillbench.ledgers",
    "scorecard_frames": "skillbench.scorecard",
    "ScorecardData": "skillbench.scorecard",
    "ScorecardResult": "skillbench.scorecard",
    "select_runs": "skillbench.judge",
    "self_agreement": "skillbench.calibration",
    "self_served_baseline": "skillbench.trigger",
    "SimServer": "skillbench.sim",
    "simulated_endpoint": "skillbench.sim",
    "Skill": "skillbench.suite",
    "Suite": "skillbench.suite",
    "SuiteConfig": "skillbench.config",
    "SuiteError": "skillbench.validation",
    "TestPrompt": "skillbench.suite",
    "Transcript": "skillbench.transcript",
    "trigger_health": "skillbench.trigger",
    "uncertainty_table": "skillbench.stats",
    "update_history": "skillbench.history",
    "usage_cost": "skillbench.prices",
    "VerdictsInput": "skillbench.judge_protocol",
    "week_over_week": "skillbench.history",
    "WeekOverWeek": "skillbench.history",
    "write_manifest": "skillbench.signals",
    "write_scorecard": "skillbench.scorecard",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.backend import BackendError, Endpoint, model_endpoint, resolve_backend
    from skillbench.calibration import (
        Calibration,
        CalibrationOptions,
        calibrate,
        cohen_kappa,
        fleiss_kappa,
        flipping_items,
        krippendorff_alpha,
        krippendorff_reading,
        landis_koch,
        pabak,
        pair_agreement,
        self_agreement,
    )
    from skillbench.config import CONFIG_FILENAME, ConfigError, SuiteConfig, load_config
    from skillbench.gate import GateDecision, collapse_votes, decide, preference_gate
    from skillbench.generation import GenerateOptions, generate
    from skillbench.history import HistoryError, WeekOverWeek, read_history, update_history, week_over_week
    from skillbench.judge import (
        DEFAULT_JUDGE_MODEL,
        JudgeClient,
        JudgeOptions,
        JudgeReport,
        RubricJudge,
        evidence_summary,
        judge_run_dir,
        select_runs,
    )
    from skillbench.judge_protocol import (
        PreferenceInput,
        VerdictsInput,
        build_judge_request,
        build_pair_request,
        judge_headers,
        judge_prompt_sha,
        parse_preference,
        parse_verdicts,
    )
    from skillbench.labels import export_labels, read_labels
    from skillbench.ledgers import (
        LedgerError,
        Reconciliation,
        RunLedgers,
        load_run,
        read_judge_skips,
        read_manifest,
        read_pairs,
        read_reconciliation,
        read_scores,
    )
    from skillbench.pairs import find_pairs, judge_pairs, pairs_frame, position_agreement
    from skillbench.plan import make_plan
    from skillbench.prices import price, usage_cost
    from skillbench.reconciliation import reconcile
    from skillbench.scorecard import (
        ScorecardData,
        ScorecardResult,
        compute_scorecard,
        render_markdown,
        scorecard_frames,
        write_scorecard,
    )
    from skillbench.scoring import cell_scores, cost_cells, prompt_rep_scores, prompt_scores
    from skillbench.signals import run_signals, write_manifest
    from skillbench.sim import SimServer, simulated_endpoint
    from skillbench.stats import (
        bootstrap_lift,
        lift_table,
        minimum_detectable_effect,
        paired_differences,
        uncertainty_table,
    )
    from skillbench.suite import PromptSpec, RubricItem, Skill, Suite, TestPrompt, parse_skill_url
    from skillbench.transcript import Transcript, read_transcript
    from skillbench.trigger import activation_summary, self_served_baseline, trigger_health
    from skillbench.validation import Defect, PreflightReport, SuiteError, load_suite, preflight
