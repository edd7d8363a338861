"""Intervals on agreement: the must bar on its lower end, κ/α/PABAK bootstrap intervals over runs or prompts.

The must-bar cases are in ``tests/data/interval_cases.json`` (``unanimity``); the statistics of summed per-unit
pieces are checked against the packages the point estimates come from (statsmodels, krippendorff).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from skillbench.calibration._agreement import (
    FAIL,
    NOT_SHOWN,
    PASS,
    _per_unit,
    agreement_intervals,
    agreement_rows,
    alpha_of_coincidences,
    bar_state,
    fleiss_kappa,
    fleiss_of_sums,
    krippendorff_alpha,
    self_agreement,
    unanimity_interval,
)
from tests.helpers.shared import DATA_DIR

CASES = json.loads((DATA_DIR / "interval_cases.json").read_text(encoding="utf-8"))["unanimity"]


def _per_run(spec: list | str) -> np.ndarray:
    if isinstance(spec, list):
        return np.array(spec)
    rows: list[list[int]] = []
    for part in spec.split(" + "):  # "23 × [3, 3] + [2, 3]"
        times, _, cell = part.partition(" × ") if " × " in part else ("1", "", part)
        rows += [json.loads(cell)] * int(times)
    return np.array(rows)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_the_must_bar_is_judged_on_the_lower_end(case: dict) -> None:
    iv = unanimity_interval(_per_run(case["per_run"]), n_resamples=500)
    if "low" in case:
        assert iv.low == pytest.approx(case["low"], abs=1e-6)
    else:
        assert iv.low <= case["low_at_most"] + 1e-9
    assert bar_state(iv.estimate, iv.low) == case["state"]


def test_bar_states() -> None:
    assert (bar_state(1.0, 0.96), bar_state(1.0, 0.9), bar_state(0.94, 0.9), bar_state(float("nan"), 0.9)) == (
        PASS, NOT_SHOWN, FAIL, "")


def _ratings(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, (n, 3)).astype(float)
    x[:, 1] = np.where(rng.random(n) < 0.8, x[:, 0], x[:, 1])
    x[:, 2] = np.where(rng.random(n) < 0.7, x[:, 0], x[:, 2])
    x[::7, 2] = np.nan  # α takes missing ratings; Fleiss' κ only complete units
    return pd.DataFrame(x)


def test_summed_pieces_give_the_packages_values() -> None:
    """α and Fleiss' κ of the summed per-unit pieces (what the bootstrap resamples) equal krippendorff's and
    statsmodels' on the same matrix — with and without missing ratings, two raters and three."""
    w = _ratings()
    pieces = _per_unit(w).sum(axis=0)
    assert alpha_of_coincidences(pieces[8:11]) == pytest.approx(krippendorff_alpha(w), abs=1e-12)
    assert fleiss_of_sums(pieces[4:8]) == pytest.approx(fleiss_kappa(w.dropna()), abs=1e-12)
    two = w.iloc[:, :2]
    assert alpha_of_coincidences(_per_unit(two).sum(axis=0)[8:11]) == pytest.approx(krippendorff_alpha(two))


def test_alpha_of_a_hand_table() -> None:
    """Two coders, 10 units: 4 both 1, 4 both 0, 2 split. Coincidences o_00 = 8, o_11 = 8, o_01 = 2; n_0 = n_1 = 10,
    n = 20: α = 1 − 19·2/(10·10) = 0.62."""
    assert alpha_of_coincidences(np.array([8.0, 2.0, 8.0])) == pytest.approx(0.62)
    w = pd.DataFrame({"a": [1] * 4 + [0] * 4 + [1, 0], "b": [1] * 4 + [0] * 4 + [0, 1]})
    assert krippendorff_alpha(w) == pytest.approx(0.62)


def test_intervals_hold_the_estimate_and_clustering_by_prompt_is_said() -> None:
    w = _ratings(60)
    runs = np.repeat([f"r{i}" for i in range(20)], 3)
    by_run = agreement_intervals(w.iloc[:, :2], runs, "run", n_resamples=500)
    assert by_run["clusters"] == 20 and by_run["interval_method"] == "BCa" and by_run["cluster_by"] == "run"
    assert np.isnan(by_run["fleiss_kappa_low"])  # two raters: Cohen's κ, not Fleiss'
    assert by_run["cohen_kappa_low"] < by_run["cohen_kappa_high"] and by_run["pabak_low"] < by_run["pabak_high"]
    few = agreement_intervals(w.iloc[:, :2], np.repeat([f"p{i}" for i in range(6)], 10), "prompt")
    assert few["interval_method"] == "none: 6 prompts (< 10)" and np.isnan(few["cohen_kappa_low"])


def test_perfect_agreement_gets_no_zero_width_interval() -> None:
    w = pd.DataFrame({"a": [1, 0] * 15, "b": [1, 0] * 15}, dtype=float)
    out = agreement_intervals(w, np.repeat([f"r{i}" for i in range(15)], 2), n_resamples=200)
    assert np.isnan(out["cohen_kappa_low"]) and "degenerate" in out["interval_method"]


def test_agreement_rows_carry_the_interval_columns_and_self_agreement_the_bar_state() -> None:
    rows = []
    for run in range(12):
        for item in range(3):
            truth = (run + item) % 2
            for sample in (1, 2):
                flip = sample == 2 and run == 0 and item == 0
                rows.append({"run_id": f"r{run}", "item_index": item, "item_type": "must", "prompt": f"p{run % 4}",
                             "rater": f"j#{sample}", "positive": float(1 - truth if flip else truth)})
    grades = pd.DataFrame(rows)
    table = agreement_rows(grades, "samples", "j#1", "j#2").set_index("item_type")
    assert table.loc["must", "clusters"] == 12 and table.loc["must", "cluster_by"] == "run"
    prompts = agreement_rows(grades, "samples", "j#1", "j#2", cluster_by="prompt").set_index("item_type")
    assert prompts.loc["must", "clusters"] == 4 and "< 10" in prompts.loc["must", "interval_method"]
    must = self_agreement(grades, ["j#1", "j#2"]).set_index("item_type").loc["must"]
    # 35/36 = 0.972 reaches the bar; its lower end cannot (Clopper–Pearson's alone is beta.ppf(0.025, 35, 2) = 0.855)
    assert must["unanimous"] == 35 and must["bar_state"] == NOT_SHOWN and must["unanimity_low"] <= 0.8548
