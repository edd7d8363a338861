"""The column lists of every ledger, declared once.

``QDRANT_*`` lists are qdrant's columns in their order (their files load unchanged); the unprefixed list is the
whole ledger as skillbench writes it: qdrant's columns first, then ours.
"""

from __future__ import annotations

# Where a run's installed skills came from (skillbench.suite._versions), in metadata.json and the manifest: the ref
# as given, its commit, the hash of the installed families' files, the hash of a working tree's difference.
VERSION_COLUMNS: tuple[str, ...] = ("skills_ref", "skills_commit", "skills_tree", "skills_diff")

# plan.csv: every planned run, in the recorded shuffle's order (generate writes it before the first run).
PLAN_COLUMNS: tuple[str, ...] = (
    "run_id", "prompt", "skill_family", "skill_leaf", "model", "condition", "rep", "dormancy", "order",
)

# manifest.csv: one row per run (signals writes it).
QDRANT_MANIFEST_COLUMNS: tuple[str, ...] = (
    "prompt", "skill_family", "skill_leaf", "model", "condition", "rep", "run_id", "exit_code", "skills_sha",
    "timestamp", "skill_available", "skill_activation", "reached_leaf", "fetched_site", "fetched_count",
    "model_snapshot", "cli_version", "total_cost_usd", "num_turns", "result_subtype", "budget_hit", "signals_ok",
    "duration_ms",
)
OUR_MANIFEST_COLUMNS: tuple[str, ...] = (
    "dormancy", "sandbox", "is_error", "terminal_reason", "denials", "attempts", "endpoint", "run_state",
    "trigger_only", *VERSION_COLUMNS, "rate_limited",
)
MANIFEST_COLUMNS: tuple[str, ...] = (*QDRANT_MANIFEST_COLUMNS, *OUR_MANIFEST_COLUMNS)
# Our optional manifest columns and the value an absent column reads as (qdrant's runner only called the real API).
MANIFEST_DEFAULTS: dict[str, object] = {
    "dormancy": False, "sandbox": "", "is_error": False, "terminal_reason": "", "denials": 0, "attempts": 1,
    "endpoint": "real", "run_state": "", "trigger_only": False,
    **dict.fromkeys(VERSION_COLUMNS, ""),  # weeks before version arms read as unknown
    # the CLI retried a 429/529 in the run (skillbench.signals._manifest.rate_limit_retries); older weeks: no
    "rate_limited": False,
}

# scores.csv: one row per graded rubric item (the judge appends it).
QDRANT_SCORES_COLUMNS: tuple[str, ...] = (
    "prompt", "skill", "model", "condition", "rep", "item_type", "item_text", "verdict", "credit", "contribution",
    "contested", "evidence_quote",
)
OUR_SCORES_COLUMNS: tuple[str, ...] = (
    "run_id", "item_index", "judge_model", "samples", "evidence_verified", "rubric_sha", "judge_prompt_sha",
    "absence",  # "1": a must graded by absence (the judge hunted for its violation; skillbench.suite._absence)
)
SCORES_COLUMNS: tuple[str, ...] = (*QDRANT_SCORES_COLUMNS, *OUR_SCORES_COLUMNS)

# pairs.csv: one row per (prompt, model, rep) (the pairwise judge appends it).
PAIRS_COLUMNS: tuple[str, ...] = (
    "run_key", "skill_family", "prompt", "model", "rep", "winner_ab", "winner_ba", "outcome", "judge_model", "error",
)

# calibration.csv: the columns that name a row (the statistics after them: calibration.agreement.AGREEMENT_COLUMNS).
CALIBRATION_KEY_COLUMNS: tuple[str, ...] = ("comparison", "rater_a", "rater_b", "item_type")

# judge-skips.csv
JUDGE_SKIPS_COLUMNS: tuple[str, ...] = ("run_id", "reason")

# identifiers.csv: per checked answer one ``run`` row (so an answer with no identifier differs from one never
# checked), then one ``identifier`` row per identifier it uses (skillbench.identifiers.Identifier's fields from
# ``text`` on; empty on a run row). The identifiers pass appends each answer's rows as one group.
IDENTIFIER_RUN_ROW = "run"
IDENTIFIER_ROW = "identifier"
IDENTIFIERS_COLUMNS: tuple[str, ...] = (
    "run_id", "prompt", "skill_family", "model", "condition", "rep", "row", "text", "target", "kind", "language",
    "status", "surface", "quote",
)

# checks.csv: one row per run x deterministic check (status: see vocab.CHECK_STATUSES).
CHECKS_COLUMNS: tuple[str, ...] = (
    "prompt", "model", "condition", "rep", "run_id", "check_id", "check_type", "status", "detail",
)

# truth.csv: the simulation's answer key, one row per run x attempt x rubric item or check (generate, sim backend).
# ``decided``: covered | violated | omitted for a rubric item, passed | failed for a check (item_type ``check``).
# The simulated agent's TruthRow (skillbench.sim._agent) has exactly these fields, in this order.
TRUTH_COLUMNS: tuple[str, ...] = (
    "run_id", "attempt", "model", "prompt", "activation_route", "skill_in_context", "item_index", "item_type",
    "decided", "check_id",
)
LEGACY_TRUTH_COLUMNS: tuple[str, ...] = TRUTH_COLUMNS[:-1]  # truth.csv before checks: no check_id column

# scorecard-history.csv: one row per run key × model.
QDRANT_HISTORY_COLUMNS: tuple[str, ...] = (
    "run_key", "window_end", "model", "must_lift", "must_lift_se", "composite_lift", "cost_delta", "turns_delta",
)
# The history in memory: qdrant's 8 columns, then the row's endpoint kind. On disk the history file keeps qdrant's
# 8 columns and the endpoint lives in the sidecar (HISTORY_ENDPOINT_COLUMNS); older files of ours hold all 9.
HISTORY_COLUMNS: tuple[str, ...] = (*QDRANT_HISTORY_COLUMNS, "endpoint")
# scorecard-history.endpoints.csv: the endpoint kind of each history row, keyed by (run_key, model).
HISTORY_ENDPOINT_COLUMNS: tuple[str, ...] = ("run_key", "model", "endpoint")
# scorecard-history.prompts.csv: one row per run key × model × prompt, the prompt's lift d (paired week over week).
HISTORY_PROMPT_COLUMNS: tuple[str, ...] = ("run_key", "model", "prompt", "d")
# scorecard-history.controls.csv: one row per run key × model × skill family × control comparison, its gate state.
HISTORY_CONTROL_COLUMNS: tuple[str, ...] = ("run_key", "window_end", "endpoint", "model", "skill_family", "control",
                                            "state", "reason")

# heldout-uses.csv: one row per held-out prompt per use (a comparison or a week run with --generalization);
# run_key names the decision (compare-<base>-<head> or the week's key), base/head_commit the edit (empty for a week).
HELDOUT_USE_COLUMNS: tuple[str, ...] = ("used_at", "command", "run_key", "base_commit", "head_commit",
                                        "skill_family", "prompt")

# trigger-f1.csv: one row per skill family, its measured triggering (skillbench.quality._trigger_f1 writes it).
TRIGGER_F1_COLUMNS: tuple[str, ...] = (
    "family", "should_n", "should_not_n", "tp", "fn", "fp", "tn", "precision", "recall", "f1", "unread_plugin_runs",
    # added with the intervals (issue 31); a file written before them has the columns above only
    "precision_low", "precision_high", "recall_low", "recall_high", "rate_method", "f1_low", "f1_high", "f1_method",
)

# The key of one run in the ledgers that do not carry its run id (qdrant's).
RUN_KEYS: tuple[str, ...] = ("prompt", "model", "condition", "rep")
