"""The scorecard's entry points: write ``scorecard.md`` and the history, or hand the tables to a notebook.

Every entry point reads the history through :func:`week_history` and writes it only when
:func:`skillbench.scorecard._history.keeps_history` says so: a comparison never reads or writes the weekly history.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from skillbench.ledgers import (
    DECISION_FILE,
    HISTORY_FILE,
    SCORECARD_COMMENT_FILE,
    SCORECARD_FILE,
    WeekLedgers,
    atomic_write_text,
    load_week,
)
from skillbench.scorecard import _history as hist
from skillbench.scorecard._compute import ScorecardData, compute_scorecard
from skillbench.scorecard._decision import week_decision
from skillbench.scorecard._render import render_comment, render_markdown
from skillbench.scorecard._stats import DEFAULT_RESAMPLES, DEFAULT_SEED


@dataclass
class ScorecardResult:
    """What :func:`write_scorecard` wrote (``history_path`` None: no history, the week is a comparison)."""

    path: Path
    history_path: Path | None
    data: ScorecardData
    markdown: str

    @property
    def complete(self) -> bool:
        return not self.data.incomplete


def default_history_path(run_dir: str | Path) -> Path:
    """qdrant's layout: ``RUN_DIR/../scorecard-history.csv``."""
    return Path(run_dir).resolve().parent / HISTORY_FILE


def week_history(ledgers: WeekLedgers, history_path: str | Path) -> hist.WeekHistory | None:
    """The history a week is scored against: the file and its sidecars (:func:`~._history.read_week_history`), or
    None for a week whose pair keeps no history (a comparison: the file is not even opened, so a damaged one cannot
    stop it).

    Raises:
        skillbench.scorecard.HistoryError: a malformed history file of a week that keeps the history.
    """
    return hist.read_week_history(history_path) if hist.keeps_history(ledgers.arms) else None


def write_scorecard(run_dir: str | Path, *, history_path: str | Path | None = None, run_key: str | None = None,
                    n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                    site: str | None = None) -> ScorecardResult:
    """Compute the scorecard, write ``RUN_DIR/scorecard.md`` with ``scorecard-comment.md`` beside it (the decision
    and what does not pass, fit for a pull-request comment) and upsert this week into the history file.

    The history keeps qdrant's 8 columns; each row's endpoint goes to its sidecar (:mod:`.history`). An
    INCOMPLETE week (``data.incomplete_reasons``) writes its scorecard but no history row; a comparison
    (:func:`~.history.keeps_history`) neither reads nor writes the history (``history_path`` None).

    Raises:
        skillbench.ledgers.LedgerError: a malformed or damaged ledger (nothing is written).
        skillbench.scorecard.HistoryError: a malformed history file, or a history path that is a folder (checked
            before anything is written).
    """
    run_dir = Path(run_dir)
    history_path = Path(history_path) if history_path else default_history_path(run_dir)
    ledgers = load_week(run_dir)
    data = compute_scorecard(ledgers, history=week_history(ledgers, history_path), run_key=run_key,
                             n_resamples=n_resamples, seed=seed, site=site)
    markdown = render_markdown(data)
    path = run_dir / SCORECARD_FILE
    atomic_write_text(path, markdown)
    atomic_write_text(run_dir / SCORECARD_COMMENT_FILE, render_comment(data, full_report=SCORECARD_FILE))
    # the week page and the reports index show the decision from this file: they never recompute a week
    atomic_write_text(run_dir / DECISION_FILE, json.dumps(week_decision(data).to_json(), indent=2, allow_nan=False))
    if not data.keeps_history:
        return ScorecardResult(path=path, history_path=None, data=data, markdown=markdown)
    hist.write_week_history(history_path, data.recorded or hist.as_week_history(data.history))
    return ScorecardResult(path=path, history_path=history_path, data=data, markdown=markdown)


def scorecard_frames(run_dir: str | Path, *, history_path: str | Path | None = None, run_key: str | None = None,
                     n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> dict[str, pd.DataFrame]:
    """The scorecard's tidy DataFrames for a run directory, writing nothing (for notebooks).

    Keys: ``prompt_reps, prompts, cells, lift, paired, uncertainty, history, week_over_week, activation,
    self_served, trigger_health, avoid_violations, coverage, dropped, prompt_cost_deltas, gate``, and for a week
    with checks the objective layer's ``check_runs, check_rates, check_stimuli, pass_k, task_lift, transitions,
    transition_counts, objective_record, tool_violations, check_errors``.
    """
    history_path = Path(history_path) if history_path else default_history_path(run_dir)
    ledgers = load_week(run_dir)
    data = compute_scorecard(ledgers, history=week_history(ledgers, history_path), run_key=run_key,
                             n_resamples=n_resamples, seed=seed)
    return data.frames()
