"""skillbench: does this skill make the model answer better, by how much, at what cost, and can we trust it?

The public API is re-exported here; notebooks and the ``skillbench`` CLI call the same functions.
"""

from skillbench.backend import BackendError, Endpoint, model_endpoint, resolve_backend
from skillbench.config import CONFIG_FILENAME, ConfigError, SuiteConfig, load_config
from skillbench.gate import GateDecision, collapse_votes, decide, preference_gate
from skillbench.generate import GenerateOptions, generate
from skillbench.history import HistoryError, WeekOverWeek, read_history, update_history, week_over_week
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
from skillbench.plan import make_plan
from skillbench.preflight import Defect, PreflightReport, SuiteError, load_suite, preflight
from skillbench.reconcile import reconcile
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

__version__ = "0.1.0"

__all__ = [
    "BackendError", "CONFIG_FILENAME", "ConfigError", "Defect", "Endpoint", "GateDecision", "GenerateOptions",
    "HistoryError", "LedgerError", "PreferenceInput", "PreflightReport", "PromptSpec", "Reconciliation", "RubricItem",
    "RunLedgers", "ScorecardData", "ScorecardResult", "SimServer", "Skill", "Suite", "SuiteConfig", "SuiteError",
    "TestPrompt", "Transcript", "VerdictsInput", "WeekOverWeek", "activation_summary", "bootstrap_lift",
    "build_judge_request", "build_pair_request", "cell_scores", "collapse_votes", "compute_scorecard", "cost_cells",
    "decide", "generate", "judge_headers", "judge_prompt_sha", "lift_table", "load_config", "load_run", "load_suite",
    "make_plan", "minimum_detectable_effect", "model_endpoint", "paired_differences", "parse_preference",
    "parse_skill_url", "parse_verdicts", "preference_gate", "preflight", "prompt_rep_scores", "prompt_scores",
    "read_history", "read_judge_skips", "read_manifest", "read_pairs", "read_reconciliation", "read_scores",
    "read_transcript", "reconcile", "render_markdown", "resolve_backend", "run_signals", "scorecard_frames",
    "self_served_baseline", "simulated_endpoint", "trigger_health", "uncertainty_table", "update_history",
    "week_over_week", "write_manifest", "write_scorecard",
]
