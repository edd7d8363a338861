"""A comparison shows the suite's weekly noise floor (issue 31): the A/A verdicts its weekly runs accumulated, with
the exact interval, among weeks of the comparison's endpoint kind; a damaged record is one line, never a stop."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from skillbench.compare._run import noise_floor
from skillbench.ledgers import HISTORY_CONTROLS_SUFFIX, HISTORY_FILE, history_sidecar, write_history_controls


def _comparison(root: Path) -> SimpleNamespace:
    return SimpleNamespace(repo=SimpleNamespace(repo=root, rel="suite"))


def _record(root: Path, states: list[str], endpoint: str = "simulated") -> None:
    weekly = root / "suite" / "weekly"
    weekly.mkdir(parents=True, exist_ok=True)
    rows = [{"run_key": f"w{i}", "window_end": f"2026-11-0{i + 1}T00:00:00Z", "endpoint": endpoint, "model": "haiku",
             "skill_family": "fam", "control": "aa", "state": state, "reason": ""} for i, state in enumerate(states)]
    write_history_controls(history_sidecar(weekly / HISTORY_FILE, HISTORY_CONTROLS_SUFFIX), pd.DataFrame(rows))


def test_the_weekly_aa_record_reads_as_a_rate_with_its_exact_interval(tmp_path: Path) -> None:
    _record(tmp_path, ["VALID_NO_CHANGE", "VALID_PASS", "VALID_NO_CHANGE", "VALID_NO_CHANGE"])
    [line] = noise_floor(_comparison(tmp_path), "simulated")
    # 1 of 4, Clopper–Pearson: lower 1 − 0.975^(1/4) = 0.0063, upper the 0.975 quantile of Beta(2, 3) = 0.8059
    assert line.startswith("A/A false-pass rate over 4 records in 4 simulated weeks: **0.250** [0.006, 0.806]")
    assert line.endswith("(nominal 5 %)")
    assert noise_floor(_comparison(tmp_path), "real") == []  # a simulated record never speaks for real weeks


def test_no_record_and_a_damaged_record(tmp_path: Path) -> None:
    assert noise_floor(_comparison(tmp_path), "simulated") == []
    _record(tmp_path, ["VALID_PASS"])
    sidecar = tmp_path / "suite" / "weekly" / ("scorecard-history" + HISTORY_CONTROLS_SUFFIX)
    sidecar.write_text(sidecar.read_text() + "torn,row\r\n")
    [line] = noise_floor(_comparison(tmp_path), "simulated")
    assert line.startswith("the weekly control record could not be read:") and "controls.csv" in line
