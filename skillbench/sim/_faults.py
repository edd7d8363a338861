"""Choosing the fault (if any) a request gets.

Faults come from the endpoint's plan (the profile file or ``--fault``) and from the request's own
``X-Skillbench-Fault`` header (``kind[=rate][, kind[=rate]…]``, forwarded by the CLI through
``ANTHROPIC_CUSTOM_HEADERS`` so a harness can target one run). Draws are keyed on the run id, the attempt
and the run's request counter, so a retry is a new draw and concurrency never changes which request fails.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping, Sequence

from skillbench.sim import _draws as draws
from skillbench.sim._profiles import FaultSpec, ProfileError, parse_fault_option
from skillbench.wire import FAULT_HEADER


def header_faults(value: str | None) -> list[FaultSpec]:
    """Faults named by an ``X-Skillbench-Fault`` header value; unknown kinds are ignored."""
    out = []
    for part in (value or "").split(","):
        if part.strip():
            try:
                out.append(parse_fault_option(part))
            except ProfileError:
                continue
    return out


class FaultPlan:
    """Decides faults per request; keeps per-run-attempt injection counts for ``limit``."""

    def __init__(self, seed: int, faults: Sequence[FaultSpec] = ()):
        self.seed = seed
        self.faults = list(faults)
        self._injected: Counter[tuple[str, int, int]] = Counter()
        self._lock = threading.Lock()

    def choose(
        self,
        *,
        model: str,
        role: str,
        headers: Mapping[str, str],
        run_id: str,
        attempt: int,
        counter: int,
    ) -> tuple[int, FaultSpec] | None:
        """The fault for this request (with its index in the plan), or None."""
        lower = {k.lower(): v for k, v in headers.items()}
        candidates = [*self.faults, *header_faults(lower.get(FAULT_HEADER.lower()))]
        for index, spec in enumerate(candidates):
            if spec.model and spec.model.lower() not in model.lower():
                continue
            if spec.role and spec.role != role:
                continue
            if spec.attempts is not None and attempt not in spec.attempts:
                continue
            if spec.header:
                name, _, want = spec.header.partition(":")
                if lower.get(name.strip().lower(), "").strip() != want.strip():
                    continue
            if draws.uniform(self.seed, "fault", run_id, attempt, counter, index, spec.kind) >= spec.rate:
                continue
            with self._lock:
                key = (run_id, attempt, index)
                if spec.limit is not None and self._injected[key] >= spec.limit:
                    continue
                self._injected[key] += 1
            return index, spec
        return None
