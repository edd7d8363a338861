"""A check whose program the sandbox lacks (the .NET SDK) could not run, from the probe to the objective layer:
the real probe exits 127 in sh, the grader says ``error`` plainly, the simulated truth says the same, and the
objective layer leaves the run's outcome unknown (no pass, no loss) while naming the check "could not run"."""

from __future__ import annotations

import shutil
import subprocess

import pandas as pd
import pytest

from skillbench.checks import grade_check
from skillbench.checktypes import Check
from skillbench.generation._workspace import probe_for
from skillbench.scorecard import (
    objective_record_table,
    run_outcomes,
    stimulus_outcomes,
    transitions,
    unrunnable_checks,
)
from skillbench.signals import Transcript
from skillbench.sim._tasks import check_status
from skillbench.vocab import CHECK_ERROR, NO_SKILL, WITH_SKILL
from tests.checks.test_grade_dotnet import FinalFiles

BUILD = Check(type="run_command", command="dotnet build Shelf.csproj -warnaserror")
DONE = Transcript([{"type": "system", "subtype": "init", "skills": []},
                   {"type": "result", "subtype": "success", "is_error": False, "result": "Built.", "num_turns": 3}])


@pytest.mark.skipif(shutil.which("dotnet") is not None, reason="this host has the .NET SDK")
def test_the_real_probe_of_a_missing_sdk_could_not_run(tmp_path):
    probe = probe_for(BUILD)
    assert probe is not None
    proc = subprocess.run(probe.argv, cwd=tmp_path, capture_output=True, timeout=30)
    got = grade_check(BUILD, DONE, 0, {BUILD.check_id: probe.result(proc.returncode, proc.stdout, proc.stderr)})
    assert (got.status, got.detail) == (CHECK_ERROR, "could not run: dotnet is not in the sandbox image (exit 127)")


class _Solved(FinalFiles):
    solved = True


@pytest.mark.parametrize(("command", "status"), [
    ("dotnet test", CHECK_ERROR), ("cd src && msbuild /t:Build", CHECK_ERROR), ("DOTNET_NOLOGO=1 dotnet build",
                                                                               CHECK_ERROR),
    ("python -m pytest -q", "passed"), ("sh check.sh", "passed")])
def test_the_simulated_container_lacks_the_sdk_too(command, status):
    """The sim's truth for a command: could not run on the image's absent programs, else the task's outcome."""
    check = Check(type="run_command", command=command)
    assert check_status(check, _Solved({}), "Built.", False) == status  # type: ignore[arg-type]


def _checks_and_manifest(statuses: dict[str, list[str]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    checks, manifest = [], []
    for cond, reps in statuses.items():
        for rep, status in enumerate(reps, start=1):
            run_id = f"p-haiku-{cond}-r{rep}"
            manifest.append({"run_id": run_id, "prompt": "p", "skill_family": "fam", "model": "haiku",
                             "condition": cond, "rep": rep, "dormancy": False})
            checks.append({"prompt": "p", "model": "haiku", "condition": cond, "rep": rep, "run_id": run_id,
                           "check_id": BUILD.check_id, "check_type": "run_command", "status": status,
                           "detail": "could not run: dotnet is not in the sandbox image (exit 127)"})
    return pd.DataFrame(checks), pd.DataFrame(manifest)


def test_could_not_run_is_never_a_pass_or_a_loss():
    """Every skilled run's build could not run; the baseline's passed: no transition, no loss, the count is named."""
    checks, manifest = _checks_and_manifest({NO_SKILL: ["passed"] * 3, WITH_SKILL: [CHECK_ERROR] * 3})
    runs = run_outcomes(checks, manifest)
    assert runs.loc[runs["condition"].eq(WITH_SKILL), "completed"].isna().all()  # unknown, not failed
    trans = transitions(stimulus_outcomes(runs))
    assert trans.empty  # the skilled arm has no known run: the stimulus says nothing
    assert objective_record_table(trans).empty  # no record to lose
    listed = unrunnable_checks(checks)
    assert len(listed) == 3 and set(listed["reason"]) == {"check could not run"}
