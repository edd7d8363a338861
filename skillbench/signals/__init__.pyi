from ._manifest import (
    NO_RUBRIC as NO_RUBRIC,
    SignalsError as SignalsError,
    activation_signals as activation_signals,
    decide_run_state as decide_run_state,
    rate_limit_retries as rate_limit_retries,
    read_metadata as read_metadata,
    run_dirs as run_dirs,
    run_signals as run_signals,
    run_state as run_state,
    run_states as run_states,
    site_bases as site_bases,
    skip_reason as skip_reason,
    write_manifest as write_manifest,
)
from ._relay_check import (
    read_relay as read_relay,
    relay_cost as relay_cost,
    relay_disagreements as relay_disagreements,
)
from ._transcript import (
    ToolUse as ToolUse,
    Transcript as Transcript,
    parse_transcript_text as parse_transcript_text,
    read_transcript as read_transcript,
)
from ._trigger import (
    NONE as NONE,
    activated as activated,
    activation_counts as activation_counts,
    activation_summary as activation_summary,
    false_trigger_arms as false_trigger_arms,
    never_triggered as never_triggered,
    reliable as reliable,
    self_served_baseline as self_served_baseline,
    trigger_health as trigger_health,
    with_skill_runs as with_skill_runs,
)
