"""The controls section: with-skill vs placebo beside with-skill vs no-skill, and the A/A arm as the noise floor.

The committed tiny week is copied and given the opt-in arms by duplicating an arm's runs under the new label
(run folders, manifest, scores, plan, truth and reconciliation alike, so the week stays complete): ``aa`` copied
from ``no-skill`` has a lift of exactly zero, ``placebo`` copied from ``no-skill`` gives with-skill vs placebo
the headline lift, and ``placebo`` copied from ``with-skill`` gives zero. The week's own numbers never move.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from skillbench.arms import ArmPair
from skillbench.ledgers import HISTORY_CONTROL_COLUMNS, load_week
from skillbench.scorecard import compute_scorecard, endpoint_kind, render_markdown, rubric_votes
from skillbench.scorecard._controls import accumulated_controls
from skillbench.scorecard._history import WeekHistory, as_week_history
from tests.helpers.scorecard import page_section, score_week
from tests.helpers.shared import TINY_WEEK, read_csv_rows, write_csv_rows

WEEK = "20261130"
RESAMPLES = 500
SECTION = "## Controls — placebo and A/A (the week's noise floor)"
HEADLINE = ["model", "n_pairs", "must_no", "must_with", "must_lift", "paired_lift", "must_lift_se", "ci_low",
            "ci_high", "excludes_zero"]


RATE_CASES = json.loads((Path(__file__).parents[1] / "data" / "control_rate_cases.json").read_text(encoding="utf-8"))


def _recorded(weeks: list[dict]) -> pd.DataFrame:
    """The controls sidecar of a case: one row per listed state (a model × family each)."""
    rows = [{"run_key": w["run_key"], "window_end": w["window_end"], "endpoint": w["endpoint"], "model": f"m{i}",
             "skill_family": "fam", "control": w["control"], "state": state, "reason": ""}
            for w in weeks for i, state in enumerate(w["states"])]
    return pd.DataFrame(rows, columns=list(HISTORY_CONTROL_COLUMNS))


@pytest.mark.parametrize("case", RATE_CASES["cases"], ids=lambda c: c["name"])
def test_accumulated_control_rates_match_clopper_pearson(case) -> None:
    got = accumulated_controls(_recorded(case["weeks"]), case["endpoint"], case["window_end"]).set_index("control")
    assert sorted(got.index) == sorted(case["expected"])
    for control, expected in case["expected"].items():
        for name, value in expected.items():
            assert got.at[control, name] == pytest.approx(value, abs=1e-6), (control, name)
        assert got.at[control, "method"] == "exact (Clopper–Pearson)" and got.at[control, "nominal"] == 0.05


def add_arm(run_dir: Path, source: str, arm: str) -> Path:
    """Duplicate every ``source`` run of the week as an ``arm`` run, in every file that records runs."""
    def new_id(run_id: str) -> str:
        return run_id.replace(f"-{source}-", f"-{arm}-")

    copied = []
    for name in ("manifest.csv", "scores.csv", "plan.csv"):
        header, rows = read_csv_rows(run_dir / name)
        col = {c: i for i, c in enumerate(header)}
        extra = []
        for r in rows:
            if r[col["condition"]] == source:
                dup = list(r)
                dup[col["condition"]], dup[col["run_id"]] = arm, new_id(r[col["run_id"]])
                extra.append(dup)
        if name == "manifest.csv":
            copied = [r[col["run_id"]] for r in rows if r[col["condition"]] == source]
        write_csv_rows(run_dir / name, header, rows + extra)
    header, rows = read_csv_rows(run_dir / "truth.csv")
    write_csv_rows(run_dir / "truth.csv", header, rows + [[new_id(r[0]), *r[1:]] for r in rows if r[0] in copied])
    for run_id in copied:
        folder = Path(shutil.copytree(run_dir / run_id, run_dir / new_id(run_id)))
        meta = json.loads((folder / "metadata.json").read_text(encoding="utf-8"))
        meta.update(run_id=new_id(run_id), condition=arm)
        (folder / "metadata.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    recon = json.loads((run_dir / "reconciliation.json").read_text(encoding="utf-8"))
    for key in ("expected", "observed", "written"):
        recon[key] += len(copied)
    (run_dir / "reconciliation.json").write_text(json.dumps(recon, indent=2), encoding="utf-8")
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    run["conditions"] = [*run["conditions"], arm]
    (run_dir / "run.json").write_text(json.dumps(run, indent=2), encoding="utf-8")
    return run_dir


def _score(run_dir: Path):
    return score_week(run_dir, RESAMPLES)


def _section(md: str) -> str:
    return page_section(md, SECTION)


@pytest.fixture(scope="module")
def base():
    return _score(TINY_WEEK / WEEK)


@pytest.fixture
def week(tmp_path: Path) -> Path:
    return Path(shutil.copytree(TINY_WEEK / WEEK, tmp_path / WEEK))


def test_a_week_without_control_arms_has_no_section(base) -> None:
    data, md = base
    assert data.controls is None and "Controls" not in md and "controls_lift" not in data.frames()


def test_aa_and_placebo_beside_the_headline_lift(week: Path, base) -> None:
    add_arm(add_arm(week, "no-skill", "aa"), "no-skill", "placebo")
    data, md = _score(week)
    base_data, base_md = base
    assert not data.incomplete and data.coverage["graded"].sum() == base_data.coverage["graded"].sum() + 16
    # The week's own numbers never move; the per-cell table gains the control arms.
    pd.testing.assert_frame_equal(data.lift, base_data.lift)
    pd.testing.assert_frame_equal(data.gate, base_data.gate)
    assert data.controls.arms == ("placebo", "aa")
    lift = data.controls.lift.set_index(["comparison", "model"])
    assert list(dict.fromkeys(lift.index.get_level_values(0))) == [
        "with-skill vs no-skill", "with-skill vs placebo", "aa vs no-skill"]
    headline = base_data.lift.set_index("model")[HEADLINE[1:]]
    for comparison in ("with-skill vs no-skill", "with-skill vs placebo"):  # placebo = a copy of no-skill
        pd.testing.assert_frame_equal(lift.loc[comparison][HEADLINE[1:]], headline)
    pd.testing.assert_frame_equal(lift.loc["with-skill vs no-skill"][["boot_low", "boot_high"]],
                                  base_data.uncertainty.set_index("model").loc[["sonnet", "haiku"],
                                                                               ["boot_low", "boot_high"]])
    aa = lift.loc["aa vs no-skill"]
    assert aa["must_lift"].eq(0).all() and aa["paired_lift"].eq(0).all() and aa["must_lift_se"].eq(0).all()
    assert aa["n_pairs"].tolist() == [2, 2] and not aa["excludes_zero"].any()
    section = _section(md)
    pad = " " * 19
    assert f"| aa vs no-skill         | sonnet | 2         | 0.583 → 0.583{pad}| +0.000 ± 0.000 |" in section
    assert f"| with-skill vs placebo  | haiku  | 2         | 0.333 → 0.667{pad}| +0.333 ± 0.333 |" in section
    # The A/A rows follow the placebo's in the gate table too (the lift table's order).
    assert section.index("| with-skill vs placebo | csv-io") < section.index("| aa vs no-skill        | csv-io")
    cells = md.split("## Per-cell metrics", 1)[1].split("\n## ", 1)[0]
    assert "| sonnet | placebo " in cells and "| haiku  | aa " in cells
    # In the simulation check the copied arms agree with their truth like the arm they copy.
    act = data.simulation.activation.set_index("condition")
    assert act.at["aa", "agreement"] == 1.0 and not data.disagrees_with_truth


def test_the_aa_verdict_comes_from_the_rubric_votes(week: Path) -> None:
    """Every rep of aa ties its no-skill copy: one tie per prompt, n = 1 per family × model (underpowered)."""
    add_arm(week, "no-skill", "aa")
    data, md = _score(week)
    votes = rubric_votes(data.prompt_reps, data.manifest, ArmPair(treatment="aa", control="no-skill"))
    assert len(votes) == 8 and votes["outcome"].eq("T").all()
    gate = data.controls.gate
    assert gate["comparison"].eq("aa vs no-skill").all() and len(gate) == 4
    assert gate["verdict"].eq("INVALID_INCONCLUSIVE (underpowered)").all()  # no activation contract for A/A
    assert gate["evidence"].eq("n=1; 0W/1T/0L; p=1.00; net +0.0%").all() and gate["dormancy_activations"].eq(0).all()
    assert data.controls.arms == ("aa",)
    section = _section(md)
    assert "`aa vs no-skill`: two arms with no skill" in section and "`with-skill vs placebo`" not in section
    assert "| aa vs no-skill | dates        | sonnet | INVALID_INCONCLUSIVE (underpowered) |" in section
    # The week's control verdicts go to the history's sidecar; inconclusive ones make no rate (no line yet).
    recorded = data.recorded.controls
    assert len(recorded) == 4 and set(recorded["control"]) == {"aa"} and set(recorded["run_key"]) == {WEEK}
    assert recorded["state"].eq("INVALID_INCONCLUSIVE").all() and recorded["endpoint"].eq(data.endpoint).all()
    assert "false-pass rate" not in section


def test_the_aa_false_pass_rate_accumulates_over_recorded_weeks(week: Path) -> None:
    """Earlier weeks' A/A records in the history give the page its rate; a week of another endpoint kind does not."""
    add_arm(week, "no-skill", "aa")
    ledgers = load_week(week)
    kind = endpoint_kind(ledgers.manifest)
    earlier = [{"run_key": "w1", "window_end": "20261102T120000Z", "endpoint": kind, "control": "aa",
                "states": ["VALID_NO_CHANGE"] * 6 + ["VALID_PASS"]},
               {"run_key": "w2", "window_end": "20261109T120000Z", "endpoint": kind, "control": "aa",
                "states": ["VALID_NO_CHANGE"] * 5},
               {"run_key": "r1", "window_end": "20261110T120000Z", "endpoint": "other", "control": "aa",
                "states": ["VALID_PASS"] * 5}]
    empty = as_week_history(None)
    history = WeekHistory(empty.rows, empty.prompts, _recorded(earlier))
    data = compute_scorecard(ledgers, history=history, n_resamples=50)
    section = _section(render_markdown(data))
    # 1 pass of 12 decided records (this week's four are inconclusive): statsmodels' beta interval [0.0021, 0.3848]
    assert (f"- A/A false-pass rate over 12 records in 2 {data.endpoint} weeks: **0.083** [0.002, 0.385] "
            "(nominal 5 %)") in section
    assert "Clopper–Pearson exact 95 % interval" in section


def test_a_placebo_as_good_as_the_skill_has_no_lift(week: Path) -> None:
    add_arm(week, "with-skill", "placebo")
    data, md = _score(week)
    lift = data.controls.lift.set_index(["comparison", "model"]).loc["with-skill vs placebo"]
    assert lift["must_lift"].eq(0).all() and lift["n_pairs"].tolist() == [2, 2]
    gate = data.controls.gate.set_index(["skill_family", "model"])
    # The placebo's verdict keeps the activation contract: with-skill's dormancy run still fired on dates × sonnet.
    assert gate.at[("dates", "sonnet"), "verdict"] == "VALID_NO_CHANGE (activation_contract_failed)"
    assert gate.at[("csv-io", "haiku"), "evidence"] == "n=1; 0W/1T/0L; p=1.00; net +0.0%"
    assert "`with-skill vs placebo`: what the skill's content adds" in _section(md)


def test_a_control_arm_the_judge_did_not_grade_is_said_not_shown_as_zero(week: Path) -> None:
    """The judge grades a control arm whenever it ran (``judge._answers.graded_arm``): ungraded, the week is not
    finished, and the section says so instead of showing a zero lift or an n=0 verdict."""
    add_arm(week, "no-skill", "aa")
    header, rows = read_csv_rows(week / "scores.csv")
    write_csv_rows(week / "scores.csv", header, [r for r in rows if r[header.index("condition")] != "aa"])
    data, md = _score(week)
    assert data.incomplete and "8 gradeable runs are not graded yet" in data.incomplete_reasons[0]
    assert set(data.dropped["condition"]) == {"aa"}
    assert data.controls.arms == ("aa",) and data.controls.ungraded == ("aa",)
    assert data.controls.gate.empty and set(data.controls.lift["comparison"]) == {"with-skill vs no-skill"}
    section = _section(md)
    assert "- ⚠ ran but not graded: `aa` — no run of it has rubric scores" in section
    assert "| aa vs no-skill" not in section
