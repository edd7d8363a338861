"""Evidence rates: how often a judge quoted text that is not in the answer (one rule, every judge).

A met/violated verdict must quote the answer. From a judge's call records (``positives`` = met/violated verdicts
of a first ask, ``unverified`` = those whose quote was not found), the *hallucinated-evidence rate* is
unverified / positives over first asks (grade and tie-break calls), and the *residual rate* counts what was still
unverified after the one re-ask — including items left ungraded because the re-ask itself failed.

A verbatim quote of a violated avoid item can still fail to show the harm (:func:`skillbench.judge.claim_gap`):
:func:`no_claim_frame` counts those per judge and model, from any frame of verdicts with their quotes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.judge._quotes import claim_gap
from skillbench.ledgers import RUN_JUDGE_FILE, LedgerError, read_run_judge
from skillbench.vocab import ALLOWED_VERDICTS

EVIDENCE_COLUMNS = ["judge_model", "positive_verdicts", "unverified", "hallucinated_evidence_rate",
                    "still_unverified", "residual_rate"]
FIRST_ASKS = ("grade", "tie-break")
REASK_FAILED = "evidence re-ask failed"  # the reason an item is ungraded when its re-ask failed
NO_CLAIM_COLUMNS = ["judge_model", "model", "avoid_violations", "no_claim", "no_claim_rate"]
VIOLATED = ALLOWED_VERDICTS["avoid"][0]


def evidence_counts(calls: Iterable[Mapping[str, Any]], ungraded_reasons: Iterable[str] = ()) -> list[int]:
    """``[positives, unverified, still_unverified]`` from call records and the reasons of ungraded items."""
    counts = [0, 0, 0]
    for call in calls:
        if "positives" not in call:
            continue
        if call.get("purpose") in FIRST_ASKS:
            counts[0] += int(call["positives"])
            counts[1] += len(call.get("unverified", []))
        elif call.get("purpose") == "re-ask":
            counts[2] += len(call.get("unverified", []))
    counts[2] += sum(1 for reason in ungraded_reasons if reason.startswith(REASK_FAILED))
    return counts


def evidence_frame(counts: Mapping[str, list[int]]) -> pd.DataFrame:
    """One row per judge model from :func:`evidence_counts` totals, with both rates (NaN without positives)."""
    rows = [{"judge_model": m, "positive_verdicts": p, "unverified": u,
             "hallucinated_evidence_rate": u / p if p else float("nan"), "still_unverified": s,
             "residual_rate": s / p if p else float("nan")} for m, (p, u, s) in sorted(counts.items())]
    return pd.DataFrame(rows, columns=EVIDENCE_COLUMNS)


def evidence_summary(run_dir: str | Path) -> pd.DataFrame:
    """Each judge model's evidence rates, from the per-run ``judge.json`` files of ``run_dir``.

    Returns:
        One row per judge model: ``judge_model, positive_verdicts, unverified, hallucinated_evidence_rate,
        still_unverified, residual_rate``.
    """
    totals: dict[str, list[int]] = {}
    for path in sorted(Path(run_dir).glob(f"*/{RUN_JUDGE_FILE}")):
        try:
            data = read_run_judge(path.parent) or {}
        except LedgerError:  # a damaged record: the rates stand on the others (as before the file contract)
            continue
        found = evidence_counts(data.get("calls", []), data.get("ungraded", {}).values())
        total = totals.setdefault(data.get("judge_model", ""), [0, 0, 0])
        totals[data.get("judge_model", "")] = [a + b for a, b in zip(total, found, strict=True)]
    return evidence_frame(totals)


def avoid_claim_gaps(rows: pd.DataFrame, quote: str = "evidence_quote") -> pd.Series:
    """Per row, :func:`~skillbench.judge._quotes.claim_gap` of a violated avoid item's quote; ``""`` for every
    other row (rows need ``item_type``, ``verdict``, ``item_text`` and the ``quote`` column)."""
    violated = rows["item_type"].eq("avoid") & rows["verdict"].eq(VIOLATED)
    gaps = pd.Series("", index=rows.index, dtype=object)
    if not violated.any():
        return gaps
    # a missing quote (NaN in a typed ledger) is no quote, never the word "nan"
    texts, items = rows.loc[violated, quote], rows.loc[violated, "item_text"]
    pairs = [("" if no_text else str(text), "" if no_item else str(item)) for text, no_text, item, no_item in zip(
        texts.tolist(), texts.isna().tolist(), items.tolist(), items.isna().tolist(), strict=True)]
    known = {pair: claim_gap(*pair) for pair in set(pairs)}  # each distinct quote × item once (100k-run weeks)
    gaps[violated] = [known[pair] for pair in pairs]
    return gaps


def no_claim_frame(rows: pd.DataFrame, quote: str = "evidence_quote") -> pd.DataFrame:
    """Per judge model × model: violated avoid items, how many of their quotes cannot show the harm, the share.

    ``rows`` is any frame of verdicts with their quotes (``scores.csv``; a missing ``judge_model`` — qdrant's
    ledger — reads as ``""``). Returns :data:`NO_CLAIM_COLUMNS`; empty without a violated avoid item.
    """
    violated = rows[rows["item_type"].eq("avoid") & rows["verdict"].eq(VIOLATED)]
    if violated.empty:
        return pd.DataFrame(columns=NO_CLAIM_COLUMNS)
    frame = pd.DataFrame({"judge_model": violated.get("judge_model", pd.Series("", index=violated.index)),
                          "model": violated["model"], "gap": avoid_claim_gaps(violated, quote).ne("")})
    out = frame.fillna({"judge_model": ""}).groupby(["judge_model", "model"], sort=True)["gap"].agg(
        avoid_violations="size", no_claim="sum").reset_index()
    out["no_claim"] = out["no_claim"].astype(int)
    out["no_claim_rate"] = out["no_claim"] / out["avoid_violations"]
    return out[NO_CLAIM_COLUMNS]
