"""The judge study's pairwise part: every study judge as the pairwise judge on a sample of the week's pairs.

Both orders of each sampled pair, with :class:`skillbench.judge.pairwise.PairJudge` (its requests and validated
calls), into the study's own ``study-pairs.csv`` (never the week's ``pairs.csv``); the bias of each judge is
:func:`skillbench.calibration.bias.pairwise_bias`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from skillbench.calibration.study import StudyOptions

Log = Callable[[str], None]


def study_pairwise(run_dir: Path, options: StudyOptions, base_url: str, api_key: str,
                   say: Log) -> tuple[pd.DataFrame | None, pd.DataFrame | None, list[str]]:
    """Every study judge as the pairwise judge on up to ``sample`` of the week's pairs, both orders.

    Reuses :class:`skillbench.judge.pairwise.PairJudge` (its requests and validated calls); the rows go to the
    study's own ``study-pairs.csv``, never the week's ``pairs.csv``. Returns ``(pair rows, bias table, notes)``;
    ``(None, None, notes)`` when the week has no ``pairs.csv`` or no complete pair.
    """
    from concurrent.futures import ThreadPoolExecutor

    from skillbench.calibration.bias import pair_facts, pairwise_bias
    from skillbench.judge.client import JudgeClient
    from skillbench.judge.pairwise import PairJudge, find_pairs
    from skillbench.ledgers.columns import PAIRS_COLUMNS
    from skillbench.ledgers.files import PAIRS_FILE
    from skillbench.ledgers.week import week_run_key

    if not (run_dir / PAIRS_FILE).is_file():
        return None, None, ["no pairwise part: the week has no pairs.csv (run skillbench judge-pairs first)"]
    pairs = find_pairs(run_dir)
    if not pairs:
        return None, None, ["no pairwise part: no prompt × model × rep has a gradeable answer in both arms"]
    if options.sample is not None and options.sample < len(pairs):
        pairs = sorted(random.Random(f"judge-study-pairs:{options.seed}").sample(pairs, options.sample),
                       key=lambda p: p.key)
    say(f"judge-study: {len(pairs)} pair(s) × 2 orders by each judge (pairwise bias)")
    key, rows, spent = week_run_key(run_dir), [], 0.0
    for judge in options.judges:
        client = JudgeClient(base_url, api_key, judge, max_retries=options.max_retries, timeout=options.timeout)
        pair_judge = PairJudge(client, seed=options.seed)
        try:
            with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
                done = list(pool.map(lambda p, j=pair_judge: j.judge(p, key), pairs))
        finally:
            client.close()
        rows += [row for row, _ in done]
        spent += sum(cost for _, cost in done)
    frame = pd.DataFrame(rows, columns=list(PAIRS_COLUMNS))
    lengths, equal = pair_facts(run_dir)
    bias = pairwise_bias(frame, lengths=lengths, equal=equal, n_resamples=options.n_resamples, seed=options.seed,
                         confidence=options.confidence, where="study-pairs.csv")
    order = {j: i for i, j in enumerate(options.judges)}
    bias = bias.sort_values("judge_model", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)
    notes = [f"pairwise part: {len(pairs)} of the week's pairs, both orders, by every judge (spend ${spent:.4f}); "
             "equal pairs for the length bias are those the week's rubric judge (scores.csv) scored equal"]
    return frame, bias, notes
