"""The simulated truth of the check types dotnet's graders added agrees with their grader on the same facts: the
grading cases of tests/checks/cases/ (file_not_matches, completed, max_tool_calls, and the case_sensitive option of
the ``*_contains`` types) replayed through each type's ``simulate``, so the simulated endpoint can produce both
outcomes the grader gives and never records one it would not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillbench.checktypes import Check, canonical_tool

CASES = Path(__file__).parent / "cases"
KINDS = ("file_not_matches", "completed", "max_tool_calls", "case_sensitive", "file_not_contains")


class _Run:
    """A simulated run that left ``files`` and called ``tools`` (canonical names of the calls that ran)."""

    solved = False

    def __init__(self, files: dict[str, str], tools: list[str]) -> None:
        self.files, self.tools = files, tools

    def used_tools(self) -> list[str]:
        return self.tools

    def num_turns(self) -> int:
        return 1 + len(self.tools)

    def final_files(self) -> dict[str, str]:
        return self.files


def _cases() -> list[dict]:
    out = []
    for kind in KINDS:
        out += [c for c in json.loads((CASES / f"{kind}.json").read_text())["cases"]
                if c["expect"]["status"] != "error"  # an error is the probe's, not the run's
                and c.get("probe", {}).get("file_state") != "not_regular"]  # the simulated workspace holds files only
    return out


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["comment"])
def test_simulated_truth_agrees_with_the_grader(case):
    check = Check(**case["check"])
    probe = case.get("probe", {})
    if probe.get("file_state") == "missing":
        files: dict[str, str] = {}
    elif "files" in probe:
        files = probe["files"]
    else:
        files = {check.path or "": probe.get("output", "")}
    tools = [canonical_tool(t["name"]) for t in case.get("tools", []) if not t.get("denied")]
    crossed = bool(case.get("is_error") or case.get("no_result"))
    truth = check.kind.simulate(check, _Run(files, tools), case.get("answer", ""), crossed)
    assert truth == (case["expect"]["status"] == "passed")
