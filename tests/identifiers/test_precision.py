"""The committed precision record (skillbench/data/fabrication-precision.json) against the labelled sets."""

from __future__ import annotations

import json
import random

import pytest

from skillbench.identifiers import (
    DETECTOR_FORMAT,
    PRECISION_FLOOR,
    UNRESOLVED,
    MeasuredPrecision,
    check_answer,
    measured_precision,
)
from skillbench.identifiers._precision import read_record
from skillbench.suite import read_config
from tests.helpers.shared import ROOT
from tests.identifiers.conftest import cached_surfaces

LABELS = ROOT / "benchmarks" / "data" / "fabrication"
SURFACES = {"pandas": "pandas==3.1.1", "scipy": "scipy==1.17.1", "statsmodels": "statsmodels==0.15.0",
            "qdrant_client": "qdrant-client==1.19.0"}


def _labels(module: str) -> list[dict]:
    return json.loads((LABELS / f"labels-{module}.json").read_text("utf-8"))


def test_the_record_is_this_detectors_and_counts_the_labelled_sets() -> None:
    record = read_record()
    assert record["detector_format"] == DETECTOR_FORMAT
    for module, surface in SURFACES.items():
        measured = measured_precision(surface)
        assert isinstance(measured, MeasuredPrecision)
        fabricated = sum(1 for item in _labels(module) if item["label"] == "fabricated")
        assert measured.fabricated == fabricated >= 100
        assert measured.true_flags + (fabricated - measured.true_flags) == fabricated
        assert measured.real >= 300 and measured.false_flags == 0
        # the gate's rule: every declared surface's lower bound at or above the floor
        assert measured.precision_low >= PRECISION_FLOOR and measured.gate_allowed
    assert measured_precision("pandas==9.9.9") is None  # another version was never measured


def test_every_label_names_its_oracle() -> None:
    for module in SURFACES:
        items = _labels(module)
        assert {item["label"] for item in items} == {"real", "fabricated"}
        assert all(item["oracle"] and item["expect"] and item["code"] for item in items)


@pytest.mark.parametrize("module", ["pandas", "scipy", "statsmodels", "qdrant_client"])
def test_a_sample_of_the_labelled_sets_agrees_with_the_record(module: str) -> None:
    """A fresh computation on a seeded sample (the whole benchmark takes ~25 s): no real item flagged, and the
    fabricated share flagged inside the recorded recall interval's reach."""
    if module == "qdrant_client":
        surfaces = cached_surfaces(read_config(LABELS / "qdrant.skillbench.toml"), "qdrant's")
    else:
        surfaces = cached_surfaces(ROOT / "evals", "the bundled suite's")
    measured = measured_precision(SURFACES[module])
    assert measured is not None
    items = random.Random(7).sample(_labels(module), 40)
    flagged = total = 0
    for item in items:
        found = check_answer(f"```python\n{item['code']}\n```", surfaces)
        flags = {i.text for i in found if i.status == UNRESOLVED}
        if item["label"] == "real":
            assert not flags, f"{module}: real code flagged: {flags} in {item['code']!r}"
        else:
            total += 1
            flagged += item["expect"] in flags
            assert flags <= {item["expect"]}, f"{module}: a set-up line flagged: {flags}"
    assert total and flagged / total >= measured.recall_low - 0.25  # 40 draws: a loose, not a flaky, bound
