"""One run-state rule: an attempt is retried exactly when the state the committed run would read is one a rerun
can heal (ARCHITECTURE.md, "Run states"), because the retry asks the same function as resume.

Each case is an attempt as the sandbox returns it; the folder generation would commit from it is then read by
:func:`run_state`, and the two must agree.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillbench.generation import SandboxResult, SetupOutcome
from skillbench.generation._retries import needs_retry
from skillbench.signals import run_state
from skillbench.vocab import COMPLETE_STATES, HARNESS_INVALID
from tests.helpers.shared import SHARED, require

REFERENCE = SHARED / "reference" / "claude-code" / "transcripts"


def _reference(name: str) -> str:
    return require(REFERENCE / f"{name}.jsonl").read_text()


def _cut(text: str) -> str:
    """The transcript without its final result event (the CLI never got to write it)."""
    return "\n".join(line for line in text.splitlines() if '"type":"result"' not in line.replace(" ", "")) + "\n"


def _api_error(text: str) -> str:
    """The transcript ending in the CLI's API-error result (its subtype still says success)."""
    result = {"type": "result", "subtype": "success", "is_error": True, "terminal_reason": "api_error",
              "api_error_status": 529, "result": "API Error: 529 overloaded", "total_cost_usd": 0.0}
    return _cut(text) + json.dumps(result) + "\n"


CASES = {  # attempt → (retry reason, the committed run's state)
    "finished": (lambda: (_reference("01_plain_answer"), {}), None, "finished"),
    "budget_hit": (lambda: (_reference("05_budget_exceeded_error_max_budget_usd"), {}), None, "budget_hit"),
    "timeout": (lambda: (_cut(_reference("01_plain_answer")), {"timed_out": True, "exit_code": 124}),
                "timeout", "timeout"),
    "no-result": (lambda: (_cut(_reference("01_plain_answer")), {"exit_code": 1}),
                  "no result event (exit 1)", "harness_invalid"),
    "api_error": (lambda: (_api_error(_reference("01_plain_answer")), {}), "api_error 529", "api_error"),
    "worker_lost": (lambda: ("", {"worker_lost": "worker gone", "exit_code": -2}), "worker_lost", "worker_lost"),
    "setup-failed": (lambda: ("", {"setup": SetupOutcome(ok=False, detail="setup `make` exited 2"),
                                   "exit_code": 125}), None, "harness_invalid"),
}


@pytest.mark.parametrize("case", CASES)
def test_the_retry_and_the_run_state_decide_alike(tmp_path: Path, case: str) -> None:
    make, reason, state = CASES[case]
    stdout, fields = make()
    result = SandboxResult(exit_code=fields.get("exit_code", 0), timed_out=fields.get("timed_out", False),
                           stdout=stdout.encode(), stderr=b"", started=0.0, ended=1.0, setup=fields.get("setup"),
                           worker_lost=fields.get("worker_lost", ""))
    assert needs_retry(result) == reason
    # the folder generation commits from this attempt (generation.run.Generator._commit's metadata)
    folder = tmp_path / "r1"
    folder.mkdir()
    if not result.worker_lost:
        (folder / "transcript.jsonl").write_text(stdout)
    meta = {"run_id": "r1", "timed_out": result.timed_out, "exit_code": result.exit_code}
    if result.worker_lost:
        meta["worker_lost"] = result.worker_lost
    if result.setup_failed:
        meta[HARNESS_INVALID] = result.setup.detail
    (folder / "metadata.json").write_text(json.dumps(meta))
    assert run_state(folder) == state
    # retried now, or rerun by the next pass: never both kept and retried, never neither for a failure
    assert (reason is None) == (state in COMPLETE_STATES or result.setup_failed)
