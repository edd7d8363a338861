"""Benchmark: does the scorecard's uncertainty mean what it says? Coverage, gate error rates, week-over-week alarms.

Not a test, and no model calls: synthetic weeks with a known truth, measured with the project's own functions.
A whole week's verdicts read together (Holm across records, objective false alarms, κ/F1 coverage, paired week
over week) are ``benchmarks/operating.py``'s.

**Where the weeks come from.** qdrant's published week 1 (``../shared/datasets/qdrant-skills/evals/weekly/20260808``,
26 prompts × 2 models) is read with skillbench's readers and scored by the scorecard
(:func:`skillbench.ledgers.load_week`, :func:`skillbench.scorecard._compute.compute_scorecard`); its 52 real
per-prompt pairs (no-skill, with-skill must coverage) are the pool. Each model's with-skill values are shifted so
its differences ``dᵢ`` average :data:`TRUE_LIFT` exactly (the shape — skewed, bounded, heavily tied — stays
qdrant's). A synthetic week draws ``n`` prompts from the pool with replacement; its true lift is
:data:`TRUE_LIFT`.

**What is measured**, at n = 10, 26 and 50 prompts over ``--weeks`` weeks each (default 2,000):

* coverage of the **paired t interval** — :func:`skillbench.scorecard.lift_table`'s ``ci_low, ci_high``, every
  synthetic week one "model" of a single call — and of the **BCa bootstrap** interval the scorecard reports
  (:func:`skillbench.scorecard._stats.bootstrap_intervals`, the function under ``uncertainty_table``, 10,000
  resamples, called on batches of weeks); the old percentile interval beside them for reference (scipy,
  same resamples count). Target: BCa at n = 26 within 93–97 % (a run of ≥ 2,000 weeks exits 1 when it is not);
* the **preference gate** (:func:`skillbench.scorecard._gate.collapse_votes` then
  :func:`~skillbench.scorecard._verdicts.decide`) on records of n stimuli × 2 reps: its pass rate under **A/A** (each
  rep's judgment W/T/L with probabilities 0.40/0.20/0.40: no preference) and its **power** at two stated
  effects, rep judgments 0.50/0.20/0.30 (net +20 %, the gate's net-win floor) and 0.60/0.20/0.20 (net +40 %);
* the **week-over-week rule's false-alarm rate** — the unpaired rule a history without per-prompt lifts gets
  (:func:`skillbench.scorecard._noise.unpaired_week_delta`, as :func:`skillbench.scorecard._history.week_over_week`
  applies it; checked against that function on the first histories; the paired rule, its false alarms and its
  power are ``benchmarks/operating.py``'s): the synthetic weeks taken ten at a time as stationary histories (the
  true lift never moves), each week from the fourth compared with the one before; a "yes" is a false alarm.

Prints one table of rates measured in this run (± one binomial Monte Carlo SE; the week-over-week comparisons of
one history share weeks, so theirs is a little optimistic) and the run's seconds. About 30 s on 2 cores.

    .venv/bin/python benchmarks/validity.py [--weeks 2000] [--resamples 10000] [--seed 15]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

from skillbench.ledgers import load_week
from skillbench.scorecard import _noise as noise, cell_scores, collapse_votes, compute_scorecard, decide, lift_table
from skillbench.scorecard._history import WOW_MIN_RUNS, empty_history, history_rows, upsert, week_over_week
from skillbench.scorecard._scoring import METRICS
from skillbench.scorecard._stats import DEFAULT_RESAMPLES, bootstrap_intervals
from skillbench.vocab import VALID_PASS

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SKILLBENCH_SHARED", ROOT.parent / "shared"))
QDRANT_WEEK = SHARED / "datasets" / "qdrant-skills" / "evals" / "weekly" / "20260808"
TRUE_LIFT = 0.35  # near qdrant's measured lifts (+0.319, +0.376), so the pool stays inside [-1, 1]
SIZES = (10, 26, 50)
TARGET = (0.93, 0.97)  # BCa coverage at n = 26 (issue 15)
JUDGED_WEEKS = 2_000
HISTORY_WEEKS = 10
GATE_REPS = 2  # the suite config's default reps
AA = (0.40, 0.20, 0.40)  # a rep's W/T/L probabilities with no true preference
EFFECTS = ((0.50, 0.20, 0.30), (0.60, 0.20, 0.20))
CHECKED_HISTORIES = 5  # histories replayed through history.week_over_week itself
BATCH_WEEKS = 250  # weeks per bootstrap call: bounds memory, keeps scipy vectorised


def pool(week_dir: Path) -> pd.DataFrame:
    """qdrant's per-prompt pairs, each model's differences re-centred on :data:`TRUE_LIFT`.

    Returns:
        ``no_skill, with_skill, d`` (52 rows), ``d`` averaging :data:`TRUE_LIFT` within each model.
    """
    paired = compute_scorecard(load_week(week_dir), n_resamples=1).paired
    shift = TRUE_LIFT - paired.groupby("model")["d"].transform("mean")
    out = paired.assign(with_skill=paired["with_skill"] + shift)
    out["d"] = out["with_skill"] - out["no_skill"]
    return out[["no_skill", "with_skill", "d"]].reset_index(drop=True)


def t_intervals(draw: np.ndarray, source: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``lift_table``'s paired t interval and SE for each synthetic week (row of pool indices), one call.

    Each week is a "model" of one prompts frame, so the interval is the scorecard's own computation.
    """
    weeks, n = draw.shape
    rows = source.iloc[draw.ravel()]
    base = pd.DataFrame({"model": np.repeat([f"w{i:05d}" for i in range(weeks)], n),
                         "prompt": np.tile([f"p{j:02d}" for j in range(n)], weeks)})
    arms = []
    for condition, column in (("no-skill", "no_skill"), ("with-skill", "with_skill")):
        arm = base.assign(condition=condition)
        for metric in METRICS:
            arm[metric] = rows[column].to_numpy() if metric in ("must_coverage", "composite") else 0.0
        arms.append(arm)
    prompts = pd.concat(arms, ignore_index=True)
    lift = lift_table(prompts, cell_scores(prompts)).set_index("model").sort_index()
    return lift["ci_low"].to_numpy(), lift["ci_high"].to_numpy(), lift["must_lift_se"].to_numpy()


def boot_intervals(d: np.ndarray, method: str, n_resamples: int,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The scorecard's BCa interval (``method="BCa"``), or scipy's percentile interval for reference."""
    lows, highs = [], []
    for start in range(0, len(d), BATCH_WEEKS):
        block = d[start:start + BATCH_WEEKS]
        if method == "BCa":
            low, high = bootstrap_intervals(block, n_resamples=n_resamples, rng=rng)
        else:
            res = sps.bootstrap((block,), np.mean, n_resamples=n_resamples, method=method, vectorized=True,
                                axis=-1, rng=rng, batch=max(1, 4_000_000 // block.size))
            low, high = res.confidence_interval
        lows.append(low)
        highs.append(high)
    return np.concatenate(lows), np.concatenate(highs)


def gate_passes(probs: tuple[float, float, float], n: int, records: int, rng: np.random.Generator) -> np.ndarray:
    """Whether the gate passes (``VALID_PASS``) each of ``records`` records of ``n`` stimuli × :data:`GATE_REPS`."""
    outcome = rng.choice(np.array(["W", "T", "L"]), size=records * n * GATE_REPS, p=probs)
    pairs = pd.DataFrame({"skill_family": np.repeat(np.arange(records), n * GATE_REPS), "model": "m",
                          "prompt": np.tile(np.repeat(np.arange(n), GATE_REPS), records), "outcome": outcome})
    votes = collapse_votes(pairs)
    tally = pd.crosstab(votes["skill_family"], votes["vote"]).reindex(columns=["W", "T", "L"], fill_value=0)
    return np.array([decide(int(w), int(t), int(lo)).state == VALID_PASS for w, t, lo in tally.to_numpy()])


def wow_alarms(lifts: np.ndarray, ses: np.ndarray, n: int) -> np.ndarray:
    """The week-over-week verdicts of every comparison in stationary histories, by the rule a history without
    per-prompt lifts gets (:func:`skillbench.scorecard._noise.unpaired_week_delta`; the paired rule and its power
    are ``benchmarks/operating.py``'s).

    Args:
        lifts: ``histories × weeks`` lifts; ``ses`` their SEs; ``n`` prompts per week (df = n − 1).

    Returns:
        ``histories × (weeks − WOW_MIN_RUNS + 1)`` verdicts, from the fourth week on.
    """
    out = []
    for k in range(WOW_MIN_RUNS - 1, lifts.shape[1]):
        out.append([noise.unpaired_week_delta((row[k], se[k]), (row[k - 1], se[k - 1]), n,
                                              prior_lifts=row[:k]).verdict
                    for row, se in zip(lifts, ses, strict=True)])
    return np.array(out, dtype=object).T


def check_against_history(lifts: np.ndarray, ses: np.ndarray, n: int, verdicts: np.ndarray) -> None:
    """Replay the first histories through ``history.week_over_week``: the verdicts must be the same."""
    for h in range(min(CHECKED_HISTORIES, len(lifts))):
        history = empty_history()
        for k in range(lifts.shape[1]):
            lift = pd.DataFrame({"model": ["m"], "must_lift": [lifts[h, k]], "must_lift_se": [ses[h, k]],
                                 "composite_lift": [np.nan], "cost_delta": [np.nan], "turns_delta": [np.nan],
                                 "n_pairs": [n]})
            key, end = f"w{k:02d}", f"202601{k + 1:02d}T000000Z"
            history = upsert(history, history_rows(key, end, lift, "simulated"))
            wow = week_over_week(history, key, lift, "simulated", window_end=end)
            if wow.ready:
                got = wow.table["actionable"].iloc[0]
                assert got == verdicts[h, k - WOW_MIN_RUNS + 1], f"history {h} week {k}: {got}"


def _probs(probs: tuple[float, float, float]) -> str:
    return "/".join(f"{p:.2f}".lstrip("0") for p in probs)


def _rate(hits: np.ndarray) -> str:
    p = float(np.mean(hits))
    return f"{p * 100:5.1f} ± {np.sqrt(p * (1 - p) / hits.size) * 100:.1f} %"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weeks", type=int, default=2_000, help="synthetic weeks per size (default 2000)")
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap resamples per week")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--week-dir", type=Path, default=QDRANT_WEEK, help="the week whose pairs are the pool")
    args = parser.parse_args(argv)
    if args.weeks < HISTORY_WEEKS:
        parser.error(f"--weeks {args.weeks}: at least {HISTORY_WEEKS} (one stationary history)")
    t0 = time.perf_counter()
    source = pool(args.week_dir)
    rng = np.random.default_rng(args.seed)
    rows: dict[str, list[str]] = {}
    coverage26 = float("nan")
    for n in SIZES:
        draw = rng.integers(0, len(source), size=(args.weeks, n))
        d = source["d"].to_numpy()[draw]
        t_low, t_high, se = t_intervals(draw, source)
        np.testing.assert_allclose((t_low + t_high) / 2, d.mean(axis=1), atol=1e-12)  # weeks kept their order
        b_low, b_high = boot_intervals(d, "BCa", args.resamples, rng)
        p_low, p_high = boot_intervals(d, "percentile", args.resamples, rng)
        covered_bca = (b_low <= TRUE_LIFT) & (TRUE_LIFT <= b_high)
        if n == 26:
            coverage26 = float(np.mean(covered_bca))
        rows.setdefault("coverage: paired t interval (lift table)", []).append(
            _rate((t_low <= TRUE_LIFT) & (TRUE_LIFT <= t_high)))
        rows.setdefault("coverage: BCa bootstrap (scorecard)", []).append(_rate(covered_bca))
        rows.setdefault("coverage: percentile bootstrap (old)", []).append(
            _rate((p_low <= TRUE_LIFT) & (TRUE_LIFT <= p_high)))
        rows.setdefault("mean width, BCa ÷ t", []).append(f"{np.nanmean(b_high - b_low) / np.mean(t_high - t_low):.3f}")
        rows.setdefault(f"gate pass rate, A/A (W/T/L {_probs(AA)})", []).append(
            _rate(gate_passes(AA, n, args.weeks, rng)))
        for effect in EFFECTS:
            rows.setdefault(f"gate power at W/T/L {_probs(effect)}", []).append(
                _rate(gate_passes(effect, n, args.weeks, rng)))
        histories = args.weeks // HISTORY_WEEKS
        # Six decimals: what a history row keeps, so the replay through week_over_week sees the same numbers.
        lifts = d[: histories * HISTORY_WEEKS].mean(axis=1).reshape(histories, HISTORY_WEEKS).round(6)
        ses = se[: histories * HISTORY_WEEKS].reshape(histories, HISTORY_WEEKS).round(6)
        verdicts = wow_alarms(lifts, ses, n)
        check_against_history(lifts, ses, n, verdicts)
        rows.setdefault("week-over-week false alarms (stationary)", []).append(_rate(verdicts == noise.MOVED))
    seconds = time.perf_counter() - t0
    width = max(map(len, rows)) + 2
    print(f"{args.weeks:,} synthetic weeks per size from {len(source)} qdrant week-1 pairs, true lift {TRUE_LIFT}, "
          f"{args.resamples:,} resamples; gate records of n stimuli × {GATE_REPS} reps")
    print(f"{'measure':<{width}}" + "".join(f"{f'n = {n}':>16}" for n in SIZES))
    for label, cells in rows.items():
        print(f"{label:<{width}}" + "".join(f"{c:>16}" for c in cells))
    ok = TARGET[0] <= coverage26 <= TARGET[1]
    # Below JUDGED_WEEKS the Monte Carlo SE (≈ 0.5 % at 2,000) is too wide for the target to mean anything.
    verdict = ("met" if ok else "NOT MET") if args.weeks >= JUDGED_WEEKS else f"not judged below {JUDGED_WEEKS:,} weeks"
    print(f"BCa coverage at n = 26: {coverage26 * 100:.1f} % (target {TARGET[0] * 100:.0f}–{TARGET[1] * 100:.0f} %)"
          f" — {verdict}; {seconds:.1f} s")
    return 1 if args.weeks >= JUDGED_WEEKS and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
