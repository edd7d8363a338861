"""``skillbench lint-skills`` end to end through the console command: the files it writes and where, the judge on
the simulated endpoint (Cohen's κ for 2 samples), measured triggering beside the prediction with --week, exit 1 on a
static error, and a read-only suite refused before anything is written."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pandas as pd

from skillbench.ledgers import SKILL_QUALITY_FILE, SKILL_QUALITY_JSON, SKILL_QUALITY_MD
from skillbench.quality._lint import QUALITY_COLUMNS
from tests.helpers.shared import TINY_SUITE, TINY_WEEK


def lint(*args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("skillbench")  # the console command, as a user runs it
    return subprocess.run([str(exe), "lint-skills", *args], capture_output=True, text=True, timeout=300)


def test_judged_lint_writes_the_tidy_csv_the_json_and_the_page(tmp_path):
    out = tmp_path / "out"
    proc = lint(str(TINY_SUITE), "--judge", "--judges", "2", "--backend", "sim", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    frame = pd.read_csv(out / SKILL_QUALITY_FILE, dtype=str, keep_default_na=False)
    assert list(frame.columns) == QUALITY_COLUMNS
    assert set(frame["source"]) == {"static", "judge", "composite"}
    judged = frame[frame["source"] == "judge"]
    assert len(judged) == 2 * 2 * 4 and set(judged["sample"]) == {"1", "2"}
    assert set(judged["value"]) <= {"0", "0.25", "0.5", "0.75", "1"} and set(judged["evidence_verified"]) <= {"1", "0"}
    data = json.loads((out / SKILL_QUALITY_JSON).read_text())
    assert data["judge"]["samples"] == 2 and data["judge"]["cost_usd"] > 0
    assert {k["statistic"] for k in data["kappa"]} == {"cohen"}
    assert abs(sum(data["weights"]["normalised"].values()) - 1) < 1e-9 and data["weights"]["raw_sum"] == 0.72
    page = (out / SKILL_QUALITY_MD).read_text()
    assert "divided by 0.72" in page and "Cohen's κ" in page and (out / "skill-quality.html").is_file()
    assert str(out) in proc.stdout


def test_week_puts_the_measured_trigger_f1_beside_the_prediction(tmp_path):
    week = sorted(p for p in TINY_WEEK.iterdir() if p.is_dir())[-1]
    out = tmp_path / "out"
    proc = lint(str(TINY_SUITE), "--judge", "--judges", "2", "--backend", "sim", "--week", str(week), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    frame = pd.read_csv(out / SKILL_QUALITY_FILE, dtype=str, keep_default_na=False)
    measured = frame[frame["source"] == "measured"]
    values = {"trigger_f1", "trigger_precision", "trigger_recall"}
    assert set(measured["measure"]) == values | {f"{v}_{end}" for v in values for end in ("low", "high")}
    assert "measured trigger F1" in (out / SKILL_QUALITY_MD).read_text()


def test_a_broken_link_exits_1_and_the_default_destination_is_the_suites_quality_folder(tmp_path):
    suite = Path(shutil.copytree(TINY_SUITE, tmp_path / "suite"))
    hub = suite / "skills" / "dates" / "SKILL.md"
    hub.write_text(hub.read_text() + "\nSee [gone](gone.md).\n")
    proc = lint(str(suite))
    assert proc.returncode == 1 and "1 static error" in proc.stderr
    frame = pd.read_csv(suite / "quality" / SKILL_QUALITY_FILE, dtype=str, keep_default_na=False)
    assert "error" in set(frame.loc[frame["measure"] == "links", "severity"])


def test_a_read_only_suite_is_refused_before_anything_is_written(tmp_path):
    suite = Path(shutil.copytree(TINY_SUITE, tmp_path / "suite"))
    suite.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
    try:
        proc = lint(str(suite), "--judge", "--backend", "sim")
    finally:
        suite.chmod(0o755)
    assert proc.returncode == 2 and "read-only" in proc.stderr and "--out" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (suite / "quality").exists()
