"""The simulation check: a simulated week's measurement against its ``truth.csv``.

On the committed tiny week (``tests/data/tiny-week/20261130``, simulated, 2 models × 2 scored prompts × 2 reps)
the check agrees with the truth, with pinned numbers; a copy whose judge verdicts or truth are tampered with
raises the flag in the title, the notes and the section; a week without a truth (or not simulated) has no
section, and the rest of its page is byte for byte the same.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pandas as pd
import pytest

from skillbench.arms import ArmPair
from skillbench.ledgers import TruthRow, final_truth, load_week, read_truth
from skillbench.ledgers._columns import LEGACY_TRUTH_COLUMNS, TRUTH_COLUMNS
from skillbench.scorecard import decide
from skillbench.scorecard._compute import DISAGREES_WITH_TRUTH
from skillbench.scorecard._simulation import gate_against_truth
from tests.helpers.scorecard import page_section, score_week
from tests.helpers.shared import TINY_WEEK, read_csv_rows, write_csv_rows

WEEK = "20261130"
RESAMPLES = 500
SECTION = "## Simulation check — the measurement against the simulation's truth"


def _score(run_dir: Path):
    return score_week(run_dir, RESAMPLES)


def _section(md: str, heading: str = SECTION) -> str:
    return page_section(md, heading)


@pytest.fixture(scope="module")
def committed():
    return _score(TINY_WEEK / WEEK)


@pytest.fixture
def week(tmp_path: Path) -> Path:
    return Path(shutil.copytree(TINY_WEEK / WEEK, tmp_path / WEEK))


# --- the truth's reader -------------------------------------------------------------------------------------------


def test_the_truth_columns_are_declared_once_and_the_sim_writes_them() -> None:
    assert [f.name for f in dataclasses.fields(TruthRow)] == list(TRUTH_COLUMNS)
    assert LEGACY_TRUTH_COLUMNS == TRUTH_COLUMNS[:-1]


def test_read_truth_types_a_legacy_file_and_none_without_one(tmp_path: Path) -> None:
    truth = read_truth(TINY_WEEK / WEEK)  # written before checks: no check_id column
    assert truth is not None and list(truth.columns) == list(TRUTH_COLUMNS) and len(truth) == 160
    assert truth["check_id"].eq("").all() and truth["attempt"].dtype == "int64"
    assert read_truth(tmp_path) is None


def test_only_the_manifests_last_attempt_counts(week: Path) -> None:
    """A retried run keeps every attempt's rows; the manifest's attempt count says which one is the answer."""
    header, rows = read_csv_rows(week / "truth.csv")
    run = rows[0][0]
    stale = [[*r[:1], "2", *r[2:-1], "covered"] for r in rows if r[0] == run]  # an older pass's attempt 2
    write_csv_rows(week / "truth.csv", header, rows + stale)
    ledgers = load_week(week)
    final = final_truth(read_truth(week), ledgers.manifest)
    assert len(final) == 160 and final.loc[final["run_id"].eq(run), "attempt"].eq(1).all()
    manifest = ledgers.manifest.assign(attempts=ledgers.manifest["attempts"].where(
        ledgers.manifest["run_id"].ne(run), 2))
    final = final_truth(read_truth(week), manifest)
    assert final.loc[final["run_id"].eq(run), "decided"].eq("covered").all()


# --- the committed week: the check agrees with its truth -----------------------------------------------------------


def _true_lift_by_hand(run_dir: Path) -> pd.Series:
    """The true paired lift from the raw files: item → rep → prompt means, then with-skill − no-skill."""
    truth = pd.read_csv(run_dir / "truth.csv")
    manifest = pd.read_csv(run_dir / "manifest.csv")
    rows = truth[truth["item_type"].eq("must")].merge(manifest[["run_id", "condition", "model", "rep", "dormancy"]],
                                                     on="run_id", suffixes=("_truth", ""))
    rows = rows[rows["condition"].isin(["no-skill", "with-skill"]) & rows["dormancy"].eq(0)]
    rep = rows.assign(c=rows["decided"].eq("covered")).groupby(["model", "prompt", "condition", "rep"])["c"].mean()
    prompt = rep.groupby(["model", "prompt", "condition"]).mean().unstack("condition")
    return (prompt["with-skill"] - prompt["no-skill"]).groupby("model").mean()


def test_the_true_lift_is_the_truths_own(committed) -> None:
    data, _ = committed
    lift = data.simulation.lift.set_index("model")["true_lift"]
    pd.testing.assert_series_equal(lift.sort_index(), _true_lift_by_hand(TINY_WEEK / WEEK).sort_index(),
                                   check_names=False)


def test_pinned_lift_against_truth(committed) -> None:
    data, _ = committed
    lift = data.simulation.lift.set_index("model")
    assert list(lift.index) == ["sonnet", "haiku"] and lift["n_pairs"].tolist() == [2, 2]
    assert lift.at["sonnet", "true_lift"] == pytest.approx(0.25)
    assert lift.at["sonnet", "measured_lift"] == pytest.approx(0.25)
    assert lift.at["haiku", "true_lift"] == pytest.approx(5 / 12)  # the judge missed one covered must
    assert lift.at["haiku", "measured_lift"] == pytest.approx(1 / 3)
    assert (lift.at["sonnet", "ci_low"], lift.at["sonnet", "ci_high"]) == pytest.approx((-0.80885, 1.30885), abs=1e-5)
    assert (lift.at["haiku", "ci_low"], lift.at["haiku", "ci_high"]) == pytest.approx((-3.90207, 4.56874), abs=1e-5)
    assert lift["t_covers"].tolist() == [True, True]
    # The bootstrap's own interval (its method is stats.py's business) is read, not re-derived.
    boot = data.uncertainty.set_index("model")
    for model in lift.index:
        low, high = boot.at[model, "boot_low"], boot.at[model, "boot_high"]
        expected = pd.NA if pd.isna(low) else bool(low <= lift.at[model, "true_lift"] <= high)
        assert lift.at[model, "boot_covers"] is expected or lift.at[model, "boot_covers"] == expected


def test_pinned_judge_accuracy_activation_and_gate(committed) -> None:
    data, _ = committed
    sim = data.simulation
    judge = sim.judge.set_index("item_type")
    assert judge[["n", "agree", "truth_omitted", "false_met"]].to_dict("index") == {
        "must": {"n": 48, "agree": 47, "truth_omitted": 20, "false_met": 1},
        "bonus": {"n": 16, "agree": 16, "truth_omitted": 12, "false_met": 0},
        "avoid": {"n": 16, "agree": 15, "truth_omitted": 11, "false_met": 0},
    }
    assert judge["false_met_rate"].tolist() == pytest.approx([0.05, 0.0, 0.0])
    assert not judge["below_floor"].any() and sim.unmatched == 0
    act = sim.activation.set_index("condition")
    assert act[["runs", "agree"]].to_dict("index") == {"no-skill": {"runs": 8, "agree": 8},
                                                      "plugin": {"runs": 12, "agree": 12},
                                                      "with-skill": {"runs": 12, "agree": 12}}
    gate = sim.gate.set_index(["skill_family", "model"])
    assert gate["agrees"].all() and len(gate) == 4
    assert gate.at[("dates", "sonnet"), "truth"] == "VALID_NO_CHANGE (activation_contract_failed)"
    assert gate.at[("csv-io", "haiku"), "truth"] == "INVALID_INCONCLUSIVE (underpowered)"
    assert gate["truth_evidence"].eq("n=1; 1W/0T/0L; p=0.500; net +100.0%").all()
    assert sim.reasons == [] and not data.disagrees_with_truth


def test_the_section_renders_after_the_gate_and_says_it_agrees(committed) -> None:
    data, md = committed
    assert DISAGREES_WITH_TRUTH not in md and data.title == f"Weekly Skill Scorecard — {WEEK} — simulated endpoint"
    order = [md.index(h) for h in ("## Preference gate", SECTION, "## Coverage")]
    assert order == sorted(order)
    section = _section(md)
    assert "**The measurement agrees with the truth within its stated uncertainty.**" in section
    assert "| sonnet | 2         | +0.250    | +0.250        | [-0.809, +1.309] | yes " in section
    assert "| haiku  | 2         | +0.417    | +0.333        | [-3.902, +4.569] | yes " in section
    assert "| must      | 48     | 47      | 0.979    | 20            | 1         | 0.050 " in section
    assert "| with-skill | 12   | 12                 | 1.000     |" in section
    frames = data.frames()
    assert {"simulation_lift", "simulation_judge", "simulation_activation", "simulation_gate"} <= set(frames)


# --- tampered weeks raise the flag -------------------------------------------------------------------------------


def _flip_no_skill_musts(run_dir: Path) -> int:
    """Every graded must of the no-skill arm gets the opposite verdict (with its credit): a broken judge."""
    header, rows = read_csv_rows(run_dir / "scores.csv")
    col = {c: i for i, c in enumerate(header)}
    flipped = 0
    for r in rows:
        if r[col["condition"]] == "no-skill" and r[col["item_type"]] == "must":
            met = r[col["verdict"]] == "met"
            r[col["verdict"]], r[col["credit"]], r[col["contribution"]] = (
                ("missing", "0.0", "0.0") if met else ("met", "1.0", "1.0"))
            r[col["evidence_quote"]] = "" if met else r[col["item_text"]]
            flipped += 1
    write_csv_rows(run_dir / "scores.csv", header, rows)
    return flipped


def test_a_judge_with_flipped_verdicts_is_flagged(week: Path) -> None:
    assert _flip_no_skill_musts(week) == 24
    data, md = _score(week)
    judge = data.simulation.judge.set_index("item_type")
    # The judge's one must error was a no-skill one: flipping the arm rights it and wrongs the other 23.
    assert judge.at["must", "agree"] == 48 - 23 and bool(judge.at["must", "below_floor"])
    assert not judge.loc[["bonus", "avoid"], "below_floor"].any()
    assert data.disagrees_with_truth and data.title.endswith(DISAGREES_WITH_TRUTH)
    assert md.splitlines()[0].endswith(DISAGREES_WITH_TRUTH)
    note = "> **MEASUREMENT DISAGREES WITH TRUTH** — judge accuracy credibly below 90% on must items"
    assert note in md
    assert "**⚠ The measurement disagrees with the truth beyond its stated uncertainty:**" in _section(md)
    assert "| must      | 48     | 25      | 0.521    | 20            | 13        | 0.650          | **yes**" in md
    # The intervals at two prompts are wide enough to hold the damaged lift: the judge's accuracy is what catches it.
    assert data.simulation.lift["t_covers"].all()


def _set_truth(run_dir: Path, model: str, decided: dict[str, str]) -> None:
    """Rewrite ``model``'s scored must rows in truth.csv: condition → the decision every must gets."""
    header, rows = read_csv_rows(run_dir / "truth.csv")
    col = {c: i for i, c in enumerate(header)}
    for r in rows:
        for condition, value in decided.items():
            if f"-{model}-{condition}-" in r[col["run_id"]] and r[col["item_type"]] == "must" \
                    and not r[col["prompt"]].startswith("dormancy"):
                r[col["decided"]] = value
    write_csv_rows(run_dir / "truth.csv", header, rows)


def test_a_truth_outside_the_interval_is_flagged(week: Path) -> None:
    """Sonnet's true lift shifted to −1 (the skill covers nothing, the baseline everything): far outside its t
    interval [−0.81, +1.31]."""
    _set_truth(week, "sonnet", {"with-skill": "omitted", "no-skill": "covered"})
    data, md = _score(week)
    lift = data.simulation.lift.set_index("model")
    assert lift.at["sonnet", "true_lift"] == pytest.approx(-1.0) and lift.at["sonnet", "t_covers"] == False  # noqa: E712
    assert bool(lift.at["haiku", "t_covers"])
    assert "the t interval misses the true lift for sonnet" in data.simulation.reasons
    assert data.disagrees_with_truth and md.splitlines()[0].endswith(DISAGREES_WITH_TRUTH)
    assert "| sonnet | 2         | -1.000    | +0.250        | [-0.809, +1.309] | **no** " in _section(md)


def test_a_gate_verdict_the_truth_does_not_imply_is_flagged(week: Path) -> None:
    """In truth no dormancy run reached the skill, so the measured activation-contract failure is the signals'
    error, not the skill's."""
    header, rows = read_csv_rows(week / "truth.csv")
    col = {c: i for i, c in enumerate(header)}
    for r in rows:
        if r[col["prompt"]].startswith("dormancy"):
            r[col["activation_route"]] = "none"
    write_csv_rows(week / "truth.csv", header, rows)
    data, md = _score(week)
    gate = data.simulation.gate.set_index(["skill_family", "model"])
    assert gate.at[("dates", "sonnet"), "measured"] == "VALID_NO_CHANGE (activation_contract_failed)"
    assert gate.at[("dates", "sonnet"), "truth"] == "INVALID_INCONCLUSIVE (underpowered)"
    assert not bool(gate.at[("dates", "sonnet"), "agrees"]) and gate["agrees"].sum() == 3
    assert bool(gate.at[("dates", "sonnet"), "contradicts"])  # no vote explains a contract the truth does not share
    assert data.simulation.reasons == [
        "the gate's verdict differs from the truth-implied one by more than one stimulus vote for dates × sonnet"]
    act = data.simulation.activation.set_index("condition")
    assert act.at["plugin", "agree"] == 11  # the measured file_read on sonnet's dormancy prompt
    assert md.splitlines()[0].endswith(DISAGREES_WITH_TRUTH)


# --- only for simulated weeks with a truth -------------------------------------------------------------------------


def test_without_a_truth_there_is_no_section_and_nothing_else_changes(week: Path, committed) -> None:
    _, with_truth = committed
    (week / "truth.csv").unlink()
    data, md = _score(week)
    assert data.simulation is None and "simulation_lift" not in data.frames()
    assert "Simulation check" not in md
    start = with_truth.index(SECTION)
    end = with_truth.index("\n## ", start + 1)
    assert md == with_truth[:start] + with_truth[end + 1:]


def test_a_week_not_on_the_simulated_endpoint_has_no_check(week: Path) -> None:
    header, rows = read_csv_rows(week / "manifest.csv")
    col = header.index("endpoint")
    write_csv_rows(week / "manifest.csv", header, [[*r[:col], "unknown", *r[col + 1:]] for r in rows])
    data, md = _score(week)
    assert data.endpoint == "unknown" and data.simulation is None and "Simulation check" not in md


# --- the gate's resolution: one vote off is shown, not flagged -----------------------------------------------------


def _gate_cell(measured: tuple[int, int, int], truth: tuple[int, int, int]) -> pd.Series:
    """One family × model: the measured gate on ``measured`` W/T/L votes against truth votes ``truth``."""
    n = sum(measured)
    manifest = pd.DataFrame({"prompt": [f"p{i}" for i in range(n)], "skill_family": "f", "model": "m",
                             "condition": "with-skill", "dormancy": False, "run_id": [f"r{i}" for i in range(n)],
                             "skill_activation": "skill_tool"})
    outcomes = [o for o, k in zip("WTL", truth, strict=True) for _ in range(k)]
    votes = pd.DataFrame({"skill_family": "f", "model": "m", "prompt": manifest["prompt"], "rep": 1,
                          "outcome": outcomes})
    dec = decide(*measured)
    gate = pd.DataFrame([{"skill_family": "f", "model": "m", "state": dec.state, "reason": dec.reason,
                          "verdict": dec.verdict, "n": dec.n, "wins": measured[0], "ties": measured[1],
                          "losses": measured[2], "p_value": dec.p_value, "net_win": dec.net_win, "judge_errors": 0,
                          "dormancy_activations": 0, "evidence": dec.evidence}])
    truth = pd.DataFrame({"run_id": manifest["run_id"], "activation_route": "skill_tool"})
    return gate_against_truth(gate, votes, manifest, truth, ArmPair()).iloc[0]


def test_a_verdict_one_vote_from_the_truths_is_the_gates_resolution_not_a_flag() -> None:
    near = _gate_cell((4, 4, 0), (5, 3, 0))  # p = 0.0625 against 0.03125: one tie that was a win
    assert (near["measured"], near["truth"]) == ("VALID_NO_CHANGE (not_significant)", "VALID_PASS")
    assert not near["agrees"] and near["one_vote"] and not near["contradicts"]
    far = _gate_cell((3, 3, 2), (7, 1, 0))  # the judge's votes cannot be the truth's
    assert far["contradicts"] and not far["one_vote"]
    same = _gate_cell((6, 1, 0), (6, 1, 0))
    assert same["agrees"] and not same["contradicts"]
