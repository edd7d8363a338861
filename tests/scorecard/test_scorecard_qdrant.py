"""Reproduce qdrant's published scorecard for 20260808 from their raw ledgers, cell by cell.

Only their ``manifest.csv`` and ``scores.csv`` are copied into a temporary run directory (their per-run judge
cost files are not part of the dataset, so judge and total cost must read "unknown"). Both markdown files are
parsed into sections, tables and bullet lines and compared.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from skillbench.cli import main
from skillbench.ledgers import QDRANT_HISTORY_COLUMNS
from skillbench.scorecard import endpoints_path
from tests.helpers.shared import QDRANT, require

WEEK = "20260808"


def sections(md: str) -> dict[str, list[str]]:
    """``## Title`` → its lines (the ``#`` title under key ``""``)."""
    out: dict[str, list[str]] = {"": []}
    current = ""
    for line in md.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            out[current] = []
        else:
            out[current].append(line)
    return out


def tables(lines: list[str]) -> list[list[dict[str, str]]]:
    """Every markdown table in ``lines`` as a list of {header: cell} rows (cells stripped)."""
    found, block = [], []
    for line in [*lines, ""]:
        if line.startswith("|"):
            block.append(line)
            continue
        if block:
            split = [[c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in block]
            header, body = split[0], split[2:]
            found.append([dict(zip(header, row, strict=True)) for row in body])
            block = []
    return found


def bullets(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("- ")]


def bullet(lines: list[str], prefix: str) -> str:
    matches = [line for line in bullets(lines) if line.startswith(prefix)]
    assert len(matches) == 1, f"one bullet starting {prefix!r}, got {matches}"
    return matches[0]


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict:
    source = require(QDRANT / "evals" / "weekly" / WEEK)
    root = tmp_path_factory.mktemp("weekly")
    run_dir = root / WEEK
    run_dir.mkdir()
    for name in ("manifest.csv", "scores.csv"):
        shutil.copyfile(source / name, run_dir / name)
    history = root / "scorecard-history.csv"
    shutil.copyfile(source.parent / "scorecard-history.csv", history)
    assert main(["scorecard", str(run_dir)]) == 0
    theirs = (source / "scorecard.md").read_text(encoding="utf-8")
    ours = (run_dir / "scorecard.md").read_text(encoding="utf-8")
    return {"theirs": sections(theirs), "ours": sections(ours), "history": history,
            "their_history": source.parent / "scorecard-history.csv", "run_dir": run_dir}


# A cell we cut (markdown.md_text with a limit): qdrant's cut text, then "…", the whole text as the link's title
CUT = re.compile(r'^\[(?P<shown>.*)…\]\(#cut "(?P<full>.*)"\)$')


def _as_qdrant_cut(cell: str) -> str:
    """qdrant cut item text and evidence without a mark; ours ends the same text in "…" and keeps the whole on
    hover. The shown part is theirs exactly, and the title starts with it."""
    m = CUT.match(cell)
    if m is None:
        return cell
    shown = re.sub(r"\\([\[\]])", r"\1", m["shown"])
    assert re.sub(r"\\(.)", r"\1", m["full"]).startswith(shown)
    return shown.strip()


def _same_table(week: dict, section: str, index: int = 0) -> None:
    theirs, ours = tables(week["theirs"][section])[index], tables(week["ours"][section])[index]
    assert len(ours) == len(theirs)
    for mine, their in zip(ours, theirs, strict=True):
        assert {k: _as_qdrant_cut(v) for k, v in mine.items()} == their


def test_title_and_section_order(week: dict) -> None:
    assert week["ours"][""][0] == week["theirs"][""][0]
    theirs = [s for s in week["theirs"] if s]
    ours = [s for s in week["ours"] if s in theirs]
    assert ours == theirs


def test_the_decision_block_says_what_their_judge_never_measured(week: dict) -> None:
    """qdrant's week has no calibration and no evidence check, and one avoid quote that cannot show its harm: the
    block is amber and says all three (issue 32)."""
    from skillbench.ledgers import read_decision

    dec = read_decision(week["run_dir"])
    assert dec["level"] == "amber" and [f["key"] for f in dec["flags"]] == ["no_claim_evidence", "not_calibrated",
                                                                    "evidence_unchecked"]
    assert [m["model"] for m in dec["models"]] == ["sonnet", "haiku"] and dec["families"] == []


def test_lift_table(week: dict) -> None:
    _same_table(week, "Lift per model (with-skill − no-skill)")


def test_per_cell_table(week: dict) -> None:
    _same_table(week, "Per-cell metrics")


def test_every_per_prompt_row(week: dict) -> None:
    _same_table(week, "Per-prompt (must_coverage; with-skill lift)")


def test_week_over_week_placeholder(week: dict) -> None:
    text = "\n".join(week["ours"]["Week-over-week lift delta"])
    assert "**Will be computed after four runs.**" in text
    assert "run 1 of 4" in text


def test_activation_counts_and_table(week: dict) -> None:
    section = "Activation / trigger misses"
    for prefix in ("- with-skill runs:", "- **trigger misses**", "- lift sourced from the published site"):
        assert bullet(week["ours"][section], prefix) == bullet(week["theirs"][section], prefix)
    _same_table(week, section)


def test_caveat_count(week: dict) -> None:
    section = "Lift caveat — baseline self-served the skill"
    count = re.compile(r"\*\*(\d+) of (\d+)\*\*")
    ours = count.search(bullet(week["ours"][section], "- no-skill runs that fetched"))
    theirs = count.search(bullet(week["theirs"][section], "- no-skill runs that fetched"))
    assert ours.groups() == theirs.groups()


def test_avoid_violations(week: dict) -> None:
    """qdrant's table cell by cell, plus our evidence check's column (issue 32 point 8): of their 29 verbatim
    quotes, exactly one — a two-word lead-in sharing no word with its item — cannot show the harm."""
    section = "`avoid` violations (most damaging failures)"
    theirs, ours = tables(week["theirs"][section])[0], tables(week["ours"][section])[0]
    assert len(ours) == len(theirs) == 29
    check = "evidence check"
    assert [{k: _as_qdrant_cut(v) for k, v in row.items() if k != check} for row in ours] == theirs
    flags = [row[check] for row in ours]
    assert flags.count("ok") == 28
    assert [f for f in flags if f != "ok"] == ["**no claim**: 2 content words, none of the item's: too short or "
                                                "generic to state the harm"]
    assert bullet(week["ours"]["Run health"], "- avoid violations whose verbatim quote").endswith(": 1")


def test_coverage(week: dict) -> None:
    for prefix in ("- runs graded:", "- dropped:"):
        assert bullet(week["ours"]["Coverage"], prefix) == bullet(week["theirs"]["Coverage"], prefix)


def test_cost_and_time(week: dict) -> None:
    ours, theirs = week["ours"]["Cost & time"], week["theirs"]["Cost & time"]
    assert bullet(ours, "- generation:") == bullet(theirs, "- generation:")
    assert "unknown" in bullet(ours, "- judge")
    assert bullet(ours, "- **total:").startswith("- **total: unknown**")
    for prefix in ("- runs timed:", "- compute-time", "- wall-clock:"):
        assert bullet(ours, prefix) == bullet(theirs, prefix)


def test_run_health(week: dict) -> None:
    theirs = bullets(week["theirs"]["Run health"])
    assert bullets(week["ours"]["Run health"])[: len(theirs)] == theirs


def test_provenance(week: dict) -> None:
    _same_table(week, "Provenance")
    for prefix in ("- CLI version(s):", "- skills commit(s):", "- run window (UTC):"):
        assert bullet(week["ours"]["Provenance"], prefix) == bullet(week["theirs"]["Provenance"], prefix)
    assert bullet(week["ours"]["Provenance"], "- endpoint:") == "- endpoint: `real`"


def test_our_sections_are_present(week: dict) -> None:
    for section in ("Lift uncertainty — bootstrap CI and minimum detectable effect",
                    "Trigger health per skill family", "Preference gate (paired, per skill family × model)"):
        assert section in week["ours"]
    assert len(tables(week["ours"]["Lift uncertainty — bootstrap CI and minimum detectable effect"])[0]) == 2


def _history_rows(path: Path) -> list[list[str]]:
    return [line.split(",") for line in path.read_bytes().decode().split("\r\n") if line]


def test_history_upsert_reproduces_their_rows(week: dict) -> None:
    theirs = _history_rows(week["their_history"])
    ours = _history_rows(week["history"])
    assert [row[: len(QDRANT_HISTORY_COLUMNS)] for row in ours] == theirs
    # Their file keeps exactly their 8 columns (their summarize-eval.py rewrites it with those fieldnames), and
    # a real week needs no endpoint sidecar: a row without a record reads "real".
    assert week["history"].read_bytes() == week["their_history"].read_bytes()
    assert not endpoints_path(week["history"]).exists()
    before = week["history"].read_bytes()
    assert main(["scorecard", str(week["run_dir"])]) == 0
    assert week["history"].read_bytes() == before
