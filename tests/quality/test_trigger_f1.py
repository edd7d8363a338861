"""Measured trigger F1 from the committed tiny week (tests/data/tiny-week), counts checked by hand.

Week 20261130 (2 models × 2 reps; with-skill and plugin arms count; manifest.csv's ``skill_activation``):

* csv-io, should trigger — csv-garbled-names in with-skill (haiku none, none; sonnet skill_tool, skill_tool) and
  plugin (haiku skill_tool, none; sonnet none, file_read): 8 runs, 4 activations. Should not — the plugin runs of
  dates-day-month-swapped (4) and of dormancy-dates-sql-interval (4), in which csv-io was installed: their
  transcripts call the Skill tool for ``dates`` only and read only ``skills/dates/SKILL.md`` → 8 runs, 0 false.
* dates, should trigger — dates-day-month-swapped: with-skill 4 × skill_tool, plugin haiku skill_tool, none,
  sonnet none, none: 8 runs, 5 activations. Should not — its dormancy prompt in with-skill (4 × none) and plugin
  (sonnet r2 file_read): 8 runs, 1 false; plus csv-garbled-names' 4 plugin runs, which never touch dates: 12, 1.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from skillbench.ledgers import TRIGGER_F1_COLUMNS, TRIGGER_F1_FILE
from skillbench.quality._trigger_f1 import (
    TRIGGERING_DIMENSION,
    disagreement_reading,
    measured_triggering,
    measured_vs_predicted,
    write_trigger_f1,
)

WEEKS = Path(__file__).resolve().parents[1] / "data" / "tiny-week"


def _row(frame: pd.DataFrame, family: str) -> dict:
    return frame.set_index("family").loc[family].to_dict()


def test_counts_of_the_complete_week_match_the_hand_count() -> None:
    frame = measured_triggering(WEEKS / "20261130")
    assert list(frame.columns) == list(TRIGGER_F1_COLUMNS)
    csv_io, dates = _row(frame, "csv-io"), _row(frame, "dates")
    assert {k: csv_io[k] for k in ("should_n", "tp", "fn", "should_not_n", "fp", "tn")} == {
        "should_n": 8, "tp": 4, "fn": 4, "should_not_n": 8, "fp": 0, "tn": 8}
    assert {k: dates[k] for k in ("should_n", "tp", "fn", "should_not_n", "fp", "tn")} == {
        "should_n": 8, "tp": 5, "fn": 3, "should_not_n": 12, "fp": 1, "tn": 11}
    assert csv_io["precision"] == 1.0 and csv_io["recall"] == 0.5 and csv_io["f1"] == pytest.approx(2 / 3)
    assert dates["precision"] == pytest.approx(5 / 6) and dates["recall"] == pytest.approx(5 / 8)
    assert dates["f1"] == pytest.approx(2 * (5 / 6) * (5 / 8) / (5 / 6 + 5 / 8))
    assert csv_io["unread_plugin_runs"] == 0 and dates["unread_plugin_runs"] == 0


def test_a_week_without_run_folders_counts_its_unread_plugin_runs_never_as_negatives() -> None:
    """Week 20261109 kept its manifest only: plugin runs cannot be read for other families' activation."""
    frame = measured_triggering(WEEKS / "20261109")
    csv_io = _row(frame, "csv-io")
    assert csv_io["should_not_n"] == 0 and pd.isna(csv_io["precision"]) and pd.isna(csv_io["f1"])
    assert csv_io["unread_plugin_runs"] == 4  # csv-garbled-names' 4 plugin runs
    assert _row(frame, "dates")["should_not_n"] == 8  # its dormancy runs (manifest) only


def test_another_familys_activation_in_a_plugin_run_is_a_false_trigger(tmp_path: Path) -> None:
    """A csv-garbled-names plugin run that also calls the Skill tool for ``dates`` is a false trigger of dates."""
    week = Path(shutil.copytree(WEEKS / "20261130", tmp_path / "week"))
    transcript = week / "csv-garbled-names-haiku-plugin-r1-20261130" / "transcript.jsonl"
    lines = transcript.read_text(encoding="utf-8").splitlines()
    call = {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_extra_dates", "name": "Skill", "input": {"skill": "dates"}}]}}
    transcript.write_text("\n".join([lines[0], json.dumps(call), *lines[1:]]) + "\n", encoding="utf-8")
    dates = _row(measured_triggering(week), "dates")
    assert (dates["should_not_n"], dates["fp"], dates["tn"]) == (12, 2, 10)
    assert dates["precision"] == pytest.approx(5 / 7)


def test_write_trigger_f1_writes_the_frame(tmp_path: Path) -> None:
    week = Path(shutil.copytree(WEEKS / "20261130", tmp_path / "week"))
    path = write_trigger_f1(week)
    assert path == week / TRIGGER_F1_FILE
    written = pd.read_csv(path)
    assert written[["family", "tp", "fp"]].values.tolist() == [["csv-io", 4, 0], ["dates", 5, 1]]


def _quality_csv(path: Path, predicted: dict[str, str]) -> Path:
    """A skill-quality.csv with lint-skills' columns: the composite triggering rows, plus rows that must be ignored."""
    rows = [{"family": f, "skill": f, "level": "hub", "source": "composite", "measure": TRIGGERING_DIMENSION,
             "sample": "mean", "value": v} for f, v in predicted.items()]
    rows += [{"family": "csv-io", "skill": "csv-io", "level": "hub", "source": "judge", "measure": TRIGGERING_DIMENSION,
              "sample": "1", "value": "0"},
             {"family": "csv-io", "skill": "csv-io", "level": "hub", "source": "composite", "measure": "composite",
              "sample": "mean", "value": "0.1"}]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_measured_next_to_predicted_joins_by_family_and_reads_the_disagreement(tmp_path: Path) -> None:
    from skillbench.quality._anchored import DIMENSION_IDS

    assert TRIGGERING_DIMENSION in DIMENSION_IDS
    week = WEEKS / "20261130"
    alone = measured_vs_predicted(week)  # the committed week has no skill-quality.csv
    assert alone["predicted"].isna().all() and "Nothing to compare" in disagreement_reading(alone)
    # measured F1: csv-io 2/3, dates 0.714; predicted 0.25 / 0.75; a third family only the judge graded
    frame = measured_vs_predicted(week, _quality_csv(tmp_path / "q.csv",
                                                     {"csv-io": "0.25", "dates": "0.75", "other": "1"}))
    by = frame.set_index("family")
    assert by.loc["csv-io", "predicted"] == 0.25 and by.loc["csv-io", "gap"] == pytest.approx(2 / 3 - 0.25)
    assert by.loc["dates", "gap"] == pytest.approx(by.loc["dates", "f1"] - 0.75)
    assert pd.isna(by.loc["other", "f1"]) and by.loc["other", "predicted"] == 1.0  # outer join keeps it
    reading = disagreement_reading(frame)
    assert reading.startswith("They disagree by 0.25 or more for 1 of 2 families: csv-io (predicted 0.25, "
                              "measured 0.67: fires better than it reads)")
    assert "\n" not in reading


def test_every_rate_and_f1_carry_an_interval_exact_at_these_sizes() -> None:
    """csv-io, 8 should runs with 4 activations: recall 0.5 with Clopper–Pearson's [beta.ppf(0.025, 4, 5),
    beta.ppf(0.975, 5, 4)] = [0.157013, 0.842987] (8 < 20 runs: exact); precision 4/4 = 1.0 with [0.025^(1/4), 1] =
    [0.397635, 1]; F1 on 2 + 2 prompts: exact and conservative, wide, and holding the estimate."""
    csv_io = _row(measured_triggering(WEEKS / "20261130"), "csv-io")
    assert (csv_io["recall_low"], csv_io["recall_high"]) == pytest.approx((0.157013, 0.842987), abs=1e-6)
    assert (csv_io["precision_low"], csv_io["precision_high"]) == pytest.approx((0.397635, 1.0), abs=1e-6)
    assert csv_io["rate_method"] == "exact (Clopper–Pearson)"
    assert csv_io["f1_method"] == "exact (Clopper–Pearson), conservative"
    assert csv_io["f1_low"] < 0.3 < csv_io["f1"] < csv_io["f1_high"] < 1.0
