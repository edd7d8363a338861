"""Benchmark: how many prompts the per-prompt movers flag when nothing moved, and how many truly moved ones they catch.

Not a test, and no model calls. Simulated histories of weekly must-coverage ledgers are pushed through the project's
own code — a week's per-prompt lifts and their rep noise (:func:`skillbench.weekly._across._week_pairs`, from the
per-rep scores via :func:`skillbench.scorecard.prompt_scores`, as :func:`skillbench.weekly.load_weeks` builds them)
and the movers (:func:`skillbench.weekly.prompt_movers`: the noise band per prompt, its σ floored at the model's
pooled σ, Benjamini–Hochberg across the week's prompt × model moves) — comparing each history's last week with the
one before.

**The data** reproduce what the simulated endpoint writes, with its own numbers (:func:`skillbench.sim.load_profiles`,
the shipped ``sim_profiles.yaml``): per model (haiku and sonnet) and prompt, each must item has a difficulty
``offset ~ N(0, item_spread)`` on the logit scale, the same in both arms and every week (a property of the prompt,
as in :meth:`skillbench.sim._agent.SimAgent.decide`); a run covers the item with ``p = adjust(must.at(share),
offset)`` (:func:`skillbench.sim._draws.adjust`), ``share`` 0 without the skill, 1 when a with-skill run loads it
(with probability ``min(1, trigger × use_when_gain)``, else 0); the judge then flips each verdict with the judge
profile's ``flip_rate``. Must counts per prompt are drawn from the bundled suite's scored prompts
(:func:`skillbench.suite.load_suite`). **Stationary** histories change nothing from week to week; **power** histories
script the demo's skill edit (``skillbench demo-history``): 8 of every 34 prompts (the demo's default family's share
of the bundled suite) run a draft worth the demo's default ``--draft-gain`` of the skill's effect in every week but
the last, then the real skill — read by the movers, and by the paired week-over-week rule
(:func:`skillbench.scorecard.paired_week_delta`) on the edited prompts of both models (the demo page's family rule)
and on each model's headline lift; and the largest move there is.

Sizes: one rep and two reps; 26 prompts (qdrant's) and 34 (the bundled suite's) per model; 4 to 8 weeks, drawn per
history. **Printed:** per reps setting, the average share of the last week's prompt × model moves flagged
``moved = yes`` with its 95 % interval (t over histories: a history's moves share its earlier weeks; its upper end
is raised to the pooled count's Wilson/exact one when that is higher, as it is when nothing is flagged), the largest
share in any history, the share of moves that had a test at all; then power (share of edited moves flagged, and
the family and headline rules' hit rates) and the false-flag share among the other prompts of the same histories,
and the median threshold (the move a prompt's lift
must exceed before the correction). Exits 1 when a stationary upper bound is above 5 %. About two minutes on a
loaded 2-core machine.

    .venv/bin/python benchmarks/movers.py [--histories 100] [--seed 32]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillbench.scorecard import (  # noqa: E402
    RateInterval,
    paired_week_delta,
    prompt_scores,
    rate_interval,
    t_critical,
)
from skillbench.sim import load_profiles  # noqa: E402
from skillbench.sim._draws import adjust  # noqa: E402
from skillbench.suite import load_suite  # noqa: E402
from skillbench.vocab import NO_SKILL, WITH_SKILL  # noqa: E402
from skillbench.weekly import DEFAULT_DRAFT_GAIN, Weeks, prompt_movers  # noqa: E402
from skillbench.weekly._across import _week_pairs  # noqa: E402

SUITE = ROOT / "evals"
MODELS = ("haiku", "sonnet")
JUDGE = "sonnet"  # the weekly chain's default judge profile
PROMPTS = (26, 34)  # qdrant's prompts per model, the bundled suite's
WEEKS = (4, 8)  # shortest and longest history, inclusive
REPS = (1, 2)
DRAFT_GAIN = DEFAULT_DRAFT_GAIN  # the demo's default --draft-gain: a draft that misleads
EDITED_SHARE = 8 / 34  # prompts whose skill is edited in a power history: the demo's default family's share
BOUND = 0.05


@dataclass(frozen=True)
class History:
    """One simulated history: its size and the last week's movers."""

    reps: int
    prompts: int
    n_weeks: int
    movers: pd.DataFrame
    edited: frozenset[str]
    weeks: Weeks  # the history's per-prompt lifts, as load_weeks reads them


def suite_must_counts(suite_dir: Path) -> np.ndarray:
    """Must items per scored prompt of the bundled suite."""
    prompts = load_suite(suite_dir).prompts_df()
    return prompts.loc[prompts["scored"], "n_must"].astype(int).to_numpy()


def simulate(rng: np.random.Generator, must_counts: np.ndarray, *, reps: int, edited_share: float = 0.0,
             largest: bool = False) -> History:
    """One history through :func:`_week_pairs` and :func:`prompt_movers` (nothing moves unless ``edited_share``).

    ``edited_share``: that share of the prompts run the draft (``DRAFT_GAIN``) in every week but the last, then the
    skill; ``largest``: instead, their last week is the largest move there is — the with-skill answers cover every
    must item and the no-skill answers none (the lift jumps to +1).
    """
    profiles = load_profiles()
    flip = profiles.judge(JUDGE).flip_rate
    n_prompts = int(rng.choice(PROMPTS))
    n_weeks = int(rng.integers(WEEKS[0], WEEKS[1] + 1))
    names = [f"p{i:02d}" for i in range(n_prompts)]
    edited = frozenset(names[: round(edited_share * n_prompts)])
    m = rng.choice(must_counts, n_prompts)
    width = int(m.max())
    rows = []
    for model in MODELS:
        prof = profiles.agent(model)
        loaded = min(1.0, prof.trigger * prof.use_when_gain)
        offsets = prof.item_spread * rng.standard_normal((n_prompts, width))
        for week in range(n_weeks):
            for arm in (NO_SKILL, WITH_SKILL):
                # share of the skill's gain in a run: 0 without it; with it, loaded or not, a draft before the edit
                base = np.zeros((reps, n_prompts)) if arm == NO_SKILL else (rng.random((reps, n_prompts)) < loaded)
                moved = np.array([n in edited for n in names])
                last = week == n_weeks - 1
                gain = np.where(moved, 1.0 if last else (1.0 if largest else DRAFT_GAIN), 1.0)
                share = base * gain
                p = np.vectorize(adjust)(np.vectorize(prof.must.at)(share)[..., None], offsets[None])
                if largest and last:
                    p[:, moved, :] = 0.0 if arm == NO_SKILL else 1.0
                covered = rng.random(p.shape) < p
                covered ^= rng.random(p.shape) < flip  # the judge's flips
                real = np.arange(width)[None, None, :] < m[None, :, None]
                coverage = (covered & real).sum(axis=2) / m[None, :]
                for r in range(reps):
                    rows.append(pd.DataFrame({"model": model, "condition": arm, "prompt": names, "rep": r + 1,
                                              "skill": "s", "week": week, "must_coverage": coverage[r]}))
    reps_frame = pd.concat(rows, ignore_index=True).assign(bonus_rate=0.0, avoid_violations=0.0)
    reps_frame["composite"] = reps_frame["must_coverage"]
    paired = []
    for week, frame in reps_frame.groupby("week"):
        pair = _week_pairs(frame, prompt_scores(frame))
        paired.append(pair.assign(run_key=f"w{int(week)}"))
    empty = pd.DataFrame()
    weeks = Weeks(keys=[f"w{w}" for w in range(n_weeks)], runs=empty, prompts=empty,
                  paired=pd.concat(paired, ignore_index=True), history=empty)
    return History(reps, n_prompts, n_weeks, prompt_movers(weeks), edited, weeks)


def week_rules(h: History) -> tuple[bool, list[bool]]:
    """Did the paired week-over-week rule (:func:`paired_week_delta`, with the earlier weeks' band) see the last
    week's rise — on the edited prompts of every model (the demo's family rule), and on each model's headline?"""
    p, keys = h.weeks.paired, h.weeks.keys

    def rise(frame: pd.DataFrame) -> bool:
        def week(k: str) -> pd.Series:
            return frame.loc[frame["run_key"].eq(k), "d"]

        prior = [float(week(k).mean()) for k in keys[:-1]]
        got = paired_week_delta(week(keys[-1]), week(keys[-2]), prior_lifts=prior)
        return got.verdict == "yes" and got.delta > 0

    edited = p[p["prompt"].isin(h.edited)]
    family = rise(edited.set_index(edited["model"] + "/" + edited["prompt"]))
    return family, [rise(p[p["model"].eq(m)].set_index("prompt")) for m in MODELS]


def mean_interval(shares: np.ndarray) -> tuple[float, float, float]:
    """The mean of per-history shares and its 95 % t interval (histories independent; a history's moves are not)."""
    n = len(shares)
    mean = float(shares.mean())
    half = float(t_critical(n - 1)) * float(shares.std(ddof=1)) / np.sqrt(n) if n > 1 else float("nan")
    return mean, max(0.0, mean - half), mean + half


def _pct(x: float) -> str:
    return f"{100 * x:.2f} %"


def _rate(r: RateInterval) -> str:
    return f"{_pct(r.rate)} [{_pct(r.low)}, {_pct(r.high)}] of {r.n}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=50, help="stationary histories per reps setting (≥ 50)")
    parser.add_argument("--power-histories", type=int, default=20,
                        help="histories per reps setting and scripted move")
    parser.add_argument("--seed", type=int, default=32)
    args = parser.parse_args(argv)
    if args.histories < 2 or args.power_histories < 2:
        parser.error("--histories and --power-histories: at least 2")
    rng = np.random.default_rng(args.seed)
    must_counts = suite_must_counts(SUITE)
    print(f"bundled suite: {len(must_counts)} scored prompts, {must_counts.min()}–{must_counts.max()} musts each; "
          f"histories of {PROMPTS[0]} or {PROMPTS[1]} prompts × {len(MODELS)} models, {WEEKS[0]}–{WEEKS[1]} weeks")
    failed = False
    for reps in REPS:
        start = time.perf_counter()
        null = [simulate(rng, must_counts, reps=reps) for _ in range(args.histories)]
        flagged = np.array([h.movers["moved"].eq("yes").mean() for h in null])
        tested = np.array([h.movers["p_value"].notna().mean() for h in null])
        zero = sum(int((h.movers["threshold"] <= 0).sum()) for h in null)
        limits = np.concatenate([h.movers["threshold"].to_numpy(dtype=float) for h in null])
        mean, low, high = mean_interval(flagged)
        # With no flag at all the t interval has no width: the pooled count's exact interval bounds it instead
        # (optimistic when a history's moves go together, so the larger upper end is the one judged).
        pooled = rate_interval(sum(int(h.movers["moved"].eq("yes").sum()) for h in null),
                               sum(len(h.movers) for h in null))
        high = max(high, pooled.high)
        met = high <= BOUND
        failed |= not met
        print(f"\n{reps} rep{'s' if reps > 1 else ''}: {args.histories} stationary histories "
              f"({time.perf_counter() - start:.0f} s)")
        print(f"  prompts flagged moved (last week vs the one before): {_pct(mean)} [{_pct(low)}, {_pct(high)}] "
              f"on average — bound ≤ {BOUND:.0%}: {'met' if met else 'NOT MET'}")
        print(f"  pooled: {pooled.k} of {pooled.n} prompt × model moves flagged, {_pct(pooled.rate)} "
              f"[{_pct(pooled.low)}, {_pct(pooled.high)}] ({pooled.method})")
        print(f"  most in one history: {_pct(flagged.max())}; histories with any flag: "
              f"{int((flagged > 0).sum())}/{len(null)}; moves with a test: {_pct(tested.mean())}; "
              f"thresholds of 0: {zero}")
        print(f"  a prompt's lift must move by more than {np.nanmedian(limits):.2f} (median threshold; quartiles "
              f"{np.nanpercentile(limits, 25):.2f}–{np.nanpercentile(limits, 75):.2f}) to be flagged before the "
              f"Benjamini–Hochberg correction")
        for largest, what in ((False, f"the demo's skill edit (a draft worth {DRAFT_GAIN:.0%} → the skill)"),
                              (True, "the largest move (last week: with-skill covers every must, no-skill none)")):
            start = time.perf_counter()
            power = [simulate(rng, must_counts, reps=reps, edited_share=EDITED_SHARE, largest=largest)
                     for _ in range(args.power_histories)]
            caught = np.array([h.movers[h.movers["prompt"].isin(h.edited)]["moved"].eq("yes").mean() for h in power])
            others = np.array([h.movers[~h.movers["prompt"].isin(h.edited)]["moved"].eq("yes").mean() for h in power])
            delta = np.concatenate([h.movers.loc[h.movers["prompt"].isin(h.edited), "delta"].to_numpy()
                                    for h in power])
            pmean, plow, phigh = mean_interval(caught)
            omean, olow, ohigh = mean_interval(others)
            rules = [week_rules(h) for h in power]
            print(f"  power at {what}, {EDITED_SHARE:.0%} of prompts, mean Δ of an edited prompt's lift "
                  f"{np.nanmean(delta):+.2f}; {args.power_histories} histories "
                  f"({time.perf_counter() - start:.0f} s): {_pct(pmean)} [{_pct(plow)}, {_pct(phigh)}] of edited "
                  f"moves flagged; other prompts flagged {_pct(omean)} [{_pct(olow)}, {_pct(ohigh)}]")
            family = rate_interval(sum(f for f, _ in rules), len(rules))
            heads = rate_interval(sum(sum(m) for _, m in rules), len(rules) * len(MODELS))
            print(f"    the same move, paired week-over-week rule: on the edited prompts of both models "
                  f"(the demo's family rule) {_rate(family)}; on a model's headline lift {_rate(heads)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
