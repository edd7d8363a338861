"""The rubric judge grades the control arms (placebo, aa) whenever a week ran them; the plugin arm only on request."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from skillbench.judge import select_runs
from tests.helpers.shared import TINY_WEEK

WEEK = TINY_WEEK / "20261130"


def relabel(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of the tiny week whose ``old`` runs say they ran in ``new``."""
    week = Path(shutil.copytree(WEEK, tmp_path / "week"))
    for meta in week.glob("*/metadata.json"):
        data = json.loads(meta.read_text())
        if data["condition"] == old:
            data["condition"] = new
            meta.write_text(json.dumps(data))
    return week


def test_placebo_and_aa_runs_are_graded_plugin_runs_only_on_request(tmp_path):
    plugin = {r.run_id for r in select_runs(WEEK, include_plugin=True)[0] if r.condition == "plugin"}
    assert plugin and not any(r.condition == "plugin" for r in select_runs(WEEK)[0])
    placebo = relabel(tmp_path / "p", "plugin", "placebo")
    assert {r.run_id for r in select_runs(placebo)[0] if r.condition == "placebo"} == plugin
    aa = relabel(tmp_path / "a", "plugin", "aa")
    assert {r.run_id for r in select_runs(aa)[0] if r.condition == "aa"} == plugin
