"""κ per dimension on the five anchor bands, pinned by the worked examples of tests/data/kappa_cases.json (Cohen's
for 2 samples, Fleiss' for 3 or more), the reading's thresholds, and κ over a suite's judged scores."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from skillbench.quality._anchored import DIMENSION_IDS
from skillbench.quality._kappa import (
    _cohen_of_cells,
    _fleiss_of_sums,
    _per_family,
    band,
    kappa,
    kappa_by_dimension,
    kappa_interval,
    reading,
)
from tests.helpers.shared import DATA_DIR

CASES = json.loads((DATA_DIR / "kappa_cases.json").read_text())["cases"]


def _ratings(case: dict) -> pd.DataFrame:
    if "ratings" in case:
        return pd.DataFrame(case["ratings"])
    if "expand" in case:
        return pd.DataFrame([pair for pair, n in case["expand"] for _ in range(n)])
    # counts per unit and category -> one label per rater (Fleiss' κ does not depend on which rater gave which)
    return pd.DataFrame([[j for j, n in enumerate(row) for _ in range(n)] for row in case["counts"]])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_kappa_matches_the_hand_computation(case: dict) -> None:
    statistic, value = kappa(_ratings(case))
    assert statistic == case["statistic"]
    if case["kappa"] is None:
        assert math.isnan(value) and reading(value) == "undefined"
    else:
        assert value == pytest.approx(case["kappa"], abs=case.get("tolerance", 1e-6))


@pytest.mark.parametrize(("value", "words"), [(0.80, "strong"), (0.7999, "moderate"), (0.60, "moderate"),
                                              (0.5999, "fair"), (0.40, "fair"), (0.3999, "poor"), (-0.2, "poor")])
def test_reading_thresholds(value: float, words: str) -> None:
    assert reading(value) == words


def test_bands_are_the_anchors() -> None:
    assert [band(s) for s in (0, 0.25, 0.5, 0.75, 1.0)] == [0, 1, 2, 3, 4]


def test_kappa_by_dimension_uses_the_bands_of_each_dimension_and_drops_ungraded_units() -> None:
    case = next(c for c in CASES if c["name"] == "fleiss-five-bands-3-samples")
    rows = []
    for unit, ratings in enumerate(case["ratings"]):
        for sample, b in enumerate(ratings, start=1):
            for dim in DIMENSION_IDS:
                rows.append({"family": f"f{unit}", "sample": sample, "dimension": dim, "score": b / 4})
    rows.append({"family": "f9", "sample": 1, "dimension": DIMENSION_IDS[0], "score": float("nan")})
    out = kappa_by_dimension(pd.DataFrame(rows)).set_index("dimension")
    assert list(out.index) == list(DIMENSION_IDS)
    assert out["kappa"].tolist() == pytest.approx([case["kappa"]] * 4, abs=1e-6)
    assert set(out["statistic"]) == {"fleiss"} and out["n_units"].tolist() == [4, 4, 4, 4]
    assert out["reading"].tolist() == ["fair"] * 4 and not out["meets_target"].any()
    assert out["raw_agreement"].tolist() == pytest.approx([0.5] * 4)


def _coded(ratings: pd.DataFrame) -> pd.DataFrame:
    """Labels as band numbers (the worked examples' yes/no become 0/1; κ does not depend on the names)."""
    codes = {v: i for i, v in enumerate(sorted(set(ratings.to_numpy().ravel()), key=str))}
    return ratings.map(codes.get)


@pytest.mark.parametrize("case", [c for c in CASES if c["kappa"] is not None], ids=lambda c: c["name"])
def test_the_resampled_pieces_give_the_hand_kappa(case: dict) -> None:
    """κ of the summed per-family pieces (what the interval's bootstrap resamples) is the worked example's κ."""
    ratings = _coded(_ratings(case))
    of = _cohen_of_cells if case["statistic"] == "cohen" else _fleiss_of_sums
    summed = _per_family(ratings, case["statistic"]).sum(axis=0)
    assert float(of(summed)) == pytest.approx(case["kappa"], abs=case.get("tolerance", 1e-6))


def test_kappa_interval_only_from_ten_families() -> None:
    """Wikipedia's 50 proposals (κ = 0.40) are enough units for a BCa interval around 0.40; the 4-family hand case
    is not, and says how many it has."""
    wiki = _coded(_ratings(next(c for c in CASES if c["name"] == "cohen-wikipedia-yes-no")))
    iv = kappa_interval(wiki, "cohen", n_resamples=500)
    assert iv["interval_method"] == "BCa" and iv["kappa_low"] < 0.40 < iv["kappa_high"]
    few = _ratings(next(c for c in CASES if c["name"] == "fleiss-five-bands-3-samples"))
    assert kappa_interval(few, "fleiss") == {"kappa_low": pytest.approx(float("nan"), nan_ok=True),
                                             "kappa_high": pytest.approx(float("nan"), nan_ok=True),
                                             "interval_method": "none: 4 families (< 10)"}
