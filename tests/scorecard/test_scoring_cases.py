"""Scoring maths, data-driven: each ``tests/data/scoring_cases/*.json`` holds item rows and the numbers they give.

A case's ``rows`` are ``[prompt, model, condition, rep, item_type, verdict]``; credit follows the verdict
(met/violated 1, missing/absent/clean 0, ungraded/PARSE_ERROR empty). ``expected`` lists rows of the prompt×rep,
prompt, cell and lift frames and of the lift's uncertainty (the BCa bootstrap CI and MDE at the default
resamples and seed; only the columns given are checked; ``null`` means NaN). When ``prompt_reps``,
``prompts`` or ``cells`` is given, its rows are the frame's complete set of keys.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from skillbench.ledgers import read_scores
from skillbench.ledgers._columns import QDRANT_SCORES_COLUMNS
from skillbench.scorecard import (
    cell_scores,
    lift_table,
    paired_differences,
    prompt_rep_scores,
    prompt_scores,
    uncertainty_table,
)
from tests.helpers.shared import DATA_DIR

CASES = sorted((DATA_DIR / "scoring_cases").glob("*.json"))
CREDIT = {"met": "1.0", "violated": "1.0", "missing": "0.0", "absent": "0.0", "clean": "0.0"}
KEYS = {"prompt_reps": ["model", "condition", "prompt", "rep"], "prompts": ["model", "condition", "prompt"],
        "cells": ["model", "condition"], "lift": ["model"], "uncertainty": ["model"]}


def _write_scores(rows: list[list], path: Path) -> Path:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(QDRANT_SCORES_COLUMNS)
        for i, (prompt, model, condition, rep, item_type, verdict) in enumerate(rows):
            credit = CREDIT.get(verdict, "")
            sign = "-" if item_type == "avoid" and credit == "1.0" else ""
            w.writerow([prompt, prompt, model, condition, rep, item_type, f"{item_type} item {i}", verdict, credit,
                        f"{sign}{credit}", "", ""])
    return path


def _check(frame: pd.DataFrame, expected: list[dict], keys: list[str], *, exact_keys: bool) -> None:
    indexed = frame.set_index(keys)
    if exact_keys:
        want = {tuple(row[k] for k in keys) for row in expected}
        have = {k if isinstance(k, tuple) else (k,) for k in indexed.index}
        assert have == want
    for row in expected:
        key = tuple(row[k] for k in keys)
        got = indexed.loc[key if len(key) > 1 else key[0]]
        for column, value in row.items():
            if column in keys:
                continue
            actual = got[column]
            if value is None:
                assert actual is pd.NA or math.isnan(actual), f"{key} {column}: {actual} is not NaN"
            else:
                assert actual == pytest.approx(value, abs=1e-6), f"{key} {column}: {actual} != {value}"


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_scoring_case(case: Path, tmp_path: Path) -> None:
    spec = json.loads(case.read_text())
    scores = read_scores(_write_scores(spec["rows"], tmp_path / "scores.csv"))
    frames = {"prompt_reps": prompt_rep_scores(scores)}
    frames["prompts"] = prompt_scores(frames["prompt_reps"])
    frames["cells"] = cell_scores(frames["prompts"])
    frames["lift"] = lift_table(frames["prompts"], frames["cells"])
    frames["uncertainty"] = uncertainty_table(paired_differences(frames["prompts"]))
    for name, expected in spec["expected"].items():
        _check(frames[name], expected, KEYS[name], exact_keys=name not in ("lift", "uncertainty"))


def test_cases_cover_the_issue_edge_cases() -> None:
    assert {c.stem for c in CASES} >= {"no_bonus_items", "avoid_clamp", "missing_rep", "one_arm_prompt",
                                       "ungraded_items", "bca_interval", "bca_degenerate"}
