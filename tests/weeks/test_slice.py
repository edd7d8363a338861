"""explore_weeks' parameters: the slice of families, models and weeks every table and figure of the page reads
(``weekly.select_weeks``, ``weekly.compared_weeks``), on the committed tiny weeks (read once, well under a second)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillbench import weekly
from skillbench.ledgers import WEEKLY_DIR
from tests.helpers.shared import TINY_WEEK


@pytest.fixture(scope="module")
def weeks() -> weekly.Weeks:
    return weekly.load_weeks(TINY_WEEK)


def test_the_slice_narrows_every_table_to_the_families_models_and_weeks_asked(weeks: weekly.Weeks) -> None:
    until = weeks.keys[-2]
    part = weekly.select_weeks(weeks, ["dates"], ["haiku"], until=until)
    assert part.keys == weeks.keys[:-1]
    for frame, family in ((part.runs, "skill_family"), (part.prompts, "skill"), (part.paired, "skill")):
        assert set(frame[family]) == {"dates"} and set(frame["model"]) == {"haiku"}
        assert set(frame["run_key"]) == set(part.keys)
    assert set(part.history["model"]) == {"haiku"} and set(part.history["run_key"]) == set(part.keys)
    assert weekly.select_weeks(weeks, "dates").runs["skill_family"].eq("dates").all()  # a name, not its letters
    assert len(weekly.select_weeks(weeks).runs) == len(weeks.runs)  # empty asks for everything


def test_a_name_the_weeks_do_not_have_is_one_line_listing_the_ones_they_have(weeks: weekly.Weeks) -> None:
    with pytest.raises(ValueError, match=r"^skill family 'date': not in these weeks \(they have csv-io, dates\)"):
        weekly.select_weeks(weeks, ["date"])
    with pytest.raises(ValueError, match=r"^model 'opus': not in these weeks"):
        weekly.select_weeks(weeks, models=["opus"])
    with pytest.raises(ValueError, match=r"^week '2020': not in these weeks"):
        weekly.compared_weeks(weeks, "2020")


def test_the_compared_weeks_default_to_the_latest_and_the_one_before(weeks: weekly.Weeks) -> None:
    assert weekly.compared_weeks(weeks) == (weeks.keys[-1], weeks.keys[-2])
    assert weekly.compared_weeks(weeks, weeks.keys[2], weeks.keys[0]) == (weeks.keys[2], weeks.keys[0])
    # the first week has none before it: no movers, rather than a comparison with the last week
    assert weekly.compared_weeks(weeks, weeks.keys[0]) == (weeks.keys[0], "")
    assert weekly.prompt_movers(weeks, run_key=weeks.keys[0]).empty


def test_load_weeks_takes_the_suite_folder_as_connect_does(tmp_path: Path) -> None:
    weekly_dir = tmp_path / "suite" / WEEKLY_DIR
    shutil.copytree(TINY_WEEK / "20261109", weekly_dir / "20261109")
    assert weekly.load_weeks(tmp_path / "suite").keys == weekly.load_weeks(weekly_dir).keys == ["20261109"]


def test_the_slice_line_names_the_weeks_the_slice_and_the_comparison(weeks: weekly.Weeks) -> None:
    part = weekly.select_weeks(weeks, models=["haiku"])
    line = weekly.slice_line(part, models=["haiku"], compared=weekly.compared_weeks(part))
    assert line == (f"4 weeks: {', '.join(weeks.keys)}; {len(part.runs)} runs (models: haiku); looking at "
                    f"{weeks.keys[-1]}, compared with {weeks.keys[-2]}")
    broken = weekly.Weeks(weeks.keys, weeks.runs, weeks.prompts, weeks.paired, weeks.history, {"w0": "bad.csv: torn"})
    assert weekly.slice_line(broken).splitlines()[-1] == "left out: week w0: bad.csv: torn"
