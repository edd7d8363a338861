"""Verdicts per family: a week generated for some families (``--families``) decides those, says "subset: N of M
families" and writes no history; a family left out for an invalid spec is ``INVALID_INCONCLUSIVE (invalid_spec)``
and makes the week INCOMPLETE, listed in the page's first lines. The week is a committed tiny week (two families)
cut to one family's runs, as a ``--families dates`` pass writes it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from skillbench.generation import reconcile
from tests.helpers.scorecard import score_week

WEEK = Path(__file__).resolve().parents[1] / "data" / "tiny-week" / "20261130"
KEPT, LEFT = "dates", "csv-io"
# The validator quotes the spec, which comes from a pull request: a hostile value must stay text on the page.
BAD_LINE = ("test-prompts/ghost-1.json: rubric[0].type: unknown rubric type '<img src=x onerror=alert(1)>|x' — use "
            "one of: must, bonus, avoid")


def _cut(run_dir: Path, family: str) -> list[str]:
    """Remove ``family``'s runs from the week's folders and ledgers (plan.csv keeps them); returns their ids."""
    plan = pd.read_csv(run_dir / "plan.csv")
    gone = set(plan.loc[plan["skill_family"] == family, "run_id"])
    prompts = set(plan.loc[plan["skill_family"] == family, "prompt"])
    for run in gone:
        shutil.rmtree(run_dir / run, ignore_errors=True)
    for path in run_dir.glob("*.csv"):
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
        if path.name != "plan.csv" and "run_id" in table:
            table[~table["run_id"].isin(gone)].to_csv(path, index=False)
        elif path.name == "pairs.csv":
            table[~table["prompt"].isin(prompts)].to_csv(path, index=False)
    return sorted(gone)


@pytest.fixture
def subset_week(tmp_path: Path) -> Path:
    run_dir = Path(shutil.copytree(WEEK, tmp_path / WEEK.name))
    limited = _cut(run_dir, LEFT)
    reconcile(run_dir, limited=limited, extra={"selection": {"prompts": [], "families": [KEPT]}})
    return run_dir


def test_a_subset_decides_its_families_says_subset_and_keeps_out_of_history(subset_week):
    recon = json.loads((subset_week / "reconciliation.json").read_text())
    assert recon["families"] == {LEFT: "limited", KEPT: "complete"} and recon["accounted"]
    assert recon["missing"] == [], "a limited run is never also missing"
    data, md = score_week(subset_week)
    assert data.subset_label == "subset: 1 of 2 families" and "subset: 1 of 2 families" in data.title
    assert not data.incomplete and "INCOMPLETE" not in md, "the banner agrees with reconciliation.json"
    gate = data.gate.set_index("skill_family")
    assert set(gate.index) == {KEPT}
    assert (gate["reason"] != "incomplete_reconciliation").all(), "a complete family gets its verdict"
    assert not len(data.history_rows) or data.history[data.history["run_key"] == data.run_key].empty, \
        "a part of the week feeds no later week's statistics"


def test_an_invalid_family_is_listed_first_and_decided_invalid_spec(subset_week):
    reconcile(subset_week, limited=_cut(subset_week, LEFT), invalid_families={"ghost": [BAD_LINE]},
              extra={"selection": {"prompts": [], "families": [KEPT]}})
    data, md = score_week(subset_week)
    assert data.incomplete and data.subset_label == "subset: 1 of 3 families"
    head = md.split("\n## ", 1)[0]
    assert "ghost" in data.incomplete_reasons[0] and "invalid_spec" in data.incomplete_reasons[0]
    assert "**Invalid families**" in head and "unknown rubric type" in head, "the first lines carry the line"
    assert "<img" not in md.replace("\\<img", ""), "the spec's text never becomes markup"
    assert "|x'" not in md.replace("\\|x'", ""), "nor a table cell"
    gate = data.gate.set_index(["skill_family", "model"])
    assert {m for f, m in gate.index if f == "ghost"} == set(data.models)
    assert (gate.loc["ghost", "verdict"] == "INVALID_INCONCLUSIVE (invalid_spec)").all()
    assert (gate.loc[KEPT, "reason"] != "incomplete_reconciliation").all(), "the sound family is still decided"
