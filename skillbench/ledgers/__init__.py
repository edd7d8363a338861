"""The run directory's contract: every file name (:mod:`~skillbench.ledgers.files`), every column list
(:mod:`~skillbench.ledgers.columns`), a reader for every file (the week's ledgers and records, and a run folder's:
:mod:`~skillbench.ledgers.run_folder`), the append-only ledger, atomic writes, run keys and the
reconciliation rule, and the shards of a CI matrix (the slice each leg owns, its summary, a consolidation's status).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys((
        "read_manifest", "read_scores", "read_scores_frame", "read_pairs", "read_judge_skips",
        "read_reconciliation", "LedgerError", "empty_scores", "parse_timestamps", "format_timestamp",
        "read_manifest_ids", "read_cells", "read_numbers", "read_json_object", "json_object_or_none"
    ), "readers"),
    **dict.fromkeys((
        "read_metadata", "metadata_or_none", "read_run_judge", "read_cost_parts", "read_judge_cost"
    ), "run_folder"),
    **dict.fromkeys((
        "load_week", "WeekLedgers", "week_run_key", "week_arms", "read_run_json", "read_judge_costs", "read_site_base",
        "reconcile_from_plan", "run_folder_ids", "read_plan_ids", "read_plan", "read_retries", "read_pass_record",
        "pass_record_or_empty", "read_sentinel", "read_sentinel_grades", "read_consolidation", "read_calibration",
        "read_calibration_grades"
    ), "week"),
    **dict.fromkeys(("Reconciliation", "reconcile_runs", "cross_check",), "reconciliation"),
    **dict.fromkeys((
        "read_truth", "final_truth", "empty_truth", "TruthRow", "TruthWriter", "truth_csv", "parse_truth_csv"
    ), "truth"),
    **dict.fromkeys(("AppendLedger", "LedgerConflict", "csv_text",), "append"),
    **dict.fromkeys(("atomic_write_text", "atomic_write_json",), "atomic"),
    **dict.fromkeys(("check_run_key", "RunKeyError", "utc_run_key", "RUN_KEY_RE",), "keys"),
    **dict.fromkeys((
        "slug", "short_id", "is_safe", "record_slugs", "read_slugs", "original_name", "SLUGS_FILE"
    ), "slugs"),
    **dict.fromkeys((
        "run_dir_lock", "RunDirBusy", "read_holder", "set_process_command", "process_command", "LOCK_FILE"
    ), "lock"),
    **dict.fromkeys((
        "Shard", "ShardError", "parse_shard", "owner", "write_summary", "read_summary", "summaries_in",
        "consolidation_status", "consolidation_incomplete"
    ), "shards"),
}
_DEPRECATED: dict[str, tuple[str, str]] = {
    "load_run": ("skillbench.ledgers.week", "load_week"),
    "RunLedgers": ("skillbench.ledgers.week", "WeekLedgers"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _DEPRECATED)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.ledgers.append import (
        AppendLedger,
        LedgerConflict,
        csv_text,
    )
    from skillbench.ledgers.atomic import (
        atomic_write_json,
        atomic_write_text,
    )
    from skillbench.ledgers.keys import (
        RUN_KEY_RE,
        RunKeyError,
        check_run_key,
        utc_run_key,
    )
    from skillbench.ledgers.lock import (
        LOCK_FILE,
        RunDirBusy,
        process_command,
        read_holder,
        run_dir_lock,
        set_process_command,
    )
    from skillbench.ledgers.readers import (
        LedgerError,
        empty_scores,
        format_timestamp,
        json_object_or_none,
        parse_timestamps,
        read_cells,
        read_json_object,
        read_judge_skips,
        read_manifest,
        read_manifest_ids,
        read_numbers,
        read_pairs,
        read_reconciliation,
        read_scores,
        read_scores_frame,
    )
    from skillbench.ledgers.reconciliation import (
        Reconciliation,
        cross_check,
        reconcile_runs,
    )
    from skillbench.ledgers.run_folder import (
        metadata_or_none,
        read_cost_parts,
        read_judge_cost,
        read_metadata,
        read_run_judge,
    )
    from skillbench.ledgers.shards import (
        Shard,
        ShardError,
        consolidation_incomplete,
        consolidation_status,
        owner,
        parse_shard,
        read_summary,
        summaries_in,
        write_summary,
    )
    from skillbench.ledgers.slugs import (
        SLUGS_FILE,
        is_safe,
        original_name,
        read_slugs,
        record_slugs,
        short_id,
        slug,
    )
    from skillbench.ledgers.truth import (
        TruthRow,
        TruthWriter,
        empty_truth,
        final_truth,
        parse_truth_csv,
        read_truth,
        truth_csv,
    )
    from skillbench.ledgers.week import (
        WeekLedgers,
        load_week,
        pass_record_or_empty,
        read_calibration,
        read_calibration_grades,
        read_consolidation,
        read_judge_costs,
        read_pass_record,
        read_plan,
        read_plan_ids,
        read_retries,
        read_run_json,
        read_sentinel,
        read_sentinel_grades,
        read_site_base,
        reconcile_from_plan,
        run_folder_ids,
        week_arms,
        week_run_key,
    )
