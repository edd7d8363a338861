"""Which answers calibration grades again: a stratified sample of runs, sized by the must bar.

Self-agreement grades every answer ``repeat`` times: over a whole week that is most of the judge's spend. The
must bar (≥ 95 % unanimous musts, judged on the lower end of the interval: :func:`~._agreement.bar_state`) does not
need every must — it needs enough musts for its decision to be the one the whole week would give. The rule:

* **The floor: at least** :data:`MUST_FLOOR` **musts, or every must when the week has fewer.** With Clopper–Pearson's
  lower end, 150 musts is where two flips still pass (:func:`max_passing_flips`), a judge whose true must unanimity is
  99 % passes with probability 0.81 (:func:`pass_probability`; about 142 musts for 4 in 5), and a judge at exactly
  95 % passes at most 2.5 % of the time at any size. Fewer musts make a good judge's verdict flip between NOT SHOWN
  and PASS from one draw to the next (``docs/calibration.md``).
* **Grow while the interval straddles the bar.** A sample decides when its must interval clears the bar on one side
  — PASS (lower end ≥ 95 %) or a FAIL whose upper end is below 95 % too. NOT SHOWN, or a FAIL on too few musts to
  tell (the decision block's amber), is the sample being too small, not the judge's answer: the sample doubles
  (:func:`looks`: 150, 300, 600, … musts) from the same seeded order — the runs already graded stay in it — until it
  decides or holds every must. Each look is one more round of gradings, never a new sample.

**Strata**: skill family × model × arm. A run is the unit: its items are graded in one call (the unit of cost, of
the prompt cache and of the bootstrap), so item types cannot be drawn apart; every stratum gives the same fraction
of its runs (rounded up: every stratum is represented), so the sample is self-weighting — the pooled unanimity
estimates the week's — and its item-type mix follows the week's (the page shows n of N per item type).

**Who chooses**: the order inside a stratum is a keyed hash of the run id (the plan's identity: prompt, model, arm,
rep, run key) under :func:`sample_key` — the week's run key, the calibration seed and a nonce drawn by ``secrets``
when the week is first calibrated, after its answers exist, and recorded (``calibration-sample.json``) so a rerun
draws the same sample. No answer text, verdict, grade or timing enters the draw, the strata's shares are fixed by
the plan, and the nonce cannot be known when a skill or prompt is written: a skill author cannot choose which
answers are graded again, nor name prompts so that a predictable hash favours them.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from skillbench.vocab import BAR_FAIL, BAR_PASS, CALIBRATION_MUST_FLOOR as MUST_FLOOR, UNANIMOUS_MUSTS_BAR

STRATA = ("skill_family", "model", "condition")  # a run's stratum
CANDIDATE_COLUMNS = ["run_id", *STRATA, "musts", "items"]
CONFIDENCE = 0.95  # the must bar's interval


def new_nonce() -> str:
    """A fresh nonce for a week's first calibration sample (unpredictable when the suite's content was written)."""
    return secrets.token_hex(8)


def sample_key(run_key: str, seed: int, nonce: str) -> str:
    """The key of a week's calibration sample: its run key, the calibration seed and the recorded nonce."""
    return hashlib.sha256(f"calibration-sample\0{run_key}\0{seed}\0{nonce}".encode()).hexdigest()[:16]


def _rank_key(key: str, run_id: str) -> str:
    return hashlib.sha256(f"{key}\0{run_id}".encode()).hexdigest()


def stratified_order(candidates: pd.DataFrame, key: str) -> pd.DataFrame:
    """``candidates`` (:data:`CANDIDATE_COLUMNS`) with ``stratum``, ``rank`` (position inside its stratum, by the
    keyed hash of the run id) and ``enters`` (the sampling fraction above which the run is drawn: rank / stratum
    size), in drawing order."""
    frame = candidates.reset_index(drop=True).copy()
    frame["stratum"] = frame[list(STRATA)].astype(str).agg(" × ".join, axis=1)
    frame["_hash"] = [_rank_key(key, str(r)) for r in frame["run_id"]]
    frame = frame.sort_values(["stratum", "_hash"], kind="mergesort")
    frame["rank"] = frame.groupby("stratum").cumcount()
    frame["enters"] = frame["rank"] / frame.groupby("stratum")["run_id"].transform("size")
    return frame.sort_values(["enters", "_hash"], kind="mergesort").drop(columns="_hash").reset_index(drop=True)


def draw(candidates: pd.DataFrame, key: str, musts: int | None) -> pd.DataFrame:
    """The runs of the stratified sample that holds at least ``musts`` must items (None, or a week with fewer:
    every run).

    Every stratum gives its first ``ceil(f × size)`` runs in its keyed order, for the least fraction ``f`` whose
    sample holds ``musts``: the draw is nested (a larger ``musts`` keeps every run of a smaller one) and
    self-weighting (the same fraction of every stratum, rounded up so none is left out).
    """
    order = stratified_order(candidates, key)
    if musts is None or order["musts"].sum() <= musts:
        return order
    # A run enters once f passes its `enters`; the runs that enter at the same f come in together.
    held = order.groupby("enters", sort=True)["musts"].sum().cumsum()
    threshold = held.index[int(np.searchsorted(held.to_numpy(), musts))]
    return order[order["enters"] <= threshold].reset_index(drop=True)


def looks(total_musts: int, floor: int | None = MUST_FLOOR) -> list[int | None]:
    """The must targets the sample grows through: the floor, doubled, …; the last is None (every run).

    ``floor`` None, or a week with no more musts than the floor: one look, every run.
    """
    if floor is None or total_musts <= floor:
        return [None]
    out: list[int | None] = []
    target = floor
    while target < total_musts:
        out.append(target)
        target *= 2
    return [*out, None]


def decided(state: str, high: float, bar: float = UNANIMOUS_MUSTS_BAR) -> bool:
    """Whether a sample's must interval decides the bar: PASS, or a FAIL whose upper end is below the bar too."""
    return state == BAR_PASS or (state == BAR_FAIL and np.isfinite(high) and high < bar)


# -- the size rule's statistics (docs/calibration.md; tests/data/calibration_sample_sizes.json) ----------------------


def lower_end(unanimous: int, n: int, confidence: float = CONFIDENCE) -> float:
    """Clopper–Pearson's lower end of ``unanimous / n`` (0 when nothing is unanimous)."""
    from scipy.stats import beta

    if n <= 0:
        return float("nan")
    return 0.0 if unanimous == 0 else float(beta.ppf((1 - confidence) / 2, unanimous, n - unanimous + 1))


def max_passing_flips(n: int, bar: float = UNANIMOUS_MUSTS_BAR) -> int:
    """The most flipped musts out of ``n`` that still pass on Clopper–Pearson's lower end; -1 when none passes."""
    k = -1
    while k + 1 <= n and lower_end(n - (k + 1), n) >= bar:
        k += 1
    return k


def pass_probability(n: int, unanimity: float, bar: float = UNANIMOUS_MUSTS_BAR) -> float:
    """The chance that a judge whose musts are unanimous with probability ``unanimity`` passes on ``n`` musts
    (flips independent: the binomial chance of at most :func:`max_passing_flips`)."""
    from scipy.stats import binom

    k = max_passing_flips(n, bar)
    return 0.0 if k < 0 else float(binom.cdf(k, n, 1 - unanimity))


def musts_to_pass(unanimity: float, power: float, *, limit: int = 5000) -> int | None:
    """The fewest musts with which a judge of that true ``unanimity`` passes with probability ≥ ``power``."""
    for n in range(1, limit + 1):
        if pass_probability(n, unanimity) >= power:
            return n
    return None


# -- the record ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SampleRecord:
    """How a calibration's runs were chosen (``calibration-sample.json``, the page's "n of N")."""

    key: str  # sample_key(run_key, seed, nonce)
    run_key: str
    seed: int
    nonce: str
    floor: int | None  # the must floor (None: every run was asked for); with ``runs`` set, not used
    runs_asked: int | None  # --sample N: exactly N runs, stratified, no growth
    looks: list[int | None]  # the must targets graded, in order (None: every run)
    runs: int  # runs graded
    population_runs: int
    items: dict[str, int]  # item type -> items graded
    population_items: dict[str, int]  # item type -> items in the week's gradeable runs
    strata: int  # strata with at least one run

    @property
    def sampled(self) -> bool:
        """Fewer runs graded than the week has."""
        return self.runs < self.population_runs

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "run_key": self.run_key, "seed": self.seed, "nonce": self.nonce,
                "floor": self.floor, "runs_asked": self.runs_asked, "looks": self.looks, "runs": self.runs,
                "population_runs": self.population_runs, "items": self.items,
                "population_items": self.population_items, "strata": self.strata, "strata_by": list(STRATA)}

    def words(self) -> str:
        """One sentence for the page: what was graded again and why that many."""
        musts, all_musts = self.items.get("must", 0), self.population_items.get("must", 0)
        if not self.sampled:
            grown = [t for t in self.looks if t is not None]
            why = (f": the week has no more than the {self.floor}-must floor." if self.floor and self.runs_asked is None
                   and all_musts <= self.floor else
                   f": samples of at least {', '.join(map(str, grown))} musts left the must bar undecided (the "
                   "interval straddled it), so the sample grew to every must." if grown else ".")
            return f"Every gradeable run was graded again ({self.runs} runs, {all_musts} musts){why}"
        how = (f"{self.runs_asked} runs asked for (`--sample`)" if self.runs_asked is not None
               else f"at least {self.floor} musts, doubled while the must interval straddled the bar — looks at "
               + ", ".join("every must" if t is None else str(t) for t in self.looks))
        return (f"**A sample**: {self.runs} of {self.population_runs} gradeable runs, {musts} of {all_musts} musts, "
                f"drawn stratified by skill family × model × arm ({self.strata} strata, the same fraction of each) "
                f"in a keyed order no answer can influence ({how}; key `{self.key}`: run key {self.run_key}, seed "
                f"{self.seed}, nonce `{self.nonce}`, recorded in calibration-sample.json). The intervals below are "
                f"the sample's: they speak for the week's answers as a random sample of them.")


def candidate_frame(runs: Sequence[Any]) -> pd.DataFrame:
    """:data:`CANDIDATE_COLUMNS` of :class:`skillbench.judge.RunAnswer` objects."""
    rows = [{"run_id": r.run_id, "skill_family": r.skill, "model": r.model, "condition": r.condition,
             "musts": sum(kind == "must" for _, kind, _ in r.items), "items": len(r.items)} for r in runs]
    return pd.DataFrame(rows, columns=CANDIDATE_COLUMNS)


def item_counts(runs: Sequence[Any]) -> dict[str, int]:
    """Item type -> items over ``runs``."""
    out: dict[str, int] = {}
    for r in runs:
        for _, kind, _ in r.items:
            out[kind] = out.get(kind, 0) + 1
    return out


def exact_runs(candidates: pd.DataFrame, key: str, n: int) -> pd.DataFrame:
    """``n`` runs (``--sample N``): the first ``n`` of the stratified drawing order (every stratum's first run
    before any stratum's second)."""
    return stratified_order(candidates, key).head(max(0, n)).reset_index(drop=True)
