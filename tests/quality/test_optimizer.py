"""optimize-description on the simulated endpoint with the real CLI in Docker (one family, one iteration, k = 1).

The family is time-series-pandas of a temp copy of the bundled suite, its description weakened to "Notes on
pandas.": no "Use when" context and no topic word a time-series query shares (``pandas`` is common to the suite's
descriptions, so the sim's triggering rule leaves it out), so by :mod:`skillbench.sim._triggering` every query
falls to rule 3 with almost no overlap — p(trigger) near ``trigger × trigger_floor`` — and recall is near 0.
The simulated rewriter (:mod:`skillbench.sim._rewrite`) adds "Use when" contexts from the missed train queries'
words; the held-out should-trigger queries share those words (resample, rolling, timestamp, daily …), which puts
them under rule 2 (``use_when_gain``: p ≈ 1), so test F1 must rise — through the rule, from train failures only.
The default four generated near-misses (:mod:`skillbench.sim._near_miss`) join the should-not side, labelled
``generated`` and counted apart in the candidates' table.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from skillbench.cli import main
from skillbench.ledgers import OPTIMIZE_CANDIDATES_FILE, OPTIMIZE_REPORT_MD, OPTIMIZE_TRIGGER_SET
from skillbench.quality import with_description
from tests.helpers.sim import require_cli

ROOT = Path(__file__).resolve().parents[2]
FAMILY = "time-series-pandas"


def _tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode() + p.read_bytes())
    return h.hexdigest()


@pytest.mark.cli
def test_a_weakened_description_improves_on_held_out_test_and_the_suite_is_untouched(tmp_path: Path, capsys) -> None:
    require_cli()
    suite = Path(shutil.copytree(ROOT / "evals", tmp_path / "evals", ignore=shutil.ignore_patterns("weekly")))
    hub = suite / "skills" / FAMILY / "SKILL.md"
    hub.write_text(with_description(hub.read_text(encoding="utf-8"), "Notes on pandas."), encoding="utf-8")
    before_hub, before_suite = hashlib.sha256(hub.read_bytes()).hexdigest(), _tree_digest(suite)
    out = tmp_path / "out"
    code = main(["optimize-description", FAMILY, "--suite", str(suite), "--iterations", "1", "--k", "1",
                 "--backend", "sim", "--out-dir", str(out), "--jobs", "2", "--sandbox", "local"])
    assert code == 0, capsys.readouterr().err
    assert hashlib.sha256(hub.read_bytes()).hexdigest() == before_hub and _tree_digest(suite) == before_suite
    (folder,) = list(out.iterdir())  # everything under --out-dir, in one new folder
    assert {p.name for p in folder.iterdir()} >= {"SKILL.md", "SKILL.md.diff", OPTIMIZE_CANDIDATES_FILE,
                                                 OPTIMIZE_TRIGGER_SET, OPTIMIZE_REPORT_MD}
    table = pd.read_csv(folder / OPTIMIZE_CANDIDATES_FILE)
    original, winner = table.iloc[0], table[table["winner"] == 1].iloc[0]
    assert winner["candidate"] == 1 and winner["test_f1"] > original["test_f1"]
    assert "Use when:" in winner["description"]
    new_hub = (folder / "SKILL.md").read_text(encoding="utf-8")
    assert new_hub == with_description(hub.read_text(encoding="utf-8"), winner["description"])
    assert "+description:" in (folder / "SKILL.md.diff").read_text(encoding="utf-8")
    page = (folder / OPTIMIZE_REPORT_MD).read_text(encoding="utf-8")
    assert "test F1" in page and "generated near-misses (4 asked for" in page
    # the selection against the original on test: McNemar's exact test, and one line on whether a winner is called
    assert "McNemar exact p = " in page and "**Original against the selection on test**: " in page
    assert "optimize-description time-series-pandas: " in capsys.readouterr().out
    tset = json.loads((folder / OPTIMIZE_TRIGGER_SET).read_text(encoding="utf-8"))
    generated = [q for q in tset["queries"] if q["source"] == "generated"]
    assert len(generated) == 4 and not any(q["should_trigger"] for q in generated)  # the default --near-misses
    assert tset["counts"]["train_generated"] + tset["counts"]["test_generated"] == 4
    assert original["train_generated_n"] == tset["counts"]["train_generated"]  # counted apart in the table
    assert original["test_generated_n"] == tset["counts"]["test_generated"]


def test_a_family_with_too_few_prompts_is_refused_before_anything_is_written(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    code = main(["optimize-description", "dates", "--suite", str(ROOT / "tests" / "data" / "tiny-suite"),
                 "--backend", "sim", "--out-dir", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "too few queries to split" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_an_out_dir_inside_the_skills_tree_is_refused(tmp_path: Path, capsys) -> None:
    suite = Path(shutil.copytree(ROOT / "evals", tmp_path / "evals", ignore=shutil.ignore_patterns("weekly")))
    code = main(["optimize-description", FAMILY, "--suite", str(suite), "--backend", "sim",
                 "--out-dir", str(suite / "skills" / "x")])
    assert code == 2 and "inside the suite's skills tree" in capsys.readouterr().err
    assert not (suite / "skills" / "x").exists()


def test_the_near_miss_calls_cost_counts_toward_the_cap(tmp_path: Path) -> None:
    """Spent before the loop (the near-miss call) at or above --max-total-usd: no run starts, no rewriter call."""
    from skillbench.quality import LoopBudget, RunSpec, build_trigger_set, optimize
    from skillbench.suite import load_suite

    suite = load_suite(ROOT / "evals")
    tset = build_trigger_set(suite, FAMILY, generated=["Is my A/B test significant? It has resample in it too."])

    def rewriter(payload: dict) -> tuple[str, float]:
        raise AssertionError("the rewriter was called after the cap was spent")

    def runs(*args: object, **kwargs: object) -> None:
        raise AssertionError("a trigger run started after the cap was spent")

    result = optimize(suite, tset, tmp_path / "work", budget=LoopBudget(1, max_total_usd=0.01, spent_usd=0.02),
                      spec=RunSpec(), rewriter=rewriter, runs=runs, log=lambda m: None)
    assert result.capped and result.spent_usd == 0.02 and result.near_miss_usd == 0.02
    assert result.candidates[0].note == "not measured: --max-total-usd spent" and not (tmp_path / "work").exists()
