"""The task-pass rule (errors are unknown, never a loss) and the per-arm pass@k/pass^k means, pinned by the
data-driven cases in ``tests/data/objective_cases/`` (each with its ``why``)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from skillbench.scorecard import arm_rates, pass_k_table, run_outcomes, stimulus_outcomes
from skillbench.vocab import CHECK_ERROR, CHECK_FAILED, CHECK_PASSED, WITH_SKILL

CASES = Path(__file__).resolve().parents[1] / "data" / "objective_cases"
STATUS = {True: CHECK_PASSED, False: CHECK_FAILED, None: CHECK_ERROR}


def _cases(name: str) -> list[dict]:
    return json.loads((CASES / name).read_text(encoding="utf-8"))["cases"]


def _arm(stimuli: list[list[list[str]]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """checks and manifest rows of one arm of one model: stimuli -> runs -> check statuses."""
    checks, manifest = [], []
    for s, runs in enumerate(stimuli):
        for rep, statuses in enumerate(runs, start=1):
            run_id = f"p{s}-haiku-{WITH_SKILL}-r{rep}"
            manifest.append({"run_id": run_id, "prompt": f"p{s}", "skill_family": "fam", "model": "haiku",
                             "condition": WITH_SKILL, "rep": rep, "dormancy": False})
            checks += [{"prompt": f"p{s}", "model": "haiku", "condition": WITH_SKILL, "rep": rep, "run_id": run_id,
                        "check_id": f"c{i}", "check_type": "run_command", "status": st, "detail": ""}
                       for i, st in enumerate(statuses)]
    return pd.DataFrame(checks), pd.DataFrame(manifest)


def _same(got: object, want: float | None) -> bool:
    return pd.isna(got) if want is None else got == pytest.approx(want)


@pytest.mark.parametrize("case", _cases("task_pass.json"), ids=lambda c: c["why"])
def test_task_pass_rule(case: dict) -> None:
    checks, manifest = _arm([case["runs"]])
    runs = run_outcomes(checks, manifest).sort_values("rep")
    assert [None if pd.isna(v) else bool(v) for v in runs["completed"]] == case["completed"]
    rates = arm_rates(runs).iloc[0]
    assert _same(rates["check_pass_rate"], case["check_pass_rate"])
    assert _same(rates["task_pass_rate"], case["task_pass_rate"])
    assert (rates["check_errors"], rates["unknown_runs"]) == (case["check_errors"], case["unknown_runs"])


@pytest.mark.parametrize("case", _cases("pass_k_mean.json"), ids=lambda c: c["why"])
def test_pass_k_means_over_stimuli(case: dict) -> None:
    checks, manifest = _arm([[[STATUS[o]] for o in runs] for runs in case["stimuli"]])
    table = pass_k_table(stimulus_outcomes(run_outcomes(checks, manifest)))
    got = table[["k", "stimuli", "pass_at_k", "pass_hat_k"]].to_dict("records")
    assert len(got) == len(case["expected"])
    for row, want in zip(got, case["expected"], strict=True):
        assert (row["k"], row["stimuli"]) == (want["k"], want["stimuli"])
        assert row["pass_at_k"] == pytest.approx(want["pass_at_k"])
        assert row["pass_hat_k"] == pytest.approx(want["pass_hat_k"])
