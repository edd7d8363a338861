"""The pairwise judge: is the treatment's answer better than the control's answer to the same task?

The arms are the week's :class:`~skillbench.arms.ArmPair` (``run.json``): with-skill against no-skill for a
weekly run, ``with-skill@HEAD`` against ``with-skill@BASE`` for ``skillbench compare``. For each (prompt, model,
rep) with a gradeable answer in both arms, the judge sees the two answers labelled ``A`` and ``B`` and the rubric
(:func:`skillbench.judge._protocol.build_pair_request`), twice: in order ``ab`` the treatment's answer is ``A``, in
order ``ba`` it is ``B``. ``winner_ab`` and ``winner_ba`` hold the label the judge picked (``A``, ``B`` or
``tie``). The treatment wins (``W``) or loses (``L``) only when both orders agree; anything else is a tie
(``T``), so a judge that prefers a position cannot create a win.

A call that fails after the SDK's retries, or whose reply does not validate, is retried once; still failing,
the pair's ``outcome`` is empty and ``error`` says why (the preference gate reads that as a judge error, never
as a loss). ``pairs.csv`` is appended one pair at a time (flush + fsync) and resumes: judged pairs are kept,
errored pairs are judged again. The spend is split between the pair's two runs in their ``judge_cost.txt``.
A week without a single complete pair still gets ``pairs.csv`` (its header only), and the log says why.
"""

from __future__ import annotations

import contextlib
import random
import sys
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.arms import DEFAULT_PAIR, ArmPair
from skillbench.judge._answers import RunAnswer, RunSelection, select_runs
from skillbench.judge._client import CallResult, JudgeClient, SlotFailed, ask_validated, opaque_run_id, shuffle_seed
from skillbench.judge._costs import clear_judge_cost, record_judge_cost
from skillbench.judge._protocol import PREFERENCE_TOOL, build_pair_request, judge_headers, parse_preference, tool_input
from skillbench.judge._run import JudgeOptions, batch_pacing, batch_provenance, record_pairs_pass
from skillbench.ledgers import PAIRS_COLUMNS, PAIRS_FILE, AppendLedger, read_cells, week_arms, week_run_key
from skillbench.runtime import PassContext
from skillbench.signals import run_dirs
from skillbench.vocab import LOSS, OUTCOMES, TIE, WIN

ORDERS = ("ab", "ba")  # ab: the treatment is A; ba: the treatment is B


@dataclass(frozen=True)
class Pair:
    """The two answers to one (prompt, model, rep): the treatment's and the control's."""

    treatment: RunAnswer
    control: RunAnswer

    @property
    def with_skill(self) -> RunAnswer:
        """The treatment's answer (a weekly run's with-skill arm; the name the weekly pair gives it)."""
        return self.treatment

    @property
    def no_skill(self) -> RunAnswer:
        """The control's answer (a weekly run's no-skill arm)."""
        return self.control

    @property
    def key(self) -> tuple[str, str, int]:
        return self.treatment.prompt, self.treatment.model, self.treatment.rep

    @property
    def pair_id(self) -> str:
        return f"{self.treatment.run_id}|{self.control.run_id}"


def find_pairs(run_dir: str | Path, selection: RunSelection | None = None, *, pair: ArmPair | None = None,
               ) -> list[Pair]:
    """Pairs of gradeable answers (treatment, control) of the same prompt, model and rep, sorted.

    ``pair``: the arms compared (default: the week's, :func:`skillbench.ledgers.week_arms`).
    """
    pair = pair or week_arms(run_dir)
    runs, _ = select_runs(run_dir, selection=selection, pair=pair, preference=True)
    by_key: dict[tuple[str, str, int], dict[str, RunAnswer]] = {}
    for run in runs:
        by_key.setdefault((run.prompt, run.model, run.rep), {})[run.condition] = run
    return [Pair(arms[pair.treatment], arms[pair.control]) for _, arms in sorted(by_key.items())
            if {pair.treatment, pair.control} <= set(arms)]


def outcome(winner_ab: str, winner_ba: str) -> str:
    """``W``/``L`` for the treatment when both orders agree, else ``T`` (order ``ab`` shows the treatment as A)."""
    skill_ab = {"A": WIN, "B": LOSS}.get(winner_ab, TIE)
    skill_ba = {"B": WIN, "A": LOSS}.get(winner_ba, TIE)
    return skill_ab if skill_ab == skill_ba else TIE


class PairJudge:
    """Judges pairs with one judge model.

    Args:
        client: the judge client.
        seed: seed of the rubric orders (each call's seed is derived from it).
    """

    def __init__(self, client: JudgeClient, *, seed: int = 0):
        self.client = client
        self.seed = seed

    def prefer(self, pair: Pair, order: str) -> tuple[str, float, str]:
        """``(winner label, cost, error)`` of one order (:func:`~skillbench.judge._client.ask_validated`)."""
        first, second = (pair.treatment, pair.control) if order == "ab" else (pair.control, pair.treatment)
        sample = ORDERS.index(order) + 1
        attempts = iter(range(1, 3))
        spent = [0.0]

        def build(attempt: int) -> tuple[dict[str, Any], dict[str, str]]:
            seed = shuffle_seed(self.seed, pair.pair_id, sample, attempt)
            return (build_pair_request(first.prompt_text, first.answer, second.answer, first.lines(), seed),
                    judge_headers(sample, run_id=opaque_run_id(pair.pair_id), attempt=attempt))

        def observe(_attempt: int, result: CallResult | None, _error: str) -> None:
            spent[0] += result.cost_usd if result is not None else 0.0

        try:
            winner = ask_validated(self.client, build,
                                   lambda message: parse_preference(tool_input(message, PREFERENCE_TOOL)).winner,
                                   next_attempt=lambda: next(attempts), observe=observe)
        except SlotFailed as exc:
            return "", spent[0], f"order {order}: {exc}"
        return winner, spent[0], ""

    def judge(self, pair: Pair, key: str) -> tuple[dict[str, str], float]:
        """The ``pairs.csv`` row of a pair and what it cost."""
        (w_ab, c_ab, e_ab), (w_ba, c_ba, e_ba) = (self.prefer(pair, o) for o in ORDERS)
        error = " | ".join(e for e in (e_ab, e_ba) if e)
        prompt, model, rep = pair.key
        row = {"run_key": key, "skill_family": pair.treatment.skill, "prompt": prompt, "model": model,
               "rep": str(rep), "winner_ab": w_ab, "winner_ba": w_ba,
               "outcome": "" if error else outcome(w_ab, w_ba), "judge_model": self.client.model, "error": error}
        return row, c_ab + c_ba


@dataclass
class PairsReport:
    """What a ``judge-pairs`` pass did; ``outcomes`` are for the treatment arm of ``arms``."""

    pairs: int
    already: int
    judged: int
    errors: int
    cost_usd: float
    outcomes: dict[str, int]
    arms: ArmPair = DEFAULT_PAIR
    judge_snapshot: str = ""  # the resolved snapshot(s) that answered this pass


def judge_pairs(run_dir: str | Path, options: JudgeOptions, ctx: PassContext) -> PairsReport:
    """Judge every pair of ``run_dir`` that ``pairs.csv`` does not have yet (see the module docstring).

    ``options``: the judge model, ``fresh``, ``jobs``, ``seed``, the retries, the selection and ``batch`` (every
    call through Message Batches, :mod:`skillbench.judge._batch`; ``batch_wait_s`` bounds the wait for a round; a
    simulated endpoint gets the sim's draw keys as metadata). ``ctx``: the endpoint, the executor (a Dask cluster's:
    every request is sent from one of its workers), the log.

    Returns:
        Counts of pairs, outcomes and errors, and this pass's spend.

    Raises:
        JudgePending: batched, and ``batch_wait_s`` passed with a batch still processing (rerun to continue).
    """
    with ctx.open_endpoint() as endpoint:
        return _judge_pairs(Path(run_dir), options, ctx, endpoint)


def _judge_pairs(run_dir: Path, options: JudgeOptions, ctx: PassContext, endpoint: Any) -> PairsReport:
    judge_model, seed, log = options.judge_model, options.seed, ctx.log
    ledger = AppendLedger(run_dir / PAIRS_FILE, PAIRS_COLUMNS, "prompt")
    if options.fresh:
        ledger.path.unlink(missing_ok=True)
        for folder in run_dirs(run_dir):
            clear_judge_cost(folder, "pairs")
    key, arms = week_run_key(run_dir), week_arms(run_dir)
    rows = ledger.read()
    other = {r["judge_model"] for r in rows} - {judge_model}
    if other:
        raise ValueError(f"{ledger.path} was judged by {', '.join(sorted(other))}; pass --fresh to start over")
    kept = [r for r in rows if r["outcome"] and not r["error"]]
    if ledger.path.is_file() and (len(kept) != len(rows) or not ledger.path.read_bytes().endswith(b"\n")):
        ledger.rewrite(kept)  # errored or torn pairs are judged again
    done = {(r["prompt"], r["model"], r["rep"]) for r in kept}
    pairs = find_pairs(run_dir, options.selection or None, pair=arms)
    todo = [p for p in pairs if (p.key[0], p.key[1], str(p.key[2])) not in done]
    random.Random(f"pairs-order:{seed}").shuffle(todo)
    if pairs:
        log(f"judge-pairs: {len(pairs)} pairs, {len(pairs) - len(todo)} already judged, {len(todo)} to judge "
            f"({judge_model}, both orders{'' if arms.is_default else f'; {arms.label}'})")
    else:
        log(f"judge-pairs: 0 pairs: no prompt × model × rep has a gradeable answer in both arms ({arms.control} and "
            f"{arms.treatment}), so {ledger.path.name} gets no rows")
    if not ledger.path.is_file():
        ledger.rewrite([])  # the header: "judged, nothing to judge" must not read as "never judged"
    passing = contextlib.ExitStack()  # --executor dask: every request one Dask task (nothing to judge: no cluster)
    transport = passing.enter_context(ctx.judge_transport(needed=bool(todo), simulated=endpoint.simulated))
    client = JudgeClient(endpoint.base_url, endpoint.api_key, judge_model, max_retries=options.max_retries,
                         timeout=options.timeout, transport=transport)
    batcher = None
    if options.batch:
        from skillbench.judge._batch import BatchClient
        from skillbench.judge._batch_store import BatchStore

        batcher = BatchClient(client, BatchStore(run_dir), "pairs", simulated=endpoint.simulated,
                              wait_s=options.batch_wait_s, log=log, pacing=batch_pacing(options),
                              request_kind=lambda sample: f"pair:{ORDERS[sample - 1]}")
    judge = PairJudge(batcher or client, seed=seed)
    spent = 0.0
    new_rows: list[dict[str, str]] = []

    def work(pair: Pair) -> tuple[dict[str, str], float]:
        row, cost = judge.judge(pair, key)
        for run in (pair.treatment, pair.control):
            record_judge_cost(run.folder, "pairs", cost / 2, add=True)
        ledger.append([row])
        return row, cost

    from tqdm.auto import tqdm

    try:
        if batcher is not None:
            for row, cost in batcher.run(todo, work, lambda p: ("pairs", p.pair_id)):
                new_rows.append(row)
                spent += cost
            batcher.store.close(["pairs"])
        else:
            with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool, \
                    tqdm(total=len(todo), desc="judge-pairs", unit="pair", file=sys.stderr, disable=not todo) as bar:
                for future in [pool.submit(work, p) for p in todo]:
                    row, cost = future.result()
                    new_rows.append(row)
                    spent += cost
                    bar.update(1)
    finally:
        client.close()
        passing.close()
    snapshot = (batcher or client).snapshot
    record_pairs_pass(run_dir, {"judge_model": judge_model, "judge_snapshot": snapshot,
                                "judged": len(new_rows), "seed": seed,
                                **({"batch": batch_provenance(batcher)} if batcher is not None else {})})
    final = ledger.read()
    counts = pd.Series([r["outcome"] or "error" for r in final], dtype=str).value_counts()
    return PairsReport(len(pairs), len(pairs) - len(todo), len(new_rows), int(counts.get("error", 0)), spent,
                       {k: int(counts.get(k, 0)) for k in OUTCOMES}, arms, snapshot)


def pairs_frame(run_dir: str | Path) -> pd.DataFrame:
    """``pairs.csv`` as a DataFrame (strings; empty with the right columns when absent)."""
    path = Path(run_dir) / PAIRS_FILE
    if not path.is_file():
        return pd.DataFrame({c: pd.Series(dtype=str) for c in PAIRS_COLUMNS})
    return read_cells(path)


def position_agreement(pairs: pd.DataFrame) -> Mapping[str, Any]:
    """How often the two orders agreed, and how often the judge picked the first position in both.

    A position-blind judge agrees across orders whenever it is not a tie; a position-biased one picks ``A``
    twice, which the swap turns into a tie.
    """
    ok = pairs[pairs["error"].eq("")]
    n = len(ok)
    both_a = int((ok["winner_ab"].eq("A") & ok["winner_ba"].eq("A")).sum())
    agree = int((ok["outcome"] != TIE).sum() + (ok["winner_ab"].eq("tie") & ok["winner_ba"].eq("tie")).sum())
    return {"pairs": n, "orders_agree": agree, "both_first_position": both_a,
            "first_position_rate": both_a / n if n else float("nan")}
