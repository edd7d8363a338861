"""Rate intervals and error control (issue 31), pinned by the hand-worked cases in
``tests/data/inference_cases.json``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skillbench.scorecard import adjust, rate_interval, rate_intervals

CASES = json.loads((Path(__file__).resolve().parents[1] / "data" / "inference_cases.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES["rates"], ids=[c["why"][:40] for c in CASES["rates"]])
def test_rate_interval_case(case: dict) -> None:
    got = rate_interval(case["k"], case["n"])
    assert got.method == case["method"]
    for have, want in ((got.low, case["low"]), (got.high, case["high"])):
        assert math.isnan(have) if want is None else have == pytest.approx(want, abs=1e-6)
    many = rate_intervals(pd.Series([case["k"]]), pd.Series([case["n"]])).iloc[0]
    assert many["method"] == case["method"]
    assert (np.isnan(many["low"]) if case["low"] is None else many["low"] == pytest.approx(case["low"], abs=1e-6))


@pytest.mark.parametrize("case", CASES["adjust"], ids=[c["why"][:40] for c in CASES["adjust"]])
def test_adjust_case(case: dict) -> None:
    p = [np.nan if v is None else v for v in case["p"]]
    got = adjust(p, case["rule"])
    for have, want in zip(got, case["adjusted"], strict=True):
        assert math.isnan(have) if want is None else have == pytest.approx(want)


def test_a_rate_outside_its_trials_is_refused() -> None:
    with pytest.raises(ValueError, match="0 ≤ k ≤ n"):
        rate_interval(5, 4)


def test_holm_by_hand_agrees_with_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(31)
    for size in (1, 2, 5, 14, 40):
        p = rng.uniform(0, 0.2, size=size).round(3)  # ties included
        assert adjust(p, "holm") == pytest.approx(multipletests(p, method="holm")[1])


def test_every_page_prints_an_interval_one_way() -> None:
    from skillbench.markdown import span, with_span

    assert span(0.41, 0.789) == "[0.410, 0.789]" and span(0.41, None) == "" and span(float("nan"), 1.0) == ""
    assert with_span("0.620", 0.41, 0.79) == "0.620 [0.410, 0.790]" and with_span("0.62", None, None) == "0.62"
    assert rate_interval(3, 10).text() == "0.300 [0.067, 0.652]"  # Clopper–Pearson 0.0667, 0.6525
    assert rate_interval(0, 0).text() == "n/a"
