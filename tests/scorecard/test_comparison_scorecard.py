"""A comparison week's scorecard: the week's (treatment, control) pair drives the lift, the costs and the gate,
the page names the pair, and a comparison never reads or writes the weekly history.

The committed tiny week is copied twice: once as it is (a weekly run), once relabelled as a comparison
(``with-skill`` → ``with-skill@b``, ``no-skill`` → ``with-skill@a``, ``run.json`` arms b vs a). Every number must
be the weekly run's: only the labels changed, and the pair says which arm is which.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from skillbench.cli import main
from skillbench.ledgers import load_week
from skillbench.scorecard import default_history_path, endpoints_path, write_scorecard
from skillbench.weekly import scorecard_week
from tests.helpers.shared import TINY_WEEK

KEY = "20261130"
RELABEL = {"with-skill": "with-skill@b", "no-skill": "with-skill@a"}
ARMS = {"treatment": "with-skill@b", "control": "with-skill@a", "reference": ""}
RESAMPLES = 300
LIFT_COLUMNS = ["model", "must_no", "must_with", "must_lift", "n_pairs", "paired_lift", "sd_d", "must_lift_se",
                "ci_low", "ci_high", "excludes_zero", "bonus_delta", "avoid_delta", "composite_lift", "cost_delta",
                "turns_delta"]
GATE_COUNTS = ["skill_family", "model", "verdict", "n", "wins", "ties", "losses", "p_value", "net_win",
               "judge_errors", "dormancy_activations"]


def _relabel_csv(path: Path, mapping: dict[str, str]) -> None:
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields, rows = list(reader.fieldnames or []), list(reader)
    for row in rows:
        row["condition"] = mapping.get(row["condition"], row["condition"])
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def relabel_week(run_dir: Path, mapping: dict[str, str], arms: dict[str, str]) -> Path:
    """Rename the week's conditions everywhere they are recorded and record ``arms`` in ``run.json``."""
    for name in ("manifest.csv", "scores.csv", "plan.csv"):
        if (run_dir / name).is_file():
            _relabel_csv(run_dir / name, mapping)
    for meta_path in run_dir.glob("*/metadata.json"):
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        meta["condition"] = mapping.get(meta["condition"], meta["condition"])
        meta_path.write_text(json.dumps(meta, indent=2), encoding="utf-8")
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    run["conditions"] = [mapping.get(c, c) for c in run["conditions"]]
    run["arms"] = arms
    (run_dir / "run.json").write_text(json.dumps(run, indent=2), encoding="utf-8")
    return run_dir


@pytest.fixture
def weeks(tmp_path: Path) -> tuple[Path, Path]:
    """(the weekly run as committed, the same week relabelled as a comparison b vs a), each in its own weekly/."""
    default = Path(shutil.copytree(TINY_WEEK / KEY, tmp_path / "default" / "weekly" / KEY))
    compared = Path(shutil.copytree(TINY_WEEK / KEY, tmp_path / "compared" / "weekly" / KEY))
    return default, relabel_week(compared, RELABEL, ARMS)


def test_the_pair_drives_lift_costs_and_gate_not_the_label_text(weeks: tuple[Path, Path]) -> None:
    default, compared = weeks
    assert load_week(compared).arms.lift_arms == ("with-skill@a", "with-skill@b")
    base = write_scorecard(default, n_resamples=RESAMPLES).data
    comp = write_scorecard(compared, n_resamples=RESAMPLES).data
    assert base.lift["must_lift"].notna().all() and (base.lift["n_pairs"] >= 2).all()
    pd.testing.assert_frame_equal(comp.lift[LIFT_COLUMNS], base.lift[LIFT_COLUMNS])
    pd.testing.assert_frame_equal(comp.paired, base.paired)
    pd.testing.assert_frame_equal(comp.uncertainty, base.uncertainty)
    base_frames, comp_frames = base.frames(), comp.frames()
    assert not base_frames["prompt_cost_deltas"].empty
    pd.testing.assert_frame_equal(comp_frames["prompt_cost_deltas"], base_frames["prompt_cost_deltas"])
    assert base.gate is not None and comp.gate is not None and int(base.gate["n"].sum()) > 0
    pd.testing.assert_frame_equal(comp.gate[GATE_COUNTS], base.gate[GATE_COUNTS])
    # The treatment is the with-skill arm of the activation tables and trigger health.
    assert comp.activation_counts == base.activation_counts and base.activation_counts["with_skill_runs"] > 0
    pd.testing.assert_frame_equal(comp.trigger_health, base.trigger_health)
    assert int(comp.coverage["graded"].sum()) == int(base.coverage["graded"].sum()) > 0
    assert comp.dropped.empty and base.dropped.empty


def test_swapping_the_pair_negates_the_lift(weeks: tuple[Path, Path]) -> None:
    default, compared = weeks
    run = json.loads((compared / "run.json").read_text())
    run["arms"] = {"treatment": "with-skill@a", "control": "with-skill@b"}
    (compared / "run.json").write_text(json.dumps(run))
    base = write_scorecard(default, n_resamples=RESAMPLES).data.lift.set_index("model")
    swapped = write_scorecard(compared, n_resamples=RESAMPLES).data.lift.set_index("model")
    for column in ("must_lift", "paired_lift", "composite_lift", "cost_delta", "turns_delta"):
        pd.testing.assert_series_equal(swapped[column], -base[column], check_names=False)
    pd.testing.assert_series_equal(swapped["must_with"], base["must_no"], check_names=False)


def test_the_page_names_the_pair(weeks: tuple[Path, Path]) -> None:
    default, compared = weeks
    weekly = write_scorecard(default, n_resamples=RESAMPLES).markdown
    md = write_scorecard(compared, n_resamples=RESAMPLES).markdown
    assert "## Lift per model (with-skill − no-skill)" in weekly and "must_coverage no→with" in weekly
    assert md.splitlines()[0] == (f"# Skill Comparison Scorecard — {KEY} — with-skill@b vs with-skill@a — simulated "
                                  "endpoint")
    assert "## Lift per model (with-skill@b − with-skill@a)" in md
    assert "must_coverage with-skill@a→with-skill@b" in md and "must with-skill@a→with-skill@b" in md
    assert "## Per-prompt (must_coverage; with-skill@b lift)" in md and "- with-skill@b runs: **" in md
    assert "with-skill − no-skill" not in md and "no→with" not in md
    # The per-cell table lists the version arms (control first), not only the plain arm names.
    cells = md.split("## Per-cell metrics", 1)[1].split("##", 1)[0]
    assert "| with-skill@a " in cells and "| with-skill@b " in cells
    assert cells.index("| with-skill@a ") < cells.index("| with-skill@b ")
    wow = md.split("## Week-over-week lift delta", 1)[1].split("##", 1)[0]
    assert "a comparison never reads or writes the weekly history" in wow and "Will be computed" not in wow


def test_a_comparison_never_writes_or_reads_the_weekly_history(weeks: tuple[Path, Path], tmp_path: Path) -> None:
    default, compared = weeks
    result = write_scorecard(default, n_resamples=RESAMPLES)
    assert result.history_path == default_history_path(default) and result.history_path.is_file()
    assert endpoints_path(result.history_path).is_file()  # a simulated week records its endpoint

    history = default_history_path(compared)
    comp = write_scorecard(compared, n_resamples=RESAMPLES)
    assert comp.history_path is None and (compared / "scorecard.md").is_file()
    assert not history.exists() and not endpoints_path(history).exists()
    assert comp.data.history.empty and comp.data.history_rows.empty and not comp.data.wow.ready

    # Nor through the CLI (what `skillbench compare` runs: scorecard_week(write=True)), with an explicit path.
    explicit = tmp_path / "elsewhere" / "scorecard-history.csv"
    assert main(["scorecard", str(compared), "--bootstrap", "50", "--history", str(explicit)]) == 0
    assert not explicit.exists() and not explicit.parent.exists() and not history.exists()

    # A history file beside it, even a damaged one, is never opened, so it neither stops nor changes.
    history.write_bytes(b"not,a,history\r\n1,2\r\n")
    before = history.read_bytes()
    assert main(["scorecard", str(compared), "--bootstrap", "50"]) == 0
    card = scorecard_week(compared, n_resamples=50)
    assert history.read_bytes() == before and not endpoints_path(history).exists()
    assert card.data.history.empty and card.path is None
