"""The decision block (issue 32 point 1): the week's answer and whether to trust it, first on every page.

A committed simulated week (``tests/data/tiny-week``) is scored in a temporary copy; its calibration is made to fail
the must bar the way a real week's did (90.5 % of the musts unanimous). The block must then be red with the
calibration flag first, on the scorecard's first screen, in ``decision.json``, on the week page and on the reports
index; the family whose activation contract failed names where it fired.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from bs4 import BeautifulSoup

from skillbench.ledgers import DECISION_FILE, read_decision
from skillbench.report import write_reports_index, write_week_index
from skillbench.scorecard import AMBER, GREEN, RED, level_of, section_anchor, write_scorecard
from skillbench.scorecard._decision import family_cause
from skillbench.vocab import (
    ACTIVATION_CONTRACT_FAILED,
    NOT_SIGNIFICANT_ADJUSTED,
    OBJECTIVE_LOSS,
    UNDERPOWERED,
)

TINY_WEEK = Path(__file__).resolve().parents[1] / "data" / "tiny-week"
FIRST = "20261109"


def fail_calibration(run_dir: Path, unanimity: float = 0.905, state: str = "FAIL") -> None:
    """The week's self-agreement must row as a calibration that missed the bar writes it."""
    cal = pd.read_csv(run_dir / "calibration.csv", dtype=str, keep_default_na=False)
    must = cal["comparison"].eq("self-agreement") & cal["item_type"].eq("must")
    cal.loc[must, ["unanimity", "n_units"]] = [str(unanimity), "1048"]
    cal["unanimity_low"], cal["unanimity_high"], cal["bar_state"] = "", "", ""
    cal.loc[must, ["unanimity_low", "unanimity_high", "bar_state"]] = ["0.887", "0.921", state]
    cal.to_csv(run_dir / "calibration.csv", index=False)


@pytest.fixture(scope="module")
def failed_week(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("decision") / "weekly"
    shutil.copytree(TINY_WEEK, root)
    run_dir = root / FIRST
    fail_calibration(run_dir)
    write_scorecard(run_dir, n_resamples=50)
    return run_dir


def test_a_failed_calibration_turns_the_block_red_with_its_flag_first(failed_week: Path) -> None:
    dec = read_decision(failed_week)
    assert dec is not None and dec["level"] == RED
    first = dec["flags"][0]
    assert first["key"] == "calibration_failed" and first["link"] == "calibration.html"
    assert "90.5 % of 1,048 musts unanimous" in first["text"] and "[0.887, 0.921]" in first["text"]
    assert {f["key"] for f in dec["flags"]} >= {"calibration_failed", "simulated"}


def test_a_failed_bar_on_too_few_musts_to_tell_is_amber_not_red(tmp_path: Path) -> None:
    """Seen on dotnet's tree in the tiny chain: 94.4 % of 18 musts, [0.727, 0.999] — below the bar, but the interval
    still reaches it, so the block says "grade more" rather than "do not act"."""
    from skillbench.scorecard._decision import _calibration_flag

    cal = pd.DataFrame([{"comparison": "self-agreement", "item_type": "must", "unanimity": 0.944, "n_units": 18,
                         "unanimity_low": 0.727, "unanimity_high": 0.999, "bar_state": "FAIL"}])
    flag = _calibration_flag(cal)
    assert flag.level == AMBER and "too few musts to tell" in flag.text
    cal.loc[0, "unanimity_high"] = 0.921  # the interval misses the bar: red
    assert _calibration_flag(cal).level == RED


def test_the_block_opens_the_scorecard_before_any_table(failed_week: Path) -> None:
    page = (failed_week / "scorecard.md").read_text()
    assert page.index("## Decision") < page.index("## Lift per model")
    block = page[page.index("## Decision"): page.index("## Lift per model")]
    assert "🔴 Do not act on this week's numbers yet" in block
    assert "Judge calibration bar failed" in block and "(calibration.html)" in block
    assert "| model" in block and "since last week" in block and "not yet: 3 more weeks of history" in block
    assert "**Verdicts** (4 skill family × model records" in block


def test_the_pull_request_comment_carries_the_flags_its_banners_do_not(failed_week: Path) -> None:
    comment = (failed_week / "scorecard-comment.md").read_text()
    assert "- 🔴 Judge calibration bar failed: 90.5 % of 1,048 musts" in comment
    assert comment.index("Judge calibration bar failed") < comment.index("**Verdicts**")
    assert "- 🟠 Simulated endpoint" not in comment  # the endpoint banner says it once


def test_a_failed_activation_contract_names_where_it_fired(failed_week: Path) -> None:
    dec = json.loads((failed_week / DECISION_FILE).read_text())
    dates = next(f for f in dec["families"] if (f["skill_family"], f["model"]) == ("dates", "sonnet"))
    assert dates["label"] == "Activation contract failed" and dates["reason"] == ACTIVATION_CONTRACT_FAILED
    assert dates["cause"].startswith("fired on dormancy-dates-sql-interval in 2/4 runs; where it should help")


def _state(run_dir: Path, report: Path, **extra: object) -> dict:
    return {"run_key": run_dir.name, "status": "complete", "failed_stage": None, "error": None,
            "sandboxes_used": ["docker"], "backend": "sim", "endpoint_kind": "simulated", "models": ["haiku"],
            "reps": 1, "sandbox": "docker", "started": "s", "finished": "f", "kernel_name": "skillbench",
            "run_dir": str(run_dir), "seconds": 1.0, "overhead_seconds": 0.1, "suite_dir": "evals",
            "scorecard_title": "Weekly", "decision": read_decision(run_dir),
            "stages": [{"number": "04", "title": "judge calibration", "status": "ok", "seconds": 1.0,
                        "html": "04_calibration.html", "notebook": "04_calibration.ipynb", "id": "04_calibration"}],
            **extra}


def test_the_week_page_and_the_index_show_the_red_block_and_link_the_evidence(failed_week: Path,
                                                                             tmp_path: Path) -> None:
    report = tmp_path / "reports" / FIRST
    report.mkdir(parents=True)
    state = _state(failed_week, report)
    (report / "weekly.json").write_text(json.dumps(state))
    week = BeautifulSoup(write_week_index(report, state).read_text(), "html.parser")
    block = week.select_one("section.decision")
    assert block is not None and "red" in block["class"]
    first = block.select_one("ul.flags li")
    assert "Judge calibration bar failed" in first.get_text() and first.a["href"] == "calibration.html"
    # stage 04 says "ok" (it ran), and beside it that its bar did not pass
    assert "bar not passed" in week.get_text()
    index = BeautifulSoup(write_reports_index(tmp_path / "reports").read_text(), "html.parser")
    top = index.select_one("section.decision")
    assert top is not None and "red" in top["class"]
    assert top.select_one("ul.flags li a")["href"] == f"{FIRST}/calibration.html"
    gate = f"{FIRST}/scorecard.html#{section_anchor('Preference gate (paired, per skill family × model)')}"
    assert {a["href"] for a in top.select("ul.families a")} == {gate}


def test_a_failed_stage_is_a_red_flag_on_a_week_that_reads_clean(failed_week: Path, tmp_path: Path) -> None:
    report = tmp_path / "r" / FIRST
    report.mkdir(parents=True)
    state = _state(failed_week, report, status="failed", failed_stage="05_scorecard", error="boom")
    state["decision"] = {**state["decision"], "flags": [], "level": GREEN}
    page = BeautifulSoup(write_week_index(report, state).read_text(), "html.parser")
    block = page.select_one("section.decision")
    assert "red" in block["class"] and "Stage 05_scorecard failed" in block.get_text()


def test_the_worst_flag_sets_the_colour() -> None:
    assert level_of([]) == GREEN
    assert level_of([{"level": AMBER}, {"level": AMBER}]) == AMBER
    assert level_of([{"level": AMBER}, {"level": RED}]) == RED


def _record(**kw: object) -> SimpleNamespace:
    base = {"reason": "", "evidence": "", "wins": 6, "ties": 0, "losses": 0, "n": 6, "p_value": 0.015625,
            "p_adjusted": 0.03125, "judge_errors": 0, "dormancy_activations": 0}
    return SimpleNamespace(**(base | kw))


@pytest.mark.parametrize(("record", "expected"), [
    (_record(), "6W/0T/0L, p 0.0156 (Holm 0.0312)"),
    (_record(reason=UNDERPOWERED, n=1, wins=1), "only 1 stimulus voted (1W/0T/0L): too few to call"),
    # the rest read their rule's own action from the verdict specification
    (_record(reason="no_positive_direction", wins=1, losses=3, p_value=0.94),
     "1W/0T/3L, p 0.940: the treatment does not win more often than the control"),
    (_record(reason=NOT_SIGNIFICANT_ADJUSTED, p_adjusted=0.25),
     "6W/0T/0L, p 0.0156 alone but 0.250 after Holm across the week's records"),
    (_record(reason=OBJECTIVE_LOSS, objective_n=8, objective_losses=5, objective_p=0.031),
     "deterministic checks fail more often with the skill (5 of 8 stimuli lost, p(loss) 0.0310)"),
    # the real report's misleading case: 6W/0T/0L, p = 0.016, yet "no change" — the cause says what happened
    (_record(reason=ACTIVATION_CONTRACT_FAILED, dormancy_activations=4,
             fired="activated on dormancy-debug-rename-exports in 4/8 runs"),
     "fired on dormancy-debug-rename-exports in 4/8 runs; where it should help it voted 6W/0T/0L (p 0.0156) — "
     "narrow its description before reading that as a win"),
])
def test_each_family_verdict_has_its_cause_in_one_line(record: SimpleNamespace, expected: str) -> None:
    assert family_cause(record, fired=getattr(record, "fired", "")) == expected


def test_chromium_draws_the_block_red(failed_week: Path, tmp_path: Path) -> None:
    """In Debian's headless Chromium, with the page's CSP in force, the block is drawn red: its border's colour is
    on the screen (the words and links are checked on the same page above)."""
    import numpy as np
    from PIL import Image

    from tests.report.test_report_screenshot import screenshot

    report = tmp_path / "reports" / FIRST
    report.mkdir(parents=True)
    page = write_week_index(report, _state(failed_week, report))
    screenshot(page, tmp_path / "week.png", tmp_path / "profile")
    rgb = np.asarray(Image.open(tmp_path / "week.png").convert("RGB")).astype(int)
    red = ((rgb[..., 0] > 180) & (rgb[..., 1] < 70) & (rgb[..., 2] < 70)).sum()  # the block's #c62828 border
    assert red > 500, f"no red block on the page ({red} red pixels)"


@pytest.mark.parametrize(("wins", "losses", "words"), [
    (0, 6, "completion drops 100.0 points"), (2, 1, "completion rises 16.7 points"), (1, 1, "completion unchanged")])
def test_the_objective_evidence_says_the_change_in_words(wins: int, losses: int, words: str) -> None:
    """A report read "p(loss)=1; net loss -33.3%" beside a win: the sign said in a word instead."""
    from skillbench.scorecard import ObjectiveRecord

    record = ObjectiveRecord(n=6, wins=wins, losses=losses)
    assert record.evidence.endswith(words)


def test_a_tampered_run_is_a_red_flag(tmp_path: Path) -> None:
    """A run whose transcript disagrees with its relay is never graded: the week must not read clean without it."""
    root = tmp_path / "weekly"
    shutil.copytree(TINY_WEEK, root)
    manifest = pd.read_csv(root / FIRST / "manifest.csv", dtype=str, keep_default_na=False)
    manifest.loc[0, "run_state"] = "tampered"
    manifest.to_csv(root / FIRST / "manifest.csv", index=False)
    write_scorecard(root / FIRST, n_resamples=50)
    flag = read_decision(root / FIRST)["flags"][0]
    assert flag["key"] == "tampered" and flag["level"] == RED and flag["text"].startswith("1 run tampered")


def test_a_damaged_decision_file_reads_red_and_never_stops_the_page(failed_week: Path, tmp_path: Path) -> None:
    report = tmp_path / "reports" / FIRST
    report.mkdir(parents=True)
    state = _state(failed_week, report)
    state["decision"] = {**state["decision"], "models": [{"model": "haiku"}]}  # hand-edited: fields missing
    block = BeautifulSoup(write_week_index(report, state).read_text(), "html.parser").select_one("section.decision")
    assert "red" in block["class"] and "decision.json is unreadable" in block.get_text()
