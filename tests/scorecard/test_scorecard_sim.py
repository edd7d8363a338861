"""A simulated-endpoint run directory with every ledger renders every section, honestly labelled.

The fixture is hand-made in the formats generation and the judge write: plugin-arm runs (graded, as with
``judge --include-plugin``), dormancy prompts, a budget-capped run listed in ``judge-skips.csv``, an ungraded
item, an unverified evidence quote, partial ``judge_cost.txt`` files, ``pairs.csv`` and ``reconciliation.json``.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skillbench.cli import main
from skillbench.ledgers import MANIFEST_COLUMNS, PAIRS_COLUMNS, SCORES_COLUMNS, load_week
from skillbench.scorecard import compute_scorecard, scorecard_frames
from skillbench.vocab import LIFT_ARMS
from tests.helpers.shared import TINY_WEEK

KEY = "sim-wk1"
PROMPTS = {"a1": ("fam-a", False), "a2": ("fam-a", False), "a3": ("fam-a", False), "a-quiet": ("fam-a", True),
           "b1": ("fam-b", False), "b2": ("fam-b", False), "b-quiet": ("fam-b", True)}
MODELS = ("sonnet", "haiku")
CAPPED = f"a2-haiku-with-skill-r2-{KEY}"
SECTIONS = [
    "Decision",  # ours, first (issue 32): the answer and its trust flags; qdrant's sections follow in their order
    "Lift per model (with-skill − no-skill)", "Lift uncertainty — bootstrap CI and minimum detectable effect",
    "Week-over-week lift delta", "Per-cell metrics", "Per-prompt (must_coverage; with-skill lift)",
    "Activation / trigger misses", "Trigger health per skill family", "Lift caveat — baseline self-served the skill",
    "`avoid` violations (most damaging failures)", "Preference gate (paired, per skill family × model)", "Coverage",
    "Cost & time", "Run health", "Provenance",
]


def _write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns)
        w.writeheader()
        w.writerows(rows)


def _build(run_dir: Path, *, complete: bool) -> None:
    rng = np.random.default_rng(3)
    run_dir.mkdir(parents=True, exist_ok=True)
    manifest, scores, pairs = [], [], []
    minute = 0
    for prompt, (family, dormancy) in PROMPTS.items():
        for model in MODELS:
            conditions = ("with-skill", "plugin") if dormancy else ("no-skill", "with-skill", "plugin")
            for condition in conditions:
                for rep in (1, 2):
                    run_id = f"{prompt}-{model}-{condition}-r{rep}-{KEY}"
                    skilled = condition != "no-skill"
                    capped = run_id == CAPPED
                    if dormancy:
                        # fam-b's skill fires on its dormancy prompt in the plugin arm: a contract failure.
                        activation = "skill_tool" if (family == "fam-b" and condition == "plugin") else "none"
                    elif skilled:
                        activation = "none" if prompt == "b2" else "skill_tool"
                    else:
                        activation = "none"
                    minute += 1
                    manifest.append({
                        "prompt": prompt, "skill_family": family, "skill_leaf": f"{family}/SKILL.md", "model": model,
                        "condition": condition, "rep": rep, "run_id": run_id, "exit_code": 0, "skills_sha": "abc1234",
                        "timestamp": f"2026-08-08T{10 + minute // 60:02d}:{minute % 60:02d}:00Z",
                        "skill_available": int(skilled),
                        "skill_activation": activation, "reached_leaf": int(activation != "none"),
                        "fetched_site": int(prompt == "a1" and condition == "no-skill" and rep == 1),
                        "fetched_count": 0, "model_snapshot": f"claude-{model}-sim", "cli_version": "2.1.328",
                        "total_cost_usd": round(0.01 + 0.002 * rep, 4), "num_turns": 2 + int(skilled),
                        "result_subtype": "error_max_budget_usd" if capped else "success", "budget_hit": int(capped),
                        "signals_ok": 1, "duration_ms": 20_000 + 1000 * rep, "dormancy": int(dormancy),
                        "sandbox": "docker", "is_error": 0, "terminal_reason": "", "denials": 0, "attempts": 1,
                        "endpoint": "simulated",
                    })
                    (run_dir / run_id).mkdir(exist_ok=True)
                    (run_dir / run_id / "metadata.json").write_text(json.dumps(
                        {"run_id": run_id, "site_base": "http://127.0.0.1:9/site",
                         "suite_site_base": "https://skills.example.test"}))
                    if dormancy or capped:
                        continue
                    p_met = 0.85 if skilled else 0.45
                    items = [("must", "met" if rng.random() < p_met else "missing") for _ in range(3)]
                    items += [("bonus", "met" if rng.random() < p_met / 2 else "absent")]
                    items += [("avoid", "violated" if rng.random() < 0.2 else "clean")]
                    if run_id == f"a1-sonnet-no-skill-r2-{KEY}":
                        items[0] = ("must", "ungraded")
                    for index, (item_type, verdict) in enumerate(items):
                        credit = {"met": 1.0, "violated": 1.0, "ungraded": ""}.get(verdict, 0.0)
                        scores.append({
                            "prompt": prompt, "skill": family, "model": model, "condition": condition, "rep": rep,
                            "item_type": item_type, "item_text": f"{prompt} {item_type} item {index} | detail",
                            "verdict": verdict, "credit": credit,
                            "contribution": -credit if item_type == "avoid" and credit else credit,
                            "contested": "",
                            "evidence_quote": "quoted | span" if verdict in ("met", "violated") else "",
                            "run_id": run_id, "item_index": index, "judge_model": "claude-opus-sim", "samples": 1,
                            "evidence_verified": 0 if run_id.startswith("b1-haiku-with") and index == 0 else 1,
                            "rubric_sha": f"sha-{prompt}", "judge_prompt_sha": "jp-1",
                        })
                    if condition == "with-skill":
                        (run_dir / run_id / "judge_cost.txt").write_text("0.0125\n")
                        outcome = "W" if rng.random() < 0.8 else "T"
                        pairs.append({"run_key": KEY, "skill_family": family, "prompt": prompt, "model": model,
                                      "rep": rep, "winner_ab": "B", "winner_ba": "A", "outcome": outcome,
                                      "judge_model": "claude-opus-sim", "error": ""})
    _write_csv(run_dir / "manifest.csv", list(MANIFEST_COLUMNS), manifest)
    _write_csv(run_dir / "scores.csv", list(SCORES_COLUMNS), scores)
    _write_csv(run_dir / "pairs.csv", list(PAIRS_COLUMNS), pairs)
    _write_csv(run_dir / "judge-skips.csv", ["run_id", "reason"],
               [{"run_id": CAPPED, "reason": "budget hit: truncated answer not graded"}])
    missing = [] if complete else [f"a3-haiku-no-skill-r3-{KEY}"]
    (run_dir / "reconciliation.json").write_text(json.dumps({
        "run_key": KEY, "expected": len(manifest) + len(missing), "observed": len(manifest), "written": len(manifest),
        "missing": missing, "unexpected": [], "duplicate": [], "capped": [], "complete": complete}))


def _sections(md: str) -> dict[str, str]:
    parts = md.split("\n## ")
    return {p.split("\n", 1)[0]: p.split("\n", 1)[1] if "\n" in p else "" for p in parts[1:]}


@pytest.fixture()
def weekly(tmp_path: Path) -> Path:
    return tmp_path / "weekly"


def test_incomplete_simulated_week_renders_every_section(weekly: Path, capsys: pytest.CaptureFixture) -> None:
    run_dir = weekly / KEY
    _build(run_dir, complete=False)
    assert main(["scorecard", str(run_dir), "--bootstrap", "1000", "--seed", "5"]) == 1
    assert capsys.readouterr().out.strip() == str(run_dir / "scorecard.md")
    md = (run_dir / "scorecard.md").read_text()
    title = md.splitlines()[0]
    assert "simulated" in title and "INCOMPLETE" in title
    sections = _sections(md)
    assert list(sections) == SECTIONS
    assert f"missing (1): a3-haiku-no-skill-r3-{KEY}" in sections["Coverage"]
    assert "**INCOMPLETE**" in sections["Coverage"]
    assert CAPPED in sections["Coverage"] and "budget hit: truncated answer not graded" in sections["Coverage"]
    assert "not graded by design: 16 dormancy-prompt runs" in sections["Coverage"]
    gate = sections["Preference gate (paired, per skill family × model)"]
    assert gate.count("INVALID_INCONCLUSIVE (incomplete_reconciliation)") == 4
    assert "`skills.example.test`: **2 of 20**" in sections["Lift caveat — baseline self-served the skill"]
    assert "⚠ never triggered" in sections["Activation / trigger misses"]
    assert "≥ $" in sections["Cost & time"]
    assert "- judge evidence quotes not found in the answer (scored missing/clean): 2" in sections["Run health"]
    # Every violation here quotes "quoted | span": two words, none of the item's — verbatim, yet no claim (point 8).
    violations = sections["`avoid` violations (most damaging failures)"].count("| **no claim**: 2 content words")
    assert violations > 0 and "| ok |" not in sections["`avoid` violations (most damaging failures)"]
    assert ("- avoid violations whose verbatim quote cannot show the harm (a bare number, a short generic fragment; "
            f"counted, flagged in the avoid table): {violations}") in sections["Run health"]
    assert "- endpoint: `simulated`" in sections["Provenance"]
    assert "| plugin " in sections["Per-cell metrics"]
    history = (weekly / "scorecard-history.csv").read_text().splitlines()
    assert len(history) == 1, "an INCOMPLETE week is never recorded in the history"
    assert "not recorded in the history" in sections["Week-over-week lift delta"]


def test_complete_week_gate_and_scope(weekly: Path) -> None:
    run_dir = weekly / KEY
    _build(run_dir, complete=True)
    assert main(["scorecard", str(run_dir), "--bootstrap", "1000"]) == 0
    md = (run_dir / "scorecard.md").read_text()
    assert "INCOMPLETE" not in md.splitlines()[0]
    gate = _sections(md)["Preference gate (paired, per skill family × model)"]
    assert gate.count("VALID_NO_CHANGE (activation_contract_failed)") == 2  # fam-b, both models
    assert "incomplete_reconciliation" not in gate

    frames = scorecard_frames(run_dir, n_resamples=500)
    assert {"cells", "prompts", "lift", "history", "gate", "trigger_health"} <= set(frames)
    health = frames["trigger_health"].set_index("skill_family")
    assert health.loc["fam-b", "false_trigger_rate"] == pytest.approx(0.5)
    assert health.loc["fam-a", "false_trigger_rate"] == 0.0
    assert health.loc["fam-b", "recall"] == pytest.approx(0.5)
    assert set(frames["prompts"]["prompt"]).isdisjoint({"a-quiet", "b-quiet"})

    # Plugin rows are telemetry: dropping them from the ledger changes no lift number.
    ledgers = load_week(run_dir)
    with_plugin = compute_scorecard(ledgers, n_resamples=500).lift
    ledgers.scores = ledgers.scores[ledgers.scores["condition"].isin(LIFT_ARMS)]
    without_plugin = compute_scorecard(ledgers, n_resamples=500).lift
    pd.testing.assert_frame_equal(with_plugin, without_plugin)


def test_malformed_ledgers_fail_with_file_and_column(weekly: Path, capsys: pytest.CaptureFixture) -> None:
    run_dir = weekly / KEY
    _build(run_dir, complete=True)
    manifest = (run_dir / "manifest.csv").read_text().splitlines()
    header = manifest[0].split(",")
    row = manifest[1].split(",")
    row[header.index("total_cost_usd")] = "twelve"
    (run_dir / "manifest.csv").write_text("\n".join([manifest[0], ",".join(row), *manifest[2:]]) + "\n")
    assert main(["scorecard", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert "manifest.csv" in err and "'total_cost_usd'" in err and "row 2" in err and "'twelve'" in err
    assert len(err.splitlines()) == 1

    _build(run_dir, complete=True)
    (run_dir / "pairs.csv").write_text("run_key,skill_family,prompt\nx,y,z\n")
    assert main(["scorecard", str(run_dir)]) == 2
    assert "pairs.csv: missing column(s) model, rep" in capsys.readouterr().err

    _build(run_dir, complete=True)
    recon = json.loads((run_dir / "reconciliation.json").read_text())
    (run_dir / "reconciliation.json").write_text(json.dumps({**recon, "duplicate": ["x"]}))
    assert main(["scorecard", str(run_dir)]) == 1  # says complete, lists a duplicate: fail closed
    assert "treated as incomplete" in (run_dir / "scorecard.md").read_text()


def test_lost_runs_and_lost_reconciliation_read_incomplete(tmp_path: Path, capsys) -> None:
    """A week whose run folders and reconciliation.json were deleted must not read as a clean one."""
    import shutil

    src = TINY_WEEK / "20261130"
    week = tmp_path / "20261130"
    shutil.copytree(src, week)
    graded_before = len(load_week(week).scores)
    victims = sorted(p for p in week.iterdir() if p.is_dir() and "-with-skill-" in p.name)[:2]
    for victim in victims:
        shutil.rmtree(victim)
    (week / "reconciliation.json").unlink()
    assert main(["signals", str(week)]) == 0
    assert main(["scorecard", str(week), "--history", str(tmp_path / "h.csv"), "--bootstrap", "200"]) == 1
    text = (week / "scorecard.md").read_text()
    assert "INCOMPLETE" in text.splitlines()[0]
    assert all(v.name in text for v in victims), "the coverage section names what is missing"
    assert len(load_week(week).scores) < graded_before, "grades of deleted runs no longer count"
    capsys.readouterr()
