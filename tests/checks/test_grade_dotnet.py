"""Grading of the check types dotnet's formats need: ``output_nonempty``, ``file_not_exists`` and glob paths
(probed in the container by generation.workspace.GLOB_PROBE, whose output format ``glob_files`` parses)."""

from __future__ import annotations

import subprocess

import pytest

from skillbench.checks import grade_check
from skillbench.checktypes import Check, ProbeResult
from skillbench.checktypes._grading import glob_files
from skillbench.generation._workspace import probe_for
from skillbench.signals import Transcript


def _answer(text: str) -> Transcript:
    return Transcript([{"type": "system", "subtype": "init", "skills": []},
                       {"type": "result", "subtype": "success", "is_error": False, "result": text, "num_turns": 1}])


def _glob_output(files: dict[str, str], content: bool = True) -> bytes:
    return b"".join(b"\0" + k.encode() + b"\0" + (v.encode() if content else b"") for k, v in files.items())


# (check, answer, probe kwargs or None, expected status, detail fragment); used by test_grade's coverage test too
CASES = [
    ({"type": "output_nonempty"}, "done", None, "passed", ""),
    ({"type": "output_nonempty"}, " \n ", None, "failed", "empty"),
    ({"type": "file_not_exists", "path": "out.csproj"}, "", {"file_state": "missing", "exit_code": 3}, "passed", ""),
    ({"type": "file_not_exists", "path": "out.csproj"}, "", {"file_state": "ok", "exit_code": 0}, "failed", "exists"),
    ({"type": "file_not_exists", "path": "*.csproj"}, "", {"file_state": "ok", "exit_code": 0,
                                                           "output": _glob_output({"a/b.csproj": ""}, False)},
     "failed", "a/b.csproj"),
    ({"type": "file_exists", "path": "*.csv"}, "", {"file_state": "missing", "exit_code": 3}, "failed", "no file"),
    ({"type": "file_exists", "path": "*.csv"}, "", {"file_state": "ok", "exit_code": 0,
                                                   "output": _glob_output({"d.csv": ""}, False)}, "passed", "d.csv"),
    ({"type": "file_contains", "path": "*.cs", "value": "StackAlloc"}, "",
     {"file_state": "ok", "exit_code": 0, "output": _glob_output({"A.cs": "int x;", "src/B.cs": "stackalloc int[4]"})},
     "passed", "src/B.cs"),
    ({"type": "file_contains", "path": "*.cs", "value": "stackalloc"}, "",
     {"file_state": "ok", "exit_code": 0, "output": _glob_output({"A.cs": "int x;"})}, "failed", "no file matching"),
    ({"type": "file_matches", "path": "src/*", "pattern": r"int\[\d\]"}, "",
     {"file_state": "ok", "exit_code": 0, "output": _glob_output({"src/B.cs": "stackalloc int[4]"})}, "passed", ""),
]


@pytest.mark.parametrize(("raw", "answer", "probe", "status", "detail"), CASES,
                         ids=[f"{c[0]['type']}-{i}" for i, c in enumerate(CASES)])
def test_new_check_types(raw, answer, probe, status, detail):
    check = Check(**raw)
    probes = {} if probe is None else {check.check_id: ProbeResult(check.check_id, **probe)}
    got = grade_check(check, _answer(answer), 0, probes)
    assert got.status == status, got
    assert detail in got.detail, got


def test_glob_probe_runs_in_a_shell_and_its_output_parses(tmp_path):
    """The probe the container runs, run here in sh: ``*`` crosses folders, hidden folders included, none → 3."""
    (tmp_path / "src" / ".eval").mkdir(parents=True)
    (tmp_path / "src" / "A.cs").write_text("stackalloc")
    (tmp_path / "B.cs").write_text("x")
    (tmp_path / "src" / ".eval" / "c.txt").write_text("y")

    def run(raw: dict) -> tuple[int, bytes]:
        probe = probe_for(Check(**raw))
        assert probe is not None and probe.reads_file
        proc = subprocess.run(probe.argv, cwd=tmp_path, capture_output=True, timeout=30)
        return proc.returncode, proc.stdout

    code, out = run({"type": "file_contains", "path": "*.cs", "value": "x"})
    assert code == 0 and glob_files(out) == [("B.cs", b"x"), ("src/A.cs", b"stackalloc")]
    code, out = run({"type": "file_exists", "path": "src/*"})
    assert code == 0 and [n for n, _ in glob_files(out)] == ["src/.eval/c.txt", "src/A.cs"]
    assert run({"type": "file_not_exists", "path": "*.csproj"})[0] == 3


@pytest.mark.parametrize(("raw", "answer", "probe", "status", "detail"), [c for c in CASES if c[2] is not None],
                         ids=[f"{c[0]['type']}-{i}" for i, c in enumerate(CASES) if c[2] is not None])
def test_simulated_truth_agrees_with_the_grader(raw, answer, probe, status, detail):
    """The simulated agent's truth (the record's ``simulate``) finds what the grader finds on the same workspace."""
    check = Check(**raw)
    if probe["file_state"] == "missing":
        files: dict[str, str] = {}
    elif check.is_glob:
        files = {name: data.decode() for name, data in glob_files(probe["output"])}
    else:
        files = {check.path or "": ""}
    assert check.kind.simulate(check, FinalFiles(files), "", False) == (status == "passed")


class FinalFiles:
    """A simulated run that left ``files`` (path → text) in its workspace and did nothing else."""

    solved = False

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def used_tools(self) -> list[str]:
        return []

    def num_turns(self) -> int:
        return 0

    def final_files(self) -> dict[str, str]:
        return self.files
