"""The judges: a blind rubric judge with verified evidence and a position-swapped pairwise judge.

Both speak :mod:`skillbench.judge.protocol` (shared byte for byte with the simulated judge) through the real
``anthropic`` SDK (:class:`JudgeClient`), retry a failed slot once, and append resumable ledgers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys((
        "build_judge_request", "build_pair_request", "judge_headers", "judge_prompt_sha",
        "parse_verdicts", "parse_preference", "VerdictsInput", "PreferenceInput",
        "ProtocolError", "RubricLine"
    ), "protocol"),
    **dict.fromkeys((
        "DEFAULT_JUDGE_MODEL", "JudgeClient", "JudgeCallError", "CallResult", "SlotFailed",
        "ask_validated", "opaque_run_id", "shuffle_seed", "resolve_judge_model"
    ), "client"),
    **dict.fromkeys(("RunAnswer", "Skip", "read_run_answer", "select_runs",), "answers"),
    **dict.fromkeys(("RubricJudge", "RunGrading", "ItemGrade", "Vote", "ScoresLedger", "score_rows",), "rubric"),
    **dict.fromkeys((
        "Pair", "PairJudge", "PairsReport", "find_pairs", "judge_pairs", "pairs_frame",
        "position_agreement", "outcome"
    ), "pairwise"),
    **dict.fromkeys(("record_judge_cost", "clear_judge_cost",), "costs"),
    **dict.fromkeys(("evidence_summary", "evidence_counts", "evidence_frame",), "evidence"),
    **dict.fromkeys(("normalize_quote", "quote_in_answer"), "quotes"),
    **dict.fromkeys(("JudgeOptions", "JudgeReport", "judge_run_dir",), "run"),
    **dict.fromkeys(("BatchClient", "JudgePending"), "batch"),
    **dict.fromkeys(("BatchStore", "BatchStoreError", "RequestInfo", "custom_id"), "batch_store"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.judge.answers import (
        RunAnswer,
        Skip,
        read_run_answer,
        select_runs,
    )
    from skillbench.judge.batch import (
        BatchClient,
        JudgePending,
    )
    from skillbench.judge.batch_store import (
        BatchStore,
        BatchStoreError,
        RequestInfo,
        custom_id,
    )
    from skillbench.judge.client import (
        DEFAULT_JUDGE_MODEL,
        CallResult,
        JudgeCallError,
        JudgeClient,
        SlotFailed,
        ask_validated,
        opaque_run_id,
        resolve_judge_model,
        shuffle_seed,
    )
    from skillbench.judge.costs import (
        clear_judge_cost,
        record_judge_cost,
    )
    from skillbench.judge.evidence import (
        evidence_counts,
        evidence_frame,
        evidence_summary,
    )
    from skillbench.judge.pairwise import (
        Pair,
        PairJudge,
        PairsReport,
        find_pairs,
        judge_pairs,
        outcome,
        pairs_frame,
        position_agreement,
    )
    from skillbench.judge.protocol import (
        PreferenceInput,
        ProtocolError,
        RubricLine,
        VerdictsInput,
        build_judge_request,
        build_pair_request,
        judge_headers,
        judge_prompt_sha,
        parse_preference,
        parse_verdicts,
    )
    from skillbench.judge.quotes import (
        normalize_quote,
        quote_in_answer,
    )
    from skillbench.judge.rubric import (
        ItemGrade,
        RubricJudge,
        RunGrading,
        ScoresLedger,
        Vote,
        score_rows,
    )
    from skillbench.judge.run import (
        JudgeOptions,
        JudgeReport,
        judge_run_dir,
    )
