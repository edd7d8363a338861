"""The judge reads each run's signals from ``manifest.csv`` (the file contract), not from its transcript again.

On the committed tiny week the manifest's signals give exactly the runs and skips the transcripts give; a run
folder the manifest does not list (a pass killed before its end) or a week without a manifest is one line that
names the fix, ``skillbench signals RUN_DIR``, never a silent recomputation.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillbench.judge._answers import graded_arm, read_run_answer, select_runs
from skillbench.ledgers import LedgerError, week_arms
from skillbench.signals import run_dirs, run_signals, skip_reason
from tests.helpers.shared import TINY_WEEK, read_csv_rows, write_csv_rows

WEEK = "20261130"


@pytest.fixture
def week(tmp_path: Path) -> Path:
    return Path(shutil.copytree(TINY_WEEK / WEEK, tmp_path / WEEK))


def _from_transcripts(run_dir: Path, *, include_plugin: bool) -> tuple[list[str], dict[str, str]]:
    """The runs to grade and the skips, each run's signals derived from its folder (the judge's old way)."""
    pair, runs, skips = week_arms(run_dir), [], {}
    for folder in run_dirs(run_dir):
        run = read_run_answer(folder)
        if run.dormancy or run.trigger_only or not graded_arm(run.condition, pair, include_plugin=include_plugin):
            continue
        reason = skip_reason(run_signals(folder), run.answer)
        if reason:
            skips[run.run_id] = reason
        else:
            runs.append(run.run_id)
    return runs, skips


@pytest.mark.parametrize("include_plugin", [False, True])
def test_the_manifest_gives_the_runs_and_skips_the_transcripts_give(week: Path, include_plugin: bool) -> None:
    runs, skips = select_runs(week, include_plugin=include_plugin)
    expected_runs, expected_skips = _from_transcripts(week, include_plugin=include_plugin)
    assert [r.run_id for r in runs] == expected_runs and runs
    assert {s.run_id: s.reason for s in skips} == expected_skips


def test_a_run_the_manifest_does_not_list_is_one_line_naming_signals(week: Path) -> None:
    header, rows = read_csv_rows(week / "manifest.csv")
    graded = {r.run_id for r in select_runs(week)[0]}
    dropped = next(row for row in rows if row[header.index("run_id")] in graded)
    write_csv_rows(week / "manifest.csv", header, [row for row in rows if row is not dropped])
    with pytest.raises(LedgerError) as exc:
        select_runs(week)
    message = str(exc.value)
    assert len(message.splitlines()) == 1 and "manifest.csv" in message
    assert dropped[header.index("run_id")] in message and "skillbench signals" in message


def test_a_week_without_a_manifest_is_one_line_naming_signals(week: Path) -> None:
    (week / "manifest.csv").unlink()
    with pytest.raises(LedgerError) as exc:
        select_runs(week)
    assert len(str(exc.value).splitlines()) == 1 and "skillbench signals" in str(exc.value)


def test_the_cli_says_the_fix_in_one_line(week: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from skillbench.cli import main

    header, rows = read_csv_rows(week / "manifest.csv")
    graded = {r.run_id for r in select_runs(week)[0]}
    write_csv_rows(week / "manifest.csv", header, [row for row in rows if row[header.index("run_id")] not in graded])
    assert main(["judge", str(week), "--backend", "sim"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("skillbench judge: ") and f"skillbench signals {week}" in err[0]
