"""The judging and calibration ledgers of a week as tables, for notebooks 03 and 04 (read-only: no lock)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.ledgers import (
    CALIBRATION_KEY_COLUMNS,
    CALIBRATION_MD,
    JUDGE_SKIPS_FILE,
    SCORES_FILE,
    read_calibration,
    read_calibration_grades,
)
from skillbench.vocab import OUTCOMES
from skillbench.weekly._notebook import _path


def judge_tables(run_dir: str | Path) -> dict[str, pd.DataFrame]:
    """The judging ledgers as tables: ``identifiers`` (the identifiers pass's counts per model × arm), ``scores``,
    ``verdicts`` (counts), ``evidence``, ``skips``, ``pairs``, ``pair_outcomes`` and ``position`` (the
    position-swap check)."""
    from skillbench.judge import evidence_summary, pairs_frame, position_agreement
    from skillbench.ledgers import empty_scores, read_identifiers, read_judge_skips, read_scores

    folder = _path(run_dir)
    scores = read_scores(folder / SCORES_FILE) if (folder / SCORES_FILE).is_file() else empty_scores()
    verdicts = (scores.groupby(["item_type", "verdict", "condition"]).size().unstack("condition", fill_value=0)
                .reset_index() if not scores.empty else pd.DataFrame())
    pairs = pairs_frame(folder)
    outcomes = (pairs[pairs["error"].eq("")].groupby(["skill_family", "model", "outcome"]).size()
                .unstack("outcome", fill_value=0).reindex(columns=list(OUTCOMES), fill_value=0).reset_index()
                if not pairs.empty else pd.DataFrame(columns=["skill_family", "model", *OUTCOMES]))
    return {"identifiers": identifier_counts(read_identifiers(folder)),
            "scores": scores, "verdicts": verdicts, "evidence": evidence_summary(folder),
            "skips": read_judge_skips(folder / JUDGE_SKIPS_FILE), "pairs": pairs, "pair_outcomes": outcomes,
            "position": pd.DataFrame([position_agreement(pairs)]) if not pairs.empty else pd.DataFrame()}


IDENTIFIER_COUNT_COLUMNS = ["model", "condition", "answers", "identifiers", "resolved", "unresolved", "unchecked"]


def identifier_counts(week: Any) -> pd.DataFrame:
    """Per model × arm: answers checked, identifiers found and each status's count (empty: the pass did not run or
    the suite declares no surface; the scorecard's Fabricated identifiers section has the rates and the Δ)."""
    from skillbench.identifiers import IDENTIFIER_STATUSES

    if week is None or week.runs.empty:
        return pd.DataFrame(columns=IDENTIFIER_COUNT_COLUMNS)
    answers = week.runs.groupby(["model", "condition"]).size().rename("answers")
    ids = week.identifiers
    counts = (ids.groupby(["model", "condition", "status"]).size().unstack("status", fill_value=0)
              .reindex(columns=list(IDENTIFIER_STATUSES), fill_value=0))
    table = pd.concat([answers, counts], axis=1).fillna(0).astype(int)
    table["identifiers"] = table[list(IDENTIFIER_STATUSES)].sum(axis=1)
    return table.reset_index()[IDENTIFIER_COUNT_COLUMNS]


def calibration_tables(run_dir: str | Path) -> dict[str, Any]:
    """``calibration.csv`` as ``agreement`` and ``self_agreement`` tables, ``grades``, and ``markdown``."""
    folder = _path(run_dir)
    table = read_calibration(folder)
    table = pd.DataFrame(columns=list(CALIBRATION_KEY_COLUMNS)) if table is None else table
    grades = read_calibration_grades(folder)
    md = folder / CALIBRATION_MD
    return {
        "agreement": table[table["comparison"] != "self-agreement"].reset_index(drop=True),
        "self_agreement": table[table["comparison"] == "self-agreement"].reset_index(drop=True),
        "grades": pd.DataFrame() if grades is None else grades,
        "markdown": md.read_text(encoding="utf-8") if md.is_file() else "",
    }
