"""Evidence that shows the harm (issue 32 point 8): a verbatim quote of a violated avoid item that cannot carry the
harmful claim — a bare number, a short generic fragment — is flagged, counted per judge × model, and shown."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from skillbench.judge import claim_gap, no_claim_frame
from skillbench.vocab import EVIDENCE_NO_CLAIM

CASES = json.loads((Path(__file__).parents[1] / "data" / "evidence_claim_cases.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES["cases"], ids=lambda c: c["name"])
def test_a_quote_that_cannot_show_the_harm_is_flagged(case: dict) -> None:
    gap = claim_gap(case["quote"], case["item"])
    assert bool(gap) is case["flagged"], gap
    if case["flagged"]:
        assert gap.startswith(case["reason"])


def test_no_claim_quotes_are_counted_per_judge_and_model() -> None:
    """Only violated avoid items are read; a must's short quote or a clean avoid never counts; qdrant's ledger has no
    judge_model column and reads as one unnamed judge."""
    rows = pd.DataFrame([
        ("j1", "haiku", "avoid", "violated", "Quotes a figure as the safe default", "819.9"),
        ("j1", "haiku", "avoid", "violated", "Recommends self-hosted Docker", "Use Docker."),
        ("j1", "sonnet", "avoid", "violated", "Tunes index parameters first", "Here's a plan for each issue:"),
        ("j1", "sonnet", "avoid", "clean", "Tunes index parameters first", ""),
        ("j1", "sonnet", "must", "met", "Names the setting", "42"),
        ("j2", "haiku", "avoid", "violated", "Quotes a figure as the safe default", "It is 819.9 by default"),
    ], columns=["judge_model", "model", "item_type", "verdict", "item_text", "evidence_quote"])
    got = no_claim_frame(rows).set_index(["judge_model", "model"])
    assert got.loc[("j1", "haiku")].to_dict() == {"avoid_violations": 2, "no_claim": 1, "no_claim_rate": 0.5}
    assert got.loc[("j1", "sonnet")].to_dict() == {"avoid_violations": 1, "no_claim": 1, "no_claim_rate": 1.0}
    assert got.loc[("j2", "haiku")].to_dict() == {"avoid_violations": 1, "no_claim": 0, "no_claim_rate": 0.0}
    qdrant = no_claim_frame(rows.drop(columns="judge_model"))
    assert set(qdrant["judge_model"]) == {""} and int(qdrant["no_claim"].sum()) == 2
    assert no_claim_frame(rows[rows["item_type"].eq("must")]).empty
    typed = rows.assign(evidence_quote=rows["evidence_quote"].where(rows["evidence_quote"].ne("819.9")))  # NaN
    assert int(no_claim_frame(typed)["no_claim"].sum()) == 1  # a missing quote is the verbatim check's, not this
    assert EVIDENCE_NO_CLAIM == "no claim"
