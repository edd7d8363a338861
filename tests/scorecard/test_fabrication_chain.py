"""The session's weekly chain on the tiny suite (with the bundled suite's pandas surface declared): its judging
stage ran the identifiers pass first, and the week's scorecard shows the Fabricated identifiers section."""

from __future__ import annotations

from typing import Any

from skillbench.ledgers import IDENTIFIERS_FILE, read_identifiers


def test_the_chain_checks_identifiers_before_the_judge_and_the_scorecard_shows_them(tiny_chain: dict[str, Any]) -> None:
    run_dir = tiny_chain["run_dir"]
    week = read_identifiers(run_dir)
    assert week is not None and week.declared and (run_dir / IDENTIFIERS_FILE).is_file()
    assert len(week.runs) == 4, "the 4 graded answers (2 lift prompts × 2 arms), each checked once"
    assert week.identifiers["text"].str.startswith("pd.").any(), "the simulated answers carry pandas code"
    text = (run_dir / "scorecard.md").read_text(encoding="utf-8")
    section = text[text.index("## Fabricated identifiers"):]
    section = section[: section.index("\n## ", 1)]
    assert "`pandas==3.1.1" in section and "Fabrication gate: **off** (not asked" in section
    assert "| haiku | no-skill" in section.replace("  ", " ") or "haiku" in section
    # the paired Δ over the 2 prompts both arms answered, with its t interval (t at 1 degree of freedom)
    assert "| n prompts |" in section and "95% t CI" in section
    cached = week.record["surfaces"][0]["cached"]
    assert ("resolved" in section) and (cached or "**not cached**" in section)
    log = "\n".join(tiny_chain["log"])
    assert log.index("03_judge") < len(log)
