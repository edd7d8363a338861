"""The objective section end to end: a hand-made simulated week with ``checks.csv`` renders it beside the rubric,
the gate turns a credible objective loss into VALID_REGRESSION (after the activation contract), check errors are
named in coverage, and the tidy frames reach notebooks. Weeks without checks are pinned by test_scorecard_sim."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from skillbench.cli import main
from skillbench.ledgers import CHECKS_COLUMNS
from skillbench.scorecard import scorecard_frames
from skillbench.vocab import BASELINE_ONLY, CHECK_ERROR, CHECK_FAILED, CHECK_PASSED, NO_SKILL
from tests.scorecard import test_scorecard_sim as sim

OBJECTIVE = "Objective checks (deterministic, per arm × model)"
GATE = "Preference gate (paired, per skill family × model)"
# fam-a: six scored prompts (enough stimuli for a verdict) and its dormancy prompt; fam-b as in the sim week.
PROMPTS = {**{f"a{i}": ("fam-a", False) for i in range(1, 7)}, "a-quiet": ("fam-a", True),
           "b1": ("fam-b", False), "b2": ("fam-b", False), "b-quiet": ("fam-b", True)}
ERRORED = f"a1-sonnet-with-skill-r1-{sim.KEY}"
WEB = f"b1-haiku-with-skill-r2-{sim.KEY}"


def _statuses(run: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Check id -> (status, detail): the skill breaks fam-a's test; one check cannot run; one forbidden tool."""
    broken = run["skill_family"] == "fam-a" and run["condition"] != NO_SKILL and run["dormancy"] != "1"
    test = (CHECK_FAILED, "exit 1 (expected 0)") if broken else (CHECK_PASSED, "exit 0")
    if run["run_id"] == ERRORED:
        test = (CHECK_ERROR, "timed out after 60s")
    web = (CHECK_FAILED, "WebFetch (toolu_9)") if run["run_id"] == WEB else (CHECK_PASSED, "")
    return {"tests-pass": test, "no-web": web}


def _add_checks(run_dir: Path) -> None:
    with (run_dir / "manifest.csv").open(newline="") as fh:
        runs = list(csv.DictReader(fh))
    rows = [{"prompt": r["prompt"], "model": r["model"], "condition": r["condition"], "rep": r["rep"],
             "run_id": r["run_id"], "check_id": cid, "check_type": "run_command" if cid == "tests-pass" else
             "reject_tools", "status": status, "detail": detail}
            for r in runs for cid, (status, detail) in _statuses(r).items()]
    rows.sort(key=lambda r: (r["run_id"], r["check_id"]))
    sim._write_csv(run_dir / "checks.csv", list(CHECKS_COLUMNS), rows)


@pytest.fixture()
def week(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(sim, "PROMPTS", PROMPTS)
    run_dir = tmp_path / "weekly" / sim.KEY
    sim._build(run_dir, complete=True)
    _add_checks(run_dir)
    return run_dir


def test_the_objective_section_sits_beside_the_rubric(week: Path) -> None:
    assert main(["scorecard", str(week), "--bootstrap", "200"]) == 0
    md = (week / "scorecard.md").read_text()
    sections = sim._sections(md)
    expected = list(sim.SECTIONS)
    expected.insert(expected.index(GATE), OBJECTIVE)
    assert list(sections) == expected
    section = sections[OBJECTIVE]
    for heading in ("### Task pass lift", "### pass@k and pass^k", "### Objective completion transitions",
                    "### Tool-constraint violations"):
        assert heading in section
    assert "**VALID_REGRESSION** (credible loss)" in section
    assert "no credible loss (underpowered)" in section  # fam-b has two stimuli
    # the precedence sentence comes from the verdict specification: deterministic evidence first (issue 31; the
    # opt-in fabrication rule of issue 33 is deterministic evidence too, so it comes before the judge's health)
    assert ("the record enters the preference gate below after only `INVALID_INCONCLUSIVE (invalid_spec)` and "
            "`INVALID_INCONCLUSIVE (incomplete_reconciliation)`, and before `VALID_REGRESSION (fabrication)`, "
            "`INVALID_INCONCLUSIVE (judge_errors)`, "
            "`VALID_NO_CHANGE (activation_contract_failed)`, `INVALID_INCONCLUSIVE (underpowered)`, "
            "`VALID_NO_CHANGE (not_significant)`") in section
    assert "WebFetch (toolu_9)" in section
    # The gate: fam-a's credible objective loss is VALID_REGRESSION; fam-b's activation contract comes first.
    gate = sections[GATE]
    assert gate.count("VALID_REGRESSION (objective_loss)") == 2
    assert gate.count("VALID_NO_CHANGE (activation_contract_failed)") == 2
    # Every fam-a stimulus is baseline-only; sonnet's errored rep is left out and its other rep decides.
    # The loss test reads every known run: 2 completions of 4 runs all in the control has chance 1/C(4, 2) = 1/6
    # per stimulus, (1/6)^6 on haiku; sonnet's stimulus with 1 known treatment run against 2 has chance 1/3.
    assert "objective n=6; 0W/0T/6L; p(loss)=< 0.001; completion drops 100.0 points" in gate  # haiku
    assert "objective n=6; 0W/0T/6L; p(loss)=< 0.001; completion drops 100.0 points" in gate  # sonnet
    # b1 on haiku: the forbidden tool fails one of two with-skill reps, an even split, so not completing.
    assert "objective n=2; 0W/1T/1L" in gate
    coverage = sections["Coverage"]
    assert "checks that could not run" in coverage and ERRORED in coverage and "check could not run" in coverage
    assert "timed out after 60s" in coverage


def test_the_objective_frames_reach_notebooks(week: Path) -> None:
    frames = scorecard_frames(week, n_resamples=200)
    assert {"check_rates", "pass_k", "task_lift", "transitions", "transition_counts", "objective_record",
            "tool_violations", "check_errors"} <= set(frames)
    record = frames["objective_record"].set_index(["skill_family", "model"])
    assert record.loc[("fam-a", "haiku"), ["n", "losses", "regression"]].tolist() == [6, 6, True]
    assert record.loc[("fam-b", "haiku"), "reason"] == "underpowered"
    trans = frames["transitions"]
    fam_a = trans[trans["skill_family"].eq("fam-a") & ~trans["dormancy"].astype(bool)]
    assert len(fam_a) == 12 and set(fam_a["transition"]) == {BASELINE_ONLY}
    errors = frames["check_errors"]
    assert errors[["run_id", "reason"]].values.tolist() == [[ERRORED, "check could not run"]]
    rates = frames["check_rates"].set_index(["model", "condition"])
    # the error is neither a pass nor a failure, and its run's task outcome is unknown
    assert rates.loc[("sonnet", "with-skill"), "unknown_runs"] == 1
    gate = frames["gate"].set_index(["skill_family", "model"])
    assert gate.loc[("fam-a", "haiku"), "objective_losses"] == 6
