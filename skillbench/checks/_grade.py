"""Grading a run's deterministic checks: from its transcript, the CLI's exit code and the sandbox's probes.

The run's :class:`~skillbench.checktypes.RunFacts` are taken once from its transcript (the final answer, the tool
calls that ran with denied attempts netted out, the result event, the exit code, the probes); each check is then
graded by its type's record (:mod:`skillbench.checktypes.kinds`, which documents each type's rule). Each check
ends ``passed``, ``failed`` or ``error`` (it could not run: a probe timed out, the sandbox was gone, the transcript
has no result to count) with a short ``detail`` that says why. An ``error`` is never a skill loss.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from skillbench.checktypes import Check, ProbeResult, RunFacts, ToolUseFact
from skillbench.signals import Transcript


@dataclass(frozen=True)
class CheckResult:
    """One row of a run's ``checks.json`` (and of ``checks.csv``, with the run's identity)."""

    check_id: str
    check_type: str
    status: str
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        return asdict(self)


def run_facts(transcript: Transcript, exit_code: int | None, probes: Mapping[str, ProbeResult]) -> RunFacts:
    """What the run shows its checks: the answer, the calls that ran, the result event, the exit code, the probes."""
    uses = tuple(ToolUseFact(u.name, u.input) for u in transcript.allowed_tool_uses())
    return RunFacts(transcript.final_answer(), exit_code, transcript.result, uses, probes)


def grade_check(check: Check, transcript: Transcript, exit_code: int | None,
                probes: Mapping[str, ProbeResult]) -> CheckResult:
    """Grade one check by its type's rule."""
    return _graded(check, run_facts(transcript, exit_code, probes))


def _graded(check: Check, facts: RunFacts) -> CheckResult:
    status, detail = check.kind.grade(check, facts)
    return CheckResult(check.check_id, check.type, status, detail)


def grade_checks(checks: Sequence[Check], transcript: Transcript, exit_code: int | None,
                 probes: Mapping[str, ProbeResult] | None = None) -> list[CheckResult]:
    """Grade every check of a run, in the spec's order."""
    facts = run_facts(transcript, exit_code, probes or {})
    return [_graded(c, facts) for c in checks]
