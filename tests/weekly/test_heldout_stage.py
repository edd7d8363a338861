"""``weekly --generalization``'s selection of held-out prompts and its refusal of a damaged use record, before any
run (the held-out week itself runs through the same generation and judge as compare's, pinned in
``tests/compare/test_compare.py``; the scorecard's section in ``tests/compare/test_generalization.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillbench.ledgers import HELDOUT_USES_FILE
from skillbench.suite import load_suite
from skillbench.weekly import WeeklyError, WeeklyOptions, run_weekly
from skillbench.weekly._heldout_stage import heldout_selection

EVALS = Path(__file__).resolve().parents[2] / "evals"


def test_the_weeks_families_held_out_prompts_are_selected_and_marked_for_their_own_week() -> None:
    suite = load_suite(EVALS)
    every = heldout_selection(suite, [], [])
    assert len(every) == sum(p.heldout for p in suite.prompts) and not any(p.heldout for p in every)
    ts = heldout_selection(suite, ["time-series-pandas"], [])
    assert len(ts) >= 5 and {p.family for p in ts} == {"time-series-pandas"}
    assert [p.name for p in heldout_selection(suite, [], ["ts-lag-features-leakage"])] == [p.name for p in ts]


def test_a_damaged_use_record_refuses_the_week_in_one_line_before_anything_is_written(tmp_path) -> None:
    suite = tmp_path / "evals"
    (suite / "test-prompts").mkdir(parents=True)
    for f in (EVALS / "test-prompts").glob("ts-*.json"):
        (suite / "test-prompts" / f.name).write_bytes(f.read_bytes())
    (suite / HELDOUT_USES_FILE).write_text("used_at,command\r\n", encoding="utf-8")
    opts = WeeklyOptions(suite_dir=suite, run_key="20261205", backend="sim", generalization=True,
                         reports_dir=tmp_path / "reports")
    with pytest.raises(WeeklyError) as err:
        run_weekly(opts)
    assert str(err.value).startswith("--generalization: ") and HELDOUT_USES_FILE in str(err.value)
    assert "\n" not in str(err.value) and not (suite / "weekly").exists() and not (tmp_path / "reports").exists()
