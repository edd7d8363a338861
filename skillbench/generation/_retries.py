"""Retries of a generate pass: which attempts are retried, the legs' bookkeeping, and ``retries.json``.

A run that hits the external timeout, ends in an API error or loses its Dask worker (``worker_lost``) is retried
once, and the retry is recorded in ``retries.json`` as it happens; more than ``MAX_RETRIED_GROUPS`` retried runs in
one model × condition leg stop that leg (a systemic failure must not read as a bad skill). A task whose setup failed
is never retried: it is harness-invalid, and the next pass reruns it. A run whose retry lost its worker too is
committed ``worker_lost`` (not complete; the next pass reruns it).

Rate limits: the CLI retries a 429 or 529 itself and hides the response headers, so each attempt's stream-json
is read for the CLI's ``api_retry`` events (:func:`skillbench.signals._manifest.rate_limit_retries`) and they feed
the pass's :class:`skillbench.limiter.AdaptiveLimiter`, which gates run starts; ``retries.json`` records the
limiter's ``concurrency`` section (ceiling, floor, the lowest limit reached, every change with time and reason, and
every change of the runs-at-once cap in ``cap_changes``) when the pass saw a rate limit or its cap moved.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillbench.generation._sandbox import SandboxResult
from skillbench.ledgers import atomic_write_json, read_retries
from skillbench.limiter import AdaptiveLimiter, Log, Slot
from skillbench.signals import decide_run_state, parse_transcript_text, rate_limit_retries
from skillbench.vocab import API_ERROR, COMPLETE_STATES, HARNESS_INVALID, WORKER_LOST

MAX_RETRIED_GROUPS = 3


@dataclass
class LegState:
    """Retry bookkeeping of one model × condition leg."""

    retried: int = 0
    stopped: bool = False


def needs_retry(result: SandboxResult) -> str | None:
    """Why an attempt should be retried, else None.

    The attempt's state is the one run-state rule's (:func:`skillbench.signals._manifest.decide_run_state`, on the
    attempt's stream-json before it is written), so a retry and the next pass's resume never disagree: a lost
    worker, the external timeout, an API error or a CLI that ended without a result event is retried once; a
    complete attempt (``finished``, ``budget_hit``) and a failed setup (``harness_invalid``: the next pass reruns
    it) are not.
    """
    if result.setup_failed and not result.worker_lost:
        return None
    transcript = parse_transcript_text(result.stdout.decode("utf-8", "replace"))
    state = decide_run_state({WORKER_LOST: result.worker_lost, "timed_out": result.timed_out}, transcript)
    if state == API_ERROR:
        return f"api_error {(transcript.result or {}).get('api_error_status')}"
    if state == HARNESS_INVALID:  # the CLI ended, or was cut, before its result event
        return f"no result event (exit {result.exit_code})"
    return None if state in COMPLETE_STATES else state


def pass_limiter(jobs: int, *, adaptive: bool = True, log: Log | None = None) -> AdaptiveLimiter:
    """The limiter that gates a pass's run starts: ``--jobs`` is its ceiling; a fixed pool when not adaptive."""
    say = log or (lambda message: None)
    if not adaptive:
        return AdaptiveLimiter.fixed(max(1, jobs), say, name="generate")
    return AdaptiveLimiter(max(1, jobs), log=say, name="generate")


def note_rate_limits(limiter: AdaptiveLimiter, slot: Slot, result: SandboxResult, attempt: dict[str, Any]) -> int:
    """Feed one attempt's rate-limit retries (or its success) to the limiter; returns how many there were.

    The attempt's record gains ``rate_limit_retries`` only when there were some (a week without rate limits
    writes the same metadata as before). An attempt that ended in another failure says nothing either way.
    """
    seen = rate_limit_retries(parse_transcript_text(result.stdout.decode("utf-8", "replace")).events)
    if seen:
        attempt["rate_limit_retries"] = len(seen)
        kinds = sorted({str(e.get("error") or e.get("error_status")) for e in seen})
        limiter.on_rate_limited(slot=slot, reason=f"{len(seen)} CLI api_retry ({', '.join(kinds)})")
    elif not result.timed_out and not attempt.get("retry_reason"):
        limiter.on_success(slot=slot)
    return len(seen)


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
        old = read_retries(path.parent)
        self.old: list[dict[str, Any]] = list(old.get("retried_runs", []))
        # an earlier pass's concurrency section is kept (under ``earlier_passes``) when this one has its own
        self.concurrency: dict[str, Any] | None = old.get("concurrency")

    def _write(self) -> None:
        data = {"max_retried_groups": MAX_RETRIED_GROUPS, "retried_runs": self.old + self.new, "legs": self.legs}
        if self.concurrency is not None:
            data["concurrency"] = self.concurrency
        atomic_write_json(self.path, data)

    def record(self, entry: dict[str, Any], legs: dict[tuple[str, str], LegState]) -> None:
        """Add one retried run and the legs' state, and write the file before the retry starts."""
        with self._lock:
            self.new.append(entry)
            self.legs = _legs_json(legs)
            self._write()

    def finish(self, legs: dict[tuple[str, str], LegState], limiter: AdaptiveLimiter | None = None,
               rate_limited_runs: list[str] | None = None) -> None:
        """The pass is over: write the final state of its legs, and the limiter's when it saw a rate limit or its
        runs at once changed (:class:`~skillbench.generation.RunsCap`)."""
        with self._lock:
            self.legs = _legs_json(legs)
            if limiter is not None and (limiter.signals or limiter.cap_changes):
                earlier = [] if self.concurrency is None else [
                    *self.concurrency.pop("earlier_passes", []), self.concurrency]
                self.concurrency = {**limiter.summary(), "rate_limited_runs": sorted(rate_limited_runs or []),
                                    **({"earlier_passes": earlier} if earlier else {})}
            self._write()


def _legs_json(legs: dict[tuple[str, str], LegState]) -> dict[str, dict[str, Any]]:
    return {f"{m}|{c}": {"retried": s.retried, "stopped": s.stopped} for (m, c), s in dict(legs).items()}
