"""``run_command``: a shell command run in the workspace after the agent finished passes on its expected exit code.

The simulated agent's command passes exactly when every solution write succeeded (the task's tests run green on
the solution, red on the fixtures).
"""

from __future__ import annotations

from skillbench.checktypes._grading import Outcome, short, taken_probe
from skillbench.checktypes._registry import Check, CheckKind, ProbeRequest, RunFacts, SimRun, register
from skillbench.vocab import CHECK_ERROR, CHECK_FAILED, CHECK_PASSED


def _grade(check: Check, facts: RunFacts) -> Outcome:
    probe = taken_probe(check, facts)
    if isinstance(probe, tuple):
        return probe
    if probe.exit_code is None:
        return CHECK_ERROR, "the command did not finish"
    if probe.exit_code == check.exit_code_expected:
        return CHECK_PASSED, f"exit {probe.exit_code}"
    tail = probe.output.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
    detail = f"exit {probe.exit_code}, expected {check.exit_code_expected}"
    return CHECK_FAILED, short(detail + (f": {tail[0]}" if tail[0] else ""))


def _simulate(_check: Check, run: SimRun, _answer: str, _crossed: bool) -> bool:
    return run.solved


def _probe(check: Check) -> ProbeRequest:
    return ProbeRequest("command", check.command or "")


register(CheckKind(
    "run_command", ("command",), "`sh -c command` in the workspace after the run exits `expected_exit_code` "
    "(0) within `timeout` seconds (60)", _grade, _simulate, accepts=("expected_exit_code", "timeout"),
    probe=_probe,
    vally={"run-command": {"command": "command", "expected_exit_code": "expected_exit_code", "timeout": "timeout"}}))
