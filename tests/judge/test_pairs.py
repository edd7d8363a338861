"""The pairwise judge: both orders, a win only when they agree, verified with the position-bias knob."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skillbench.cli import main
from skillbench.judge import JudgeOptions, find_pairs, judge_pairs, outcome, position_agreement
from skillbench.ledgers import PAIRS_COLUMNS, read_manifest, read_pairs
from skillbench.runtime import PassContext
from skillbench.scorecard import preference_gate
from tests.helpers.judge import judge_endpoint, truth


@pytest.mark.parametrize(("ab", "ba", "expected"), [
    ("A", "B", "W"), ("B", "A", "L"),  # both orders agree
    ("A", "A", "T"), ("B", "B", "T"),  # a position preference: no winner
    ("tie", "tie", "T"), ("A", "tie", "T"), ("tie", "B", "T"), ("B", "tie", "T"),
])
def test_outcome_needs_both_orders(ab: str, ba: str, expected: str) -> None:
    assert outcome(ab, ba) == expected


def _truth_direction(sim_week: Path) -> dict[tuple[str, str, int], int]:
    """+1 when the with-skill answer satisfies more rubric items than the no-skill one, −1 fewer, 0 equal."""
    t = truth(sim_week)
    t["satisfied"] = np.where(t["item_type"] == "avoid", 1 - t["positive"], t["positive"])
    per_run = t.groupby("run_id")["satisfied"].sum()
    return {p.key: int(np.sign(per_run[p.with_skill.run_id] - per_run[p.no_skill.run_id]))
            for p in find_pairs(sim_week)}


def _judge(sim_week: Path, ep, **kw):
    return judge_pairs(sim_week, JudgeOptions(jobs=3, max_retries=1, **kw),
                       PassContext(endpoint=ep, log=lambda m: None))


def _rows(sim_week: Path) -> pd.DataFrame:
    return pd.read_csv(sim_week / "pairs.csv", dtype=str, keep_default_na=False)


def test_an_unbiased_judge_finds_the_better_answer(sim_week: Path) -> None:
    with judge_endpoint(position_bias=0.0) as ep:
        report = _judge(sim_week, ep)
    rows = _rows(sim_week)
    assert list(rows.columns) == list(PAIRS_COLUMNS) and report.pairs == len(rows) == 8 and report.errors == 0
    direction = _truth_direction(sim_week)
    for r in rows.itertuples():
        want = {1: "W", -1: "L", 0: "T"}[direction[(r.prompt, r.model, int(r.rep))]]
        assert r.outcome == want, r
        assert r.outcome == outcome(r.winner_ab, r.winner_ba)
    assert set(rows["run_key"]) == {"jt1"} and set(rows["judge_model"]) == {"claude-opus-5-5"}
    assert read_pairs(sim_week / "pairs.csv")["outcome"].isin(["W", "T", "L"]).all()


def test_a_judge_that_always_picks_a_position_creates_no_winner(sim_week: Path) -> None:
    with judge_endpoint(position_bias=1.0) as ep:
        _judge(sim_week, ep)
    rows = _rows(sim_week)
    assert (rows["winner_ab"] == "A").all() and (rows["winner_ba"] == "A").all()
    assert (rows["outcome"] == "T").all()
    assert position_agreement(rows)["first_position_rate"] == 1.0


def test_partial_position_bias_never_flips_a_direction(sim_week: Path) -> None:
    with judge_endpoint(position_bias=0.5) as ep:
        _judge(sim_week, ep)
    rows = _rows(sim_week)
    direction = _truth_direction(sim_week)
    got = [(direction[(r.prompt, r.model, int(r.rep))], r.outcome) for r in rows.itertuples()]
    # A win needs both orders, so bias can only turn a real win into a tie, never into a loss or vice versa.
    assert all(o != "W" or d == 1 for d, o in got) and all(o != "L" or d == -1 for d, o in got)
    assert all(d != 0 or o == "T" for d, o in got)
    assert any(o == "T" and d != 0 for d, o in got) or not any(d != 0 for d, _ in got)


def test_outage_is_a_judge_error_not_a_loss_and_resume_rejudges(sim_week: Path) -> None:
    outage = [{"kind": "overloaded", "rate": 1.0, "role": "judge"}]
    with judge_endpoint(faults=outage) as ep:
        report = _judge(sim_week, ep)
    rows = _rows(sim_week)
    assert report.errors == 8 and (rows["outcome"] == "").all() and rows["error"].str.contains("529").all()
    gate = preference_gate(read_pairs(sim_week / "pairs.csv"), read_manifest(sim_week / "manifest.csv"))
    assert (gate["reason"] == "judge_errors").all()
    with judge_endpoint() as ep:
        code = main(["judge-pairs", str(sim_week), "--backend", "sim", "--endpoint", ep.base_url, "--max-retries", "1"])
    rows = _rows(sim_week)
    assert code == 0 and len(rows) == 8 and (rows["error"] == "").all() and rows["outcome"].isin(["W", "T", "L"]).all()
    assert not rows.duplicated(["prompt", "model", "rep"]).any()
    costs = [float((sim_week / r / "judge_cost.txt").read_text()) for p in find_pairs(sim_week)
             for r in (p.with_skill.run_id, p.no_skill.run_id)]
    assert all(c > 0 for c in costs)


def test_a_week_without_a_complete_pair_writes_the_header_and_says_why(sim_week: Path) -> None:
    for folder in sim_week.glob("*-no-skill-*"):
        shutil.rmtree(folder)
    assert main(["signals", str(sim_week)]) == 0
    lines: list[str] = []
    with judge_endpoint() as ep:
        report = judge_pairs(sim_week, JudgeOptions(max_retries=1), PassContext(endpoint=ep, log=lines.append))
    assert report.pairs == 0 and report.judged == 0
    assert (sim_week / "pairs.csv").read_text().splitlines() == [",".join(PAIRS_COLUMNS)]
    assert read_pairs(sim_week / "pairs.csv").empty
    assert any("0 pairs: no prompt × model × rep has a gradeable answer in both arms" in line for line in lines), lines
