"""Judge calibration: agreement statistics pinned by published cases, and measured on the simulated judge.

The κ/α cases are data files (``tests/data/agreement_cases/*.json``), each citing where its value was
published. On the simulated judge, a verdict flips with probability ε independently per sample, so two
samples agree with probability ``1 − 2ε(1 − ε)``, ``r`` samples are unanimous with probability
``(1 − ε)^r + ε^r``, and Cohen's κ follows from the honest base rate π (the simulation's answer key): each
sample's positive rate is ``p = π(1 − ε) + (1 − π)ε`` and ``κ = (p_o − p_e)/(1 − p_e)`` with
``p_e = p² + (1 − p)²``. The measured values must land within a binomial tolerance of those.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skillbench.calibration import (
    CalibrationOptions,
    LabelsError,
    SheetOptions,
    calibrate,
    cohen_kappa,
    export_labels,
    fleiss_kappa,
    krippendorff_alpha,
    krippendorff_reading,
    landis_koch,
    pabak,
    pair_agreement,
    read_labels,
)
from skillbench.calibration._labels import LABEL_COLUMNS, allocate
from skillbench.cli import main
from skillbench.judge import JudgeOptions, judge_run_dir, opaque_run_id
from skillbench.runtime import PassContext
from tests.helpers.judge import judge_endpoint, truth
from tests.helpers.shared import DATA_DIR

CASES = sorted((DATA_DIR / "agreement_cases").glob("*.json"))


def _expand_table(table: list[list[int]]) -> tuple[list[int], list[int]]:
    """Label pairs (rater A, rater B) from a contingency table (rows A, columns B)."""
    a, b = [], []
    for i, row in enumerate(table):
        for j, n in enumerate(row):
            a += [i] * n
            b += [j] * n
    return a, b


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_published_agreement_case(path: Path) -> None:
    case = json.loads(path.read_text())
    assert case["source"], "every case cites where its value was published"
    tol = case["tolerance"]
    if case["statistic"] == "cohen_kappa":
        a, b = _expand_table(case["table"])
        kappa, se = cohen_kappa(a, b)
        assert kappa == pytest.approx(case["expected"], abs=tol)
        if "expected_se" in case:
            assert se == pytest.approx(case["expected_se"], abs=tol)
        if "expected_pabak" in case:
            assert pabak(a, b) == pytest.approx(case["expected_pabak"], abs=tol)
            stats = pair_agreement(a, b)
            assert stats["raw_agreement"] == pytest.approx(case["expected_raw_agreement"], abs=tol)
            assert stats["cohen_kappa"] == pytest.approx(case["expected"], abs=tol)
    elif case["statistic"] == "fleiss_kappa":
        if "counts" in case:  # subjects × categories → one rating per rater (rater identity does not matter)
            ratings = np.array([[k for k, n in enumerate(row) for _ in range(n)] for row in case["counts"]])
        else:
            ratings = np.array(case["ratings"])
        assert fleiss_kappa(ratings) == pytest.approx(case["expected"], abs=tol)
    elif case["statistic"] == "krippendorff_alpha":
        raters_by_units = np.array([[np.nan if v is None else v for v in row] for row in case["reliability_data"]])
        assert krippendorff_alpha(raters_by_units.T) == pytest.approx(case["expected"], abs=tol)
    else:
        pytest.fail(f"unknown statistic {case['statistic']!r}")


@pytest.mark.parametrize(("kappa", "label"), [(-0.1, "poor"), (0.0, "slight"), (0.2, "slight"), (0.21, "fair"),
                                              (0.4, "fair"), (0.41, "moderate"), (0.6, "moderate"),
                                              (0.61, "substantial"), (0.8, "substantial"), (0.81, "almost perfect"),
                                              (1.0, "almost perfect"), (float("nan"), "undefined")])
def test_landis_koch_wording(kappa: float, label: str) -> None:
    assert landis_koch(kappa) == label


@pytest.mark.parametrize(("alpha", "label"), [(0.8, "reliable"), (0.799, "tentative conclusions only"),
                                              (0.667, "tentative conclusions only"), (0.666, "unreliable"),
                                              (float("nan"), "undefined")])
def test_krippendorff_wording(alpha: float, label: str) -> None:
    assert krippendorff_reading(alpha) == label


def test_confusion_is_against_the_reference_and_degenerate_labels_are_undefined() -> None:
    reference = [1, 1, 0, 0, 0, np.nan]
    judge = [1, 0, 1, 0, 0, 1]
    s = pair_agreement(reference, judge)
    assert (s["true_positive"], s["false_positive"], s["false_negative"], s["true_negative"]) == (1, 1, 1, 2)
    assert s["n_units"] == 5 and s["false_positive_rate"] == pytest.approx(1 / 3)
    assert s["base_rate_a"] == pytest.approx(0.4) and s["base_rate_b"] == pytest.approx(0.4)
    same = pair_agreement([0, 0, 0], [0, 0, 0])
    assert np.isnan(same["cohen_kappa"]) and same["pabak"] == 1.0 and same["landis_koch"] == "undefined"


@pytest.mark.parametrize(("sizes", "n", "expected"), [([10, 10, 10], 9, [3, 3, 3]), ([2, 10, 10], 12, [2, 5, 5]),
                                                      ([1, 1, 1], 10, [1, 1, 1]), ([5, 50], 20, [5, 15]),
                                                      ([4, 4, 4, 4], 6, [2, 2, 1, 1])])
def test_stratified_allocation(sizes: list[int], n: int, expected: list[int]) -> None:
    got = allocate(sizes, n)
    assert sum(got) == min(n, sum(sizes)) and all(g <= s for g, s in zip(got, sizes, strict=True))
    assert sorted(got, reverse=True) == sorted(expected, reverse=True)


# -- on the simulated judge --------------------------------------------------------------------------------


def _implied_kappa(eps: float, base_rate: float) -> float:
    p = base_rate * (1 - eps) + (1 - base_rate) * eps
    p_o = 1 - 2 * eps * (1 - eps)
    p_e = p**2 + (1 - p) ** 2
    return (p_o - p_e) / (1 - p_e)


def test_self_agreement_and_kappa_match_the_flip_rate(sim_week: Path) -> None:
    eps, eps_other, repeat = 0.1, 0.2, 4
    with judge_endpoint(flip_rate=eps, judges={"haiku": {"flip_rate": eps_other}}) as ep:
        cal = calibrate(sim_week, CalibrationOptions(repeat=repeat, other_judge="claude-haiku-5-5", include_plugin=True,
                                                 jobs=3, max_retries=1), PassContext(endpoint=ep, log=lambda m: None))
    n = 24 * 5
    honest = truth(sim_week)["positive"].mean()
    allrow = cal.self_agreement.set_index("item_type").loc["all"]
    assert allrow["n_items"] == n
    unanimity = (1 - eps) ** repeat + eps**repeat
    assert abs(allrow["unanimity"] - unanimity) < 3.5 * np.sqrt(unanimity * (1 - unanimity) / n)
    assert cal.musts_pass is False and len(cal.flipping) == allrow["flipping"] > 0
    pairs = cal.agreement[(cal.agreement["comparison"] == "samples") & (cal.agreement["item_type"] == "all")]
    assert len(pairs) == repeat * (repeat - 1) // 2
    agree = 1 - 2 * eps * (1 - eps)
    assert abs(pairs["raw_agreement"].mean() - agree) < 3.5 * np.sqrt(agree * (1 - agree) / n)
    kappa = _implied_kappa(eps, honest)
    assert abs(pairs["cohen_kappa"].mean() - kappa) < 3.5 * pairs["cohen_kappa_se"].mean()
    fleiss = cal.agreement[(cal.agreement["comparison"] == "samples (all)") & (cal.agreement["item_type"] == "all")]
    assert abs(fleiss["fleiss_kappa"].iloc[0] - kappa) < 3.5 * pairs["cohen_kappa_se"].mean()
    assert fleiss["krippendorff_alpha"].iloc[0] == pytest.approx(fleiss["fleiss_kappa"].iloc[0], abs=0.02)
    # Two judge models with independent errors agree with probability (1-ε1)(1-ε2) + ε1·ε2.
    judges = cal.agreement[(cal.agreement["comparison"] == "judges") & (cal.agreement["item_type"] == "all")].iloc[0]
    both = (1 - eps) * (1 - eps_other) + eps * eps_other
    assert abs(judges["raw_agreement"] - both) < 3.5 * np.sqrt(both * (1 - both) / n)
    assert judges["rater_b"].startswith("claude-haiku-5-5#")
    # The files: a tidy CSV with every comparison, and the report with the bar and the readings.
    csv = pd.read_csv(sim_week / "calibration.csv")
    assert {"samples", "samples (all)", "judges", "self-agreement"} <= set(csv["comparison"])
    md = (sim_week / "calibration.md").read_text()
    assert "**FAIL**" in md and "Landis–Koch" in md and "Krippendorff" in md and "Flipping items" in md
    grades = pd.read_csv(sim_week / "calibration-grades.csv")
    assert len(grades) == n * (repeat + 1)
    # Each judge's violated avoid items with a verified quote, and how many quotes cannot show the harm (point 8).
    violated = cal.grades[cal.grades["item_type"].eq("avoid") & cal.grades["verdict"].eq("violated")
                          & ~cal.grades["flagged"]]
    by_judge = violated["rater"].str.split("#").str[0].value_counts()
    assert cal.evidence.set_index("judge_model")["avoid_violations"].to_dict() == by_judge.to_dict()
    assert (cal.evidence["no_claim"] <= cal.evidence["avoid_violations"]).all()
    assert "| violated avoid | no claim |" in md


def test_a_stable_judge_on_six_runs_does_not_show_the_must_bar(sim_week: Path, capsys) -> None:
    """The bar is judged on the lower end of the interval: 18 of 18 unanimous musts (6 runs) cannot show ≥ 95 %
    (Clopper–Pearson's lower end 0.025^(1/18) = 0.8149): NOT SHOWN, exit 0 (only an estimate below the bar fails)."""
    with judge_endpoint() as ep:
        code = main(["calibrate", str(sim_week), "--backend", "sim", "--endpoint", ep.base_url, "--repeat", "3",
                     "--sample", "6", "--max-retries", "1"])
        assert code == 0
        md = (sim_week / "calibration.md").read_text()
        assert "**NOT SHOWN**" in md and "[0.815, 1.000]" in md and "No item flipped." in md
        assert "none: 6 runs (< 10)" in capsys.readouterr().out  # too few runs for an agreement interval
        assert pd.read_csv(sim_week / "calibration-grades.csv")["run_id"].nunique() == 6
    # 72 of 72 (the whole week's musts) pass: tests/data/interval_cases.json, test_agreement_intervals.py


def test_labels_export_and_judge_vs_human(sim_week: Path) -> None:
    eps = 0.15
    with judge_endpoint(flip_rate=eps) as ep:
        assert judge_run_dir(sim_week, JudgeOptions(jobs=3, max_retries=1),
                             PassContext(endpoint=ep, log=lambda m: None)).ok
    assert main(["labels", "export", str(sim_week), "--n", "30", "--seed", "3"]) == 0
    sheet = pd.read_csv(sim_week / "labels.csv", dtype=str, keep_default_na=False)
    assert list(sheet.columns) == LABEL_COLUMNS and len(sheet) == 30
    assert (sheet["verdict"] == "").all() and (sheet["labeler"] == "").all()
    assert sheet["answer"].str.len().min() > 0 and not sheet.duplicated(["run_id", "item_index"]).any()
    assert sheet["run_id"].str.startswith("judge-").all(), "labelers are as blind as the judge: no model or arm"
    real = {opaque_run_id(p.name): p.name for p in sim_week.iterdir() if (p / "metadata.json").is_file()}
    real_ids = sheet["run_id"].map(real)
    arms = real_ids.str.contains("-with-skill-").map({True: "with-skill", False: "no-skill"})
    strata = sheet.groupby([arms, sheet["item_type"]]).size()
    assert len(strata) == 6 and strata.min() >= 2  # both arms × three item types, none starved
    with pytest.raises(LabelsError, match="exists"):
        export_labels(sim_week, SheetOptions(n=30))
    # Two people label: one from the answer key, one who disagrees on a few items.
    key = truth(sim_week).set_index(["run_id", "item_index"])["positive"]
    verdict = {("must", 1): "met", ("must", 0): "missing", ("bonus", 1): "met", ("bonus", 0): "absent",
               ("avoid", 1): "violated", ("avoid", 0): "clean"}
    a = sheet.copy()
    a["verdict"] = [verdict[(t, int(key[(r, int(i))]))] for r, i, t in zip(real_ids, a["item_index"],
                                                                            a["item_type"], strict=True)]
    a["labeler"] = "ann"
    b = a.copy()
    b["labeler"] = "bob"
    flip = {v: w for pair in (("met", "missing"), ("violated", "clean")) for v, w in (pair, pair[::-1])}
    b.loc[b.index[:3], "verdict"] = [flip.get(v, "met") for v in b["verdict"].iloc[:3]]
    filled = sim_week / "labels-filled.csv"
    pd.concat([a, b]).to_csv(filled, index=False)
    labels = read_labels(filled)
    assert len(labels) == 60 and set(labels["labeler"]) == {"ann", "bob"}
    cal = calibrate(sim_week, CalibrationOptions(repeat=1, human=filled), PassContext(log=lambda m: None))  # no call
    rows = cal.agreement[cal.agreement["item_type"] == "all"].set_index("rater_a")
    ann = rows.loc["human:ann"]
    # Against a perfect human, the judge's confusion is exactly its flips on the labelled items.
    s = pd.read_csv(sim_week / "scores.csv").set_index(["run_id", "item_index"])
    judged = s.loc[list(zip(real_ids, a["item_index"].astype(int), strict=True)), "verdict"]
    judged = judged.isin(["met", "violated"]).astype(int).to_numpy()
    human = np.array([key[(r, int(i))] for r, i in zip(real_ids, a["item_index"], strict=True)])
    assert ann["false_positive"] == int(((human == 0) & (judged == 1)).sum())
    assert ann["false_negative"] == int(((human == 1) & (judged == 0)).sum())
    assert ann["raw_agreement"] == pytest.approx((human == judged).mean())
    assert ann["cohen_kappa"] == pytest.approx(cohen_kappa(list(human), list(judged))[0])
    assert "judge + humans" in set(cal.agreement["comparison"])
    assert "judge vs human" in (sim_week / "calibration.md").read_text()
    # The ledger's violated avoid items per judge × model, with the quotes that cannot show the harm (point 8).
    ledger = pd.read_csv(sim_week / "scores.csv", dtype=str, keep_default_na=False)
    violated = ledger[ledger["item_type"].eq("avoid") & ledger["verdict"].eq("violated")]
    assert cal.no_claim.set_index("model")["avoid_violations"].to_dict() == violated["model"].value_counts().to_dict()
    assert "Avoid quotes that cannot show the harm (scores.csv)" in (sim_week / "calibration.md").read_text()


def test_read_labels_rejects_a_verdict_of_the_wrong_type(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    pd.DataFrame([{"run_id": "r", "item_index": 0, "item_type": "avoid", "item_text": "t", "prompt": "p",
                   "answer": "a", "verdict": "met", "labeler": ""}]).to_csv(path, index=False)
    with pytest.raises(LabelsError, match="row 2: verdict 'met' is not allowed for a avoid item"):
        read_labels(path)
    pd.DataFrame([{"run_id": "r", "item_index": 0, "item_type": "avoid", "verdict": " Violated ",
                   "labeler": ""}, {"run_id": "r", "item_index": 1, "item_type": "must", "verdict": "",
                                    "labeler": "x"}]).to_csv(path, index=False)
    labels = read_labels(path)
    assert labels.to_dict("records") == [{"run_id": "r", "item_index": 0, "item_type": "avoid", "item_text": "",
                                          "prompt": "", "verdict": "violated", "labeler": "human"}]
