"""F1's interval, McNemar's exact test and the minimum test size, pinned by ``tests/data/interval_cases.json``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from skillbench.quality._trigger_stats import (
    MIN_TEST_QUERIES,
    PairedTest,
    f1_interval,
    mcnemar_exact_p,
    paired_test,
    winner_call,
)
from skillbench.scorecard import exact_f1_interval
from tests.helpers.shared import DATA_DIR

CASES = json.loads((DATA_DIR / "interval_cases.json").read_text(encoding="utf-8"))


def _units(case: dict) -> tuple[np.ndarray, np.ndarray]:
    if "generate" in case:
        g = case["generate"]
        return (np.column_stack([g["pos_hits"], np.full(g["n_pos"], g["runs"])]),
                np.column_stack([g["neg_hits"], np.full(g["n_neg"], g["runs"])]))
    return np.array(case["positives"]).reshape(-1, 2), np.array(case["negatives"]).reshape(-1, 2)


@pytest.mark.parametrize("case", CASES["f1"], ids=lambda c: c["name"])
def test_f1_interval_case(case: dict) -> None:
    pos, neg = _units(case)
    iv = f1_interval(pos, neg)
    want = case["expected"]
    assert iv.estimate == pytest.approx(want["estimate"], abs=1e-6) and iv.method == want["method"]
    for end in ("low", "high"):
        if end in want:
            assert (np.isnan(getattr(iv, end)) if want[end] is None else
                    getattr(iv, end) == pytest.approx(want[end], abs=1e-6)), (end, iv)
    if "low_below" in want:
        assert iv.low < want["low_below"] and "[0.334, 1.000]" in iv.text()
    if want.get("narrower_than_exact"):
        exact = exact_f1_interval(int(pos[:, 0].sum()), int(pos[:, 1].sum()), int(neg[:, 0].sum()),
                                  int(neg[:, 1].sum()))
        assert exact.low < iv.low <= iv.estimate <= iv.high < exact.high


@pytest.mark.parametrize("case", CASES["mcnemar"], ids=lambda c: f"{c['only_a']}-{c['only_b']}")
def test_mcnemar_exact_p_case(case: dict) -> None:
    assert mcnemar_exact_p(case["only_a"], case["only_b"]) == pytest.approx(case["p"], rel=1e-12)
    assert mcnemar_exact_p(case["only_b"], case["only_a"]) == pytest.approx(case["p"], rel=1e-12)  # two-sided


def test_the_minimum_test_size_is_the_fewest_discordant_queries_that_can_reach_005() -> None:
    assert mcnemar_exact_p(0, MIN_TEST_QUERIES) <= 0.05 < mcnemar_exact_p(0, MIN_TEST_QUERIES - 1)


@pytest.mark.parametrize("case", CASES["winner"], ids=lambda c: c["why"])
def test_winner_call_case(case: dict) -> None:
    p = mcnemar_exact_p(case["only_a"], case["only_b"])
    called, line = winner_call(PairedTest(case["n"], case["only_a"], case["only_b"], p))
    assert called is case["called"] and case["says"] in line


def test_paired_test_reads_only_the_queries_both_descriptions_were_measured_on() -> None:
    original = {"q1": True, "q2": False, "q3": False, "q4": True, "q9": False}
    candidate = {"q1": True, "q2": True, "q3": True, "q4": False, "q8": True}
    t = paired_test(original, candidate)
    assert (t.n, t.only_a, t.only_b) == (4, 1, 2) and t.p_value == pytest.approx(1.0)  # 2 · P(X ≤ 1; 3, ½) = 1
