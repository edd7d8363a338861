"""Every file name of a suite, a run directory and a report, declared once.

A run directory (``SUITE_DIR/weekly/<run_key>/``) holds the week's ledgers at its top and one sub-folder per
run, named by run id. ARCHITECTURE.md lists which stage writes and which reads each file.
"""

from __future__ import annotations

# -- a suite --------------------------------------------------------------------------------------------------
PROMPTS_DIR = "test-prompts"  # SUITE_DIR/test-prompts/<name>.json
CONFIG_FILE = "skillbench.toml"  # SUITE_DIR/skillbench.toml
FIXTURES_DIR = "fixtures"  # SUITE_DIR/fixtures/: workspace files a task's `src` may name
SKILL_EVALS_DIR = "evals"  # <skill>/evals/: skill-creator's evals of a skill (never installed with it)
SKILL_EVALS_FILE = "evals.json"  # <skill>/evals/evals.json
SOLUTIONS_DIR = "solutions"  # SUITE_DIR/solutions/<prompt>/: files that solve a task (the simulated agent's only)
SKILL_FILE = "SKILL.md"
GOLD_DIR = "judge-gold"  # SUITE_DIR/judge-gold/: the frozen gold set the drift sentinel re-grades every week
GOLD_FILE = "gold.jsonl"  # SUITE_DIR/judge-gold/gold.jsonl: one answer per line, its rubric and agreed labels
WEEKLY_DIR = "weekly"  # SUITE_DIR/weekly/<run_key>/ and the history beside the weeks
HISTORY_FILE = "scorecard-history.csv"
# Beside a history file: the endpoint kind of each of its rows, so the history itself keeps qdrant's 8 columns.
HISTORY_ENDPOINTS_SUFFIX = ".endpoints.csv"  # <history stem>.endpoints.csv
HISTORY_ENDPOINTS_FILE = "scorecard-history" + HISTORY_ENDPOINTS_SUFFIX  # beside HISTORY_FILE
# Beside a history file too: each week's per-prompt lifts (the paired week-over-week Δ) and its control verdicts
# (the accumulated A/A false-pass rate); ledgers._history_sidecars reads and writes them.
HISTORY_PROMPTS_SUFFIX = ".prompts.csv"  # <history stem>.prompts.csv
HISTORY_PROMPTS_FILE = "scorecard-history" + HISTORY_PROMPTS_SUFFIX
HISTORY_CONTROLS_SUFFIX = ".controls.csv"  # <history stem>.controls.csv
HISTORY_CONTROLS_FILE = "scorecard-history" + HISTORY_CONTROLS_SUFFIX
# Every use of the suite's held-out prompts (compare/weekly --generalization), appended, never rewritten: how many
# decisions each held-out prompt has informed (they wear out); ledgers._heldout reads and appends it.
HELDOUT_USES_FILE = "heldout-uses.csv"  # SUITE_DIR/heldout-uses.csv

# -- a run directory (one week) -----------------------------------------------------------------------------
PLAN_FILE = "plan.csv"  # generate: every planned run, written before the first run
RUN_FILE = "run.json"  # generate: the week's run key, seed, matrix
TRUTH_FILE = "truth.csv"  # generate (sim): the simulation's answer key
RETRIES_FILE = "retries.json"  # generate: retried runs and stopped legs
RECONCILIATION_FILE = "reconciliation.json"  # generate: every planned run accounted for
MANIFEST_FILE = "manifest.csv"  # signals: one row per run
SCORES_FILE = "scores.csv"  # judge: one row per graded rubric item
CHECKS_FILE = "checks.csv"  # generate: one row per run x deterministic check
JUDGE_SKIPS_FILE = "judge-skips.csv"  # judge: gradeable runs that were not graded, and why
IDENTIFIERS_FILE = "identifiers.csv"  # identifiers: one row per checked answer, then one per identifier it uses
IDENTIFIERS_PASS_FILE = "identifiers.json"  # identifiers: the declared surfaces, their precision, the gate asked
PASS_FILE = "judge.json"  # judge: the passes' provenance
JUDGE_BATCHES_FILE = "judge-batches.json"  # judge/judge-pairs/calibrate --batch: accepted batch ids, custom_id → run
PAIRS_FILE = "pairs.csv"  # judge-pairs: one row per (prompt, model, rep)
CALIBRATION_FILE = "calibration.csv"  # calibrate: agreement statistics
CALIBRATION_GRADES_FILE = "calibration-grades.csv"  # calibrate: every grading, tidy
CALIBRATION_MD = "calibration.md"  # calibrate: the report
CALIBRATION_SAMPLE_FILE = "calibration-sample.json"  # calibrate: how its runs were drawn (key, nonce, looks, n of N)
LABELS_FILE = "labels.csv"  # labels export: the sheet people fill in
PAIRWISE_BIAS_FILE = "pairwise-bias.csv"  # calibrate: the pairwise judge's position and length bias, with intervals
SENTINEL_GRADES_FILE = "sentinel-grades.csv"  # calibration stage: the week's judge on the frozen gold set, tidy
SENTINEL_FILE = "sentinel.json"  # calibration stage: the sentinel's agreement, must credit, judge snapshot, flag
STUDY_DIR = "judge-study"  # judge-study: RUN_DIR/judge-study/ holds the study's files below
STUDY_GRADES_FILE = "study-grades.csv"  # judge-study: every grading by every judge (calibration's grade columns)
STUDY_FILE = "study.csv"  # judge-study: one row per judge x item type (agreement with intervals, cost)
STUDY_JUDGES_FILE = "study-judges.csv"  # judge-study: every judge against every other judge
STUDY_JSON = "study.json"  # judge-study: options, the recommendation and its rule
STUDY_MD = "study.md"  # judge-study: the page (study.html beside it)
STUDY_HTML = "study.html"  # judge-study: the executed notebook as a page
STUDY_PAIRS_FILE = "study-pairs.csv"  # judge-study: every study judge as the pairwise judge, both orders
STUDY_NOTEBOOK = "judge_study.ipynb"  # judge-study: the executed notebook (notebooks/judge_study.ipynb)
SCORECARD_FILE = "scorecard.md"  # scorecard
SCORECARD_COMMENT_FILE = "scorecard-comment.md"  # scorecard: the decision and what does not pass, PR-comment size
DECISION_FILE = "decision.json"  # scorecard: the decision block (lift per model, calls, verdicts, trust flags)
COMPARE_COMMENT_FILE = "compare-comment.md"  # compare: compare.md's decision and what does not pass, PR-comment size
LOCK_FILE = ".skillbench.lock"  # held (OS file lock) by the pass working on the week; names its PID and command
SLUGS_FILE = "slugs.json"  # names that had to change to become folder names or short ids, mapped back
SHARD_SUMMARY_FORMAT = "shard-{index}-of-{count}.json"  # generate/judge --shard i/N: the leg's summary
SHARD_SUMMARY_GLOB = "shard-*-of-*.json"
CONSOLIDATION_FILE = "consolidation.json"  # consolidate: the shards merged, the checks made, COMPLETE or INCOMPLETE
SKILL_QUALITY_FILE = "skill-quality.csv"  # lint-skills: one row per skill x finding or dimension (static and judged)
SKILL_QUALITY_JSON = "skill-quality.json"  # lint-skills: options, judges, kappa per dimension, composite weights
SKILL_QUALITY_MD = "skill-quality.md"  # lint-skills: the page
TRIGGER_F1_FILE = "trigger-f1.csv"  # signals/quality: measured activation per family (precision, recall, F1, counts)
OPTIMIZE_DIR = "optimize"  # optimize-description: <out-dir>/<family>-<stamp>/ holds the files below
OPTIMIZE_CANDIDATES_FILE = "candidates.csv"  # optimize-description: every candidate's train/test trigger rates and F1
OPTIMIZE_TRIGGER_SET = "trigger-set.json"  # optimize-description: the queries, should/should-not, split and seed
OPTIMIZE_REPORT_MD = "optimize.md"  # optimize-description: the page (table, winner, diff)

# -- a run folder (RUN_DIR/<run_id>/) -------------------------------------------------------------------------
METADATA_FILE = "metadata.json"  # generate: the run's identity and settings
TEST_PROMPT_FILE = "test-prompt.json"  # generate: the prompt file as run
TRANSCRIPT_FILE = "transcript.jsonl"  # the CLI's stream-json output
RELAY_FILE = "relay.jsonl"  # generate: what the run's relay saw, one exchange per line (the verdict's source)
STDERR_FILE = "stderr.txt"  # the CLI's stderr
RUN_CHECKS_FILE = "checks.json"  # generate: the run's setup outcome and check results (committed with the run)
RUN_JUDGE_FILE = "judge.json"  # judge: every call of that run
JUDGE_COST_FILE = "judge_cost.txt"  # judge: the run's judge spend in USD, the sum of the parts below
COST_PARTS_FILE = "judge_cost.json"  # judge: spend per judge (rubric, pairs)

# -- folders generation keeps beside the runs ---------------------------------------------------------------
ASIDE_DIR = "_aside"  # partial run folders moved aside on resume
VERSIONS_DIR = "_versions"  # a version arm's files, git-archived per commit (skillbench.suite._versions)
HELDOUT_DIR = "_heldout"  # --generalization: the held-out prompts' runs, a week of their own below the scored one
HELDOUT_USE_FILE = "heldout-use.json"  # RUN_DIR/_heldout/: which held-out prompts this pass ran, their recorded wear
PLACEBO_DIR = "_placebo"  # one folder per generated placebo (skillbench.suite._placebo); never a run folder
TMP_PREFIX = ".tmp-"  # a run folder being written

# -- a report (reports/<run_key>/) --------------------------------------------------------------------------
STATE_FILE = "weekly.json"
INDEX_FILE = "index.html"
PROGRESS_FILE = ".progress"  # the running stage's latest progress bar, relayed to the terminal by the chain
SCORECARD_HTML = "scorecard.html"
CALIBRATION_HTML = "calibration.html"
RUN_PAGES_DIR = "runs"  # report/_run_pages.py: a page per prompt × model, index.html, links.json (the names' targets)
