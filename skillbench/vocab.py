"""The domain's words, declared once: arms, rubric item types, verdicts and outcomes.

Every module that names an arm, an item type or a verdict imports it from here, so a word means one thing
everywhere (the ledgers' readers, the judge, the scorecard and the figures agree by construction).
"""

from __future__ import annotations

from typing import Literal

# -- arms (the ``condition`` column) --------------------------------------------------------------------------
NO_SKILL = "no-skill"  # nothing installed
WITH_SKILL = "with-skill"  # the prompt's skill family installed
PLUGIN = "plugin"  # every family installed: telemetry, never part of the lift
PLACEBO = "placebo"  # opt-in: the family's name and description over a same-length neutral body
AA = "aa"  # opt-in: a second no-skill arm (the A/A noise floor)
Condition = Literal["no-skill", "with-skill", "plugin", "placebo", "aa"]
CONDITIONS: tuple[Condition, ...] = (NO_SKILL, WITH_SKILL, PLUGIN, PLACEBO, AA)
LIFT_ARMS: tuple[str, str] = (NO_SKILL, WITH_SKILL)  # lift = with-skill − no-skill
CONTROL_ARMS: tuple[str, str] = (PLACEBO, AA)  # graded whenever they ran; reported beside the lift, never in it
SKILLED_ARMS: tuple[str, str] = (WITH_SKILL, PLUGIN)  # arms in which a skill can trigger

# -- rubric items ---------------------------------------------------------------------------------------------
ItemType = Literal["must", "bonus", "avoid"]
ITEM_TYPES: tuple[ItemType, ...] = ("must", "bonus", "avoid")

# -- rubric verdicts ------------------------------------------------------------------------------------------
VerdictName = Literal["met", "missing", "absent", "violated", "clean"]
# Per item type: (the verdict that earns the item's credit, the one that does not).
ALLOWED_VERDICTS: dict[str, tuple[str, str]] = {
    "must": ("met", "missing"),
    "bonus": ("met", "absent"),
    "avoid": ("violated", "clean"),
}
POSITIVE_VERDICTS = frozenset({"met", "violated"})  # the verdicts that need a verbatim quote
UNGRADED = "ungraded"  # ours: the judge failed; never a skill loss
# The evidence state of a violated avoid item whose quote is verbatim but cannot show the harm on its own (a bare
# number, a short generic fragment: skillbench.judge.claim_gap); the violation keeps its credit, the quote is flagged.
EVIDENCE_NO_CLAIM = "no claim"
PARSE_ERROR = "PARSE_ERROR"  # qdrant's judge-failure verdict
# Verdicts that carry no credit: ours, qdrant's parse failure, and an empty cell.
UNGRADED_VERDICTS = frozenset({UNGRADED, PARSE_ERROR, ""})
GRADED_VERDICTS = frozenset(v for pair in ALLOWED_VERDICTS.values() for v in pair)
VERDICTS = GRADED_VERDICTS | UNGRADED_VERDICTS

# -- pairwise outcomes (for the with-skill arm) ---------------------------------------------------------------
WIN, TIE, LOSS = "W", "T", "L"
OUTCOMES: tuple[str, str, str] = (WIN, TIE, LOSS)

# -- preference-gate verdicts (dotnet's names; their precedence, rules and plain words: scorecard.verdicts) -----
GateState = Literal["VALID_PASS", "VALID_NO_CHANGE", "VALID_REGRESSION", "INVALID_INCONCLUSIVE"]
VALID_PASS: GateState = "VALID_PASS"
VALID_NO_CHANGE: GateState = "VALID_NO_CHANGE"
VALID_REGRESSION: GateState = "VALID_REGRESSION"  # the objective (check) record shows a credible loss
INVALID_INCONCLUSIVE: GateState = "INVALID_INCONCLUSIVE"
GATE_STATES: tuple[GateState, ...] = (VALID_PASS, VALID_NO_CHANGE, VALID_REGRESSION, INVALID_INCONCLUSIVE)
# The reason of a ``STATE (reason)`` verdict: why a record is not VALID_PASS.
(COMMIT_MISMATCH, INVALID_SPEC, INCOMPLETE_RECONCILIATION, JUDGE_ERRORS, ACTIVATION_CONTRACT_FAILED, UNDERPOWERED,
 OBJECTIVE_LOSS, NOT_SIGNIFICANT, NO_POSITIVE_DIRECTION, NET_WIN_BELOW_FLOOR) = (
    "commit_mismatch", "invalid_spec", "incomplete_reconciliation", "judge_errors", "activation_contract_failed",
    "underpowered", "objective_loss", "not_significant", "no_positive_direction", "net_win_below_floor")
# A record whose own sign test passes but whose p, Holm-adjusted across the report's records, does not.
NOT_SIGNIFICANT_ADJUSTED = "not_significant_adjusted"
# A record whose treatment's answers use identifiers the declared libraries lack credibly more often (opt-in).
FABRICATION = "fabrication"
# Why an objective (check) record is not a credible loss (besides UNDERPOWERED and NOT_SIGNIFICANT).
NO_LOSS_DIRECTION, NET_LOSS_BELOW_FLOOR = "no_loss_direction", "net_loss_below_floor"

# -- run states (ARCHITECTURE.md, "Run states"; decided by signals.manifest.run_state) ------------------------------
# The states a run folder can be in after a pass. The plan-level states (limited, capped, not_started) belong to
# planned runs without a folder and come from the pass.
FINISHED, BUDGET_HIT, API_ERROR, TIMEOUT, HARNESS_INVALID, SANDBOX_FAILURE = (
    "finished", "budget_hit", "api_error", "timeout", "harness_invalid", "sandbox_failure")
WORKER_LOST = "worker_lost"  # both attempts' Dask worker died under the run (skillbench.cluster): rerun it
TAMPERED = "tampered"  # the transcript disagrees with what the run's relay saw (signals.relay_disagreements)
RUN_STATES: tuple[str, ...] = (FINISHED, BUDGET_HIT, API_ERROR, TIMEOUT, HARNESS_INVALID, SANDBOX_FAILURE,
                               WORKER_LOST, TAMPERED)
COMPLETE_STATES: frozenset[str] = frozenset({FINISHED, BUDGET_HIT})  # resume keeps them; reconciliation counts them
PLAN_STATES: tuple[str, ...] = ("limited", "capped", "not_started")

# -- a skill family's state in a week (reconciliation.json's ``families``) -------------------------------------
# complete: every planned run of the family was run and written once; limited: some were kept out of the pass on
# purpose (outside --families/--prompts, past --limit) and nothing else is wrong; incomplete: a run is missing,
# capped, not started or damaged. A family whose spec failed validation has no planned run: ``invalid_families``.
FAMILY_COMPLETE, FAMILY_LIMITED, FAMILY_INCOMPLETE = "complete", "limited", "incomplete"
FAMILY_STATES: tuple[str, str, str] = (FAMILY_COMPLETE, FAMILY_LIMITED, FAMILY_INCOMPLETE)

# -- deterministic checks (the ``status`` column of checks.csv) -----------------------------------------------
CHECK_PASSED, CHECK_FAILED, CHECK_ERROR = "passed", "failed", "error"  # error: could not run; never a skill loss
CHECK_STATUSES: tuple[str, str, str] = (CHECK_PASSED, CHECK_FAILED, CHECK_ERROR)
CHECK_ITEM = "check"  # the item_type of a check's row in the simulation's truth.csv (rubric rows: ITEM_TYPES)

# -- objective completion transitions per stimulus (majority over reps of "all checks passed") -----------------
BASELINE_ONLY, SKILLED_ONLY, BOTH, NEITHER = "baseline-only", "skilled-only", "both", "neither"
TRANSITIONS: tuple[str, str, str, str] = (SKILLED_ONLY, BASELINE_ONLY, BOTH, NEITHER)

# -- endpoint kinds ---------------------------------------------------------------------------------------------
REAL = "real"
SIMULATED = "simulated"
ENDPOINT_UNKNOWN = "unknown"

# The judge's self-agreement must bar (skillbench.calibration): at least this share of must items graded unanimously
# over the repeats, judged on the lower end of its 95 % interval. The calibration writes the state into
# calibration.csv's ``bar_state``; the scorecard's decision block reads it (and flags a week whose bar did not pass).
UNANIMOUS_MUSTS_BAR = 0.95
# lower bound ≥ bar | estimate ≥ bar > lower bound | estimate below the bar
BAR_PASS, BAR_NOT_SHOWN, BAR_FAIL = "PASS", "NOT SHOWN", "FAIL"
# Calibration's size rule: grade again a stratified sample of at least this many musts (or every must), the size at
# which the bar's decision on its lower end is stable (skillbench.calibration._sample; docs/calibration.md).
CALIBRATION_MUST_FLOOR = 150

# The gate's minimum of voting stimuli per family × model: the scorecard's verdicts decide with it, preflight warns
# below it (one number, so a suite that passes preflight is never called underpowered for a count preflight accepted).
MIN_STIMULI = 5
