"""The judge drift sentinel on the simulated judge: a gold set from the truth, baseline, drift, snapshot, history.

Weeks are copies of the session's generated sim week (judged once here) arranged in one weekly folder, so every
week has the same answers and window; each week's judge is a simulated endpoint with its own seed, so an unchanged
judge still errs differently week to week (flip rate 0.01), and the drifting week's judge is lenient (an
unfavourable honest reading turns favourable with probability 0.3).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest

from skillbench.calibration import GoldError, build_gold, read_gold, suite_gold_path, write_gold
from skillbench.calibration._sentinel import (
    BASELINE,
    DRIFT,
    DRIFT_BANNER,
    JUDGE_CHANGED,
    STABLE,
    SentinelOptions,
    run_sentinel,
)
from skillbench.cli import main
from skillbench.generation import Endpoint
from skillbench.judge import JudgeOptions, judge_pairs, judge_run_dir
from skillbench.ledgers import HISTORY_FILE, QDRANT_HISTORY_COLUMNS
from skillbench.runtime import PassContext
from skillbench.scorecard import _history as hist, write_scorecard
from skillbench.weekly import model_endpoint
from tests.helpers.judge import truth

JUDGE = "claude-opus-5-5"  # the default judge model: the sim's default judge profile
STEADY = {"flip_rate": 0.01, "fabricated_quote_rate": 0.0, "position_bias": 0.0}
LENIENT = {**STEADY, "leniency": 0.3}
GOLD_N = 120  # every graded item of the week: ~40 unfavourable readings for the lenient judge to turn


@contextmanager
def judge_at(seed: int, profile: Mapping[str, float]) -> Iterator[Endpoint]:
    """A simulated endpoint whose default judge has ``profile`` and whose draws are seeded by ``seed``."""
    with model_endpoint("sim", profiles={"judges": {"default": dict(profile)}}, seed=seed) as ep:
        yield ep


@pytest.fixture(scope="module")
def judged_week(generated_sim_week: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated sim week, graded once by an exact judge (the weeks below are copies of it)."""
    week = Path(shutil.copytree(generated_sim_week, tmp_path_factory.mktemp("sentinel") / "week"))
    with judge_at(0, {"flip_rate": 0.0, "fabricated_quote_rate": 0.0}) as ep:
        judge_run_dir(week, JudgeOptions(judge_model=JUDGE, include_plugin=True), PassContext(endpoint=ep))
    return week


@pytest.fixture
def suite(judged_week: Path, tmp_path: Path) -> Path:
    """A suite folder with four copies of the week and a gold set of every graded item, labelled by the truth."""
    suite = tmp_path / "suite"
    for key in ("20261201", "20261208", "20261215", "20261222"):
        shutil.copytree(judged_week, suite / "weekly" / key)
    write_gold(build_gold(judged_week, n=GOLD_N, seed=1), suite_gold_path(suite))
    return suite


def test_the_gold_set_is_sampled_by_item_type_with_the_truths_labels(judged_week: Path, tmp_path: Path) -> None:
    gold = build_gold(judged_week, n=45, seed=1)
    items = [(g, i, kind) for g in gold for i, kind, _ in g.items]
    counts = pd.Series([kind for _, _, kind in items]).value_counts()
    assert len(items) == 45 and set(counts.index) == {"must", "bonus", "avoid"}
    assert counts.min() >= min(15, counts.min())  # equal shares where there are enough items
    key = truth(judged_week).set_index(["run_id", "item_index"])["positive"]
    for g in gold:
        run_id, indexes = re.search(r"run (\S+), rubric items ([\d, ]+);", g.source).groups()
        original = [int(x) for x in indexes.split(", ")]
        for pos, _kind, _ in g.items:
            credited = g.labels[pos] in ("met", "violated")
            assert credited == bool(key[(run_id, original[pos])]), (g.gold_id, pos)
    path = write_gold(gold, tmp_path / "gold.jsonl")
    assert read_gold(path) == gold
    with pytest.raises(GoldError, match="exists .* --force"):
        write_gold(gold, path)
    write_gold(gold[:3], path, force=True)
    assert len(read_gold(path)) == 3


def test_a_damaged_gold_line_is_refused_with_its_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    good = {"gold_id": "g1", "prompt": "q", "items": [{"index": 0, "type": "must", "text": "t"}], "answer": "a",
            "labels": {"0": "met"}, "source": "s"}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "gold_id": "g2", "labels": {"0": "clean"}}) + "\n")
    with pytest.raises(GoldError, match=r"line 2: labels\['0'\]: 'clean' is not a must verdict"):
        read_gold(path)


def _sentinel(suite: Path, key: str, seed: int, profile: Mapping[str, float]):
    with judge_at(seed, profile) as ep:
        return run_sentinel(suite / "weekly" / key, suite_gold_path(suite), SentinelOptions(seed=0),
                            PassContext(endpoint=ep))


def test_the_sentinel_flags_a_lenient_week_and_not_an_unchanged_one(suite: Path) -> None:
    first = _sentinel(suite, "20261201", 1, STEADY)
    assert first.flag == BASELINE and not first.flagged
    assert first.summary["judge_snapshot"] == JUDGE and first.summary["previous"] is None
    assert first.summary["n_items"] == GOLD_N and first.summary["agreement"] > 0.85
    second = _sentinel(suite, "20261208", 2, STEADY)
    assert second.flag == STABLE and not second.flagged, second.summary["reasons"]
    assert second.summary["previous"]["run_key"] == "20261201"
    third = _sentinel(suite, "20261215", 3, STEADY)
    assert third.flag == STABLE, third.summary["reasons"]
    lenient = _sentinel(suite, "20261222", 4, LENIENT)
    assert lenient.flag == DRIFT and lenient.flagged, lenient.summary
    table = lenient.comparison.set_index("measure")
    assert table.loc["must_credit", "move"] > 0 and table.loc["agreement", "move"] < 0
    assert (table["moved"] == "yes").any() and table["n_paired"].min() > 0
    written = json.loads((suite / "weekly" / "20261222" / "sentinel.json").read_text())
    assert written["flag"] == DRIFT and written["previous"]["weeks_before"] == 3
    grades = pd.read_csv(suite / "weekly" / "20261222" / "sentinel-grades.csv")
    assert len(grades) == GOLD_N and set(grades["item_type"]) == {"must", "bonus", "avoid"}

    # The scorecard: every week's sentinel goes into the history's sidecar; the flagged week reads as flagged.
    history = suite / "weekly" / HISTORY_FILE
    pages = {key: write_scorecard(suite / "weekly" / key, history_path=history, run_key=key).markdown
             for key in ("20261201", "20261208", "20261215", "20261222")}
    flagged, clean = pages["20261222"], pages["20261208"]
    assert DRIFT_BANNER in flagged.split("## Lift per model")[0] and "JUDGE DRIFT" in flagged.splitlines()[0]
    assert DRIFT_BANNER not in clean and "JUDGE DRIFT" not in clean and "## Judge drift sentinel" in clean
    assert "| agreement with the gold labels |" in flagged.split("## Judge drift sentinel")[1].split("## Coverage")[0]
    side = pd.read_csv(hist.endpoints_path(history), dtype=str, keep_default_na=False)
    assert list(side.columns) == list(hist.SIDECAR_COLUMNS)
    assert history.read_text().splitlines()[0] == ",".join(QDRANT_HISTORY_COLUMNS)
    per_week = side.groupby("run_key")["sentinel_flag"].agg(set).to_dict()
    assert per_week == {"20261201": {BASELINE}, "20261208": {STABLE}, "20261215": {STABLE}, "20261222": {DRIFT}}
    read = hist.numeric_history(hist.read_history(history)).set_index(["run_key", "model"])
    assert set(read["judge_snapshot"]) == {JUDGE}
    assert read.xs("20261222", level="run_key")["sentinel_agreement"].iloc[0] == pytest.approx(
        lenient.summary["agreement"], abs=1e-6)


def test_the_judge_snapshot_is_recorded_in_judge_json(judged_week: Path, tmp_path: Path) -> None:
    passes = json.loads((judged_week / "judge.json").read_text())
    assert passes["judge_snapshot"] == JUDGE and passes["passes"][-1]["judge_snapshot"] == JUDGE
    week = Path(shutil.copytree(judged_week, tmp_path / "week"))
    with judge_at(0, STEADY) as ep:
        report = judge_pairs(week, JudgeOptions(judge_model=JUDGE), PassContext(endpoint=ep))
        again = judge_run_dir(week, JudgeOptions(judge_model=JUDGE, include_plugin=True), PassContext(endpoint=ep))
    assert report.judge_snapshot == JUDGE and again.graded == 0 and again.judge_snapshot == ""
    written = json.loads((week / "judge.json").read_text())
    assert written["pairs_passes"][-1]["judge_snapshot"] == JUDGE  # kept by the rubric pass after it
    assert written["judge_snapshot"] == JUDGE and written["passes"][-1]["judge_snapshot"] == ""


def test_a_sidecar_without_the_sentinel_columns_still_reads_and_gains_them(tmp_path: Path) -> None:
    path = tmp_path / HISTORY_FILE
    lift = pd.DataFrame({"model": ["haiku"], "must_lift": [0.2], "must_lift_se": [0.05], "composite_lift": [0.1],
                         "cost_delta": [0.01], "turns_delta": [1.0]})
    hist.write_history(path, hist.history_rows("w1", "20261201T000000Z", lift, "simulated"))
    hist.endpoints_path(path).write_text("run_key,model,endpoint\r\nw1,haiku,simulated\r\n")  # an older sidecar
    old = hist.read_history(path)
    assert old["endpoint"].tolist() == ["simulated"] and (old[list(hist.SENTINEL_HISTORY_COLUMNS)] == "").all(axis=None)
    before = path.read_bytes()
    sentinel = {"judge_model": JUDGE, "judge_snapshot": "snap-1", "agreement": 0.9, "must_credit": 0.7,
                "flag": DRIFT}
    hist.update_history(path, hist.history_rows("w2", "20261208T000000Z", lift, "simulated", sentinel))
    assert path.read_bytes().startswith(before)  # qdrant's 8 columns: the old rows byte for byte
    both = hist.read_history(path).set_index("run_key")
    assert both.loc["w2", "sentinel_flag"] == DRIFT and both.loc["w2", "sentinel_agreement"] == "0.900000"
    assert both.loc["w1", "judge_snapshot"] == ""
    hist.endpoints_path(path).write_text("run_key,model,endpoint,flavour\r\nw1,haiku,simulated,x\r\n")
    with pytest.raises(hist.HistoryError, match="columns are run_key, model, endpoint, flavour"):
        hist.read_history(path)


def test_the_cli_builds_refuses_to_overwrite_and_checks(judged_week: Path, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    week = Path(shutil.copytree(judged_week, suite / "weekly" / "20261201"))
    assert main(["sentinel", "check", str(week), "--backend", "sim"]) == 2  # no gold set yet
    assert main(["sentinel", "build", str(week), "--n", "12"]) == 0
    gold = suite_gold_path(suite)
    before = gold.read_bytes()
    assert main(["sentinel", "build", str(week), "--n", "30"]) == 2 and gold.read_bytes() == before
    assert sum(len(g.items) for g in read_gold(gold)) == 12
    with judge_at(0, STEADY) as ep:
        assert main(["sentinel", "check", str(week), "--backend", "sim", "--endpoint", ep.base_url]) == 0
    assert json.loads((week / "sentinel.json").read_text())["flag"] == BASELINE


def test_a_changed_judge_model_is_stated_and_flags_the_week(suite: Path) -> None:
    assert _sentinel(suite, "20261201", 1, STEADY).flag == BASELINE
    with judge_at(1, STEADY) as ep:  # the same judge profile and draws: only the model's name changed
        other = run_sentinel(suite / "weekly" / "20261208", suite_gold_path(suite),
                             SentinelOptions(judge_model="claude-sonnet-5-5", seed=0), PassContext(endpoint=ep))
    assert other.flag == JUDGE_CHANGED and other.flagged
    assert any("judge model changed since 20261201: claude-opus-5-5 → claude-sonnet-5-5" in r
               for r in other.summary["reasons"])
    assert any("judge snapshot changed" in r for r in other.summary["reasons"])
    assert (other.comparison["moved"] != "yes").all()  # no drift on the gold set, still flagged for re-certifying
