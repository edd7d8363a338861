"""The run directory's contract: every file name (:mod:`~skillbench.ledgers.files`), every column list
(:mod:`~skillbench.ledgers.columns`), typed readers, the append-only ledger, atomic writes, run keys and the
reconciliation rule, and the shards of a CI matrix (the slice each leg owns, its summary, a consolidation's status).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys((
        "read_manifest", "read_scores", "read_scores_frame", "read_pairs", "read_judge_skips",
        "read_reconciliation", "LedgerError", "empty_scores", "parse_timestamps", "format_timestamp"
    ), "readers"),
    **dict.fromkeys((
        "load_week", "WeekLedgers", "week_run_key", "week_arms", "read_run_json", "read_judge_costs", "read_site_base",
        "reconcile_from_plan", "run_folder_ids", "read_plan_ids"
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
        parse_timestamps,
        read_judge_skips,
        read_manifest,
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
        read_judge_costs,
        read_plan_ids,
        read_run_json,
        read_site_base,
        reconcile_from_plan,
        run_folder_ids,
        week_arms,
        week_run_key,
    )
