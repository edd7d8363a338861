from .append import (
    AppendLedger as AppendLedger,
    LedgerConflict as LedgerConflict,
    csv_text as csv_text,
)
from .atomic import (
    atomic_write_json as atomic_write_json,
    atomic_write_text as atomic_write_text,
)
from .keys import (
    RUN_KEY_RE as RUN_KEY_RE,
    RunKeyError as RunKeyError,
    check_run_key as check_run_key,
    utc_run_key as utc_run_key,
)
from .lock import (
    LOCK_FILE as LOCK_FILE,
    RunDirBusy as RunDirBusy,
    process_command as process_command,
    read_holder as read_holder,
    run_dir_lock as run_dir_lock,
    set_process_command as set_process_command,
)
from .readers import (
    LedgerError as LedgerError,
    empty_scores as empty_scores,
    format_timestamp as format_timestamp,
    json_object_or_none as json_object_or_none,
    parse_timestamps as parse_timestamps,
    read_cells as read_cells,
    read_json_object as read_json_object,
    read_judge_skips as read_judge_skips,
    read_manifest as read_manifest,
    read_manifest_ids as read_manifest_ids,
    read_numbers as read_numbers,
    read_pairs as read_pairs,
    read_reconciliation as read_reconciliation,
    read_scores as read_scores,
    read_scores_frame as read_scores_frame,
)
from .reconciliation import (
    Reconciliation as Reconciliation,
    cross_check as cross_check,
    reconcile_runs as reconcile_runs,
)
from .run_folder import (
    metadata_or_none as metadata_or_none,
    read_cost_parts as read_cost_parts,
    read_judge_cost as read_judge_cost,
    read_metadata as read_metadata,
    read_run_judge as read_run_judge,
)
from .shards import (
    Shard as Shard,
    ShardError as ShardError,
    consolidation_incomplete as consolidation_incomplete,
    consolidation_status as consolidation_status,
    owner as owner,
    parse_shard as parse_shard,
    read_summary as read_summary,
    summaries_in as summaries_in,
    write_summary as write_summary,
)
from .slugs import (
    SLUGS_FILE as SLUGS_FILE,
    is_safe as is_safe,
    original_name as original_name,
    read_slugs as read_slugs,
    record_slugs as record_slugs,
    short_id as short_id,
    slug as slug,
)
from .truth import (
    TruthRow as TruthRow,
    TruthWriter as TruthWriter,
    empty_truth as empty_truth,
    final_truth as final_truth,
    parse_truth_csv as parse_truth_csv,
    read_truth as read_truth,
    truth_csv as truth_csv,
)
from .week import (
    WeekLedgers as WeekLedgers,
    load_week as load_week,
    pass_record_or_empty as pass_record_or_empty,
    read_calibration as read_calibration,
    read_calibration_grades as read_calibration_grades,
    read_consolidation as read_consolidation,
    read_judge_costs as read_judge_costs,
    read_pass_record as read_pass_record,
    read_plan as read_plan,
    read_plan_ids as read_plan_ids,
    read_retries as read_retries,
    read_run_json as read_run_json,
    read_sentinel as read_sentinel,
    read_sentinel_grades as read_sentinel_grades,
    read_site_base as read_site_base,
    reconcile_from_plan as reconcile_from_plan,
    run_folder_ids as run_folder_ids,
    week_arms as week_arms,
    week_run_key as week_run_key,
)
