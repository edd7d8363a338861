"""Scoring a committed (or copied) tiny week and cutting one section out of its scorecard page."""

from __future__ import annotations

from pathlib import Path

from skillbench.ledgers import load_week
from skillbench.scorecard import compute_scorecard, render_markdown

RESAMPLES = 500  # enough for a stable interval in a unit test, cheap to compute


def score_week(run_dir: Path, n_resamples: int = RESAMPLES):
    """``(ScorecardData, scorecard.md text)`` of a run directory."""
    data = compute_scorecard(load_week(run_dir), n_resamples=n_resamples)
    return data, render_markdown(data)


def page_section(md: str, heading: str) -> str:
    """The text under ``heading`` up to the next ``## `` heading (the heading must be on the page)."""
    assert heading in md
    return md.split(heading, 1)[1].split("\n## ", 1)[0]
