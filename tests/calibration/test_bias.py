"""Pairwise-judge bias: the measures pinned on a hand-made pairs table, and recovered from the sim's knobs.

On the simulated week (8 pairs) the pairwise judge is run on several endpoint seeds — each seed draws the
judge's position and length picks afresh — and the pooled pair rows are measured: a position bias set in the
profile must lie inside the measured interval, and 0 outside it when the bias is real; likewise the length bias,
measured among pairs the rubric judge scored equal (a fully lenient rubric judge scores every run equal, and a
wide tie margin makes the pairwise judge call every pair a tie but for its length picks).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skillbench.calibration import (
    BIAS_COLUMNS,
    CalibrationOptions,
    calibrate,
    pair_facts,
    pairwise_bias,
    week_pairwise_bias,
)
from skillbench.judge import JudgeOptions, judge_pairs, judge_run_dir, pairs_frame
from skillbench.ledgers import PAIRWISE_BIAS_FILE
from skillbench.runtime import PassContext
from skillbench.weekly import model_endpoint

# One pair per row: (winner_ab, winner_ba, treatment chars, control chars, scored equal); ab shows the treatment as A.
PAIRS = [
    ("A", "B", 100, 50, True),     # the treatment in both orders; longer: +2 for length
    ("A", "A", 50, 100, True),     # position A: a flip, +2 for position; treatment (shorter) then control: 0
    ("tie", "tie", 70, 70, True),  # equally long: no length verdict
    ("B", "A", 10, 20, True),      # the control in both orders; longer: +2
    ("A", "tie", 30, 20, True),    # a flip (treatment, tie), +1 for position, +1 for length
    ("tie", "A", 1, 2, False),     # a flip (tie, control), +1 for position; not scored equal
]
EXPECTED = {  # measure: (n pairs, estimate)
    "order_flip_rate": (6, 3 / 6),
    "position_bias": (6, (0 + 2 + 0 + 0 + 1 + 1) / 12),
    "length_bias": (4, (2 + 0 + 2 + 1) / 8),
}


def _frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    outcome = {("A", "B"): "W", ("B", "A"): "L"}
    pairs = pd.DataFrame([{"prompt": f"p{i}", "model": "m", "rep": "1", "winner_ab": ab, "winner_ba": ba,
                           "outcome": outcome.get((ab, ba), "T"), "judge_model": "j", "error": ""}
                          for i, (ab, ba, *_rest) in enumerate(PAIRS)])
    errored = {"prompt": "p9", "model": "m", "rep": "1", "winner_ab": "", "winner_ba": "", "outcome": "",
               "judge_model": "j", "error": "order ab: 529 overloaded"}
    pairs = pd.concat([pairs, pd.DataFrame([errored])], ignore_index=True)
    lengths = pd.DataFrame([{"prompt": f"p{i}", "model": "m", "rep": 1, "treatment_chars": t, "control_chars": c}
                            for i, (_, _, t, c, _) in enumerate(PAIRS)])
    equal = pd.DataFrame([{"prompt": f"p{i}", "model": "m", "rep": 1, "equal": e} for i, (*_, e) in enumerate(PAIRS)])
    return pairs, lengths, equal


@pytest.mark.parametrize("measure", sorted(EXPECTED))
def test_measures_on_a_known_table(measure: str) -> None:
    pairs, lengths, equal = _frames()
    table = pairwise_bias(pairs, lengths=lengths, equal=equal)
    assert list(table.columns) == list(BIAS_COLUMNS) and set(table["judge_model"]) == {"j"}
    row = table.set_index("measure").loc[measure]
    n, estimate = EXPECTED[measure]
    assert row["n"] == n and row["estimate"] == pytest.approx(estimate)
    assert row["ci_low"] <= row["estimate"] <= row["ci_high"] and row["ci_high"] - row["ci_low"] > 0
    assert "1 errored pair(s) left out" in row["note"]
    again = pairwise_bias(pairs, lengths=lengths, equal=equal).set_index("measure").loc[measure]
    assert (again["ci_low"], again["ci_high"]) == (row["ci_low"], row["ci_high"])  # a fixed seed


def test_readings_degenerate_intervals_and_a_missing_length() -> None:
    pairs, lengths, equal = _frames()
    got = pairwise_bias(pairs, lengths=lengths, equal=equal).set_index("measure")["reading"]
    assert got["position_bias"].startswith("prefers position A by 0.33 (")
    assert got["length_bias"].startswith("prefers the longer answer by ")
    # Every pair the same: BCa is undefined, the percentile interval is the value itself, and the note says so.
    always_b = pd.DataFrame([{"prompt": f"q{i}", "model": "m", "rep": "1", "winner_ab": "B", "winner_ba": "B",
                              "outcome": "T", "judge_model": "k", "error": ""} for i in range(5)])
    rows = pairwise_bias(always_b).set_index("measure")
    assert rows.loc["position_bias", ["estimate", "ci_low", "ci_high"]].tolist() == [-1.0, -1.0, -1.0]
    assert rows.loc["position_bias", "reading"] == "prefers position B by 1.00 (1.00–1.00)"
    assert "percentile" in rows.loc["position_bias", "note"]
    assert rows.loc["length_bias", "n"] == 0 and rows.loc["length_bias", "reading"].startswith("not measured")
    blind = always_b.assign(winner_ab="A", winner_ba="B", outcome="W")
    assert pairwise_bias(blind).set_index("measure").loc["position_bias", "reading"] == \
        "no detectable position preference"


def test_bad_pairs_are_one_line(tmp_path: Path) -> None:
    pairs, _, _ = _frames()
    with pytest.raises(ValueError, match="missing column.*winner_ba"):
        pairwise_bias(pairs.drop(columns="winner_ba"))
    bad = pairs.copy()
    bad.loc[1, "winner_ab"] = "first"
    with pytest.raises(ValueError, match=r"pairs: row 3: winner_ab 'first' is not A, B or tie"):
        pairwise_bias(bad)
    empty = week_pairwise_bias(tmp_path)  # no pairs.csv
    assert empty.empty and list(empty.columns) == list(BIAS_COLUMNS)


# -- recovered from the simulated judge -------------------------------------------------------------------------

SEEDS = range(1, 9)


def _pooled_pairs(week: Path, judge: dict[str, float], seeds=SEEDS) -> pd.DataFrame:
    """``pairs.csv`` of the week judged once per endpoint seed (``fresh``), all the rows together."""
    frames = []
    for seed in seeds:
        with model_endpoint("sim", seed=seed, profiles={"judges": {"default": judge}}) as ep:
            report = judge_pairs(week, JudgeOptions(jobs=3, max_retries=1, fresh=True),
                                 PassContext(endpoint=ep, log=lambda m: None))
        assert report.errors == 0
        frames.append(pairs_frame(week))
    return pd.concat(frames, ignore_index=True)


def _judge(week: Path, **judge: float) -> None:
    profile = {"flip_rate": 0.0, "fabricated_quote_rate": 0.0, **judge}
    with model_endpoint("sim", profiles={"judges": {"default": profile}}) as ep:
        assert judge_run_dir(week, JudgeOptions(jobs=3, max_retries=1), PassContext(endpoint=ep, log=lambda m: None)).ok


@pytest.mark.parametrize("bias", [0.3, 0.0])
def test_position_bias_set_in_the_profile_is_recovered(sim_week: Path, bias: float) -> None:
    judge = {"flip_rate": 0.0, "fabricated_quote_rate": 0.0, "position_bias": bias, "tie_margin": 0}
    pairs = _pooled_pairs(sim_week, judge)
    assert len(pairs) == 8 * len(SEEDS)
    row = pairwise_bias(pairs).set_index("measure").loc["position_bias"]
    assert row["ci_low"] <= bias <= row["ci_high"], row.to_dict()
    if bias:
        assert row["ci_low"] > 0 and row["reading"].startswith("prefers position A by")
    else:  # honest picks cancel exactly across the two orders
        assert row["estimate"] == 0 and row["reading"] == "no detectable position preference"


def test_length_bias_set_in_the_profile_is_recovered_and_reported(sim_week: Path) -> None:
    bias = 0.5
    _judge(sim_week, leniency=1.0)  # every item credited: every run scores the same, so every pair is "equal"
    lengths, equal = pair_facts(sim_week)
    assert lengths is not None and equal is not None and len(equal) == len(lengths) == 8
    judge = {"flip_rate": 0.0, "fabricated_quote_rate": 0.0, "position_bias": 0.0, "tie_margin": 99,
             "length_bias": bias}
    pairs = _pooled_pairs(sim_week, judge)
    row = pairwise_bias(pairs, lengths=lengths, equal=equal).set_index("measure").loc["length_bias"]
    assert row["n"] == 8 * len(SEEDS) - len(SEEDS) * int((lengths["treatment_chars"] == lengths["control_chars"]).sum())
    assert row["ci_low"] <= bias <= row["ci_high"] and row["ci_low"] > 0, row.to_dict()
    assert row["reading"].startswith("prefers the longer answer by")
    # The weekly calibration page measures the week's own pairs.csv (the last seed's) and writes the table.
    with model_endpoint("sim", profiles={"judges": {"default": {"flip_rate": 0.0}}}) as ep:
        calibrate(sim_week, CalibrationOptions(repeat=2, sample=3, jobs=3, max_retries=1),
                  PassContext(endpoint=ep, log=lambda m: None))
    written = pd.read_csv(sim_week / PAIRWISE_BIAS_FILE, keep_default_na=False)
    week = week_pairwise_bias(sim_week)
    assert list(written["measure"]) == list(week["measure"]) == ["order_flip_rate", "position_bias", "length_bias"]
    assert np.allclose(written["estimate"], week["estimate"]) and (written["n"] == week["n"]).all()
    md = (sim_week / "calibration.md").read_text()
    section = md.split("## Pairwise judge bias", 1)[1].split("\n## ", 1)[0]
    assert "| length_bias " in section and week.set_index("measure").loc["length_bias", "reading"] in section
    assert "## Self-agreement" in md and "## Provenance" in md  # the rest of the page is still there


def test_a_week_without_pairs_says_so_on_the_calibration_page(sim_week: Path) -> None:
    with model_endpoint("sim", profiles={"judges": {"default": {"flip_rate": 0.0}}}) as ep:
        calibrate(sim_week, CalibrationOptions(repeat=2, sample=2, jobs=2, max_retries=1),
                  PassContext(endpoint=ep, log=lambda m: None))
    md = (sim_week / "calibration.md").read_text()
    assert "## Pairwise judge bias\n\nNot measured: the pairwise judge did not run on this week (no pairs.csv)." in md
    written = pd.read_csv(sim_week / PAIRWISE_BIAS_FILE)
    assert written.empty and list(written.columns) == list(BIAS_COLUMNS)
