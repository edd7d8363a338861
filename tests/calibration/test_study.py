"""The judge study: the recommendation rule (data-driven), the run-clustered intervals, and studies on the sim.

On the simulated judge a verdict flips with probability ε per (answer, item, sample), independently of the
answer's truth, so against the simulation's answer key a judge's raw agreement is ``1 − ε`` and its false-met
rate (met/violated where the truth says missing/clean) is ``ε`` when leniency and fabrication are 0. Judges with
different ε must come out in that order, and a fixed-seed study's intervals must cover those values. A lenient
judge (leniency λ, no flips) gives the favourable verdict on a share λ of the unfavourable items. The rule itself
is pinned by ``tests/data/recommend_cases.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skillbench.calibration import cohen_kappa, recommend, rule_text
from skillbench.calibration._intervals import (
    STATISTICS,
    cluster_interval,
    confusion_by_run,
    kappa,
    paired_interval,
    raw_agreement,
)
from skillbench.calibration._study import HUMAN, TRUTH, StudyOptions, judge_study
from skillbench.cli import main
from skillbench.judge import JudgeOptions, judge_pairs, judge_run_dir, select_runs
from skillbench.ledgers import run_dir_lock
from skillbench.runtime import PassContext
from tests.helpers.judge import judge_endpoint, run_cli, truth
from tests.helpers.shared import DATA_DIR

OPUS, SONNET, HAIKU = "claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5"
CASES = json.loads((DATA_DIR / "recommend_cases.json").read_text())["cases"]


# -- the rule ----------------------------------------------------------------------------------------------


def _frames(case: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    kappas = pd.DataFrame([{"judge_model": k["judge"], "item_type": "all", "kappa": k["kappa"],
                            "cost_per_run": k["cost"]} for k in case["kappas"]]).astype({"kappa": float,
                                                                                       "cost_per_run": float})
    diffs = pd.DataFrame([{"judge_model": d["judge"], "versus": d["versus"], "item_type": d["type"],
                           "diff": d["diff"], "diff_low": d["low"], "diff_high": d["high"]}
                          for d in case["differences"]],
                         columns=["judge_model", "versus", "item_type", "diff", "diff_low", "diff_high"])
    return kappas, diffs.astype({"diff": float, "diff_low": float, "diff_high": float})


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_recommendation_rule(case: dict) -> None:
    kappas, diffs = _frames(case)
    rec = recommend(kappas, diffs, margin=case["margin"], must_bar=case.get("must_bar"))
    want = case["expected"]
    assert (rec.best, rec.recommended) == (want["best"], want["recommended"])
    assert rec.judges.set_index("judge_model")["non_inferior"].to_dict() == want["non_inferior"]
    if want["avoid_non_inferior"] is None:
        assert rec.by_type.empty
    else:
        assert bool(rec.by_type.set_index("item_type").loc["avoid", "non_inferior"]) is want["avoid_non_inferior"]
    text = " ".join(rec.warnings)
    assert all(w in text for w in want["warnings"]) and bool(rec.warnings) == bool(want["warnings"])
    assert f"−{case['margin']:.2f}" in rec.rule and json.dumps(rec.to_dict())


def test_rule_is_stated_with_its_margin() -> None:
    text = rule_text(0.15)
    assert "highest Cohen's κ" in text and "cheapest" in text and "paired difference" in text and "−0.15" in text


# -- the intervals -----------------------------------------------------------------------------------------


def test_kappa_of_counts_is_cohens_kappa_and_pooling_is_a_sum() -> None:
    counts = np.array([[3, 1, 0, 1], [2, 0, 1, 2], [0, 1, 1, 3]])
    tp, fp, fn, tn = counts.sum(axis=0)
    reference = [1] * tp + [0] * fp + [1] * fn + [0] * tn
    rater = [1] * tp + [1] * fp + [0] * fn + [0] * tn
    assert float(kappa(counts.sum(axis=0))) == pytest.approx(cohen_kappa(reference, rater)[0])
    assert float(raw_agreement(counts.sum(axis=0))) == pytest.approx((tp + tn) / counts.sum())
    units = pd.DataFrame({"run_id": ["a", "a", "b", "c"], "reference": [1, 0, 1, np.nan], "rater": [1, 1, 0, 1]})
    assert confusion_by_run(units, ["a", "b", "c", "d"]).tolist() == [[1, 1, 0, 0], [0, 0, 1, 0], [0] * 4, [0] * 4]


def test_intervals_resample_runs_and_fall_back_when_bca_is_degenerate() -> None:
    rng = np.random.default_rng(3)
    # Each run is wholly right or wholly wrong (5 items): resampling runs must give a wider interval than the
    # same counts spread one item per run.
    good = rng.random(20) < 0.7
    clustered = np.array([[5, 0, 0, 0] if g else [0, 0, 5, 0] for g in good])
    spread = np.array([row / 5 for row in clustered for _ in range(5)])
    wide, narrow = cluster_interval(clustered, raw_agreement), cluster_interval(spread, raw_agreement)
    assert wide.estimate == pytest.approx(narrow.estimate)
    assert (wide.high - wide.low) > 1.8 * (narrow.high - narrow.low)
    assert wide.method == "BCa"
    perfect = np.tile([2, 0, 0, 3], (10, 1))
    same = cluster_interval(perfect, raw_agreement)
    assert (same.estimate, same.low, same.high, same.method) == (1.0, 1.0, 1.0, "degenerate")
    one_kind = np.tile([4, 0, 0, 0], (6, 1))
    assert np.isnan(cluster_interval(one_kind, kappa).estimate)
    assert cluster_interval(one_kind[:1], raw_agreement).method == "n/a"
    twins = paired_interval(clustered, clustered, kappa)
    assert (twins.estimate, twins.low, twins.high) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="shape"):
        paired_interval(clustered, clustered[:3], kappa)
    assert set(STATISTICS) >= {"raw_agreement", "cohen_kappa", "pabak", "false_met_rate"}


# -- on the simulated judge --------------------------------------------------------------------------------


def test_three_judges_rank_in_their_true_order_and_intervals_cover_the_truth(sim_week: Path) -> None:
    eps = {OPUS: 0.02, SONNET: 0.10, HAIKU: 0.25}
    with judge_endpoint(judges={"opus": {"flip_rate": eps[OPUS]}, "sonnet": {"flip_rate": eps[SONNET]},
                                "haiku": {"flip_rate": eps[HAIKU]}}) as ep:
        study = judge_study(sim_week, StudyOptions(judges=list(eps), repeat=2, sample=None, include_plugin=True,
                                                   jobs=3, max_retries=1, seed=0),
                            ep.base_url, ep.api_key, log=lambda m: None)
    assert study.plan.reference_kind == TRUTH and len(study.run_ids) == 24
    n_items = 24 * 5
    assert len(study.plan.reference) == n_items and len(study.grades) == 3 * 2 * n_items
    assert set(study.grades["rater"]) == {f"{j}#{s}" for j in eps for s in (1, 2)}
    overall = study.table[study.table["item_type"].eq("all")].set_index("judge_model")
    assert list(overall["cohen_kappa"].sort_values(ascending=False).index) == [OPUS, SONNET, HAIKU]
    assert list(overall["raw_agreement"].sort_values(ascending=False).index) == [OPUS, SONNET, HAIKU]
    for judge, e in eps.items():
        row = overall.loc[judge]
        assert row["raw_agreement_low"] <= 1 - e <= row["raw_agreement_high"], (judge, row["raw_agreement"])
        assert row["false_met_rate_low"] <= e <= row["false_met_rate_high"], (judge, row["false_met_rate"])
        assert row["n_units"] == 2 * n_items and row["cost_per_run"] > 0
    assert overall.loc[HAIKU, "cost_per_run"] < overall.loc[SONNET, "cost_per_run"] < overall.loc[OPUS, "cost_per_run"]
    rec = study.recommendation
    assert rec.best == OPUS and rec.recommended == OPUS, rec.judges
    assert not rec.judges.set_index("judge_model").loc[HAIKU, "non_inferior"]
    pairs = study.judges_table
    assert len(pairs) == 3 * 2 * 4  # ordered pairs × item types
    d = pairs[(pairs["judge_a"] == HAIKU) & (pairs["judge_b"] == OPUS) & (pairs["item_type"] == "all")].iloc[0]
    assert d["kappa_ref_diff"] == pytest.approx(overall.loc[HAIKU, "cohen_kappa"] - overall.loc[OPUS, "cohen_kappa"])
    assert d["diff_high"] < 0


def test_a_lenient_judge_is_caught_on_the_unfavourable_items(sim_week: Path) -> None:
    # Leniency λ turns an unfavourable honest reading into the favourable verdict (must/bonus missing → met, avoid
    # violated → clean): with no flips its lenient rate is λ on every item type, its false-met rate on musts is λ
    # and on avoid items it misses violations (false negatives) at λ.
    lam = 0.3
    with judge_endpoint(judges={"opus": {"flip_rate": 0.0}, "haiku": {"flip_rate": 0.0, "leniency": lam}}) as ep:
        study = judge_study(sim_week, StudyOptions(judges=[OPUS, HAIKU], repeat=2, sample=None, include_plugin=True,
                                                   jobs=3, max_retries=1),
                            ep.base_url, ep.api_key, log=lambda m: None)
    t = study.table.set_index(["judge_model", "item_type"])
    assert t.loc[(OPUS, "all"), "lenient_rate"] == 0 and t.loc[(OPUS, "all"), "raw_agreement"] == 1
    haiku = t.loc[(HAIKU, "all")]
    assert haiku["lenient_rate_low"] <= lam <= haiku["lenient_rate_high"], haiku["lenient_rate"]
    assert t.loc[(HAIKU, "must"), "false_met_rate_low"] <= lam <= t.loc[(HAIKU, "must"), "false_met_rate_high"]
    assert t.loc[(HAIKU, "avoid"), "false_met_rate"] == 0 < t.loc[(HAIKU, "avoid"), "false_negative_rate"]
    assert study.recommendation.best == OPUS and study.recommendation.recommended == OPUS


def test_cli_writes_the_study_page_and_recommends_the_cheaper_equal_judge(sim_week: Path) -> None:
    profiles = {"opus": {"flip_rate": 0.03}, "sonnet": {"flip_rate": 0.03},
                "haiku": {"flip_rate": 0.30, "position_bias": 0.6}}
    with judge_endpoint(judges=profiles) as ep:
        # The week's own rubric and pairwise judges first: the study's pairwise part needs pairs.csv and scores.csv.
        assert judge_run_dir(sim_week, JudgeOptions(jobs=3, max_retries=1),
                             PassContext(endpoint=ep, log=lambda m: None)).ok
        judge_pairs(sim_week, JudgeOptions(jobs=3, max_retries=1), PassContext(endpoint=ep, log=lambda m: None))
        week_pairs = (sim_week / "pairs.csv").read_bytes()
        proc = run_cli("judge-study", str(sim_week), "--judges", OPUS, SONNET, HAIKU, "--backend", "sim",
                       "--endpoint", ep.base_url, "--include-plugin", "--sample", "24", "--jobs", "3",
                       "--max-retries", "1")
        assert proc.returncode == 0, proc.stderr[-3000:]
        folder = sim_week / "judge-study"
        assert proc.stdout.strip().splitlines()[-1] == str(folder / "study.md")
        md = (folder / "study.md").read_text()
        assert f"**Recommended judge: {SONNET}**" in md and "simulated truth" in md and "−0.10" in md
        assert "κ − κ(best), paired" in md and "] " in md and "## Self-agreement" in md and "avoid" in md
        study = json.loads((folder / "study.json").read_text())
        assert study["reference"] == TRUTH and study["recommendation"]["recommended"] == SONNET
        assert {r["judge_model"]: r["non_inferior"] for r in study["recommendation"]["judges"]} == {
            OPUS: True, SONNET: True, HAIKU: False}
        table = pd.read_csv(folder / "study.csv")
        assert len(table) == 12 and table["cohen_kappa_low"].notna().all()
        # each judge's violated avoid quotes that cannot show the harm are counted (issue 32 point 8)
        assert table.loc[table["item_type"].eq("all"), "no_claim"].notna().all() and "| no claim |" in md
        grades = pd.read_csv(folder / "study-grades.csv")
        assert grades["rater"].str.contains("#").all() and grades["run_id"].nunique() == 24
        html = (folder / "study.html").read_text()
        assert "Recommended" in html and "<img" in html
        # The pairwise part: every judge on the week's pairs in both orders, into the study's own file.
        assert (sim_week / "pairs.csv").read_bytes() == week_pairs
        study_pairs = pd.read_csv(folder / "study-pairs.csv")
        assert set(study_pairs["judge_model"]) == {OPUS, SONNET, HAIKU} and study_pairs["error"].isna().all()
        bias = pd.read_csv(folder / "pairwise-bias.csv").set_index(["judge_model", "measure"])
        # A position-blind judge's picks are symmetric across the orders (exactly 0); haiku picks A 60 % of the time.
        assert bias.loc[(OPUS, "position_bias"), "estimate"] == 0 < bias.loc[(HAIKU, "position_bias"), "estimate"]
        assert "## Pairwise-judge bias" in md
        # Rerunning replaces the study, and says so; without the notebook the old page is not left behind.
        again = run_cli("judge-study", str(sim_week), "--judges", OPUS, HAIKU, "--backend", "sim", "--endpoint",
                        ep.base_url, "--sample", "6", "--no-notebook", "--max-retries", "1")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "replacing the previous study" in again.stderr
    assert not (folder / "study.html").exists() and json.loads((folder / "study.json").read_text())["options"][
        "judges"] == [OPUS, HAIKU]


def test_human_labels_are_the_reference_and_two_labelers_are_compared(sim_week: Path) -> None:
    gradeable = {r.run_id for r in select_runs(sim_week, include_plugin=True)[0]}
    key = truth(sim_week)
    key = key[key["run_id"].isin(gradeable)].reset_index(drop=True)
    verdict = {("must", 1): "met", ("must", 0): "missing", ("bonus", 1): "met", ("bonus", 0): "absent",
               ("avoid", 1): "violated", ("avoid", 0): "clean"}
    ann = key.head(40).assign(verdict=[verdict[(t, p)] for t, p in zip(key.head(40)["item_type"],
                                                                        key.head(40)["positive"], strict=True)],
                              labeler="ann")
    bob = ann.assign(labeler="bob")
    bob.loc[bob.index[:4], "verdict"] = [verdict[(t, 1 - p)] for t, p in zip(bob["item_type"][:4],
                                                                             bob["positive"][:4], strict=True)]
    sheet = sim_week / "labels-filled.csv"
    pd.concat([ann, bob]).drop(columns="positive").to_csv(sheet, index=False)
    with judge_endpoint(judges={"opus": {"flip_rate": 0.0}}) as ep:
        study = judge_study(sim_week, StudyOptions(judges=[OPUS], repeat=1, human=sheet, sample=None,
                                                   include_plugin=True, max_retries=1),
                            ep.base_url, ep.api_key, log=lambda m: None)
    assert study.plan.reference_kind == HUMAN
    assert set(study.run_ids) == set(ann["run_id"])  # only labelled runs are studied
    row = study.table[(study.table["item_type"] == "all")].iloc[0]
    assert row["n_units"] == 36 and row["raw_agreement"] == 1.0  # the 4 items the labelers split are left out
    assert study.inter_human is not None and len(study.inter_human)
    inter = study.inter_human[study.inter_human["item_type"].eq("all")].iloc[0]
    assert inter["raw_agreement"] == pytest.approx(36 / 40)
    assert "tied item(s) left out" in " ".join(study.notes)


def test_bad_input_is_one_line_and_exit_2(sim_week: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    def refused(*argv: str) -> str:
        try:
            code = main(["judge-study", *argv, "--no-notebook", "--backend", "sim"])
        except SystemExit as exc:  # argparse's own refusal
            code = exc.code
        err = capsys.readouterr().err
        assert code == 2, (argv, err)
        assert len(err.strip().splitlines()) == 1, err
        return err

    assert "not a folder" in refused(str(tmp_path / "nope"), "--judges", OPUS)
    assert "must be 1 or more" in refused(str(sim_week), "--judges", OPUS, "--sample", "0")
    assert "named twice" in refused(str(sim_week), "--judges", OPUS, OPUS)
    assert "must be from 0 up to 1" in refused(str(sim_week), "--judges", OPUS, "--margin", "1.5")
    labels = tmp_path / "labels.csv"
    labels.write_text("run_id,item_index,item_type,verdict,labeler\njudge-0000000000000000,0,must,met,ann\n")
    assert "no labelled item matches" in refused(str(sim_week), "--judges", OPUS, "--human", str(labels))
    (sim_week / "truth.csv").rename(tmp_path / "truth.csv")
    assert "needs two or more --judges" in refused(str(sim_week), "--judges", OPUS)
    assert not (sim_week / "judge-study").exists()
    with run_dir_lock(sim_week, command="a test holding the week"):  # another process: the run directory's lock
        proc = run_cli("judge-study", str(sim_week), "--judges", OPUS, SONNET, "--no-notebook")
    assert proc.returncode == 2 and "in use by PID" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
