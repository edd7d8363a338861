"""The detector's measured precision, per surface, as ``benchmarks/fabrication.py`` last recorded it.

The record is committed (``skillbench/data/fabrication-precision.json``) so the gate can read it offline: an opt-in
fabrication gate is allowed only while every declared surface's precision lower bound is ≥ :data:`PRECISION_FLOOR`.
A record written by another detector format (:data:`DETECTOR_FORMAT`) says nothing about this one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

DETECTOR_FORMAT = 2  # bump when extraction or resolution changes what is flagged: the record must be measured again
PRECISION_FLOOR = 0.98
RECORD_NAME = "fabrication-precision.json"


@dataclass(frozen=True)
class MeasuredPrecision:
    """One surface's figures on the labelled sets (docs/fabrication.md)."""

    surface: str  # "pandas==3.1.1"
    precision: float | None  # flags that were fabricated ÷ flags (None: nothing was flagged)
    precision_low: float  # its two-sided 95 % Clopper–Pearson lower bound (0 when nothing was flagged)
    recall: float
    recall_low: float
    recall_high: float
    true_flags: int
    false_flags: int
    real: int  # labelled real identifiers checked
    fabricated: int  # labelled fabricated identifiers checked

    @property
    def gate_allowed(self) -> bool:
        return self.precision_low >= PRECISION_FLOOR


def read_record() -> dict:
    """The committed record (``{}`` when absent or unreadable: then no surface is measured)."""
    try:
        text = resources.files("skillbench").joinpath("data", RECORD_NAME).read_text(encoding="utf-8")
        record = json.loads(text)
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def measured_kinds() -> frozenset[str]:
    """The identifier kinds the record's precision was measured on (names and keywords): an unresolved identifier
    of another kind (a REST path, a config key) has no measured precision, so it is shown but never counted as a
    fabrication — a client's generated API may omit a route its server still serves."""
    record = read_record()
    if record.get("detector_format") != DETECTOR_FORMAT:
        return frozenset()
    kinds = record.get("measured_kinds")
    return frozenset(str(k) for k in kinds) if isinstance(kinds, list) else frozenset()


def measured_precision(surface: str) -> MeasuredPrecision | None:
    """The recorded precision of the detector on ``surface`` ("pandas==3.1.1"), or None when that surface at that
    version was not measured by this detector format (then a fabrication gate cannot be allowed for it)."""
    record = read_record()
    if record.get("detector_format") != DETECTOR_FORMAT:
        return None
    row = (record.get("surfaces") or {}).get(surface)
    if not isinstance(row, dict):
        return None
    try:
        return MeasuredPrecision(surface=surface, **{k: row[k] for k in MeasuredPrecision.__dataclass_fields__
                                                     if k != "surface"})
    except (KeyError, TypeError):
        return None
