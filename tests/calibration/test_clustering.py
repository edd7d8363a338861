"""Item-level tests respect clustering: the simulation check's judge-accuracy floor (items clustered by run), the
sentinel's paired move (items clustered by gold answer) and the pairwise-bias bootstrap (pairs clustered by prompt).

The formulas are pinned on ``tests/data/cluster_cases.json`` (each case says why and where its value comes from).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skillbench.calibration import pairwise_bias
from skillbench.calibration._sentinel import clustered_mean_se
from skillbench.scorecard._simulation import clustered_floor_test

CASES = json.loads((Path(__file__).parents[1] / "data" / "cluster_cases.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES["floor_test"], ids=lambda c: c["why"][:40])
def test_judge_accuracy_floor_is_tested_over_runs(case: dict) -> None:
    deff, p = clustered_floor_test(np.array(case["agree"]), np.array(case["items"]), case["floor"])
    assert deff == pytest.approx(case["design_effect"], rel=1e-12)
    assert p == pytest.approx(case["p"], rel=1e-9)


@pytest.mark.parametrize("case", CASES["clustered_mean"], ids=lambda c: c["why"][:40])
def test_sentinel_move_se_is_clustered_by_gold_answer(case: dict) -> None:
    mean, se, answers = clustered_mean_se(np.array(case["values"], float), np.array(case["clusters"]))
    assert mean == pytest.approx(case["mean"]) and answers == case["answers"]
    assert (np.isnan(se) if case["se"] is None else se == pytest.approx(case["se"], rel=1e-12))


def _pairs(reps: int) -> pd.DataFrame:
    # six prompts with position picks of different strength; every rep of a prompt judged alike
    picks = [("A", "A"), ("A", "B"), ("A", "tie"), ("B", "A"), ("A", "A"), ("tie", "B")]
    return pd.DataFrame([{"prompt": f"p{i}", "model": "m", "rep": str(r), "winner_ab": ab, "winner_ba": ba,
                          "outcome": "T", "judge_model": "j", "error": ""}
                         for i, (ab, ba) in enumerate(picks) for r in range(1, reps + 1)])


def test_reps_of_a_prompt_are_not_independent_pairs_in_the_bias_interval() -> None:
    one, three = (pairwise_bias(_pairs(r), n_resamples=999).set_index("measure") for r in (1, 3))
    for measure in ("order_flip_rate", "position_bias"):
        assert one.at[measure, "n"] == 6 and three.at[measure, "n"] == 18  # n counts pairs
        assert three.at[measure, "estimate"] == pytest.approx(one.at[measure, "estimate"])
        # three identical reps carry one rep's evidence: the prompt-resampled interval does not narrow
        assert (three.at[measure, "ci_low"], three.at[measure, "ci_high"]) == pytest.approx(
            (one.at[measure, "ci_low"], one.at[measure, "ci_high"]))
        assert "resampled by prompt (6 prompts)" in three.at[measure, "note"]


def test_the_sentinel_section_names_the_answers_and_an_old_file_still_reads() -> None:
    from skillbench.scorecard import sentinel_markdown

    row = {"measure": "agreement", "n_paired": 60, "now": 0.9, "previous": 0.95, "move": -0.05, "within": 0.04,
           "between": float("nan"), "threshold": 0.04, "moved": "yes"}
    summary = {"gold": "gold.jsonl", "n_items": 60, "n_answers": 53, "flag": "drift", "flagged": True,
               "reasons": ["moved"], "previous": {"run_key": "w1"}}
    new = sentinel_markdown(summary | {"comparison": [row | {"n_answers": 53}]})
    old = sentinel_markdown(summary | {"comparison": [row]})  # a sentinel.json written before n_answers
    def cells(md: str) -> list[str]:
        line = next(x for x in md.splitlines() if x.startswith("| agreement"))
        return [c.strip() for c in line.strip("|").split("|")]

    assert "clustered by gold answer" in new
    assert cells(new)[1:3] == ["60", "53"] and cells(old)[1:3] == ["60", "—"]
