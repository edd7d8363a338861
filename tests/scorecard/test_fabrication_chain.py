"""The session's weekly chain on the tiny suite (with the bundled suite's pandas surface declared): its judging
stage ran the identifiers pass before the judge, and the week's scorecard shows the Fabricated identifiers section
with each arm's rate and the paired Δ with its interval."""

from __future__ import annotations

import re
from typing import Any

from skillbench.ledgers import IDENTIFIERS_FILE, SCORES_FILE, read_identifiers


def test_the_chain_checks_identifiers_before_the_judge_and_the_scorecard_shows_them(tiny_chain: dict[str, Any]) -> None:
    run_dir = tiny_chain["run_dir"]
    week = read_identifiers(run_dir)
    assert week is not None and week.declared and week.record["complete"]
    assert len(week.runs) == 4, "the 4 graded answers (2 lift prompts × 2 arms), each checked once"
    assert week.identifiers["text"].str.startswith("pd.").any(), "the simulated answers carry pandas code"
    # the judging stage's notebook says the pass's line before the judge's (a resumed chain keeps the 4 answers)
    judging = (tiny_chain["result"].report_dir / "03_judge.ipynb").read_text(encoding="utf-8")
    said = re.search(r"identifiers: (\d) answer\(s\) checked, (\d) kept", judging)
    assert said and int(said[1]) + int(said[2]) == 4
    assert (run_dir / IDENTIFIERS_FILE).stat().st_mtime <= (run_dir / SCORES_FILE).stat().st_mtime, \
        "deterministic evidence first: every answer was checked before the judge wrote a grade"
    text = (run_dir / "scorecard.md").read_text(encoding="utf-8")
    section = text[text.index("## Fabricated identifiers"):]
    section = section[: section.index("\n## ", 1)]
    assert "`pandas==3.1.1`" in section and "Fabrication gate: **off** (not asked" in section
    if not week.record["surfaces"][0]["cached"]:  # outside CI without `make setup`: said, never a fabrication
        assert "**not cached**" in section and (week.identifiers["status"] == "unchecked").all()
    arms = [line for line in section.splitlines() if re.match(r"\| haiku +\| (no|with)-skill", line)]
    assert len(arms) == 2 and all(re.search(r"\| \d/2 = \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] +\|$", a) for a in arms)
    # the paired Δ over the 2 prompts both arms answered, with its t interval at 1 degree of freedom
    delta = next(line for line in section.splitlines() if re.match(r"\| haiku +\| 2 +\|", line))
    assert re.search(r"\| \[[-+]\d\.\d{3}, [-+]\d\.\d{3}\] +\| (yes|no) +\|$", delta), delta
