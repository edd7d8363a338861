"""The simulated judge's leniency and length-bias knobs, through the real ``anthropic`` SDK.

Leniency is measured against the simulation's answer key on the generated sim week: with flip rate ε, a
must/bonus item the answer lacks is judged met with probability ``ε + (1 − ε)·leniency`` (an avoid it violates
is judged clean alike), and a favourable verdict is never taken back (the knob only touches unfavourable
readings, after the flip, with its own draws). Knobs at 0 must give byte-identical outputs to the judge
before the knobs existed: a digest of its verdicts and preferences over every subset of a rubric is pinned.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from pathlib import Path

import anthropic
import pandas as pd
import pytest

from skillbench.calibration import grade_repeats
from skillbench.judge import (
    PREFERENCE_TOOL,
    VERDICTS_TOOL,
    JudgeClient,
    build_judge_request,
    build_pair_request,
    judge_headers,
    select_runs,
    tool_input,
)
from skillbench.sim._answers import compose
from tests.helpers.judge import judge_endpoint, truth
from tests.helpers.sim import PROMPTS

PROMPT = PROMPTS["chain-wax"]["prompt"]
ITEMS = [(i, kind, text) for i, (kind, text) in enumerate(PROMPTS["chain-wax"]["rubric"])]
JUDGE = "claude-opus-5-5"
# Digests of _outputs() made by the simulated judge before leniency and length_bias existed (commit 11d8a70),
# seed 3, flip 0.2, fabricated quotes 0.2, position bias 0.3, by tie_margin. A change here means the sim judge's
# outputs moved: every simulated week judged before would grade differently.
PINNED = {1: "173a457aab69de09", 0: "99a1d7c416644ac6"}


def _answer(stated: list[int], seed: int = 0, verbosity: float = 1.0) -> str:
    return compose([(k, t) for _, k, t in ITEMS], stated, random.Random(seed), verbosity)


def _outputs(client: anthropic.Anthropic) -> str:
    """Digest of the verdicts (with quotes) of every subset's answer and of a preference per subset, 2 samples."""
    subsets = [[i for i in range(len(ITEMS)) if m >> i & 1] for m in range(2 ** len(ITEMS))]
    out = []
    for n, stated in enumerate(subsets):
        a, b = _answer(stated, n), _answer(subsets[-1 - n], n + 1)
        for s in (1, 2):
            msg = client.messages.create(model=JUDGE, extra_headers=judge_headers(s),
                                         **build_judge_request(PROMPT, a, ITEMS, shuffle_seed=n))
            out.append(tool_input(msg, VERDICTS_TOOL))
            msg = client.messages.create(model=JUDGE, extra_headers=judge_headers(s),
                                         **build_pair_request(PROMPT, a, b, ITEMS, n))
            out.append(tool_input(msg, PREFERENCE_TOOL)["winner"])
    return hashlib.sha256(json.dumps(out, sort_keys=True).encode()).hexdigest()[:16]


@pytest.mark.parametrize("tie_margin", [1, 0])
def test_knobs_at_zero_reproduce_the_judge_without_them(endpoint, tie_margin: int) -> None:
    base = {"flip_rate": 0.2, "fabricated_quote_rate": 0.2, "position_bias": 0.3, "tie_margin": tie_margin}
    assert _outputs(endpoint(**base)) == PINNED[tie_margin]
    assert _outputs(endpoint(**base, leniency=0.0, length_bias=0.0)) == PINNED[tie_margin]
    assert _outputs(endpoint(**base, leniency=0.3, length_bias=0.5)) != PINNED[tie_margin]


def test_length_bias_picks_the_longer_of_two_equally_good_answers(endpoint) -> None:
    short, long = _answer([0, 2], 1, verbosity=0.5), _answer([0, 2], 2, verbosity=3.0)
    assert len(long) > len(short)

    def ask(client: anthropic.Anthropic, a: str, b: str) -> str:
        msg = client.messages.create(model=JUDGE, extra_headers=judge_headers(1),
                                     **build_pair_request(PROMPT, a, b, ITEMS, 0))
        return tool_input(msg, PREFERENCE_TOOL)["winner"]

    always = endpoint(position_bias=0.0, length_bias=1.0)
    assert ask(always, short, long) == "B" and ask(always, long, short) == "A"
    better = _answer([0, 1, 2, 3])  # more items satisfied beats length
    assert len(better) < len(long) and ask(always, better, long) == "A"
    never = endpoint(position_bias=0.0, length_bias=0.0)
    assert ask(never, short, long) == ask(never, long, short) == "tie"
    biased = endpoint(position_bias=1.0, length_bias=1.0)  # position is drawn first
    assert ask(biased, short, long) == ask(biased, long, short) == "A"


def _within_binomial(k: int, n: int, p: float, sds: float = 4.0) -> bool:
    return abs(k - n * p) <= sds * math.sqrt(n * p * (1 - p)) + 1


def _grades(week: Path, **judge: float) -> pd.DataFrame:
    runs, _ = select_runs(week, include_plugin=True)
    with judge_endpoint(**judge) as ep:
        client = JudgeClient(ep.base_url, ep.api_key, JUDGE, max_retries=1)
        try:
            grades, _, _ = grade_repeats(runs, client, [1, 2, 3], JUDGE, jobs=3)
        finally:
            client.close()
    key = truth(week).rename(columns={"positive": "truth"})
    return grades.merge(key, on=["run_id", "item_index", "item_type"], validate="many_to_one")


def test_leniency_raises_false_met_by_the_knob_and_leaves_true_positives_alone(sim_week: Path) -> None:
    eps, lenient = 0.05, 0.3
    plain = _grades(sim_week, flip_rate=eps)
    soft = _grades(sim_week, flip_rate=eps, judges={"opus": {"leniency": lenient}})
    assert len(plain) == len(soft) == 24 * 5 * 3
    both = plain.merge(soft, on=["run_id", "item_index", "item_type", "rater", "truth"], suffixes=("", "_lenient"))
    credit = both["item_type"].ne("avoid")
    # The favourable verdict where the honest one is unfavourable: met for a lacking must/bonus, clean for a
    # violated avoid. positive is met/violated, so for avoid items the favourable reading is positive == 0.
    unfavourable = (credit & both["truth"].eq(0)) | (~credit & both["truth"].eq(1))
    favourable_plain = both["positive"].eq(credit.astype(int))
    favourable_soft = both["positive_lenient"].eq(credit.astype(int))
    n = int(unfavourable.sum())
    assert n >= 100
    assert _within_binomial(int(favourable_plain[unfavourable].sum()), n, eps)
    assert _within_binomial(int(favourable_soft[unfavourable].sum()), n, eps + (1 - eps) * lenient)
    assert favourable_soft[unfavourable].sum() > favourable_plain[unfavourable].sum()
    # Leniency only ever moves a verdict to the favourable side: every favourable verdict of the plain judge
    # (true positives included) is given again, item by item and sample by sample.
    assert (both.loc[favourable_plain, "verdict"] == both.loc[favourable_plain, "verdict_lenient"]).all()
    assert favourable_soft[~unfavourable].mean() >= favourable_plain[~unfavourable].mean()
    assert not soft["flagged"].any()  # a lenient "met" quotes a real line of the answer
