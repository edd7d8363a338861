"""The pairwise judge on a comparison week: the treatment's answer is put against the control's answer of the same
(prompt, model, rep), the outcome is the treatment's, and the rubric judge grades the pair and its reference arm.

The committed tiny week is relabelled as a comparison: ``with-skill`` → ``with-skill@b`` and ``plugin`` →
``with-skill@a`` (both have their skill installed, as two versions would), ``no-skill`` stays the reference arm.
The simulated judge grades from the request's text alone, so the week's own answers and answer key serve.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skillbench.arms import ArmPair
from skillbench.cli import main
from skillbench.judge import JudgeOptions, find_pairs, judge_pairs, select_runs
from skillbench.runtime import PassContext
from tests.helpers.judge import judge_endpoint, truth
from tests.helpers.shared import TINY_WEEK
from tests.scorecard.test_comparison_scorecard import relabel_week

KEY = "20261130"
RELABEL = {"with-skill": "with-skill@b", "plugin": "with-skill@a"}
HEAD_VS_BASE = {"treatment": "with-skill@b", "control": "with-skill@a", "reference": "no-skill"}
BASE_VS_HEAD = {"treatment": "with-skill@a", "control": "with-skill@b", "reference": "no-skill"}
FLIP = {"W": "L", "L": "W", "T": "T"}


def _week(tmp_path: Path, name: str, arms: dict[str, str]) -> Path:
    run_dir = Path(shutil.copytree(TINY_WEEK / KEY, tmp_path / name / KEY))
    return relabel_week(run_dir, RELABEL, arms)


@pytest.fixture
def comparison(tmp_path: Path) -> Path:
    return _week(tmp_path, "head-vs-base", HEAD_VS_BASE)


def _satisfied(run_dir: Path) -> pd.Series:
    """Per run id, how many rubric items its answer satisfies (the simulation's answer key)."""
    t = truth(run_dir)
    ok = np.where(t["item_type"] == "avoid", 1 - t["positive"], t["positive"])
    return t.assign(ok=ok).groupby("run_id")["ok"].sum()


def _judge(run_dir: Path, log: list[str] | None = None):
    with judge_endpoint(position_bias=0.0) as ep:
        return judge_pairs(run_dir, JudgeOptions(fresh=True, jobs=3, max_retries=1),
                           PassContext(endpoint=ep, log=(log.append if log is not None else lambda m: None)))


def _outcomes(run_dir: Path) -> dict[tuple[str, str, str], str]:
    rows = pd.read_csv(run_dir / "pairs.csv", dtype=str, keep_default_na=False)
    return {(r.prompt, r.model, r.rep): r.outcome for r in rows.itertuples()}


def test_pairs_put_the_treatment_against_the_control(comparison: Path) -> None:
    pairs = find_pairs(comparison)
    assert len(pairs) == 8  # 2 prompts × 2 models × 2 reps with a gradeable answer in both versions
    for p in pairs:
        assert (p.treatment.condition, p.control.condition) == ("with-skill@b", "with-skill@a")
        assert (p.treatment.prompt, p.treatment.model, p.treatment.rep) == (p.control.prompt, p.control.model,
                                                                            p.control.rep)
    # Named explicitly, the weekly pair finds nothing here: the week has no plain with-skill or no-skill pair.
    assert find_pairs(comparison, pair=ArmPair()) == []
    # The rubric judge grades the pair and the reference arm; the plugin arm would only be graded on request.
    runs, _ = select_runs(comparison)
    assert {r.condition for r in runs} == {"no-skill", "with-skill@a", "with-skill@b"}


def test_the_outcome_is_the_treatments_and_follows_the_pair(comparison: Path, tmp_path: Path) -> None:
    lines: list[str] = []
    report = _judge(comparison, lines)
    assert report.pairs == report.judged == 8 and report.errors == 0 and report.arms.treatment == "with-skill@b"
    assert any("with-skill@b vs with-skill@a" in line for line in lines), lines
    satisfied = _satisfied(comparison)
    outcomes = _outcomes(comparison)
    for p in find_pairs(comparison):
        edge = int(np.sign(satisfied[p.treatment.run_id] - satisfied[p.control.run_id]))
        assert outcomes[(p.key[0], p.key[1], str(p.key[2]))] == {1: "W", -1: "L", 0: "T"}[edge], p.pair_id
    assert set(outcomes.values()) - {"T"}, "the week must have at least one decided pair"

    # The same answers with the pair the other way round: every win becomes a loss and vice versa.
    reversed_week = _week(tmp_path, "base-vs-head", BASE_VS_HEAD)
    _judge(reversed_week)
    assert _outcomes(reversed_week) == {k: FLIP[v] for k, v in outcomes.items()}


def test_the_cli_names_the_treatment_arm(comparison: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with judge_endpoint(position_bias=0.0) as ep:
        code = main(["judge-pairs", str(comparison), "--fresh", "--backend", "sim", "--endpoint", ep.base_url,
                     "--max-retries", "1"])
    out = capsys.readouterr().out
    assert code == 0 and "8 pair(s): " in out and "L for the with-skill@b arm, 0 judge error(s)" in out, out
