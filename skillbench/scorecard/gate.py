"""The paired preference gate (dotnet/skills adapter policy), per skill family × model, from ``pairs.csv``.

Each row of ``pairs.csv`` is one (prompt, model, rep) judged twice with positions swapped; its ``outcome`` is
``W``/``T``/``L`` for the treatment's answer (the week's :class:`~skillbench.arms.ArmPair`: with-skill in a weekly
run, ``with-skill@HEAD`` in a comparison, so a comparison's gate counts the head's wins). The gate:

1. collapses reps to **one vote per prompt** (a stimulus): the majority direction among the reps' wins and
   losses (``W`` when wins outnumber losses, ``L`` when losses do, ``T`` on an even split — ties inside the
   reps carry no direction), because repeated runs of one task are not independent tasks;
2. counts ``n = W + T + L`` over the family's preference-eligible prompts (dormancy prompts never vote);
3. runs an exact one-sided sign test on ``W`` vs ``L`` (``scipy.stats.binomtest``; ties are left out of the
   test only), passing at ``p ≤ 0.05``, in the positive direction (``W > L``), with a net-win floor
   ``(W − L)/n ≥ 0.20`` and an eligibility floor ``n ≥ 5``.

States, checked in this order:

* ``INVALID_INCONCLUSIVE (incomplete_reconciliation)`` — the week is not fully accounted for;
* ``INVALID_INCONCLUSIVE (judge_errors)`` — a pairwise judge call failed (a judge outage is not a skill loss);
* ``VALID_NO_CHANGE (activation_contract_failed)`` — a with-skill (treatment) or plugin run of one of the
  family's dormancy prompts activated the skill (:func:`skillbench.signals.trigger.false_trigger_arms`);
* ``INVALID_INCONCLUSIVE (underpowered)`` — ``n < 5``;
* ``VALID_REGRESSION (objective_loss)`` — dotnet's reserved verdict: the **objective record** (deterministic
  checks, :mod:`skillbench.scorecard.objective`) shows a credible loss by the same rule as the pass, mirrored:
  one vote per preference-eligible stimulus with checks (skilled-only transition = W, baseline-only = L, both and
  neither = T), exact one-sided sign test of L against W at ``p ≤ 0.05``, net loss ``(L − W)/n ≥ 0.20`` and
  ``n ≥ 5``. A preference loss alone is never a regression (it stays report-only);
* ``VALID_NO_CHANGE (not_significant | no_positive_direction | net_win_below_floor)``;
* ``VALID_PASS``.

Evidence reads ``n=5; 4W/1T/0L; p=0.0625; net +80.0%``; a record with checks adds
``; objective n=6; 0W/0T/6L; p(loss)=0.01562; net loss +100.0%``. Without checks it decides and reads as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from skillbench.arms import DEFAULT_PAIR, ArmPair
from skillbench.signals.trigger import false_trigger_arms
from skillbench.vocab import (
    BASELINE_ONLY,
    INVALID_INCONCLUSIVE,
    SKILLED_ONLY,
    VALID_NO_CHANGE,
    VALID_PASS,
    VALID_REGRESSION,
)

ALPHA = 0.05
NET_WIN_FLOOR = 0.20
NET_LOSS_FLOOR = NET_WIN_FLOOR  # VALID_REGRESSION: "by the same rule as the pass"
MIN_STIMULI = 5

GATE_COLUMNS = ["skill_family", "model", "state", "reason", "verdict", "n", "wins", "ties", "losses", "p_value",
                "net_win", "judge_errors", "dormancy_activations", "evidence"]
OBJECTIVE_COLUMNS = ["objective_n", "objective_wins", "objective_ties", "objective_losses", "objective_p",
                     "objective_net_loss"]


@dataclass(frozen=True)
class ObjectiveRecord:
    """Transition votes of one family × model: W skilled-only, L baseline-only, n every stimulus with checks."""

    n: int
    wins: int
    losses: int

    @property
    def ties(self) -> int:
        """Stimuli that completed in both arms or in neither: they count in ``n``, never in the sign test."""
        return self.n - self.wins - self.losses

    @property
    def p_value(self) -> float:
        """Exact one-sided sign test of losses against wins (the pass's test, mirrored)."""
        return sign_test_p(self.losses, self.wins)

    @property
    def net_loss(self) -> float:
        return (self.losses - self.wins) / self.n if self.n else float("nan")

    @property
    def reason(self) -> str:
        """Why the record is not a credible loss (the pass's reasons mirrored); ``""`` when it is one."""
        if self.n < MIN_STIMULI:
            return "underpowered"
        if self.p_value > ALPHA:
            return "not_significant"
        if self.losses <= self.wins:
            return "no_loss_direction"
        if self.net_loss < NET_LOSS_FLOOR:
            return "net_loss_below_floor"
        return ""

    @property
    def regression(self) -> bool:
        """A credible loss: n ≥ 5, p ≤ 0.05, more losses than wins, net loss ≥ 20 % of the stimuli."""
        return not self.reason

    @property
    def evidence(self) -> str:
        """``objective n=6; 0W/0T/6L; p(loss)=0.01562; net loss +100.0%`` (p of losses against wins)."""
        net = f"{self.net_loss * 100:+.1f}%" if self.n else "n/a"
        return (f"objective n={self.n}; {self.wins}W/{self.ties}T/{self.losses}L; p(loss)={self.p_value:.4g}; "
                f"net loss {net}")


@dataclass(frozen=True)
class GateDecision:
    """The gate's decision for one record."""

    state: str
    reason: str
    n: int
    wins: int
    ties: int
    losses: int
    p_value: float
    net_win: float
    objective: ObjectiveRecord | None = None  # the record's deterministic checks (None: no checks)

    @property
    def verdict(self) -> str:
        """``VALID_PASS`` or ``STATE (reason)``."""
        return self.state if not self.reason else f"{self.state} ({self.reason})"

    @property
    def evidence(self) -> str:
        """``n=5; 4W/1T/0L; p=0.0625; net +80.0%``, then ``; objective …`` for a record with checks."""
        net = f"{self.net_win * 100:+.1f}%" if np.isfinite(self.net_win) else "n/a"
        text = f"n={self.n}; {self.wins}W/{self.ties}T/{self.losses}L; p={self.p_value:.4g}; net {net}"
        return text if self.objective is None else f"{text}; {self.objective.evidence}"


@lru_cache(maxsize=4096)
def sign_test_p(wins: int, losses: int) -> float:
    """Exact one-sided sign test of wins against losses (ties excluded); 1.0 without a discordant vote."""
    if wins + losses == 0:
        return 1.0
    return float(binomtest(wins, wins + losses, 0.5, alternative="greater").pvalue)


def decide(wins: int, ties: int, losses: int, *, reconciliation_complete: bool = True, judge_errors: int = 0,
           dormancy_activations: int = 0, objective: ObjectiveRecord | None = None) -> GateDecision:
    """Apply the gate to one W/T/L record of stimulus votes (see the module docstring for the order).

    ``objective``: the family × model's transition record from its deterministic checks (None: no checks).
    """
    n = wins + ties + losses
    p = sign_test_p(wins, losses)
    net = (wins - losses) / n if n else float("nan")

    def out(state: str, reason: str = "") -> GateDecision:
        return GateDecision(state, reason, n, wins, ties, losses, p, net, objective)

    if not reconciliation_complete:
        return out(INVALID_INCONCLUSIVE, "incomplete_reconciliation")
    if judge_errors:
        return out(INVALID_INCONCLUSIVE, "judge_errors")
    if dormancy_activations:
        return out(VALID_NO_CHANGE, "activation_contract_failed")
    if n < MIN_STIMULI:
        return out(INVALID_INCONCLUSIVE, "underpowered")
    if objective is not None and objective.regression:
        return out(VALID_REGRESSION, "objective_loss")
    if p > ALPHA:
        return out(VALID_NO_CHANGE, "not_significant")
    if wins <= losses:
        return out(VALID_NO_CHANGE, "no_positive_direction")
    if net < NET_WIN_FLOOR:
        return out(VALID_NO_CHANGE, "net_win_below_floor")
    return out(VALID_PASS)


def collapse_votes(pairs: pd.DataFrame) -> pd.DataFrame:
    """One vote per (skill family, model, prompt): the majority direction of its reps, an even split a tie.

    Args:
        pairs: ``pairs.csv`` rows without judge errors.

    Returns:
        ``skill_family, model, prompt, reps, rep_wins, rep_losses, vote``.
    """
    keys = ["skill_family", "model", "prompt"]
    g = pairs.assign(_w=pairs["outcome"].eq("W"), _l=pairs["outcome"].eq("L")).groupby(keys, sort=True)
    votes = pd.DataFrame({"reps": g.size(), "rep_wins": g["_w"].sum(), "rep_losses": g["_l"].sum()})
    direction = np.sign(votes["rep_wins"] - votes["rep_losses"])
    votes["vote"] = np.select([direction > 0, direction < 0], ["W", "L"], "T")
    return votes.reset_index()


def dormancy_activations(manifest: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> pd.DataFrame:
    """Per family × model, runs of the family's dormancy prompts (treatment, plugin) that activated the skill.

    Returns:
        ``skill_family, model, dormancy_runs, dormancy_activations``.
    """
    dorm = manifest[manifest["dormancy"] & false_trigger_arms(manifest["condition"], pair)]
    active = dorm["skill_activation"].fillna("none").str.strip().ne("none") & dorm["skill_activation"].ne("")
    g = dorm.assign(_a=active).groupby(["skill_family", "model"], sort=True)
    return pd.DataFrame({"dormancy_runs": g.size(), "dormancy_activations": g["_a"].sum()}).reset_index()


def objective_records(transitions: pd.DataFrame | None) -> dict[tuple[str, str], ObjectiveRecord]:
    """Per family × model, the objective record of its non-dormancy stimuli with checks.

    Args:
        transitions: :func:`skillbench.scorecard.objective.transitions` output (None or empty: no checks).
    """
    if transitions is None or transitions.empty:
        return {}
    votes = transitions[~transitions["dormancy"].astype(bool)]
    out = {}
    for (family, model), block in votes.groupby(["skill_family", "model"], sort=True):
        out[(family, model)] = ObjectiveRecord(len(block), int(block["transition"].eq(SKILLED_ONLY).sum()),
                                               int(block["transition"].eq(BASELINE_ONLY).sum()))
    return out


def preference_gate(pairs: pd.DataFrame, manifest: pd.DataFrame, *, reconciliation_complete: bool = True,
                    transitions: pd.DataFrame | None = None, pair: ArmPair = DEFAULT_PAIR) -> pd.DataFrame:
    """The gate for every skill family × model that has pairwise judgments or preference-eligible runs.

    Args:
        pairs: ``pairs.csv`` (:func:`skillbench.ledgers.read_pairs`), outcomes for the treatment.
        manifest: the run manifest (dormancy flags and activations).
        reconciliation_complete: false makes every record ``INVALID_INCONCLUSIVE``.
        transitions: the week's objective transitions (a week with checks); adds :data:`OBJECTIVE_COLUMNS`.
        pair: the week's arms: the treatment's scored runs name the records, its dormancy runs (and the plugin
            arm's) feed the activation contract.

    Returns:
        One row per family × model with :data:`GATE_COLUMNS` (then :data:`OBJECTIVE_COLUMNS` with checks).
    """
    objective = objective_records(transitions)
    dormant = set(manifest.loc[manifest["dormancy"], "prompt"])
    eligible = pairs[~pairs["prompt"].isin(dormant)]
    errored = eligible["error"].astype(str).str.strip().ne("")
    errors = eligible[errored].groupby(["skill_family", "model"]).size().rename("judge_errors")
    votes = collapse_votes(eligible[~errored])
    record = (votes.assign(W=votes["vote"].eq("W"), T=votes["vote"].eq("T"), L=votes["vote"].eq("L"))
              .groupby(["skill_family", "model"])[["W", "T", "L"]].sum())
    scored = manifest[~manifest["dormancy"] & manifest["condition"].eq(pair.treatment)]
    index = (set(record.index) | set(errors.index)
             | set(zip(scored["skill_family"], scored["model"], strict=True)))
    acts = dormancy_activations(manifest, pair).set_index(["skill_family", "model"])["dormancy_activations"]
    rows = []
    for family, model in sorted(index):
        w, t, lo = (int(record.at[(family, model), k]) if (family, model) in record.index else 0
                    for k in ("W", "T", "L"))
        n_err = int(errors.get((family, model), 0))
        n_act = int(acts.get((family, model), 0))
        checked = objective.get((family, model))
        dec = decide(w, t, lo, reconciliation_complete=reconciliation_complete, judge_errors=n_err,
                     dormancy_activations=n_act, objective=checked)
        row = {"skill_family": family, "model": model, "state": dec.state, "reason": dec.reason,
               "verdict": dec.verdict, "n": dec.n, "wins": w, "ties": t, "losses": lo, "p_value": dec.p_value,
               "net_win": dec.net_win, "judge_errors": n_err, "dormancy_activations": n_act,
               "evidence": dec.evidence}
        if objective:
            values = ((checked.n, checked.wins, checked.ties, checked.losses, checked.p_value, checked.net_loss)
                      if checked else (0, 0, 0, 0, float("nan"), float("nan")))
            row |= dict(zip(OBJECTIVE_COLUMNS, values, strict=True))
        rows.append(row)
    return pd.DataFrame(rows, columns=GATE_COLUMNS + (OBJECTIVE_COLUMNS if objective else []))
