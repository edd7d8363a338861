"""optimize-description on the simulated endpoint with the real CLI in Docker (one family, one iteration, k = 1).

The family is time-series-pandas of a temp copy of the bundled suite, its description weakened to "Notes on
pandas.": no "Use when" context and no topic word a time-series query shares (``pandas`` is common to the suite's
descriptions, so the sim's triggering rule leaves it out), so by :mod:`skillbench.sim.triggering` every query
falls to rule 3 with almost no overlap — p(trigger) near ``trigger × trigger_floor`` — and recall is near 0.
The simulated rewriter (:mod:`skillbench.sim.rewrite`) adds "Use when" contexts from the missed train queries'
words; the held-out should-trigger queries share those words (resample, rolling, timestamp, daily …), which puts
them under rule 2 (``use_when_gain``: p ≈ 1), so test F1 must rise — through the rule, from train failures only.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pandas as pd
import pytest

from skillbench.cli import main
from skillbench.generation.toolchain import docker_available
from skillbench.ledgers.files import OPTIMIZE_CANDIDATES_FILE, OPTIMIZE_REPORT_MD, OPTIMIZE_TRIGGER_SET
from skillbench.quality.trigger_runs import with_description
from tests.helpers.shared import IN_CI
from tests.helpers.sim import require_cli

ROOT = Path(__file__).resolve().parents[2]
FAMILY = "time-series-pandas"


def require_docker() -> None:
    if not docker_available():
        if IN_CI:
            pytest.fail("CI must have a Docker engine: `make setup` starts dockerd")
        pytest.skip("no Docker engine answers (run `make setup` as root to start dockerd)")


def _tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode() + p.read_bytes())
    return h.hexdigest()


@pytest.mark.docker
@pytest.mark.cli
def test_a_weakened_description_improves_on_held_out_test_and_the_suite_is_untouched(tmp_path: Path, capsys) -> None:
    require_docker()
    require_cli()
    suite = Path(shutil.copytree(ROOT / "evals", tmp_path / "evals", ignore=shutil.ignore_patterns("weekly")))
    hub = suite / "skills" / FAMILY / "SKILL.md"
    hub.write_text(with_description(hub.read_text(encoding="utf-8"), "Notes on pandas."), encoding="utf-8")
    before_hub, before_suite = hashlib.sha256(hub.read_bytes()).hexdigest(), _tree_digest(suite)
    out = tmp_path / "out"
    code = main(["optimize-description", FAMILY, "--suite", str(suite), "--iterations", "1", "--k", "1",
                 "--backend", "sim", "--out-dir", str(out), "--jobs", "2"])
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
    assert "test F1" in (folder / OPTIMIZE_REPORT_MD).read_text(encoding="utf-8")


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
