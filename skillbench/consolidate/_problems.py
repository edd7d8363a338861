"""What consolidate found wrong, and whether it still writes a merge.

Two kinds of problem, decided here once:

* **blocking** — the legs cannot be merged into one honest week: a shard missing or duplicated, summaries that
  disagree on ``N`` or kind, legs that ran another commit, image tag, CLI, config or plan, a run present in two
  legs or in a leg that does not own it, a summary that disagrees with its own folder, side files that conflict.
  Nothing is written.
* **incomplete** — every leg is the leg it claims to be, but some of a leg's runs are not complete (a sandbox
  failure, a ``--limit``, a cancelled leg, a judge outage). The merge is written and labelled ``INCOMPLETE``
  (``consolidation.json``; the reconciliation then says which runs are missing, and the scorecard keeps the week
  out of the history), so a rerun of that leg and of consolidate completes it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong, where it is (a shard and its folder, or several) and whether it blocks the merge."""

    where: str
    what: str
    blocking: bool = True

    def line(self) -> str:
        """``<where>: <what>`` — the report's line."""
        return f"{self.where}: {self.what}"

    def to_json(self) -> dict[str, str | bool]:
        return {"where": self.where, "what": self.what, "blocking": self.blocking}


class ConsolidationRefused(RuntimeError):
    """The legs cannot be merged; ``problems`` names each reason (nothing was written)."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("; ".join(p.line() for p in problems))


class OutputRefused(RuntimeError):
    """``--out`` holds something a consolidation must not replace (one line; nothing was written)."""


def blocking(problems: list[Problem]) -> list[Problem]:
    """The problems that refuse the merge."""
    return [p for p in problems if p.blocking]
