from ._answers import (
    RunAnswer as RunAnswer,
    RunSelection as RunSelection,
    Skip as Skip,
    WeekSelectionError as WeekSelectionError,
    check_selection as check_selection,
    read_run_answer as read_run_answer,
    select_runs as select_runs,
)
from ._batch import (
    BatchClient as BatchClient,
    BatchPacing as BatchPacing,
    JudgePending as JudgePending,
)
from ._batch_store import (
    STORE_VERSION as STORE_VERSION,
    BatchStore as BatchStore,
    BatchStoreError as BatchStoreError,
    RequestInfo as RequestInfo,
    custom_id as custom_id,
)
from ._client import (
    DEFAULT_JUDGE_MODEL as DEFAULT_JUDGE_MODEL,
    CallResult as CallResult,
    JudgeCallError as JudgeCallError,
    JudgeClient as JudgeClient,
    SlotFailed as SlotFailed,
    ask_validated as ask_validated,
    opaque_run_id as opaque_run_id,
    resolve_judge_model as resolve_judge_model,
    shuffle_seed as shuffle_seed,
)
from ._costs import (
    clear_judge_cost as clear_judge_cost,
    record_judge_cost as record_judge_cost,
)
from ._evidence import (
    NO_CLAIM_COLUMNS as NO_CLAIM_COLUMNS,
    avoid_claim_gaps as avoid_claim_gaps,
    evidence_counts as evidence_counts,
    evidence_frame as evidence_frame,
    evidence_summary as evidence_summary,
    no_claim_frame as no_claim_frame,
)
from ._pairwise import (
    Pair as Pair,
    PairJudge as PairJudge,
    PairsReport as PairsReport,
    find_pairs as find_pairs,
    judge_pairs as judge_pairs,
    outcome as outcome,
    pairs_frame as pairs_frame,
    position_agreement as position_agreement,
)
from ._protocol import (
    PREFERENCE_TOOL as PREFERENCE_TOOL,
    VERDICTS_TOOL as VERDICTS_TOOL,
    PreferenceInput as PreferenceInput,
    ProtocolError as ProtocolError,
    RubricLine as RubricLine,
    VerdictsInput as VerdictsInput,
    absence_requirement as absence_requirement,
    build_judge_request as build_judge_request,
    build_pair_request as build_pair_request,
    delimiter_token as delimiter_token,
    judge_headers as judge_headers,
    judge_prompt_sha as judge_prompt_sha,
    parse_judge_message as parse_judge_message,
    parse_preference as parse_preference,
    parse_verdicts as parse_verdicts,
    tool_input as tool_input,
)
from ._quotes import (
    MIN_CLAIM_WORDS as MIN_CLAIM_WORDS,
    claim_gap as claim_gap,
    normalize_quote as normalize_quote,
    quote_in_answer as quote_in_answer,
)
from ._rubric import (
    ItemGrade as ItemGrade,
    RubricJudge as RubricJudge,
    RunGrading as RunGrading,
    ScoresLedger as ScoresLedger,
    Vote as Vote,
    score_rows as score_rows,
)
from ._run import (
    PAIRS_PASSES as PAIRS_PASSES,
    JudgeOptions as JudgeOptions,
    JudgeReport as JudgeReport,
    judge_run_dir as judge_run_dir,
    write_skips as write_skips,
)
