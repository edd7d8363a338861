"""The columnar aggregation agrees with the row-by-row one it replaced, on seeded random weeks.

Each reference below is the straightforward form the scorecard computed before it was made to scale to 100k runs
(``benchmarks/scorecard.py``): string-keyed groupbys, a MultiIndex membership test, a Python call per row, scipy's
own BCa. The weeks are drawn to hold what breaks aggregations: prompts missing an arm, single-rep prompts, ungraded
and PARSE_ERROR items (NaN credit), reps with no graded item, prompts without bonus items, tied differences, repeated
and missing quotes, NA signals. Agreement is exact for counts and keys, and for every rate to the digit a page prints.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from skillbench.judge import avoid_claim_gaps, claim_gap
from skillbench.ledgers import keys_found, read_scores
from skillbench.ledgers._columns import QDRANT_SCORES_COLUMNS
from skillbench.markdown import fmt
from skillbench.scorecard import prompt_rep_scores
from skillbench.scorecard._compute import _per_distinct
from skillbench.scorecard._scoring import METRICS, REP_KEYS, composite_score
from skillbench.scorecard._stats import bootstrap_intervals
from skillbench.signals import skip_reason
from skillbench.vocab import ALLOWED_VERDICTS, ITEM_TYPES

SEEDS = range(4)
QUOTES = ["a quoted span", "0.42", "", "don't tune m=0 here", "here's a", "nan-free text", None]


def _random_scores(seed: int, path: Path) -> pd.DataFrame:
    """A scores ledger (qdrant's columns) of a random week, written and read back through the ledger reader."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(int(rng.integers(4, 15))):
        n_reps = 1 if p % 3 == 0 else int(rng.integers(1, 4))  # every third prompt has one rep
        n_items = {"must": int(rng.integers(1, 4)), "bonus": int(rng.integers(1, 3)) if p % 4 else 0,
                   "avoid": int(rng.integers(0, 3))}  # every fourth prompt has no bonus item
        for model in ("sonnet", "haiku"):
            for condition in ("no-skill", "with-skill"):
                if p % 5 == 1 and model == "haiku" and condition == "with-skill":  # an arm never graded
                    continue
                for rep in range(1, n_reps + 1):
                    unjudged = p == 2 and rep == 1  # a rep the judge could not grade at all
                    for kind in ITEM_TYPES:
                        for i in range(n_items[kind]):
                            positive, negative = ALLOWED_VERDICTS[kind]
                            draw = 1.0 if unjudged else rng.random()
                            verdict = (positive if draw < 0.45 else negative if draw < 0.8 else
                                       str(rng.choice(["ungraded", "PARSE_ERROR", ""])))
                            credit = "" if verdict in ("ungraded", "PARSE_ERROR", "") else (
                                "1.0" if verdict == positive else "0.0")
                            contribution = "" if not credit else (
                                f"{-float(credit) + 0.0}" if kind == "avoid" else credit)
                            quote = QUOTES[int(rng.integers(len(QUOTES)))] if verdict == positive else ""
                            rows.append([f"p{p:02d}", f"fam{p % 2}", model, condition, rep, kind, f"{kind} item {i}",
                                         verdict, credit, contribution, "", quote or ""])
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(QDRANT_SCORES_COLUMNS)
        writer.writerows(rows)
    return read_scores(path)


def _reference_prompt_rep_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """The per prompt × rep metrics as computed before: one string-keyed groupby per count."""
    columns = [*REP_KEYS, "skill", "n_must", "n_bonus", "n_avoid", "n_ungraded", *METRICS]
    graded_mask = scores["graded"]
    ungraded = (~graded_mask).groupby([scores[k] for k in REP_KEYS], sort=False).sum().rename("n_ungraded")
    graded = scores[graded_mask]
    agg = graded.groupby([*REP_KEYS, "item_type"], sort=False)["credit"].agg(["sum", "count"]).unstack("item_type")
    total = agg["sum"].reindex(columns=list(ITEM_TYPES))
    count = agg["count"].reindex(columns=list(ITEM_TYPES)).fillna(0).astype(int)
    out = pd.DataFrame(index=agg.index)
    out["skill"] = graded.groupby(REP_KEYS, sort=False)["skill"].first()
    for t in ITEM_TYPES:
        out[f"n_{t}"] = count[t]
    out["n_ungraded"] = ungraded.reindex(out.index).fillna(0).astype(int)
    out["must_coverage"] = (total["must"] / count["must"]).where(count["must"] > 0)
    rubric_bonus = (scores["item_type"] == "bonus").groupby([scores[k] for k in REP_KEYS], sort=False).sum()
    has_bonus = rubric_bonus.reindex(out.index).fillna(0).gt(0)
    out["bonus_rate"] = (total["bonus"] / count["bonus"]).where(count["bonus"] > 0, np.where(has_bonus, np.nan, 0.0))
    out["avoid_violations"] = total["avoid"].fillna(0.0)
    out["composite"] = composite_score(out["must_coverage"], out["bonus_rate"], out["avoid_violations"])
    return out.reset_index().sort_values(REP_KEYS, kind="stable").reset_index(drop=True)[columns]


@pytest.mark.parametrize("seed", SEEDS)
def test_prompt_rep_metrics_match_the_string_keyed_groupbys(seed: int, tmp_path: Path) -> None:
    scores = _random_scores(seed, tmp_path / "scores.csv")
    got, want = prompt_rep_scores(scores), _reference_prompt_rep_scores(scores)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    for metric in METRICS:  # and so does every digit a page prints
        assert got[metric].map(fmt).tolist() == want[metric].map(fmt).tolist()


def test_the_random_weeks_reach_the_hard_cases(tmp_path: Path) -> None:
    reps = pd.concat([prompt_rep_scores(_random_scores(seed, tmp_path / f"{seed}.csv")) for seed in SEEDS])
    prompts = reps.groupby(["model", "condition", "prompt"])["rep"].nunique()
    arms = reps.groupby(["model", "prompt"])["condition"].nunique()
    assert (prompts == 1).any() and (prompts > 1).any()  # single-rep prompts beside repeated ones
    assert (arms == 1).any()  # a prompt graded in one arm only
    assert reps["n_ungraded"].gt(0).any() and reps["bonus_rate"].isna().any()  # ungraded items; no bonus measured
    assert reps["bonus_rate"].eq(0).any() and reps["must_coverage"].isna().any()  # no bonus item; no must graded
    assert not (reps["prompt"].eq("p02") & reps["rep"].eq(1)).any()  # a rep with nothing graded has no row


@pytest.mark.parametrize("seed", SEEDS)
def test_run_keys_found_as_a_multiindex_finds_them(seed: int, tmp_path: Path) -> None:
    scores = _random_scores(seed, tmp_path / "scores.csv")
    runs = scores.drop_duplicates(REP_KEYS)[REP_KEYS].reset_index(drop=True)
    runs = pd.concat([runs, runs.assign(prompt="never-graded")], ignore_index=True)
    runs["rep"] = runs["rep"].astype("Int64")  # the manifest's nullable integer, the ledger's plain one
    graded = scores[scores["graded"]]
    got_rows, got_graded = keys_found(runs, scores, keys=REP_KEYS, among=(scores["graded"].to_numpy(),))
    index = pd.MultiIndex.from_frame(runs[REP_KEYS].astype({"rep": "int64"}).astype(object))
    for got, other in ((got_graded, graded), (got_rows, scores)):
        want = index.isin(pd.MultiIndex.from_frame(other[REP_KEYS].astype(object)))
        np.testing.assert_array_equal(got, want)
    assert got_rows.any() and not got_rows.all()


def test_skip_reasons_once_per_distinct_run_are_the_per_run_reasons() -> None:
    rng = np.random.default_rng(7)
    n = 300
    signals = pd.DataFrame({
        "budget_hit": pd.array(rng.choice([0, 1, None], n, p=[0.8, 0.1, 0.1]), dtype="Int64"),
        "condition": rng.choice(["no-skill", "with-skill", "placebo", "with-skill@main"], n),
        "skill_available": pd.array(rng.choice([0, 1, None], n), dtype="Int64"),
        "exit_code": pd.array(rng.choice([0, 1, 2, None], n, p=[0.7, 0.1, 0.1, 0.1]), dtype="Int64"),
        "is_error": rng.random(n) < 0.1,
    })
    records = signals.astype(object).where(signals.notna(), None).to_dict("records")
    assert _per_distinct(signals, skip_reason) == [skip_reason(r) for r in records]
    assert _per_distinct(signals.iloc[0:0], skip_reason) == []


def test_claim_gaps_once_per_distinct_quote_are_the_per_row_gaps() -> None:
    rng = np.random.default_rng(3)
    n = 200
    rows = pd.DataFrame({"item_type": rng.choice(["avoid", "must"], n, p=[0.8, 0.2]),
                         "verdict": rng.choice(["violated", "clean", "met"], n),
                         "item_text": rng.choice(["don't set m=0 on a tenant", "avoid a bare score", np.nan], n),
                         "evidence_quote": rng.choice(np.array(QUOTES, dtype=object), n)})
    want = ["" if not (k == "avoid" and v == "violated") else
            claim_gap("" if pd.isna(q) else str(q), "" if pd.isna(i) else str(i))
            for k, v, q, i in zip(rows["item_type"], rows["verdict"], rows["evidence_quote"], rows["item_text"],
                                  strict=True)]
    got = avoid_claim_gaps(rows)
    assert got.tolist() == want and got.index.equals(rows.index)
    assert any(want) and "" in want


@pytest.mark.parametrize("n", [3, 26, 400])
def test_the_bca_interval_is_scipys_at_every_size(n: int) -> None:
    rng = np.random.default_rng(n)
    # few distinct values: tied differences, a skewed lift, a zero difference on most prompts
    d = rng.choice([-0.5, -0.25, 0.0, 0.0, 0.0, 0.25, 0.5, 1.0], size=(2, n))
    low, high = bootstrap_intervals(d, n_resamples=2_000, rng=11)
    res = sps.bootstrap((d,), np.mean, n_resamples=2_000, method="BCa", vectorized=True, axis=-1,
                        rng=np.random.default_rng(11))
    np.testing.assert_allclose(low, res.confidence_interval.low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(high, res.confidence_interval.high, rtol=0, atol=1e-12)
    assert [fmt(x) for x in (*low, *high)] == [fmt(x) for x in (*res.confidence_interval.low,
                                                                   *res.confidence_interval.high)]
