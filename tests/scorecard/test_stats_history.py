"""History upsert and the week-over-week rule, bootstrap determinism, and the minimum detectable effect."""

from __future__ import annotations

import csv
import shutil
import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.power import TTestPower

from skillbench.ledgers import HISTORY_COLUMNS, QDRANT_HISTORY_COLUMNS
from skillbench.ledgers._files import HISTORY_ENDPOINTS_FILE, HISTORY_FILE
from skillbench.scorecard import (
    bootstrap_lift,
    minimum_detectable_effect,
    read_history,
    update_history,
    week_over_week,
)
from skillbench.scorecard._history import (
    SENTINEL_HISTORY_COLUMNS,
    HistoryError,
    endpoints_path,
    history_rows,
    read_week_history,
    upsert,
    write_week_history,
)
from skillbench.scorecard._noise import PAIRED, UNPAIRED, paired_week_delta
from tests.helpers.shared import QDRANT, TINY_WEEK, require


def _lift(values: dict[str, tuple[float, float]], n_pairs: int = 26) -> pd.DataFrame:
    return pd.DataFrame([{"model": m, "must_lift": lift, "must_lift_se": se, "composite_lift": lift,
                          "cost_delta": 0.01, "turns_delta": 1.5, "n_pairs": n_pairs}
                         for m, (lift, se) in values.items()])


def test_upsert_is_idempotent_and_keyed_on_run_and_model(tmp_path: Path) -> None:
    path = tmp_path / "scorecard-history.csv"
    week1 = history_rows("w1", "20260801T100000Z", _lift({"sonnet": (0.3, 0.05), "haiku": (0.4, 0.07)}), "real")
    update_history(path, week1)
    first = path.read_bytes()
    update_history(path, week1)
    assert path.read_bytes() == first
    assert first.startswith(b"run_key,window_end,model,must_lift,must_lift_se,composite_lift,cost_delta,"
                            b"turns_delta\r\n")
    assert b"w1,20260801T100000Z,sonnet,0.300000,0.050000,0.300000,0.010000,1.500000\r\n" in first
    assert not endpoints_path(path).exists(), "real rows need no sidecar"

    update_history(path, history_rows("w2", "20260808T100000Z", _lift({"sonnet": (0.1, 0.02)}), "real"))
    changed = history_rows("w1", "20260801T100000Z", _lift({"haiku": (0.5, 0.07)}), "real")
    hist = update_history(path, changed)
    assert hist[["run_key", "model"]].values.tolist() == [["w1", "sonnet"], ["w1", "haiku"], ["w2", "sonnet"]]
    assert hist.loc[1, "must_lift"] == "0.500000"
    # qdrant's 8, the endpoint, then the sentinel's columns from the sidecar (empty here: no sentinel)
    assert list(read_history(path).columns) == [*HISTORY_COLUMNS, *SENTINEL_HISTORY_COLUMNS]


def test_missing_values_are_empty_not_zero() -> None:
    rows = history_rows("w", "", _lift({"haiku": (0.2, float("nan"))}), "real")
    assert rows.loc[0, "must_lift_se"] == ""


def _weeks() -> tuple[pd.DataFrame, list[tuple[str, float, float]]]:
    real = [("r1", 0.30, 0.05), ("r2", 0.34, 0.06), ("r3", 0.28, 0.05), ("r4", 0.33, 0.04), ("r5", 0.45, 0.05)]
    history = pd.DataFrame(columns=list(HISTORY_COLUMNS))
    for day, (key, lift, se) in enumerate(real, start=1):
        history = upsert(history, history_rows(key, f"202608{day:02d}T120000Z", _lift({"sonnet": (lift, se)}),
                                               "real"))
        # A simulated week between every real one, with absurd lifts: it must never enter real-week statistics.
        history = upsert(history, history_rows(f"s{day}", f"202608{day:02d}T180000Z",
                                               _lift({"sonnet": (5.0 * day, 1.0)}), "simulated"))
    return history, real


def test_week_over_week_waits_for_four_runs_of_the_same_endpoint() -> None:
    history, real = _weeks()
    for i, (key, lift, se) in enumerate(real[:3], start=1):
        wow = week_over_week(history, key, _lift({"sonnet": (lift, se)}), "real")
        assert (wow.ready, wow.n_runs) == (False, i)
        assert wow.table.empty
    sim = week_over_week(history, "s2", _lift({"sonnet": (10.0, 1.0)}), "simulated")
    assert (sim.ready, sim.n_runs) == (False, 2)


def test_week_over_week_rule_with_five_real_weeks() -> None:
    history, real = _weeks()
    key, lift, se = real[4]
    wow = week_over_week(history, key, _lift({"sonnet": (lift, se)}, n_pairs=26), "real")
    assert wow.ready and wow.n_runs == 5 and wow.previous == "r4"
    row = wow.table.iloc[0]
    prev_lift, prev_se = real[3][1], real[3][2]
    within = sps.t.ppf(0.975, 25) * np.sqrt(se**2 + prev_se**2)
    # the between-week half-width: the same t, σ of the earlier lifts with ddof = 1, √2 for a difference of weeks
    between = sps.t.ppf(0.975, 25) * np.sqrt(2) * statistics.stdev([w[1] for w in real[:4]])
    assert row["delta"] == pytest.approx(lift - prev_lift)
    assert row["within"] == pytest.approx(within)
    assert row["between"] == pytest.approx(between)
    assert row["threshold"] == pytest.approx(max(within, between))
    assert row["actionable"] == ("yes" if abs(lift - prev_lift) > max(within, between) else "no (within noise)")

    fourth = week_over_week(history, "r4", _lift({"sonnet": real[3][1:]}), "real")
    assert fourth.ready and fourth.previous == "r3"
    # Re-scoring an older week uses only the weeks before it: σ over r1..r3.
    assert fourth.table.iloc[0]["between"] == pytest.approx(
        sps.t.ppf(0.975, 25) * np.sqrt(2) * statistics.stdev([w[1] for w in real[:3]]))


def test_a_partial_week_is_placed_by_its_own_window_not_its_run_key() -> None:
    """Run keys that do not sort by date: the previous week is the one that ran before, by window end."""
    weeks = [("wk-c", "20260801T120000Z", 0.30), ("wk-a", "20260808T120000Z", 0.32),
             ("wk-f", "20260815T120000Z", 0.28), ("wk-e", "20260822T120000Z", 0.31),
             ("wk-d", "20260829T120000Z", 0.33)]
    history = pd.DataFrame(columns=list(HISTORY_COLUMNS))
    for key, window, lift in weeks:
        history = upsert(history, history_rows(key, window, _lift({"sonnet": (lift, 0.05)}), "real"))
    # wk-b ran between wk-f and wk-e and is partial, so it is not in the history.
    wow = week_over_week(history, "wk-b", _lift({"sonnet": (0.5, 0.05)}), "real", window_end="20260818T090000Z")
    assert wow.ready and wow.n_runs == 4 and wow.previous == "wk-f"
    assert wow.table.iloc[0]["prev_lift"] == pytest.approx(0.28)
    # The weeks in the history are ordered by window too, whatever their keys.
    assert week_over_week(history, "wk-e", _lift({"sonnet": (0.31, 0.05)}), "real").previous == "wk-f"


def _qdrant_history(tmp_path: Path) -> Path:
    path = tmp_path / HISTORY_FILE
    shutil.copyfile(require(QDRANT / "evals" / "weekly" / HISTORY_FILE), path)
    return path


def _summarize_eval_rewrite(path: Path) -> None:
    """What qdrant's summarize-eval.py does to the history: DictReader, then DictWriter with their 8 columns."""
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(QDRANT_HISTORY_COLUMNS))  # raises on any extra key
        writer.writeheader()
        writer.writerows(rows)


def test_qdrants_history_survives_their_own_rewrite_after_our_upsert(tmp_path: Path) -> None:
    path = _qdrant_history(tmp_path)
    theirs = path.read_bytes()
    update_history(path, history_rows("20260815", "20260815T081641Z", _lift({"sonnet": (0.2, 0.05)}), "real"))
    assert path.read_bytes().startswith(theirs), "their rows are untouched, ours appended"
    _summarize_eval_rewrite(path)
    history = read_history(path)
    assert history[["run_key", "model"]].values.tolist() == [
        ["20260808", "sonnet"], ["20260808", "haiku"], ["20260815", "sonnet"]]
    assert set(history["endpoint"]) == {"real"}


def test_a_simulated_week_in_a_qdrant_style_file_lives_in_the_sidecar(tmp_path: Path) -> None:
    path = _qdrant_history(tmp_path)
    update_history(path, history_rows("sim-1", "20260816T000000Z", _lift({"haiku": (0.9, 0.1)}), "simulated"))
    sidecar = endpoints_path(path)
    assert sidecar.name == HISTORY_ENDPOINTS_FILE and sidecar.is_file()
    assert path.read_text().splitlines()[0] == ",".join(QDRANT_HISTORY_COLUMNS)
    _summarize_eval_rewrite(path)  # their tool still works, and knows nothing of the sidecar
    history = read_history(path).set_index(["run_key", "model"])
    assert history.loc[("sim-1", "haiku"), "endpoint"] == "simulated"
    assert history.loc[("20260808", "sonnet"), "endpoint"] == "real"
    # A simulated week never enters real-week statistics, read back from disk too.
    assert week_over_week(read_history(path), "sim-1", _lift({"haiku": (0.9, 0.1)}), "simulated").n_runs == 1


def test_our_nine_column_history_reads_and_migrates_on_the_next_write(tmp_path: Path) -> None:
    path = tmp_path / HISTORY_FILE
    shutil.copyfile(TINY_WEEK / HISTORY_FILE, path)
    assert path.read_text().splitlines()[0].endswith(",endpoint")
    before = read_history(path)
    assert set(before["endpoint"]) == {"simulated"} and len(before) == 8
    update_history(path, history_rows("20261207", "20261207T000000Z", _lift({"sonnet": (0.1, 0.05)}), "simulated"))
    assert path.read_text().splitlines()[0] == ",".join(QDRANT_HISTORY_COLUMNS)
    after = read_history(path)
    pd.testing.assert_frame_equal(after.iloc[:8], before)
    assert after.iloc[8]["endpoint"] == "simulated"


def test_a_sidecar_that_contradicts_the_endpoint_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / HISTORY_FILE
    shutil.copyfile(TINY_WEEK / HISTORY_FILE, path)
    endpoints_path(path).write_text("run_key,model,endpoint\r\n20261109,sonnet,real\r\n")
    with pytest.raises(HistoryError, match=r"line 2: 20261109 × sonnet is 'real', but .* line 2 says 'simulated'"):
        read_history(path)


@pytest.mark.parametrize(("line", "expected"), [
    (b"w9,20260901T000000Z,sonnet\r\n", "line 4: 3 cells, expected 8"),
    (b"w9,20260901T000000Z,sonnet,,0.1,0.1,0.1,0.1\r\n", "line 4: column 'must_lift' is empty"),
    (b"w9,yesterday,sonnet,0.1,0.1,0.1,0.1,0.1\r\n", "line 4: column 'window_end': 'yesterday'"),
    (b"20260808,20260808T081641Z,haiku,0.1,0.1,0.1,0.1,0.1\r\n",
     r"line 4: run 20260808 × haiku again \(first on line 3\)"),
    (b"w9,20260901T000000Z,sonnet,0.1,0.1,0.1,0.1,0.1,extra\r\n", "line 4: 9 cells, expected 8"),
])
def test_a_damaged_history_row_is_refused_with_its_line(tmp_path: Path, line: bytes, expected: str) -> None:
    path = _qdrant_history(tmp_path)
    path.write_bytes(path.read_bytes() + line)
    before = path.read_bytes()
    with pytest.raises(HistoryError, match=expected):
        update_history(path, history_rows("w10", "20260910T000000Z", _lift({"sonnet": (0.1, 0.05)}), "real"))
    assert path.read_bytes() == before


def _week_prompts(values: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame({"model": "sonnet", "prompt": list(values), "d": list(values.values())})


def _controls(state: str) -> pd.DataFrame:
    return pd.DataFrame([{"window_end": "20260815T081641Z", "endpoint": "real", "model": "sonnet",
                          "skill_family": "fam", "control": "aa", "state": state, "reason": ""}])


def test_an_old_history_without_sidecars_reads_and_the_next_write_adds_them(tmp_path: Path) -> None:
    """qdrant's file (no sidecar): it reads with no per-prompt lifts or control records; writing a new week creates
    both sidecars with that week's rows only, and qdrant's own rows stay byte for byte."""
    path = _qdrant_history(tmp_path)
    theirs = path.read_bytes()
    old = read_week_history(path)
    assert len(old.rows) == 2 and old.prompts.empty and old.controls.empty
    week = history_rows("20260815", "20260815T081641Z", _lift({"sonnet": (0.2, 0.05)}), "real")
    new = old.with_week("20260815", week, _week_prompts({"p1": 0.25, "p2": -0.5}), _controls("VALID_NO_CHANGE"))
    write_week_history(path, new)
    assert path.read_bytes().startswith(theirs) and not endpoints_path(path).exists()
    prompts = tmp_path / "scorecard-history.prompts.csv"
    assert prompts.read_bytes() == (b"run_key,model,prompt,d\r\n20260815,sonnet,p1,0.250000\r\n"
                                    b"20260815,sonnet,p2,-0.500000\r\n")
    back = read_week_history(path)
    assert back.prompts["d"].tolist() == [0.25, -0.5] and back.controls["state"].tolist() == ["VALID_NO_CHANGE"]
    # Re-scoring the week replaces its sidecar rows as a set (a prompt it no longer has is gone), idempotently.
    again = back.with_week("20260815", week, _week_prompts({"p1": 0.3}), _controls("VALID_PASS"))
    write_week_history(path, again)
    first = {f: f.read_bytes() for f in tmp_path.iterdir()}
    write_week_history(path, read_week_history(path).with_week("20260815", week, _week_prompts({"p1": 0.3}),
                                                               _controls("VALID_PASS")))
    assert {f: f.read_bytes() for f in tmp_path.iterdir()} == first
    back = read_week_history(path)
    assert back.prompts[["prompt", "d"]].values.tolist() == [["p1", 0.3]]
    assert back.controls["state"].tolist() == ["VALID_PASS"]
    _summarize_eval_rewrite(path)  # qdrant's tool still rewrites its file, knowing nothing of ours
    assert len(read_week_history(path).rows) == 3


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("prompts", "run_key,model,prompt,d\r\nw1,sonnet,p1\r\n", r"prompts.csv: line 2: 3 cells, expected 4"),
    ("prompts", "run_key,model,prompt,d\r\nw1,sonnet,p1,lots\r\n", r"line 2: column 'd': 'lots' is not a number"),
    ("prompts", "run_key,model,prompt,d\r\nw1,sonnet,p1,0.1\r\nw1,sonnet,p1,0.2\r\n",
     r"line 3: w1 × sonnet × p1 again \(first on line 2\)"),
    ("prompts", "run_key,model,d\r\n", r"columns are run_key, model, d, expected run_key, model, prompt, d"),
    ("controls", "run_key,window_end,endpoint,model,skill_family,control,state,reason\r\nw1,,real,sonnet,f,aa,,\r\n",
     r"controls.csv: line 2: column 'state' is empty"),
])
def test_a_damaged_sidecar_is_refused_with_its_file_and_line(tmp_path: Path, name: str, text: str,
                                                             expected: str) -> None:
    path = _qdrant_history(tmp_path)
    (tmp_path / f"scorecard-history.{name}.csv").write_text(text, encoding="utf-8", newline="")
    with pytest.raises(HistoryError, match=expected):
        read_week_history(path)


def test_week_over_week_pairs_the_prompts_both_weeks_share() -> None:
    """r5 and r4 have per-prompt lifts: the paired rule (the same numbers as paired_week_delta); a model whose
    previous week has none falls back to the unpaired rule, and the table says which."""
    history, real = _weeks()
    history = upsert(history, history_rows("r4", "20260804T120000Z", _lift({"haiku": (0.2, 0.05)}), "real"))
    now = {"p1": 0.5, "p2": 0.25, "p3": 0.0, "p4": 0.75}
    prev = {"p1": 0.25, "p2": 0.25, "p3": -0.25, "p4": 0.5}
    prompts = pd.concat([_week_prompts(now).assign(run_key="r5"), _week_prompts(prev).assign(run_key="r4"),
                         _week_prompts(now).assign(run_key="r5", model="haiku")], ignore_index=True)
    key, lift, se = real[4]
    wow = week_over_week(history, key, _lift({"sonnet": (lift, se), "haiku": (0.3, 0.05)}), "real", prompts=prompts)
    table = wow.table.set_index("model")
    expected = paired_week_delta(pd.Series(now), pd.Series(prev), prior_lifts=[w[1] for w in real[:4]])
    assert table.at["sonnet", "rule"] == PAIRED and table.at["sonnet", "n"] == 4
    for column, value in (("delta", expected.delta), ("se", expected.se), ("within", expected.within),
                          ("between", expected.between), ("threshold", expected.threshold)):
        assert table.at["sonnet", column] == pytest.approx(value), column
    assert table.at["sonnet", "delta"] == pytest.approx(0.1875), "the hand case of week_delta_cases.json"
    assert table.at["haiku", "rule"] == UNPAIRED and table.at["haiku", "delta"] == pytest.approx(0.1)


def test_a_history_path_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="is a folder"):
        read_history(tmp_path)
    with pytest.raises(HistoryError, match="is a folder"):
        update_history(tmp_path, history_rows("w", "", _lift({"sonnet": (0.1, 0.05)}), "real"))
    assert list(tmp_path.iterdir()) == []


def test_bootstrap_is_deterministic_by_seed() -> None:
    rng = np.random.default_rng(1)
    paired = pd.DataFrame({"model": "m", "prompt": [f"p{i}" for i in range(26)], "d": rng.normal(0.3, 0.3, 26)})
    a = bootstrap_lift(paired, n_resamples=10_000, seed=7)
    b = bootstrap_lift(paired, n_resamples=10_000, seed=7)
    c = bootstrap_lift(paired, n_resamples=10_000, seed=8)
    pd.testing.assert_frame_equal(a, b)
    assert (a["boot_low"].iloc[0], a["boot_high"].iloc[0]) != (c["boot_low"].iloc[0], c["boot_high"].iloc[0])
    low, high, mean = a["boot_low"].iloc[0], a["boot_high"].iloc[0], paired["d"].mean()
    assert low < mean < high
    se = paired["d"].std(ddof=1) / np.sqrt(26)
    assert (high - low) == pytest.approx(2 * 1.96 * se, rel=0.2)


def test_minimum_detectable_effect_matches_statsmodels() -> None:
    power = TTestPower()
    for n, sd in [(2, 0.3), (5, 0.2), (26, 0.298), (200, 0.5)]:
        mde = minimum_detectable_effect(sd, n)
        # statsmodels solves iteratively (and reuses its last root as a start value): agree to 1e-4.
        assert mde == pytest.approx(power.solve_power(nobs=n, alpha=0.05, power=0.8) * sd, rel=1e-4)
        # Independent check: the noncentral t power of a two-sided paired test at that effect is 80 %.
        tcrit, nc = sps.t.ppf(0.975, n - 1), mde / sd * np.sqrt(n)
        achieved = sps.nct.sf(tcrit, n - 1, nc) + sps.nct.cdf(-tcrit, n - 1, nc)
        assert achieved == pytest.approx(0.8, abs=1e-4)
        normal = (sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) * sd / np.sqrt(n)
        assert mde > normal
    big = 20_000
    normal = (sps.norm.ppf(0.975) + sps.norm.ppf(0.8)) * 0.3 / np.sqrt(big)
    assert minimum_detectable_effect(0.3, big) == pytest.approx(normal, rel=1e-3)
    assert np.isnan(minimum_detectable_effect(0.3, 1))
    assert minimum_detectable_effect(0.0, 10) == 0.0
