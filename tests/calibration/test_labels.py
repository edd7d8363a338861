"""The label workflow of a judge study: sheets that over-sample disagreements, a second labeler, merge, κ between
people.

Simulated labelers fill the sheets from the simulation's answer key (``tests.helpers.judge.truth``): labeler A is
the key, B and C are the key with a known set of items flipped, so every count and κ is known by hand. The share
rule's cases are data (``tests/data/labels_cases/disagreement_shares.json``). The CLI is run as a subprocess.
"""

from __future__ import annotations

import json
import random
import subprocess
from collections.abc import Collection
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

from skillbench.calibration import CalibrationOptions, LabelsError, calibrate, read_labels
from skillbench.calibration._agreement import GRADE_COLUMNS, flipping_items
from skillbench.calibration._labels import (
    INTER_HUMAN,
    INTER_HUMAN_ALL,
    LABEL_COLUMNS,
    SheetOptions,
    allocate,
    export_labels,
    inter_human,
    label_candidates,
)
from skillbench.cli import main
from skillbench.judge import JudgeOptions, judge_run_dir, opaque_run_id
from skillbench.runtime import PassContext
from tests.helpers.judge import judge_endpoint, run_cli, truth
from tests.helpers.shared import DATA_DIR

SHARES = json.loads((DATA_DIR / "labels_cases" / "disagreement_shares.json").read_text())["cases"]
VERDICT = {("must", 1): "met", ("must", 0): "missing", ("bonus", 1): "met", ("bonus", 0): "absent",
           ("avoid", 1): "violated", ("avoid", 0): "clean"}


def _grades(rows: pd.DataFrame, rater: str, positive: pd.Series) -> pd.DataFrame:
    """A gradings file's rows (GRADE_COLUMNS) giving ``rater`` the ``positive`` verdicts on ``rows``."""
    return pd.DataFrame({"run_id": rows["run_id"], "item_index": rows["item_index"], "item_type": rows["item_type"],
                         "item_text": rows["item_text"], "prompt": "p", "model": "m", "condition": rows["condition"],
                         "rater": rater, "verdict": [VERDICT[(t, int(p))] for t, p in zip(rows["item_type"], positive,
                                                                                          strict=True)],
                         "positive": positive.to_numpy(), "flagged": False, "reason": ""})[GRADE_COLUMNS]


def _fill(sheet: pd.DataFrame, week: Path, flip: Collection[int] = (), blank: Collection[int] = ()) -> pd.DataFrame:
    """A labeler who gives the answer key's verdict, the opposite one on rows ``flip``, none on rows ``blank``."""
    key = truth(week).assign(run_id=lambda t: t["run_id"].map(opaque_run_id)).set_index(["run_id", "item_index"])
    out = sheet.copy()
    honest = [int(key.loc[(r, int(i)), "positive"]) for r, i in zip(out["run_id"], out["item_index"], strict=True)]
    out["verdict"] = [VERDICT[(t, 1 - p if n in flip else p)] if n not in blank else ""
                      for n, (t, p) in enumerate(zip(out["item_type"], honest, strict=True))]
    return out


def _sheet(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _refused(proc: subprocess.CompletedProcess[str], *names: str) -> str:
    """The CLI (a subprocess) refused with exit 2 and one line naming ``names``."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    for name in names:
        assert name in lines[0], lines[0]
    return lines[0]


def _main_refused(capsys: pytest.CaptureFixture[str], argv: list[str], *names: str) -> None:
    """The same, in this process (argparse's refusals exit through SystemExit)."""
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    _refused(subprocess.CompletedProcess(argv, code, "", capsys.readouterr().err), *names)


# -- over-sampling the raters' disagreements ---------------------------------------------------------------


@pytest.mark.parametrize("case", SHARES, ids=[c["id"] for c in SHARES])
def test_disagreement_items_get_the_stated_share(sim_week: Path, case: dict) -> None:
    cand = label_candidates(sim_week)
    assert len(cand) == 80
    keys = list(zip(cand["run_id"], cand["item_index"], strict=True))
    chosen = set(random.Random(f"case:{case['id']}").sample(keys, case["k"]))
    key = truth(sim_week).set_index(["run_id", "item_index"])["positive"]
    honest = pd.Series([key[k] for k in keys])
    other = pd.Series([1 - p if k in chosen else p for k, p in zip(keys, honest, strict=True)])
    # Two files, one rater each: the disagreements appear only when the files are pooled.
    (sim_week / "g1.csv").write_text(_grades(cand, "a#1", honest).to_csv(index=False))
    (sim_week / "g2.csv").write_text(_grades(cand, "b#1", other).to_csv(index=False))
    files = [sim_week / "g1.csv", sim_week / "g2.csv"]
    path, sheet = export_labels(sim_week, SheetOptions(n=case["n"], seed=4, disagreements=files,
                                                       disagreement_share=case["share"]))
    assert len(sheet) == min(case["n"], len(cand))
    assert list(_sheet(path).columns) == LABEL_COLUMNS
    assert (sheet["verdict"] == "").all() and sheet["run_id"].str.startswith("judge-").all(), "labelers stay blind"
    assert not sheet.duplicated(["run_id", "item_index"]).any()
    real = {opaque_run_id(r): r for r in cand["run_id"]}
    in_sheet = {(real[r], int(i)) for r, i in zip(sheet["run_id"], sheet["item_index"], strict=True)}
    assert len(in_sheet & chosen) == case["expected"]
    # Within the disagreement part, the arm × item type strata are allocated as everywhere else.
    dis = cand[np.array([k in chosen for k in keys], dtype=bool)]
    sizes = dis.groupby(["condition", "item_type"]).size()
    picked = dis[np.array([k in in_sheet for k in zip(dis["run_id"], dis["item_index"], strict=True)], dtype=bool)]
    got = picked.groupby(["condition", "item_type"]).size().reindex(sizes.index, fill_value=0)
    assert list(got) == allocate(list(sizes), case["expected"])
    record = json.loads((sim_week / "labels.json").read_text())
    assert record["sheet"] == "labels.csv" and record["seed"] == 4 and record["n"] == len(sheet)
    d = record["disagreements"]
    assert (d["share"], d["disagreement_items"], d["picked"]) == (case["share"], case["k"], case["expected"])
    assert sum(s["picked"] for s in d["strata"]) == len(sheet)
    assert sum(s["candidates"] for s in d["strata"] if s["disagreement"]) == case["k"]
    # Seeded: the same call draws the same sheet; another seed another one (when there is a choice).
    _, again = export_labels(sim_week, SheetOptions(n=case["n"], seed=4, disagreements=files,
                                                    disagreement_share=case["share"]), out=sim_week / "again.csv")
    assert again.equals(sheet)
    if len(sheet) < len(cand):
        _, other_seed = export_labels(sim_week, SheetOptions(n=case["n"], seed=5, disagreements=files,
                                                             disagreement_share=case["share"]),
        out=sim_week / "other.csv")
        assert set(other_seed["run_id"] + other_seed["item_index"].astype(str)) != set(
            sheet["run_id"] + sheet["item_index"].astype(str))


def test_without_disagreements_the_sheet_is_unchanged_and_bad_grades_are_refused(
        sim_week: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from skillbench.calibration._labels import sample_labels

    path, sheet = export_labels(sim_week, SheetOptions(n=30, seed=3))
    expected = sample_labels(label_candidates(sim_week), 30, seed=3)
    expected["run_id"] = expected["run_id"].map(opaque_run_id)
    assert _sheet(path).equals(expected.astype(str))
    assert "disagreements" not in json.loads((sim_week / "labels.json").read_text())
    (sim_week / "bad.csv").write_text("run_id,verdict\nx,met\n")
    argv = ["labels", "export", str(sim_week), "--out", str(sim_week / "d.csv"), "--disagreements",
            str(sim_week / "bad.csv")]
    _main_refused(capsys, argv, "bad.csv", "not a gradings file", "item_index")
    assert not (sim_week / "d.csv").exists()
    _main_refused(capsys, [*argv, "--disagreement-share", "1.5"], "--disagreement-share", "1.5")
    other_week = _grades(label_candidates(sim_week).assign(run_id="another-week-run"), "a#1", pd.Series([1] * 80))
    other_week.to_csv(sim_week / "elsewhere.csv", index=False)
    with pytest.raises(LabelsError, match="elsewhere.csv: no grading of an item of"):
        export_labels(sim_week, SheetOptions(n=10, disagreements=[sim_week / "elsewhere.csv"]), out=sim_week / "d.csv")
    # The companion never replaces a file that is not a sheet's companion (the week's run.json here).
    before = (sim_week / "run.json").read_text()
    with pytest.raises(LabelsError, match="run.json exists and is not the companion of run.csv"):
        export_labels(sim_week, SheetOptions(n=10), out=sim_week / "run.csv")
    assert (sim_week / "run.json").read_text() == before and not (sim_week / "run.csv").exists()


# -- a second labeler, merge ---------------------------------------------------------------------------------


def test_same_as_gives_the_same_items_for_a_second_labeler(sim_week: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["labels", "export", str(sim_week), "--n", "20", "--seed", "2", "--labeler", "ann"]) == 0
    a = _sheet(sim_week / "labels.csv")
    assert (a["labeler"] == "ann").all() and (a["verdict"] == "").all()
    out = sim_week / "labels-b.csv"
    same = ["labels", "export", str(sim_week), "--same-as", str(sim_week / "labels.csv"), "--out", str(out)]
    _main_refused(capsys, [*same, "--labeler", "ann"], "labels.csv", "'ann'")
    _main_refused(capsys, same, "--same-as needs --labeler")
    filled = _fill(a, sim_week)  # the first labeler's verdicts never reach the second sheet
    filled.to_csv(sim_week / "labels.csv", index=False)
    proc = run_cli("labels", "export", str(sim_week), "--same-as", str(sim_week / "labels.csv"), "--labeler",
                   "bob", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    b = _sheet(out)
    assert b.drop(columns="labeler").equals(a.drop(columns="labeler"))
    assert (b["labeler"] == "bob").all() and (b["verdict"] == "").all()
    assert json.loads((sim_week / "labels-b.json").read_text())["same_as"] == str(sim_week / "labels.csv")
    _main_refused(capsys, [*same, "--labeler", "bob"], "labels-b.csv", "exists")


def test_merge_refuses_what_it_cannot_combine(sim_week: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, sheet = export_labels(sim_week, SheetOptions(n=12, labeler="ann"))
    a, b, out = sim_week / "a.csv", sim_week / "b.csv", sim_week / "merged.csv"
    _fill(sheet, sim_week).to_csv(a, index=False)
    _fill(sheet, sim_week, flip={0}).assign(labeler="ann").to_csv(b, index=False)
    _refused(run_cli("labels", "merge", str(a), str(b), "--out", str(out)), str(a), str(b), "'ann'")
    moved = _fill(sheet, sim_week).assign(labeler="bob")
    moved.loc[3, "item_text"] = "a rubric item of another export"
    moved.to_csv(b, index=False)
    line = _refused(run_cli("labels", "merge", str(a), str(b), "--out", str(out)), str(b), "row 5", str(a))
    assert f"({moved.loc[3, 'run_id']}, {moved.loc[3, 'item_index']})" in line
    notes = sim_week / "notes.csv"
    notes.write_text("when,what\nmonday,labelled half\n")
    _refused(run_cli("labels", "merge", str(a), str(notes), "--out", str(out)), str(notes), "not a labels sheet")
    two = _fill(sheet, sim_week).assign(labeler=["ann"] * 6 + ["bob"] * 6)
    two.to_csv(b, index=False)
    merge = ["labels", "merge", str(a), str(b), "--out", str(out)]
    _main_refused(capsys, merge, str(b), "'ann', 'bob'")
    _main_refused(capsys, ["labels", "merge", str(a), str(a), "--out", str(out)], str(a), "given twice")
    assert not out.exists(), "a refused merge writes nothing"
    _fill(sheet, sim_week).assign(labeler="bob").to_csv(b, index=False)
    out.write_text("someone's file\n")
    _main_refused(capsys, merge, str(out), "--force")
    assert out.read_text() == "someone's file\n"
    assert main([*merge, "--force"]) == 0
    assert len(read_labels(out)) == 24


# -- inter-human agreement, in calibrate ---------------------------------------------------------------------


def _hand_kappa(merged: pd.DataFrame, x: str, y: str) -> float:
    wide = merged.pivot_table(index=["run_id", "item_index"], columns="labeler", values="positive").dropna(
        subset=[x, y])
    table = pd.crosstab(wide[x], wide[y]).reindex(index=[0.0, 1.0], columns=[0.0, 1.0], fill_value=0)
    return float(cohens_kappa(table.to_numpy()).kappa)


def test_disagreements_to_merged_labels_to_inter_human_kappa(sim_week: Path) -> None:
    with judge_endpoint(flip_rate=0.15) as ep:
        assert judge_run_dir(sim_week, JudgeOptions(jobs=3, max_retries=1),
                             PassContext(endpoint=ep, log=lambda m: None)).ok
        cal = calibrate(sim_week, CalibrationOptions(repeat=3, sample=8, jobs=3, max_retries=1),
                        PassContext(endpoint=ep, log=lambda m: None))
    # The real calibration-grades.csv: its flipping items are the disagreements.
    flips = flipping_items(cal.grades, [r for r in cal.grades["rater"].unique()])
    assert len(flips) > 0
    assert main(["labels", "export", str(sim_week), "--n", "40", "--labeler", "ann", "--disagreements",
                 str(sim_week / "calibration-grades.csv")]) == 0
    sheet = _sheet(sim_week / "labels.csv")
    flipped = {(opaque_run_id(r), str(i)) for r, i in zip(flips["run_id"], flips["item_index"], strict=True)}
    in_sheet = set(zip(sheet["run_id"], sheet["item_index"], strict=True))
    assert len(in_sheet & flipped) == min(len(flipped), 20)
    assert json.loads((sim_week / "labels.json").read_text())["disagreements"]["disagreement_items"] == len(flipped)
    for name in ("bob", "cy"):
        export_labels(sim_week, SheetOptions(same_as=sim_week / "labels.csv", labeler=name),
                      out=sim_week / f"labels-{name}.csv")
    # Ann is the key; Bob flips a quarter of the items; Cy flips 5 others and leaves 2 blank.
    rng = random.Random(7)
    bob_flips = set(rng.sample(range(40), 10))
    cy_flips = set(rng.sample(sorted(set(range(40)) - bob_flips), 5))
    cy_blank = set(rng.sample(sorted(set(range(40)) - bob_flips - cy_flips), 2))
    _fill(sheet, sim_week).to_csv(sim_week / "labels.csv", index=False)
    _fill(_sheet(sim_week / "labels-bob.csv"), sim_week, bob_flips).to_csv(sim_week / "labels-bob.csv", index=False)
    _fill(_sheet(sim_week / "labels-cy.csv"), sim_week, cy_flips, cy_blank).to_csv(sim_week / "labels-cy.csv",
                                                                                   index=False)
    merged_path = sim_week / "merged.csv"
    proc = run_cli("labels", "merge", *(str(sim_week / f) for f in ("labels.csv", "labels-bob.csv", "labels-cy.csv")),
                   "--out", str(merged_path))
    assert proc.returncode == 0, proc.stderr
    assert "40 item(s) from 3 labeler(s) (ann, bob, cy): 38 labelled by all, 2 by some; 15 on which they disagree" \
        in proc.stdout
    merged = _sheet(merged_path)
    assert list(merged.columns) == LABEL_COLUMNS and len(merged) == 120
    assert list(merged["labeler"][:3]) == ["ann", "bob", "cy"] and merged["run_id"][0] == sheet["run_id"][0]
    labels = read_labels(merged_path)
    assert len(labels) == 118
    # κ between people, checked by hand with statsmodels on the merged sheet.
    rows = inter_human(labels)
    pairs = rows[rows["comparison"] == INTER_HUMAN]
    assert set(zip(pairs["rater_a"], pairs["rater_b"], strict=True)) == {
        ("ann", "bob"), ("ann", "cy"), ("bob", "cy")}
    hand = labels.assign(positive=labels["verdict"].isin(["met", "violated"]).astype(float))
    for x, y in (("ann", "bob"), ("ann", "cy"), ("bob", "cy")):
        row = pairs[(pairs["rater_a"] == x) & (pairs["rater_b"] == y)].set_index("item_type")
        assert row.loc["all", "cohen_kappa"] == pytest.approx(_hand_kappa(hand, x, y))
        must = hand[hand["item_type"] == "must"]
        assert row.loc["must", "cohen_kappa"] == pytest.approx(_hand_kappa(must, x, y))
    assert pairs.set_index(["rater_b", "item_type"]).loc[("bob", "all"), "raw_agreement"] == pytest.approx(0.75)
    wide = hand.pivot_table(index=["run_id", "item_index"], columns="labeler", values="positive").dropna()
    fleiss = rows[(rows["comparison"] == INTER_HUMAN_ALL) & (rows["item_type"] == "all")].iloc[0]
    assert fleiss["n_units"] == 38
    assert fleiss["fleiss_kappa"] == pytest.approx(fleiss_kappa(aggregate_raters(wide.to_numpy().astype(int))[0]))
    # calibrate --human merged.csv: the human-vs-human rows beside judge vs human, and the ceiling said.
    assert main(["calibrate", str(sim_week), "--repeat", "1", "--human", str(merged_path)]) == 0
    csv = pd.read_csv(sim_week / "calibration.csv")
    assert {"judge vs human", INTER_HUMAN, INTER_HUMAN_ALL} <= set(csv["comparison"])
    ours = csv[csv["comparison"] == INTER_HUMAN].set_index(["rater_a", "rater_b", "item_type"])
    assert len(ours) == 3 * 4
    assert ours.loc[("ann", "bob", "all"), "cohen_kappa"] == pytest.approx(
        _hand_kappa(hand, "ann", "bob"), abs=1e-9)
    md = (sim_week / "calibration.md").read_text()
    assert INTER_HUMAN in md and "the ceiling any judge can reach" in md
