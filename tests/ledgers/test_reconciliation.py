"""The one reconciliation rule: generation's reconciliation.json and the scorecard's plan fallback agree."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from skillbench.generation import reconcile
from skillbench.ledgers import PassAccount, Reconciliation, read_reconciliation, reconcile_from_plan, reconcile_runs

PLANNED = ["r1", "r2", "r3", "r4"]


def test_every_planned_run_run_and_written_once_is_complete():
    rec = reconcile_runs(PLANNED, observed=PLANNED, written=PLANNED, run_key="wk")
    assert rec.complete and rec.accounted and rec.is_complete
    assert (rec.expected, rec.observed, rec.written) == (4, 4, 4)


@pytest.mark.parametrize(("kwargs", "accounted", "listed"), [
    ({"observed": PLANNED[:3], "written": PLANNED[:3]}, False, {"missing": ["r4"]}),
    ({"observed": PLANNED[:3], "written": PLANNED[:3], "capped": ["r4"]}, True, {"missing": ["r4"], "capped": ["r4"]}),
    ({"observed": PLANNED[:3], "written": PLANNED[:3], "limited": ["r4"]}, True, {"limited": ["r4"]}),
    ({"observed": [*PLANNED, "x"], "written": [*PLANNED, "x"]}, False, {"unexpected": ["x"]}),
    ({"observed": PLANNED, "written": [*PLANNED, "r2"]}, False, {"duplicate": ["r2"]}),
    ({"observed": PLANNED, "written": PLANNED[:3]}, False, {"unwritten": ["r4"]}),
    ({"observed": PLANNED, "written": PLANNED, "stopped_legs": ["haiku|with-skill"]}, False,
     {"stopped_legs": ["haiku|with-skill"]}),
])
def test_what_is_missing_is_listed_and_never_complete(kwargs, accounted, listed):
    kept = {k: v for k, v in kwargs.items() if k in ("capped", "limited", "not_started", "stopped_legs")}
    rec = reconcile_runs(PLANNED, **{k: v for k, v in kwargs.items() if k not in kept}, account=PassAccount(**kept))
    assert rec.accounted is accounted
    assert not rec.complete and not rec.is_complete
    for name, value in listed.items():
        assert getattr(rec, name) == value


def test_a_complete_flag_that_disagrees_with_its_lists_fails_closed():
    rec = Reconciliation(expected=2, observed=1, written=1, missing=["r2"], complete=True)
    assert not rec.is_complete


def _week(tmp_path, planned, written):
    pd.DataFrame({"run_id": planned}).to_csv(tmp_path / "plan.csv", index=False)
    return pd.DataFrame({"run_id": written})


def test_a_week_without_reconciliation_json_is_reconciled_from_its_plan(tmp_path):
    manifest = _week(tmp_path, PLANNED, PLANNED[:3])
    rec = reconcile_from_plan(tmp_path, manifest)
    assert rec.missing == ["r4"] and not rec.is_complete and rec.model_extra["note"] == "no reconciliation.json"
    same = reconcile_runs(PLANNED, observed=PLANNED[:3], written=PLANNED[:3], note="no reconciliation.json")
    assert rec == same, "the fallback is the same rule as generation's"


def test_qdrants_layout_has_no_plan_and_is_not_reconciled(tmp_path):
    assert reconcile_from_plan(tmp_path, pd.DataFrame({"run_id": ["a"]})) is None


def test_generation_writes_the_rule_in_the_documented_key_order(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"run_key": "wk1"}))
    pd.DataFrame({"run_id": PLANNED}).to_csv(tmp_path / "plan.csv", index=False)
    pd.DataFrame({"run_id": PLANNED[:2]}).to_csv(tmp_path / "manifest.csv", index=False)
    report = reconcile(tmp_path, limited=PLANNED[2:])
    on_disk = json.loads((tmp_path / "reconciliation.json").read_text())
    assert on_disk == report
    assert list(on_disk) == ["run_key", "expected", "observed", "written", "missing", "unexpected", "duplicate",
                             "unwritten", "capped", "limited", "not_started", "stopped_legs", "accounted", "complete"]
    # no run folder holds a finished transcript: every planned run is missing but the two limited ones, which are
    # listed as limited only (kept for a later pass, never both)
    assert on_disk["run_key"] == "wk1" and on_disk["observed"] == 0 and on_disk["unwritten"] == []
    assert on_disk["missing"] == PLANNED[:2] and on_disk["limited"] == PLANNED[2:] and not on_disk["accounted"]
    assert read_reconciliation(tmp_path / "reconciliation.json") == Reconciliation.model_validate(report)


# -- per family: a pass over some families decides those ------------------------------------------------------
FAMILY_OF = {"a1": "A", "a2": "A", "b1": "B", "b2": "B", "c1": "C", "c2": "C"}


def test_each_family_gets_its_own_state_and_a_limited_run_is_never_also_missing():
    rec = reconcile_runs(FAMILY_OF, observed=["a1", "a2", "c1"], written=["a1", "a2", "c1"],
                         account=PassAccount(limited=["b1", "b2"]))
    assert rec.families == {"A": "complete", "B": "limited", "C": "incomplete"}
    assert rec.missing == ["c2"] and rec.limited == ["b1", "b2"], "a limited run is listed once, as limited"
    assert [rec.family_complete(f) for f in "ABC"] == [True, False, False]
    assert not rec.accounted and not rec.is_complete
    assert rec.to_json()["families"] == rec.families


def test_a_subset_pass_is_accounted_for_and_decides_its_families():
    rec = reconcile_runs(FAMILY_OF, observed=["a1", "a2"], written=["a1", "a2"],
                         account=PassAccount(limited=["b1", "b2", "c1", "c2"]), note=None)
    assert rec.accounted and not rec.complete and rec.missing == []
    assert rec.family_complete("A") and not rec.family_complete("B")
    assert not rec.is_subset, "without a recorded selection the limited runs are a --limit, not a subset"
    selected = Reconciliation.model_validate({**rec.to_json(), "selection": {"families": ["A"], "prompts": []}})
    assert selected.is_subset and selected.family_complete("A")


@pytest.mark.parametrize("damage", [{"unexpected": ["x"]}, {"duplicate": ["a1"]}, {"unwritten": ["a2"]},
                                    {"findings": ["manifest.csv lists 1 runs, reconciliation.json says 2"]}])
def test_damage_no_family_can_be_held_apart_from_decides_no_family(damage):
    rec = reconcile_runs(FAMILY_OF, observed=list(FAMILY_OF), written=list(FAMILY_OF))
    assert all(rec.family_complete(f) for f in "ABC")
    damaged = rec.model_copy(update=damage)
    assert not any(damaged.family_complete(f) for f in "ABC")


def test_an_invalid_family_is_recorded_and_the_week_is_never_complete():
    lines = ["tests/p/d/eval.yaml: scenarios[0].assertions[0].type: unknown assertion type 'x' — use one of: …"]
    rec = reconcile_runs(FAMILY_OF, observed=list(FAMILY_OF), written=list(FAMILY_OF),
                         account=PassAccount(invalid_families={"D": lines}))
    assert rec.complete and not rec.is_complete, "every planned run ran, but a family of the suite never did"
    assert rec.family_complete("A") and not rec.family_complete("D")
    assert rec.to_json()["invalid_families"] == {"D": lines}


def test_a_reconciliation_that_does_not_say_per_family_decides_for_the_whole_week():
    old = Reconciliation(expected=2, observed=1, written=1, limited=["r2"], accounted=True, complete=False)
    assert not old.family_complete("A"), "an older week's file: complete only when the week is"
    assert "families" not in reconcile_runs(PLANNED, observed=PLANNED, written=PLANNED).to_json()


def test_a_lost_reconciliation_keeps_the_invalid_families_of_run_json(tmp_path):
    manifest = _week(tmp_path, PLANNED, PLANNED)
    (tmp_path / "run.json").write_text(json.dumps({"run_key": "wk", "invalid_families": {"D": ["line"]}}))
    rec = reconcile_from_plan(tmp_path, manifest)
    assert rec.invalid_families == {"D": ["line"]} and not rec.is_complete


def test_generation_records_the_invalid_families_and_its_summary_line_names_them(tmp_path):
    from skillbench.generation import summary_line

    (tmp_path / "run.json").write_text(json.dumps({"run_key": "wk1"}))
    pd.DataFrame({"run_id": PLANNED, "prompt": PLANNED, "skill_family": ["A", "A", "B", "B"], "skill_leaf": "x",
                  "model": "haiku", "condition": "no-skill", "rep": 1, "dormancy": 0,
                  "order": range(4)}).to_csv(tmp_path / "plan.csv", index=False)
    report = reconcile(tmp_path, limited=PLANNED[2:], invalid_families={"C": ["tests/p/c/eval.yaml: … — fix it"]})
    assert report["families"] == {"A": "incomplete", "B": "limited"}, "no run folder finished: A's runs are missing"
    assert report["invalid_families"] == {"C": ["tests/p/c/eval.yaml: … — fix it"]}
    assert summary_line(report).endswith("; 1 invalid family (C)")
