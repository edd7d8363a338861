"""Calibration on a stratified sample (issue 34): the size rule's statistics, the draw, and a sampled calibration.

The size rule's numbers are data (``tests/data/calibration_sample_sizes.json``, the values ``docs/calibration.md``
states). The draw is checked on small frames: every stratum represented at the same fraction, at least the floor
of musts, nested looks, the same draw for the same key whatever the row order or the answers, and every run when
the week has no more musts than the floor. One calibration on the simulated judge shows the sample on the page,
in ``calibration.csv`` and in ``calibration-sample.json``, and a rerun drawing the same runs; another, with a
judge that never flips, grows look by look to every must.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from skillbench.calibration import (
    CalibrationOptions,
    calibrate,
    draw,
    looks,
    max_passing_flips,
    musts_to_pass,
    pass_probability,
    sample_key,
    stratified_order,
)
from skillbench.calibration._run import _Draws
from skillbench.calibration._sample import STRATA, decided, exact_runs
from skillbench.judge import select_runs
from skillbench.ledgers import CALIBRATION_SAMPLE_FILE, read_calibration
from skillbench.runtime import PassContext
from skillbench.scorecard._decision import _calibration_flag
from skillbench.vocab import BAR_FAIL, BAR_NOT_SHOWN, BAR_PASS
from tests.helpers.judge import judge_endpoint
from tests.helpers.shared import DATA_DIR

SIZES = json.loads((DATA_DIR / "calibration_sample_sizes.json").read_text())


@pytest.mark.parametrize("case", SIZES["max_passing_flips"], ids=lambda c: f"n{c['n']}")
def test_most_flips_that_still_pass(case: dict) -> None:
    assert max_passing_flips(case["n"]) == case["flips"]


@pytest.mark.parametrize("case", SIZES["pass_probability"], ids=lambda c: f"n{c['n']}-u{c['unanimity']}")
def test_chance_a_judge_passes(case: dict) -> None:
    assert abs(pass_probability(case["n"], case["unanimity"]) - case["p"]) <= case["tol"] + 1e-9


@pytest.mark.parametrize("case", SIZES["musts_to_pass"], ids=lambda c: f"u{c['unanimity']}")
def test_musts_for_four_passes_in_five(case: dict) -> None:
    assert musts_to_pass(case["unanimity"], case["power"]) == case["n"]


@pytest.mark.parametrize("case", SIZES["looks"], ids=lambda c: f"{c['total']}-{c['floor']}")
def test_looks_double_from_the_floor_to_every_must(case: dict) -> None:
    assert looks(case["total"], case["floor"]) == case["looks"]


def test_a_look_decides_only_when_the_interval_clears_the_bar() -> None:
    assert decided(BAR_PASS, 1.0)
    assert decided(BAR_FAIL, 0.93)  # the whole interval below 95 %
    assert not decided(BAR_FAIL, 0.96)  # below the bar on too few musts to tell: grow
    assert not decided(BAR_NOT_SHOWN, 1.0)


def _week(runs_per_stratum: int = 10, musts: tuple[int, ...] = (3, 2, 4)) -> pd.DataFrame:
    """3 families × 2 models × 2 arms, ``runs_per_stratum`` runs each, musts cycling through ``musts``."""
    rows = []
    for f in ("fam-a", "fam-b", "fam-c"):
        for m in ("haiku", "sonnet"):
            for c in ("no-skill", "with-skill"):
                for i in range(runs_per_stratum):
                    k = musts[i % len(musts)]
                    rows.append({"run_id": f"{f}-p{i}-{m}-{c}-r1-20261130", "skill_family": f, "model": m,
                                 "condition": c, "musts": k, "items": k + 2})
    return pd.DataFrame(rows)


def test_the_draw_is_stratified_self_weighting_and_holds_the_floor() -> None:
    week = _week()  # 120 runs, 360 musts
    key = sample_key("20261130", 0, "00ff")
    picked = draw(week, key, 100)
    assert picked["musts"].sum() >= 100 and len(picked) < len(week)
    per = picked.groupby(list(STRATA)).size()
    assert len(per) == 12 and per.max() - per.min() <= 1  # every stratum, the same fraction (rounded up)
    # the least such sample: without its last-entering runs it would hold fewer than the floor
    last = picked["enters"].max()
    assert picked.loc[picked["enters"] < last, "musts"].sum() < 100
    # nested looks: a larger target keeps every run of a smaller one
    bigger = draw(week, key, 200)
    assert set(picked["run_id"]) <= set(bigger["run_id"])
    # every run when the week holds no more than the floor, or when none is asked
    assert len(draw(week, key, 360)) == len(week) and len(draw(week, key, None)) == len(week)
    # --sample N: exactly N, every stratum's first run before any stratum's second
    assert len(exact_runs(week, key, 12).groupby(list(STRATA))) == 12


def test_the_draw_depends_on_the_key_only() -> None:
    week = _week()
    key = sample_key("20261130", 0, "00ff")
    first = set(draw(week, key, 100)["run_id"])
    # The same key draws the same runs whatever the input's row order or any other column (an answer's text,
    # a verdict): only the run ids, their strata and their must counts enter the draw.
    shuffled = week.sample(frac=1, random_state=3).assign(answer="x" * 50, verdict="met")
    assert set(draw(shuffled, key, 100)["run_id"]) == first
    # Another nonce, seed or run key is another draw.
    assert set(draw(week, sample_key("20261130", 0, "00fe"), 100)["run_id"]) != first
    assert set(draw(week, sample_key("20261130", 1, "00ff"), 100)["run_id"]) != first
    assert set(draw(week, sample_key("20261207", 0, "00ff"), 100)["run_id"]) != first
    order = stratified_order(week, key)
    assert order.groupby("stratum")["rank"].apply(lambda r: sorted(r) == list(range(len(r)))).all()


def test_a_sampled_calibration_says_so_and_a_rerun_draws_the_same_runs(sim_week: Path) -> None:
    """16 gradeable runs (the plugin arm left out), 48 musts; a floor of 12 musts with a judge that flips a third
    of its verdicts: the first look decides (FAIL with the whole interval below the bar), so a sample is graded,
    not the week."""
    opts = CalibrationOptions(repeat=2, min_musts=12, jobs=3, max_retries=1)
    with judge_endpoint(flip_rate=0.35) as ep:
        cal = calibrate(sim_week, opts, PassContext(endpoint=ep, log=lambda m: None))
        rec = cal.drawn
        assert rec is not None and rec.sampled and rec.looks == [12]
        assert rec.population_runs == 16 and rec.population_items["must"] == 48
        assert 12 <= rec.items["must"] < 48 and rec.runs == cal.grades["run_id"].nunique()
        must = cal.self_agreement.set_index("item_type").loc["must"]
        assert must["bar_state"] == BAR_FAIL and must["unanimity_high"] < 0.95
        recorded = json.loads((sim_week / CALIBRATION_SAMPLE_FILE).read_text())
        assert recorded["key"] == rec.key and recorded["runs"] == rec.runs and recorded["nonce"] == rec.nonce
        table = read_calibration(sim_week)
        row = table[table["comparison"].eq("self-agreement") & table["item_type"].eq("must")].iloc[0]
        assert (row["population_units"], row["runs"], row["population_runs"]) == (48, rec.runs, 16)
        md = (sim_week / "calibration.md").read_text()
        assert f"{rec.runs} of 16 gradeable runs" in md and "(a sample of the week's 48)" in md
        assert "| in the week |" in md and rec.nonce in md
        flag = _calibration_flag(table)
        assert flag is not None and "sampled (of the week's 48)" in flag.text
    # A rerun (a pass stopped "judge pending", or calibrate again) draws with the recorded nonce: the same runs.
    again = _Draws(sim_week, select_runs(sim_week)[0], opts)
    assert again.key == rec.key and {r.run_id for r in again._runs(12)} == set(cal.grades["run_id"])


def test_an_undecided_sample_grows_to_every_must(sim_week: Path) -> None:
    """A judge that never flips: the first look (12 musts asked, 24 drawn: one run of each of the 8 strata) cannot
    show the bar (NOT SHOWN); the look at 24 musts would grade nothing new and is skipped; the sample grows to every
    must, and the page says why."""
    with judge_endpoint() as ep:
        cal = calibrate(sim_week, CalibrationOptions(repeat=2, min_musts=12, jobs=3, max_retries=1),
                        PassContext(endpoint=ep, log=lambda m: None))
    assert cal.drawn is not None and cal.drawn.looks == [12, None] and not cal.drawn.sampled
    assert cal.grades["run_id"].nunique() == 16
    assert "samples of at least 12 musts left the must bar undecided" in (sim_week / "calibration.md").read_text()


def test_a_damaged_sample_record_is_one_line(sim_week: Path) -> None:
    (sim_week / CALIBRATION_SAMPLE_FILE).write_text('{"nonce": "../etc"}')
    with judge_endpoint() as ep, pytest.raises(ValueError, match=r"calibration-sample\.json: field 'nonce'"):
        calibrate(sim_week, CalibrationOptions(repeat=2, max_retries=1), PassContext(endpoint=ep, log=lambda m: None))


def test_an_old_full_calibration_still_reads() -> None:
    """A calibration.csv from before the sample has no population columns: a calibration of every must."""
    old = pd.DataFrame([{"comparison": "self-agreement", "rater_a": "j", "rater_b": "", "item_type": "must",
                         "n_units": 1048, "unanimity": 0.902, "unanimity_low": 0.88, "unanimity_high": 0.92,
                         "bar_state": BAR_FAIL}])
    flag = _calibration_flag(old)
    assert flag is not None and flag.level == "red" and "sampled" not in flag.text
    assert math.isclose(0.902, float(old["unanimity"].iloc[0]))
