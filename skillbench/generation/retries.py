"""Retries of a generate pass: which attempts are retried, the legs' bookkeeping, and ``retries.json``.

A run that hits the external timeout or ends in an API error is retried once, and the retry is recorded in
``retries.json`` as it happens; more than ``MAX_RETRIED_GROUPS`` retried runs in one model × condition leg stop
that leg (a systemic failure must not read as a bad skill). A task whose setup failed is never retried: it is
harness-invalid, and the next pass reruns it.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillbench.generation.sandbox import SandboxResult
from skillbench.ledgers.atomic import atomic_write_json
from skillbench.signals.manifest import api_failure
from skillbench.signals.transcript import parse_transcript_text

MAX_RETRIED_GROUPS = 3


@dataclass
class LegState:
    """Retry bookkeeping of one model × condition leg."""

    retried: int = 0
    stopped: bool = False


def needs_retry(result: SandboxResult) -> str | None:
    """Why an attempt should be retried: the external timeout, or an API error, else None (a failed setup too)."""
    if result.setup_failed:
        return None
    if result.timed_out:
        return "timeout"
    final = parse_transcript_text(result.stdout.decode("utf-8", "replace")).result
    if final is None:
        return f"no result event (exit {result.exit_code})"
    if api_failure(final):
        return f"api_error {final.get('api_error_status')}"
    return None


class RetryLog:
    """``retries.json``, rewritten (atomically) each time a run is retried, so a kill never under-counts.

    Every retried run of every pass stays listed; ``legs`` is the current pass's state (a leg stopped by an
    outage is tried again by the next pass, and reported again if it fails again). The pass holds the run
    directory's lock, so this process is the only writer.
    """

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self.new: list[dict[str, Any]] = []
        self.legs: dict[str, dict[str, Any]] = {}
        old = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        self.old: list[dict[str, Any]] = list(old.get("retried_runs", [])) if isinstance(old, dict) else []

    def _write(self) -> None:
        atomic_write_json(self.path, {"max_retried_groups": MAX_RETRIED_GROUPS,
                                      "retried_runs": self.old + self.new, "legs": self.legs})

    def record(self, entry: dict[str, Any], legs: dict[tuple[str, str], LegState]) -> None:
        """Add one retried run and the legs' state, and write the file before the retry starts."""
        with self._lock:
            self.new.append(entry)
            self.legs = _legs_json(legs)
            self._write()

    def finish(self, legs: dict[tuple[str, str], LegState]) -> None:
        """The pass is over: write the final state of its legs."""
        with self._lock:
            self.legs = _legs_json(legs)
            self._write()


def _legs_json(legs: dict[tuple[str, str], LegState]) -> dict[str, dict[str, Any]]:
    return {f"{m}|{c}": {"retried": s.retried, "stopped": s.stopped} for (m, c), s in dict(legs).items()}
