"""Bad input on the command line: one line naming the value and what is allowed, exit 2, nothing written.

Run keys for every command (``..``, ``../../x``, ``a/b``), counts, amounts and timeouts that must be positive,
unknown models and conditions, and ``--prompts``/``--families`` names a suite or a week does not have. Each
case runs the real ``skillbench`` entry point and compares every file of the suite (or week) and of its parent
before and after.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from skillbench.cli import main
from skillbench.commands import known_model
from tests.helpers.judge import CLI, judge_endpoint
from tests.helpers.shared import ROOT, TINY_SUITE, TINY_WEEK


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(root.rglob("*"))}


def _cli(argv: list[str], capsys) -> tuple[int, list[str]]:
    """``skillbench ARGV`` in this process: the exit code and the stderr lines."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own refusals
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.err.strip().splitlines()


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A copy of the tiny suite inside an otherwise empty folder (so a write outside the suite shows too)."""
    return Path(shutil.copytree(TINY_SUITE, tmp_path / "box" / "evals"))


@pytest.fixture
def week(tmp_path: Path) -> Path:
    """A copy of the committed tiny week (its run folders and ledgers)."""
    return Path(shutil.copytree(TINY_WEEK / "20261130", tmp_path / "weeks" / "20261130"))


def _refused(argv: list[str], root: Path, capsys, *needles: str) -> str:
    before = _snapshot(root)
    code, lines = _cli(argv, capsys)
    assert code == 2, lines
    assert len(lines) == 1, lines
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert _snapshot(root) == before, "nothing written"
    return lines[0]


@pytest.mark.parametrize("key", ["..", "../../x", "a/b"])
def test_generate_refuses_a_run_key_that_is_not_a_folder_name(suite, capsys, key):
    _refused(["generate", str(suite), "--run-key", key, "--backend", "sim", "--dry-run"], suite.parent.parent, capsys,
             f"run key {key!r}", "letters, digits")


@pytest.mark.parametrize("key", ["..", "../../x", "a/b"])
def test_scorecard_and_weekly_refuse_the_same_run_keys(week, suite, capsys, key):
    _refused(["scorecard", str(week), "--run-key", key], week.parent, capsys, f"run key {key!r}")
    _refused(["weekly", "--suite", str(suite), "--run-key", key, "--backend", "sim"], suite.parent.parent, capsys,
             f"run key {key!r}")


@pytest.mark.parametrize(("flag", "value", "needle"), [
    ("--max-retries", "-1", "must be 0 or more"),
    ("--limit", "-3", "must be 1 or more"),
    ("--limit", "0", "must be 1 or more"),
    ("--timeout", "0", "must be a number above 0"),
    ("--timeout", "-5", "must be a number above 0"),
    ("--timeout", "nan", "must be a number above 0"),
    ("--judge-model", "gpt-9", "unknown model 'gpt-9'"),
    ("--jobs", "0", "must be 1 or more"),
])
def test_judge_refuses_a_bad_option(week, capsys, flag, value, needle):
    _refused(["judge", str(week), "--backend", "sim", flag, value], week.parent, capsys, flag, needle)


@pytest.mark.parametrize(("flag", "value", "needle"), [
    ("--max-total-usd", "-1", "must be a number above 0"),
    ("--max-total-usd", "0", "must be a number above 0"),
    ("--timeout", "-5", "is not above 0 seconds"),  # a spec's timeout rule (checktypes.timeout_problem)
    ("--timeout", "0", "is not above 0 seconds"),
    ("--limit", "-3", "must be 1 or more"),
    ("--limit", "0", "must be 1 or more"),
    ("--models", "gpt-9", "unknown model 'gpt-9'"),
    ("--models", "haiku,gpt-9", "unknown model 'gpt-9'"),
    ("--conditions", "with-skil", "unknown condition 'with-skil'"),
])
def test_generate_refuses_a_bad_option(suite, capsys, flag, value, needle):
    _refused(["generate", str(suite), "--run-key", "k", "--backend", "sim", flag, value], suite.parent.parent, capsys,
             flag, needle)


def test_judge_pairs_calibrate_and_weekly_refuse_an_unknown_model(week, suite, capsys):
    _refused(["judge-pairs", str(week), "--judge-model", "gpt-9"], week.parent, capsys, "unknown model 'gpt-9'")
    _refused(["calibrate", str(week), "--other-judge", "gpt-9"], week.parent, capsys, "unknown model 'gpt-9'")
    _refused(["weekly", "--suite", str(suite), "--models", "gpt-9", "--backend", "sim"], suite.parent.parent, capsys,
             "unknown model 'gpt-9'")


@pytest.mark.parametrize(("name", "known"), [
    ("opus", True), ("sonnet", True), ("haiku", True), ("sonnet[1m]", True), ("claude-sonnet-4-5", True),
    ("claude-sonnet-4-5[1m]", True), ("claude-3-5-haiku-20241022", True), ("claude-opus-5-5", True),
    ("gpt-9", False), ("my-fake-model", False), ("", False), ("Sonnet", False), ("claude-", False),
])
def test_which_model_names_are_known(name, known):
    assert known_model(name) is known


def test_generate_refuses_an_unknown_prompt_or_family_naming_it(suite, capsys):
    root = suite.parent.parent
    line = _refused(["generate", str(suite), "--run-key", "k", "--backend", "sim", "--prompts", "nope"], root, capsys,
                    "--prompts nope", "is not a prompt of the suite", "csv-garbled-names")
    assert "dormancy-dates-sql-interval" in line
    _refused(["generate", str(suite), "--run-key", "k", "--backend", "sim", "--prompts", "heldout-csv-slow"], root,
             capsys, "--prompts heldout-csv-slow", "held out")
    _refused(["generate", str(suite), "--run-key", "k", "--backend", "sim", "--families", "csv-io,nope"], root,
             capsys, "--families nope", "is not a skill family")


def test_judge_and_weekly_refuse_an_unknown_prompt_or_family(week, suite, capsys):
    _refused(["judge", str(week), "--backend", "sim", "--prompts", "nope"], week.parent, capsys, "--prompts nope",
             "has no run of it", "csv-garbled-names")
    _refused(["judge", str(week), "--backend", "sim", "--families", "nope"], week.parent, capsys, "--families nope")
    _refused(["weekly", "--suite", str(suite), "--backend", "sim", "--families", "nope", "--run-key", "k"],
             suite.parent.parent, capsys, "--families nope")


def test_judge_grades_only_the_selected_prompts(sim_week: Path):
    """``judge --prompts P``: only P's runs are graded; the other runs' skips and existing rows are kept."""
    skips_before = pd.read_csv(sim_week / "judge-skips.csv") if (sim_week / "judge-skips.csv").exists() else None
    with judge_endpoint() as ep:
        first = subprocess.run([*CLI, "judge", str(sim_week), "--endpoint", ep.base_url, "--prompts",
                                "csv-garbled-names"], capture_output=True, text=True, cwd=ROOT, timeout=600)
        assert first.returncode == 0, first.stderr[-2000:]
        scores = pd.read_csv(sim_week / "scores.csv", dtype=str)
        assert set(scores["prompt"]) == {"csv-garbled-names"}
        graded = set(scores["run_id"])
        rest = subprocess.run([*CLI, "judge", str(sim_week), "--endpoint", ep.base_url], capture_output=True,
                              text=True, cwd=ROOT, timeout=600)
        assert rest.returncode == 0, rest.stderr[-2000:]
    scores = pd.read_csv(sim_week / "scores.csv", dtype=str)
    assert set(scores["prompt"]) == {"csv-garbled-names", "dates-day-month-swapped"}
    assert graded < set(scores["run_id"]) and not scores.duplicated(["run_id", "item_index"]).any()
    assert f"graded {len(set(scores['run_id'])) - len(graded)} run(s) now, {len(graded)} before" in rest.stdout
    if skips_before is not None:
        assert set(skips_before["run_id"]) <= set(pd.read_csv(sim_week / "judge-skips.csv")["run_id"])
