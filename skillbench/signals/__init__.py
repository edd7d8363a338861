"""Run signals: each run's transcript read into activation, health and gradeability, and the week's manifest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("Transcript", "ToolUse", "read_transcript", "parse_transcript_text",), "transcript"),
    **dict.fromkeys((
        "run_signals", "write_manifest", "read_metadata", "run_dirs", "activation_signals",
        "SignalsError"
    ), "manifest"),
    **dict.fromkeys((
        "activation_summary", "activation_counts", "self_served_baseline", "trigger_health",
        "never_triggered", "with_skill_runs", "activated", "reliable"
    ), "trigger"),
    **dict.fromkeys(("skip_reason",), "manifest"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.signals.manifest import (
        SignalsError,
        activation_signals,
        read_metadata,
        run_dirs,
        run_signals,
        skip_reason,
        write_manifest,
    )
    from skillbench.signals.transcript import (
        ToolUse,
        Transcript,
        parse_transcript_text,
        read_transcript,
    )
    from skillbench.signals.trigger import (
        activated,
        activation_counts,
        activation_summary,
        never_triggered,
        reliable,
        self_served_baseline,
        trigger_health,
        with_skill_runs,
    )
