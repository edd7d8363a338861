"""The RUN STATES table (ARCHITECTURE.md): one function decides a run folder's state, and resume, reconciliation
and the manifest read that one decision.

A real week with the real CLI and the simulated endpoint ends in every state a run can reach on its own —
finished, budget hit, an API error after its retry, the external timeout after its retry — and the three
readers agree on each; the next pass reruns exactly the runs that are not complete. The states the harness
records itself (harness-invalid, sandbox failure) and damaged folders are checked on folders made from real
transcripts; the sandbox failure of a real pass is in ``test_generate.py``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from skillbench.generation import GenerateOptions, finished_runs, generate, reconcile
from skillbench.runtime import PassContext
from skillbench.signals import run_signals, run_state, write_manifest
from skillbench.suite import load_suite
from skillbench.vocab import COMPLETE_STATES, RUN_STATES
from skillbench.weekly import model_endpoint
from tests.helpers.shared import SHARED, TINY_SUITE, require
from tests.helpers.sim import forced, require_cli, write_profiles

PROMPT = "dates-day-month-swapped"
REFERENCE = SHARED / "reference" / "claude-code" / "transcripts"


def _rid(model: str, rep: int) -> str:
    return f"{PROMPT}-{model}-with-skill-r{rep}-rs"


@pytest.fixture(scope="module")
def states_week(tmp_path_factory) -> Path:
    """haiku r1 finishes, r2 ends in an API error after its retry, r3 times out twice; sonnet hits its budget."""
    require_cli()
    base = tmp_path_factory.mktemp("states")
    faults = [{"kind": "server_error", "header": f"X-Skillbench-Run-Id: {_rid('haiku', 2)}"},
              {"kind": "stall", "header": f"X-Skillbench-Run-Id: {_rid('haiku', 3)}"}]
    profiles = write_profiles(base / "p.yaml", {"haiku": forced(), "sonnet": forced(budget_cross=1.0)},
                              faults=faults)
    out = base / "rs"
    ctx = PassContext(endpoint=lambda: model_endpoint("sim", suite_dir=TINY_SUITE, profiles=profiles),
                      log=lambda m: None)
    report = generate(_suite(), _opts(out), ctx)
    assert not report["accounted"], report
    return out


def _suite():
    suite = load_suite(TINY_SUITE)
    suite.prompts = [p for p in suite.prompts if p.name == PROMPT]
    return suite


def _opts(out: Path) -> GenerateOptions:
    # The stalled run waits out the timeout twice (its retry stalls too): 5 s, where a healthy local run here takes
    # about 1 s (measured three at once on two loaded cores).
    return GenerateOptions(run_key="rs", out_dir=out, models=["haiku", "sonnet"], conditions=["with-skill"], reps=3,
                           jobs=3, sandbox="local", timeout_s=5, extra_env={"CLAUDE_CODE_MAX_RETRIES": "0"})


EXPECTED = {_rid("haiku", 1): "finished", _rid("haiku", 2): "api_error", _rid("haiku", 3): "timeout",
            **{_rid("sonnet", r): "budget_hit" for r in (1, 2, 3)}}


def test_every_run_folder_has_its_state(states_week):
    assert {d.name: run_state(d) for d in states_week.iterdir() if d.is_dir()} == EXPECTED
    for run_id in (_rid("haiku", 2), _rid("haiku", 3)):  # both were retried once before they ended so
        meta = json.loads((states_week / run_id / "metadata.json").read_text())
        assert [a["attempt"] for a in meta["attempts"]] == [1, 2]


def test_resume_reconciliation_and_manifest_agree_on_every_state(states_week):
    complete = {r for r, s in EXPECTED.items() if s in COMPLETE_STATES}
    assert finished_runs(states_week) == complete, "resume keeps exactly the complete runs"
    recon = json.loads((states_week / "reconciliation.json").read_text())
    assert recon["observed"] == len(complete) and recon["expected"] == 6
    assert recon["missing"] == sorted(set(EXPECTED) - complete), "an API error after its retry is not complete"
    assert not recon["accounted"] and not recon["complete"]
    manifest = pd.read_csv(states_week / "manifest.csv", dtype=str, keep_default_na=False).set_index("run_id")
    assert sorted(manifest.index) == sorted(EXPECTED), "every run folder has its manifest row"
    for run_id, state in EXPECTED.items():
        assert run_signals(states_week / run_id)["run_state"] == state
    assert manifest.loc[_rid("haiku", 3), "terminal_reason"] == "timeout"
    assert manifest.loc[_rid("sonnet", 1), "budget_hit"] == "1"


def test_the_next_pass_reruns_exactly_the_runs_that_are_not_complete(states_week, tmp_path):
    week = Path(shutil.copytree(states_week, tmp_path / "rs"))
    kept = {r: (week / r / "transcript.jsonl").read_bytes() for r, s in EXPECTED.items() if s in COMPLETE_STATES}
    healthy = write_profiles(tmp_path / "ok.yaml", {"haiku": forced(), "sonnet": forced(budget_cross=1.0)})
    ctx = PassContext(endpoint=lambda: model_endpoint("sim", suite_dir=TINY_SUITE, profiles=healthy),
                      log=lambda m: None)
    report = generate(_suite(), _opts(week), ctx)
    assert report["complete"], report
    assert {r: (week / r / "transcript.jsonl").read_bytes() for r in kept} == kept, "complete runs are kept"
    assert sorted(p.name.split(".")[0] for p in (week / "_aside").iterdir()) == [_rid("haiku", 2), _rid("haiku", 3)]
    assert {run_state(week / r) for r in EXPECTED} == {"finished", "budget_hit"}


# -- the states the harness records, and damaged folders, on real transcripts ----------------------------------


def _folder(tmp_path: Path, transcript: str, **meta) -> Path:
    folder = tmp_path / "r1"
    folder.mkdir()
    (folder / "transcript.jsonl").write_text(transcript)
    base = {"run_id": "r1", "prompt": "p", "skill_family": "f", "skill_leaf": "f/SKILL.md", "model": "opus",
            "condition": "with-skill", "rep": 1, "exit_code": 0, "timed_out": False}
    (folder / "metadata.json").write_text(json.dumps({**base, **meta}))
    return folder


def _reference(name: str) -> str:
    return require(REFERENCE / f"{name}.jsonl").read_text()


def _cut(text: str) -> str:
    """The transcript without its final result event (the CLI never got to write it)."""
    return "\n".join(line for line in text.splitlines() if '"type":"result"' not in line.replace(" ", "")) + "\n"


@pytest.mark.parametrize(("make", "state"), [
    (lambda: (_reference("01_plain_answer"), {}), "finished"),
    (lambda: (_reference("05_budget_exceeded_error_max_budget_usd"), {}), "budget_hit"),
    (lambda: (_cut(_reference("01_plain_answer")), {"timed_out": True, "exit_code": 124}), "timeout"),
    (lambda: (_cut(_reference("01_plain_answer")), {"exit_code": 1}), "harness_invalid"),
    (lambda: ("", {"harness_invalid": "setup command failed (exit 2)", "exit_code": None}), "harness_invalid"),
    (lambda: ("", {"sandbox_failure": "run r1: docker sandbox failed: engine gone", "exit_code": None}),
     "sandbox_failure"),
], ids=["finished", "budget_hit", "timeout", "no-result", "setup-failed", "sandbox-failure"])
def test_state_of_a_folder(tmp_path, make, state):
    transcript, meta = make()
    folder = _folder(tmp_path, transcript, **meta)
    assert run_state(folder) == state and state in RUN_STATES
    pd.DataFrame({"run_id": ["r1"]}).to_csv(tmp_path / "plan.csv", index=False)
    write_manifest(tmp_path)
    recon = reconcile(tmp_path)
    complete = state in COMPLETE_STATES
    assert (finished_runs(tmp_path) == {"r1"}) is complete
    assert recon["observed"] == int(complete) and recon["complete"] is complete
    row = pd.read_csv(tmp_path / "manifest.csv", dtype=str, keep_default_na=False).iloc[0]
    if not complete:
        assert row["is_error"] == "1"
    if state in ("timeout", "harness_invalid", "sandbox_failure"):
        assert row["terminal_reason"] == state


def test_unreadable_metadata_is_harness_invalid_and_rerun(tmp_path):
    folder = _folder(tmp_path, _reference("01_plain_answer"))
    (folder / "metadata.json").write_text('{"run_id": "r1"')
    assert run_state(folder) == "harness_invalid"
    assert finished_runs(tmp_path) == set()
