"""SQL over every week (``skillbench.weeks.connect``): views typed by the file contract, a cross-week query, an old
week read with its defaults, a damaged week or history left out with one line, and nothing written into the weeks.

Every test reads two of ``tests/data/tiny-week``'s weeks (their top-level ledgers only, 32 runs each) copied to a
temporary suite, so each runs in well under a second.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from skillbench import weeks
from skillbench.ledgers import (
    MANIFEST_FILE,
    QDRANT_HISTORY_COLUMNS,
    SCORES_FILE,
    TRIGGER_F1_COLUMNS,
    TRIGGER_F1_FILE,
    VIEW_COLUMNS,
    WEEKLY_DIR,
    read_manifest,
    read_scores,
    view_columns,
    write_history_prompts,
)
from skillbench.ledgers._columns import MANIFEST_DEFAULTS, QDRANT_MANIFEST_COLUMNS, QDRANT_SCORES_COLUMNS
from skillbench.scorecard import prompt_rep_scores
from tests.helpers.shared import QDRANT, ROOT, TINY_WEEK, require

KEYS = ("20261116", "20261123")


def _suite(root: Path) -> Path:
    """A suite folder with two weeks of tiny-week and its history (files only: no run folders)."""
    weekly = root / "tiny-suite" / WEEKLY_DIR
    for key in KEYS:
        shutil.copytree(TINY_WEEK / key, weekly / key)
    history = pd.read_csv(TINY_WEEK / "scorecard-history.csv", dtype=str)
    history[history["run_key"].isin(KEYS)].to_csv(weekly / "scorecard-history.csv", index=False)
    return weekly.parent


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return _suite(tmp_path)


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> duckdb.DuckDBPyConnection:
    """One connection over the two clean weeks, shared by the read-only tests of this module."""
    return weeks.connect(_suite(tmp_path_factory.mktemp("clean")))


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("view", [*VIEW_COLUMNS, "weeks", "skipped"])
def test_every_view_has_the_two_keys_then_its_contract_columns(clean: duckdb.DuckDBPyConnection, view: str) -> None:
    columns = [row[0] for row in clean.execute(f"DESCRIBE {view}").fetchall()]
    assert clean.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ? AND schema_name = 'main'",
                         [view]).fetchone() == (1,)  # a view, not a table of its own
    assert columns == view_columns(view)
    assert columns[:2] == ["suite", "run_key"]
    if view in VIEW_COLUMNS:  # the contract's list, in its order, after the keys
        assert [c for c in columns if c not in ("suite", "run_key")] == [
            c for c in VIEW_COLUMNS[view] if c not in ("suite", "run_key")]


def test_a_cross_week_query_counts_every_week_and_agrees_with_the_scorecard(suite: Path) -> None:
    before = _files(suite)
    con = weeks.connect(suite)
    per_week = dict(con.execute("SELECT run_key, count(*) FROM runs GROUP BY run_key").fetchall())
    assert per_week == {key: len(read_manifest(suite / WEEKLY_DIR / key / MANIFEST_FILE)) for key in KEYS}
    assert con.execute("SELECT DISTINCT suite FROM scores").fetchall() == [("tiny-suite",)]
    # types come from the contract's readers: numbers are numbers, flags booleans, the run's start a timestamp
    types = dict((r[0], r[1]) for r in con.execute("DESCRIBE runs").fetchall())
    assert (types["rep"], types["total_cost_usd"], types["dormancy"]) == ("BIGINT", "DOUBLE", "BOOLEAN")
    assert types["timestamp"].startswith("TIMESTAMP")
    summary = weeks.family_arm_summary(con, families=["dates"], models=["haiku"])
    assert set(summary["run_key"]) == set(KEYS) and set(summary["skill_family"]) == {"dates"}
    assert list(summary["run_key"]) == sorted(summary["run_key"])  # weeks in time order
    # the SQL must coverage of each arm is the mean of the scorecard's per-run must coverage
    for key in KEYS:
        reps = prompt_rep_scores(read_scores(suite / WEEKLY_DIR / key / SCORES_FILE))
        reps = reps[(reps["model"] == "haiku") & (reps["skill"] == "dates")]
        expected = reps.groupby("condition")["must_coverage"].mean()
        got = summary[summary["run_key"] == key].set_index("arm")["must_coverage"].dropna()
        pd.testing.assert_series_equal(got.sort_index(), expected.sort_index(), check_names=False)
    both = weeks.two_weeks(con, KEYS[1], KEYS[0])
    assert (both["now_runs"] > 0).all() and (both["previous_runs"] > 0).all()
    assert _files(suite) == before  # nothing written beside the weeks


def test_a_weekly_folder_names_the_same_weeks_and_a_file_is_refused_in_one_line(suite: Path) -> None:
    weekly = (suite / WEEKLY_DIR).resolve()
    assert weeks.weekly_folder(suite) == weeks.weekly_folder(weekly) == (weekly, "tiny-suite")
    assert weeks.weekly_folder(TINY_WEEK) == (TINY_WEEK.resolve(), "tiny-week")  # a weekly folder by another name
    assert weeks.connect(weekly, suite="qdrant").execute("SELECT DISTINCT suite FROM runs").fetchone() == ("qdrant",)
    with pytest.raises(weeks.WeeksError, match=r"manifest.csv: not a folder — give a suite folder"):
        weeks.connect(suite / WEEKLY_DIR / KEYS[0] / MANIFEST_FILE)


def test_an_old_week_without_our_columns_reads_with_the_contract_defaults(suite: Path) -> None:
    old = suite / WEEKLY_DIR / KEYS[0]
    manifest = pd.read_csv(old / MANIFEST_FILE, dtype=str, keep_default_na=False)
    manifest[list(QDRANT_MANIFEST_COLUMNS)].to_csv(old / MANIFEST_FILE, index=False)  # qdrant's 23 columns only
    scores = pd.read_csv(old / SCORES_FILE, dtype=str, keep_default_na=False)
    scores[list(QDRANT_SCORES_COLUMNS)].to_csv(old / SCORES_FILE, index=False)
    con = weeks.connect(suite)
    row = con.execute("SELECT endpoint, attempts, rate_limited, dormancy, skills_ref FROM runs WHERE run_key = ? "
                      "LIMIT 1", [KEYS[0]]).fetchone()
    assert row == (MANIFEST_DEFAULTS["endpoint"], MANIFEST_DEFAULTS["attempts"], MANIFEST_DEFAULTS["rate_limited"],
                   MANIFEST_DEFAULTS["dormancy"], MANIFEST_DEFAULTS["skills_ref"])
    assert con.execute("SELECT count(*) FROM runs WHERE run_key = ?", [KEYS[1]]).fetchone() == (32,)
    # qdrant's scores ledger has no run_id: the ready query joins by qdrant's run key, so the old week still counts
    summary = weeks.family_arm_summary(con)
    assert summary.loc[summary["run_key"] == KEYS[0], "must_coverage"].notna().any()
    assert con.execute("SELECT count(*) FROM skipped").fetchone() == (0,)


def test_a_damaged_week_is_left_out_with_one_line_naming_its_file(suite: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    bad = suite / WEEKLY_DIR / KEYS[0] / SCORES_FILE
    lines = bad.read_text(encoding="utf-8").splitlines(keepends=True)
    bad.write_text("".join([*lines, lines[1]]), encoding="utf-8")  # a rubric item twice: it would count twice
    (suite / WEEKLY_DIR / "20261201").mkdir()  # a week not yet through signals
    shutil.copytree(suite / WEEKLY_DIR / KEYS[1], suite / WEEKLY_DIR / "zz-copy")  # run.json names KEYS[1] too
    with caplog.at_level(logging.WARNING, logger="skillbench.weeks"):
        con = weeks.connect(suite)
    assert [r[0] for r in con.execute("SELECT DISTINCT run_key FROM runs").fetchall()] == [KEYS[1]]
    assert con.execute("SELECT DISTINCT run_key FROM scores").fetchall() == [(KEYS[1],)]
    skipped = dict(con.execute("SELECT run_key, reason FROM skipped").fetchall())
    assert set(skipped) == {KEYS[0], "20261201", "zz-copy"}
    assert f"run key {KEYS[1]} is" in skipped["zz-copy"] and "a copy of that week" in skipped["zz-copy"]
    assert str(bad) in skipped[KEYS[0]] and "duplicate" in skipped[KEYS[0]]
    assert "manifest.csv: not found" in skipped["20261201"]
    assert all("\n" not in reason for reason in skipped.values())
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 3 and any(str(bad) in line for line in warned)


def test_the_history_and_its_sidecar_read_whole_or_are_left_out_in_one_line(suite: Path) -> None:
    weekly = suite / WEEKLY_DIR
    write_history_prompts(weekly / "scorecard-history.prompts.csv",
                          pd.DataFrame({"run_key": [KEYS[1]], "model": ["haiku"], "prompt": ["p"], "d": [0.25]}))
    con = weeks.connect(suite)
    assert con.execute("SELECT count(*), min(endpoint) FROM history").fetchone() == (4, "simulated")
    window = dict((r[0], r[1]) for r in con.execute("DESCRIBE history").fetchall())["window_end"]
    assert window.startswith("TIMESTAMP")  # as the weeks view's: one name, one type
    assert con.execute("SELECT d FROM history_prompts").fetchall() == [(0.25,)]
    history = weekly / "scorecard-history.csv"
    history.write_text(",".join(QDRANT_HISTORY_COLUMNS) + "\n20261116,x,haiku,not-a-number,,,,\n", encoding="utf-8")
    con = weeks.connect(suite)
    assert con.execute("SELECT count(*) FROM history").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM history_prompts").fetchone() == (0,)
    (reason,) = con.execute("SELECT reason FROM skipped WHERE run_key = ''").fetchone()
    assert str(history) in reason and "not a number" in reason
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (64,)  # the weeks themselves still read


def test_the_worked_query_of_the_docs_runs_on_the_views(clean: duckdb.DuckDBPyConnection) -> None:
    """docs/weekly.md's query, as printed there, answers per week × model × arm (so the page cannot rot)."""
    page = (ROOT / "docs" / "weekly.md").read_text(encoding="utf-8")
    section = page.split("## SQL over every week", 1)[1].split("\n## ", 1)[0]
    sql = section.split('con.execute("""', 1)[1].split('""")', 1)[0]
    frame = clean.execute(sql).df()
    assert list(frame.columns) == ["run_key", "model", "arm", "runs", "must_coverage"]
    assert set(frame["run_key"]) == set(KEYS) and frame["must_coverage"].between(0, 1).any()


def test_an_older_trigger_file_without_intervals_reads_them_null(suite: Path) -> None:
    week = suite / WEEKLY_DIR / KEYS[0]
    base = TRIGGER_F1_COLUMNS[: TRIGGER_F1_COLUMNS.index("precision_low")]
    (week / TRIGGER_F1_FILE).write_text(",".join(base) + "\ndates,8,8,6,2,1,7,0.857143,0.75,0.8,0\n",
                                        encoding="utf-8")
    con = weeks.connect(suite)
    row = con.execute("SELECT run_key, tp, f1, f1_low, f1_method FROM trigger").fetchall()
    assert row == [(KEYS[0], 6, 0.8, None, None)]
    assert dict((r[0], r[1]) for r in con.execute("DESCRIBE trigger").fetchall())["tp"] == "BIGINT"


def test_a_suite_with_no_week_yet_has_typed_empty_views_the_queries_bind_to(tmp_path: Path) -> None:
    (tmp_path / WEEKLY_DIR).mkdir()
    con = weeks.connect(tmp_path)
    types = {view: dict((r[0], r[1]) for r in con.execute(f"DESCRIBE {view}").fetchall())
             for view in ("runs", "scores", "weeks")}
    assert (types["runs"]["dormancy"], types["scores"]["credit"], types["weeks"]["complete"]) == (
        "BOOLEAN", "DOUBLE", "BOOLEAN")
    assert weeks.family_arm_summary(con).empty and weeks.two_weeks(con, "a", "b").empty


def test_qdrants_published_week_reads_as_it_is() -> None:
    """qdrant's own layout (manifest, scores, history; no reconciliation, none of our columns), read in place."""
    suite = require(QDRANT / "evals")
    con = weeks.connect(suite, suite="qdrant")
    assert con.execute("SELECT DISTINCT endpoint, attempts FROM runs").fetchall() == [("real", 1)]
    assert con.execute("SELECT runs, complete FROM weeks").fetchone()[1] is None  # not reconciled: unknown
    assert con.execute("SELECT count(*) FROM skipped").fetchone() == (0,)
    summary = weeks.family_arm_summary(con)
    assert summary["must_coverage"].notna().all() and set(summary["arm"]) == {"no-skill", "with-skill"}
