"""A damaged week never reads as a clean one: ``skillbench scorecard`` on corrupted ledgers and history files.

Each case copies a committed tiny week (``tests/data/tiny-week``) and damages one file: the manifest cut in half,
a duplicated or ill-typed score row, runs left ungraded, a torn history row, ``--history`` naming a folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillbench.cli import main
from tests.helpers.shared import QDRANT, TINY_WEEK, read_csv_rows, require, write_csv_rows

WEEK = "20261130"
BOOT = ["--bootstrap", "200"]


@pytest.fixture
def week(tmp_path: Path) -> Path:
    """A copy of a complete tiny week, with the tiny weeks' history beside it."""
    shutil.copyfile(TINY_WEEK / "scorecard-history.csv", tmp_path / "scorecard-history.csv")
    return Path(shutil.copytree(TINY_WEEK / WEEK, tmp_path / WEEK))


def _sections(md: str) -> dict[str, str]:
    parts = md.split("\n## ")
    return {p.split("\n", 1)[0]: p.split("\n", 1)[1] for p in parts[1:]}


def _history_keys(path: Path) -> list[tuple[str, str]]:
    _, rows = read_csv_rows(path)
    return [(r[0], r[2]) for r in rows]


def test_the_committed_week_is_complete(week: Path) -> None:
    assert main(["scorecard", str(week), *BOOT]) == 0
    assert "INCOMPLETE" not in (week / "scorecard.md").read_text().splitlines()[0]


def test_a_manifest_cut_in_half_is_incomplete_and_writes_no_history_row(week: Path, capsys) -> None:
    header, rows = read_csv_rows(week / "manifest.csv")
    write_csv_rows(week / "manifest.csv", header, rows[:16])
    history = week.parent / "scorecard-history.csv"
    before = history.read_bytes()
    weeks_before = _history_keys(history)
    (history.parent / "h.csv").write_bytes(before)
    # The week's own history row goes: the scorecard must not write it back from half a manifest.
    kept = [k for k in weeks_before if k[0] != WEEK]
    header_h, rows_h = read_csv_rows(history)
    write_csv_rows(history, header_h, [r for r in rows_h if r[0] != WEEK])
    assert main(["scorecard", str(week), *BOOT]) == 1
    md = (week / "scorecard.md").read_text()
    assert md.splitlines()[0].endswith("INCOMPLETE")
    coverage = _sections(md)["Coverage"]
    assert "manifest.csv lists 16 runs, reconciliation.json says 32 were written" in coverage
    lost = [r[header.index("run_id")] for r in rows[16:]]
    assert all(run_id in coverage for run_id in lost)
    assert _history_keys(history) == kept, "an INCOMPLETE week writes no history row"
    assert "INCOMPLETE" in capsys.readouterr().err


def test_qdrants_layout_is_scored_and_labelled_not_reconciled(tmp_path: Path) -> None:
    source = require(QDRANT / "evals" / "weekly" / "20260808")
    week = tmp_path / "20260808"
    week.mkdir()
    for name in ("manifest.csv", "scores.csv"):
        shutil.copyfile(source / name, week / name)
    assert main(["scorecard", str(week), *BOOT]) == 0
    sections = _sections((week / "scorecard.md").read_text())
    assert "- reconciliation: **not reconciled**" in sections["Coverage"]
    assert "- reconciliation: not reconciled" in sections["Provenance"]


def test_a_duplicated_score_row_is_refused_in_one_line(week: Path, capsys) -> None:
    header, rows = read_csv_rows(week / "scores.csv")
    rows.append(list(rows[0]))
    write_csv_rows(week / "scores.csv", header, rows)
    assert main(["scorecard", str(week), *BOOT]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "scores.csv: row 82: duplicate of row 2 (run_id=" in err
    assert not (week / "scorecard.md").exists()


def test_an_unknown_verdict_is_refused_in_one_line(week: Path, capsys) -> None:
    header, rows = read_csv_rows(week / "scores.csv")
    rows[4][header.index("verdict")] = "banana"
    write_csv_rows(week / "scores.csv", header, rows)
    assert main(["scorecard", str(week), *BOOT]) == 2
    err = capsys.readouterr().err.strip()
    assert "scores.csv: column 'verdict', row 6: 'banana' is not one of" in err and len(err.splitlines()) == 1


def test_ungraded_runs_are_not_graded_yet_and_incomplete(week: Path, capsys) -> None:
    header, rows = read_csv_rows(week / "scores.csv")
    runs = list(dict.fromkeys(r[header.index("run_id")] for r in rows))
    keep = set(runs[:2])
    write_csv_rows(week / "scores.csv", header, [r for r in rows if r[header.index("run_id")] in keep])
    history = week.parent / "scorecard-history.csv"
    header_h, rows_h = read_csv_rows(history)
    write_csv_rows(history, header_h, [r for r in rows_h if r[0] != WEEK])
    assert main(["scorecard", str(week), *BOOT]) == 1
    md = (week / "scorecard.md").read_text()
    assert md.splitlines()[0].endswith("INCOMPLETE")
    coverage = _sections(md)["Coverage"]
    assert f"runs graded: **2 of {len(runs)}**" in coverage
    assert coverage.count("| not graded yet") == len(runs) - 2
    assert "no gradeable answer" not in coverage
    assert f"{len(runs) - 2} gradeable runs are not graded yet" in md.split("\n## ")[0]
    assert WEEK not in {k for k, _ in _history_keys(history)}
    assert "INCOMPLETE" in capsys.readouterr().err


@pytest.mark.parametrize(("line", "expected"), [
    ("20261201,20261201T000000Z,sonnet,0.1", "line 10: 4 cells, expected 9"),
    ("20261201,20261201T000000Z,sonnet,lots,0.1,0.1,0.1,0.1,simulated", "line 10: column 'must_lift': 'lots'"),
])
def test_a_torn_history_row_is_refused_naming_file_and_line(week: Path, capsys, line: str, expected: str) -> None:
    history = week.parent / "scorecard-history.csv"
    history.write_bytes(history.read_bytes() + line.encode() + b"\r\n")
    before = history.read_bytes()
    assert main(["scorecard", str(week), *BOOT]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{history}: {expected}" in err and len(err.splitlines()) == 1
    assert history.read_bytes() == before, "nothing is rewritten"
    assert not (week / "scorecard.md").exists()


def test_history_pointing_at_a_folder_is_a_usage_error_and_writes_nothing(week: Path, capsys) -> None:
    folder = week.parent / "a-folder"
    folder.mkdir()
    assert main(["scorecard", str(week), "--history", str(folder), *BOOT]) == 2
    err = capsys.readouterr().err.strip()
    assert f"--history {folder}: is a folder" in err or f"{folder}: is a folder" in err
    assert len(err.splitlines()) == 1
    assert list(folder.iterdir()) == [] and not list(week.parent.glob("*.tmp*")) and not list(week.glob("*.tmp*"))
    assert not (week / "scorecard.md").exists()
