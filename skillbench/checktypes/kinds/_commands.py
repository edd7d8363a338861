"""``run_command``: a shell command run in the workspace after the agent finished passes on its expected exit code.

A command whose program the run's container does not have (the shell's exit 127, "not found") **could not run**:
the check ends ``error``, never a pass or a loss. The runner image has no .NET SDK (it cannot be installed here), so
dotnet's ``dotnet build`` / ``dotnet test`` graders land there. A missing *path* (``./build.sh`` the agent
deleted) is the run's own doing and fails.

The simulated agent's command passes exactly when every solution write succeeded (the task's tests run green on
the solution, red on the fixtures); one whose program the image lacks
(:data:`~skillbench.checktypes._programs.ABSENT_PROGRAMS`) could not run, as in the real container.
"""

from __future__ import annotations

import re

from skillbench.checktypes._grading import Outcome, short, taken_probe
from skillbench.checktypes._programs import absent_programs
from skillbench.checktypes._registry import Check, CheckKind, ProbeRequest, RunFacts, SimRun, register
from skillbench.vocab import CHECK_ERROR, CHECK_FAILED, CHECK_PASSED

NOT_FOUND = 127  # POSIX sh: the command was not found
_NOT_FOUND_LINE = re.compile(r"(?:^|: )([^\s:]+): (?:command )?not found\s*$", re.M)
COULD_NOT_RUN = "could not run"


def _missing_program(output: bytes) -> str | None:
    """The program sh reported as not found (``sh: 1: dotnet: not found``), else None."""
    found = _NOT_FOUND_LINE.findall(output.decode("utf-8", "replace"))
    return found[-1] if found else None


def _grade(check: Check, facts: RunFacts) -> Outcome:
    probe = taken_probe(check, facts)
    if isinstance(probe, tuple):
        return probe
    if probe.exit_code is None:
        return CHECK_ERROR, "the command did not finish"
    if probe.exit_code == check.exit_code_expected:
        return CHECK_PASSED, f"exit {probe.exit_code}"
    missing = _missing_program(probe.output) if probe.exit_code == NOT_FOUND else None
    if missing is not None and "/" not in missing:
        return CHECK_ERROR, short(f"{COULD_NOT_RUN}: {missing} is not in the sandbox image (exit 127)")
    tail = probe.output.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
    detail = f"exit {probe.exit_code}, expected {check.exit_code_expected}"
    return CHECK_FAILED, short(detail + (f": {tail[0]}" if tail[0] else ""))


def _simulate(check: Check, run: SimRun, _answer: str, _crossed: bool) -> bool | None:
    if absent_programs(check.command or ""):
        return None
    return run.solved


def _probe(check: Check) -> ProbeRequest:
    return ProbeRequest("command", check.command or "")


register(CheckKind(
    "run_command", ("command",), "`sh -c command` in the workspace after the run exits `expected_exit_code` "
    "(0) within `timeout` seconds (60); a program the sandbox lacks (exit 127) could not run", _grade, _simulate,
    accepts=("expected_exit_code", "timeout"), probe=_probe,
    vally={"run-command": {"command": "command", "expected_exit_code": "expected_exit_code", "timeout": "timeout"}}))
