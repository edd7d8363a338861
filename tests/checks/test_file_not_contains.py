"""``file_not_contains`` end to end from one record: a dotnet eval that uses it (tests/checks/fixtures/
file-not-contains, written here in the shape of dotnet/skills' nullable-migration evals) validates; its probe runs
in sh on the prepared workspace; the grader and the simulated agent's truth agree on it; its docs row is there.
Its grading cases are tests/checks/cases/file_not_contains.json (run by test_grade)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from skillbench.checks import check_types_table, grade_checks
from skillbench.checktypes import ProbeResult, check_kind
from skillbench.generation._workspace import TaskRun, prepare_task, probe_for
from skillbench.signals import Transcript
from skillbench.suite import preflight
from skillbench.suite.dotnet import ASSERTIONS
from tests.checks.test_grade_dotnet import FinalFiles

TREE = Path(__file__).parent / "fixtures" / "file-not-contains"
MIGRATED = "namespace Inventory;\npublic class Shelf\n{\n    public string? FindNote(int slot) { return null; }\n}\n"


@pytest.fixture(scope="module")
def spec():
    report = preflight(TREE)
    assert report.errors == [], [str(d) for d in report.errors]
    (prompt,) = report.suite.prompts
    return prompt


def _probe_all(task: TaskRun, work: Path) -> dict[str, ProbeResult]:
    """Each probe as the container runs it, here in sh on the workspace folder."""
    out = {}
    for probe in task.probes:
        proc = subprocess.run(probe.argv, cwd=work, capture_output=True, timeout=30)
        out[probe.check_id] = probe.result(proc.returncode, proc.stdout, proc.stderr)
    return out


def _answer(text: str) -> Transcript:
    return Transcript([{"type": "system", "subtype": "init", "skills": []},
                       {"type": "result", "subtype": "success", "is_error": False, "result": text, "num_turns": 1}])


def test_the_dotnet_assertion_loads_as_the_check(spec):
    assert ASSERTIONS["file_not_contains"] == "file_not_contains"
    (check,) = [c for c in spec.test.checks if c.type == "file_not_contains"]
    assert (check.path, check.value) == ("Inventory/Shelf.cs", "#nullable disable")
    assert check.in_workspace and spec.test.has_workspace_checks


@pytest.mark.parametrize("migrated", [False, True], ids=["untouched", "migrated"])
def test_probe_grade_and_simulated_truth_agree(spec, tmp_path, migrated):
    task = prepare_task(spec)
    assert task is not None and len(task.probes) == 3  # the three file assertions; exit_success reads no file
    task.write_into(tmp_path)
    if migrated:
        (tmp_path / "Inventory" / "Shelf.cs").write_text(MIGRATED)
    results = {r.check_id: r for r in grade_checks(spec.test.checks, _answer("Done."), 0,
                                                   _probe_all(task, tmp_path))}
    files = {p.relative_to(tmp_path).as_posix(): p.read_text() for p in tmp_path.rglob("*") if p.is_file()}
    for check in spec.test.checks:
        got = results[check.check_id]
        truth = check.kind.simulate(check, FinalFiles(files), "Done.", False)
        assert (got.status == "passed") == truth, (check.type, got)
    (check,) = [c for c in spec.test.checks if c.type == "file_not_contains"]
    got = results[check.check_id]
    assert got.status == ("passed" if migrated else "failed"), got
    if not migrated:
        assert got.detail == "Inventory/Shelf.cs contains '#nullable disable'"


def test_the_glob_probe_reads_every_matching_file(spec, tmp_path):
    check = next(c for c in spec.test.checks if c.type == "file_not_contains").model_copy(update={"path": "*.cs"})
    task = prepare_task(spec)
    assert task is not None
    task.write_into(tmp_path)
    (tmp_path / "Inventory" / "Shelf.cs").write_text(MIGRATED)
    probe = probe_for(check)
    assert probe is not None
    proc = subprocess.run(probe.argv, cwd=tmp_path, capture_output=True, timeout=30)
    (got,) = grade_checks([check], _answer(""), 0, {check.check_id: probe.result(proc.returncode, proc.stdout,
                                                                                 proc.stderr)})
    assert (got.status, got.detail) == ("failed", "Inventory/Bin.cs contains '#nullable disable'")


def test_its_docs_row():
    row = next(line for line in check_types_table().splitlines() if line.startswith("| `file_not_contains` |"))
    assert "`path` (string), `value` (string)" in row and "`file_not_contains` (skill-validator)" in row
    assert check_kind("file_not_contains").passes in row
