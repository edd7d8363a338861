"""The simulation check: a simulated week's measurement held against the simulation's own answer key.

On the simulated endpoint every run's truth is known (``truth.csv``, :mod:`skillbench.ledgers._truth`; only each
run's last attempt counts). Four comparisons, each from the ledgers only:

1. **Lift** — the true must coverage of each run (its truth rows: covered = 1, omitted = 0), over the runs the
   measured lift is over (the graded runs of the week's two lift arms), aggregated and paired by the scorecard's
   own functions (:func:`~skillbench.scorecard._scoring.prompt_rep_scores` → prompt → paired ``dᵢ``), gives the true
   lift per model. Whether the measured paired-t interval and bootstrap interval cover it says whether the
   judge's errors stay inside the uncertainty the scorecard states.
2. **Judge** — every graded rubric item against its truth row: ``must`` met ↔ covered, ``bonus`` met ↔ covered,
   ``avoid`` violated ↔ violated. Accuracy per item type, and the false-met rate: the credit-earning verdict (met;
   for ``avoid``, violated) where the truth says omitted.
3. **Activation** — the manifest's ``skill_activation`` (what the transcript showed) against the truth's
   ``activation_route``, as an agreement rate per arm.
4. **Gate** — the preference gate applied to the truth: per prompt × model × rep, the rubric items the
   treatment's answer truly satisfies against the control's (the pairwise judge's standard,
   :func:`skillbench.scorecard._controls.satisfied_items`) gives W/T/L, then the gate's own vote collapse and rule
   (:func:`skillbench.scorecard._controls.rubric_gate`), with the activation contract read from the truth's routes
   of the dormancy runs and the week's reconciliation state and objective record as measured (checks are not
   judged). Must coverage alone is not the judge's standard: on a 448-run bundled-suite week its votes matched
   the pairwise judge's per-rep outcomes 69 % of the time, the items satisfied 93 %.

**The flag.** The measurement disagrees with the truth beyond its stated uncertainty when an interval the scorecard
reports (t or bootstrap, with ≥ 2 prompts) misses the true lift, when an item type's judge accuracy is credibly
below :data:`JUDGE_ACCURACY_FLOOR` (one-sided exact binomial test at :data:`FLOOR_ALPHA`: a handful of items cannot
trip it by chance; the items of one run are not independent — a judge that misreads an answer misreads several of
its items — so the test counts items clustered by run, :func:`clustered_floor_test`), or when the measured gate
verdict contradicts the truth-implied one: it differs, and no single stimulus voting otherwise would make the
measured record reach the truth's verdict. A verdict one stimulus vote from the truth's is the gate's own resolution
at n = 5–8 stimuli (one vote moves p across 0.05), and a judge that errs on a few percent of items moves a vote now
and then: it is shown (``one_vote``), not flagged, while a difference the votes cannot explain (an activation
contract the truth does not share, judge errors, votes far apart) is. The scorecard's title and notes say so
(:attr:`SimulationCheck.flagged`), so a damaged measurement never reads as clean.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import permutations

import numpy as np
import pandas as pd
from scipy.special import betainc

from skillbench.arms import DEFAULT_PAIR, ArmPair
from skillbench.ledgers import final_truth
from skillbench.scorecard._controls import rubric_gate, rubric_votes
from skillbench.scorecard._gate import Completeness
from skillbench.scorecard._scoring import prompt_rep_scores, prompt_scores
from skillbench.scorecard._stats import paired_differences
from skillbench.scorecard._verdicts import GateRecord, ObjectiveRecord, decide_record
from skillbench.signals import false_trigger_arms
from skillbench.vocab import ALLOWED_VERDICTS, INCOMPLETE_RECONCILIATION, ITEM_TYPES, SIMULATED

JUDGE_ACCURACY_FLOOR = 0.90  # an item type's judge accuracy credibly below this flags the week
FLOOR_ALPHA = 0.05
NO_ROUTE = "none"
# The truth's decision that earns an item type's credit (the judge's counterpart: ALLOWED_VERDICTS[type][0]).
CREDITED = {"must": "covered", "bonus": "covered", "avoid": "violated"}
LIFT_COLUMNS = ["model", "n_pairs", "true_lift", "measured_lift", "ci_low", "ci_high", "t_covers", "boot_low",
                "boot_high", "boot_covers"]
JUDGE_COLUMNS = ["item_type", "n", "agree", "accuracy", "truth_omitted", "false_met", "false_met_rate", "runs",
                 "design_effect", "p_below_floor", "below_floor"]
ACTIVATION_COLUMNS = ["condition", "runs", "agree", "agreement"]
GATE_COLUMNS = ["skill_family", "model", "measured", "truth", "measured_evidence", "truth_evidence", "agrees",
                "one_vote", "contradicts"]
VOTE_KEYS = ("wins", "ties", "losses")


@dataclass(frozen=True)
class SimulationCheck:
    """A simulated week against its truth (see the module docstring); :meth:`frames` for notebooks.

    Attributes:
        lift: :data:`LIFT_COLUMNS` per model (``*_covers``: nullable boolean, NA below two prompts).
        judge: :data:`JUDGE_COLUMNS` per item type.
        activation: :data:`ACTIVATION_COLUMNS` per arm.
        gate: :data:`GATE_COLUMNS` per skill family × model (empty without ``pairs.csv``).
        unmatched: graded items with no truth row of their run's last attempt (left out of the judge's accuracy).
    """

    lift: pd.DataFrame
    judge: pd.DataFrame
    activation: pd.DataFrame
    gate: pd.DataFrame
    unmatched: int = 0

    @property
    def reasons(self) -> list[str]:
        """Why the measurement disagrees with the truth (empty when it does not)."""
        out = []
        for col, name in (("t_covers", "t interval"), ("boot_covers", "bootstrap interval")):
            missed = self.lift.loc[self.lift[col].eq(False).fillna(False), "model"].tolist()
            if missed:
                out.append(f"the {name} misses the true lift for {', '.join(missed)}")
        low = self.judge.loc[self.judge["below_floor"], "item_type"].tolist()
        if low:
            out.append(f"judge accuracy credibly below {JUDGE_ACCURACY_FLOOR:.0%} on {', '.join(low)} items")
        off = self.gate[self.gate["contradicts"]] if not self.gate.empty else self.gate
        if len(off):
            cells = ", ".join(f"{r.skill_family} × {r.model}" for r in off.itertuples(index=False))
            out.append(f"the gate's verdict differs from the truth-implied one by more than one stimulus vote for "
                       f"{cells}")
        return out

    @property
    def flagged(self) -> bool:
        """The measurement disagrees with the truth beyond its stated uncertainty."""
        return bool(self.reasons)

    def frames(self) -> dict[str, pd.DataFrame]:
        """``simulation_lift``, ``simulation_judge``, ``simulation_activation``, ``simulation_gate``."""
        return {"simulation_lift": self.lift, "simulation_judge": self.judge,
                "simulation_activation": self.activation, "simulation_gate": self.gate}


def truth_scores(truth: pd.DataFrame, manifest: pd.DataFrame, run_ids: pd.Series | None = None) -> pd.DataFrame:
    """The truth's rubric rows as a scores frame (credit 1 where the truth earns it), for the scoring functions.

    Args:
        truth: :func:`skillbench.ledgers.final_truth` rows (each run's last attempt).
        manifest: the run manifest (each run's model label, condition, rep and skill family).
        run_ids: keep only these runs (None: every run).

    Returns:
        ``run_id, model, condition, prompt, rep, skill, item_index, item_type, credit, graded``.
    """
    rubric = truth[truth["item_type"].isin(ITEM_TYPES)]
    if run_ids is not None:
        rubric = rubric[rubric["run_id"].isin(set(run_ids.astype(str)))]
    runs = manifest.assign(run_id=manifest["run_id"].astype(str)).drop_duplicates("run_id").set_index("run_id")
    rubric = rubric[rubric["run_id"].isin(runs.index)]
    out = pd.DataFrame({"run_id": rubric["run_id"].to_numpy(),
                        "model": rubric["run_id"].map(runs["model"]).to_numpy(),
                        "condition": rubric["run_id"].map(runs["condition"]).to_numpy(),
                        "prompt": rubric["run_id"].map(runs["prompt"]).to_numpy(),
                        "rep": rubric["run_id"].map(runs["rep"]).astype(int).to_numpy(),
                        "skill": rubric["run_id"].map(runs["skill_family"]).to_numpy(),
                        "item_index": rubric["item_index"].to_numpy(), "item_type": rubric["item_type"].to_numpy()})
    out["credit"] = (rubric["decided"].to_numpy() == rubric["item_type"].map(CREDITED).to_numpy()).astype(float)
    out["graded"] = True
    return out


def _covers(low: pd.Series, high: pd.Series, value: pd.Series) -> pd.Series:
    """``low ≤ value ≤ high`` as a nullable boolean: NA where any of the three is unknown."""
    low, high, value = (pd.to_numeric(s, errors="coerce").astype(float) for s in (low, high, value))
    known = low.notna() & high.notna() & value.notna()
    out = pd.Series(pd.NA, index=low.index, dtype="boolean")
    out[known] = ((low[known] <= value[known] + 1e-12) & (value[known] <= high[known] + 1e-12)).to_numpy()
    return out


def lift_against_truth(truth_prompts: pd.DataFrame, lift: pd.DataFrame, uncertainty: pd.DataFrame,
                       pair: ArmPair = DEFAULT_PAIR) -> pd.DataFrame:
    """Per model, the true paired lift against the measured one and its t and bootstrap intervals."""
    true = paired_differences(truth_prompts, pair=pair).groupby("model")["d"].mean().astype(float).rename("true_lift")
    out = lift[["model", "n_pairs", "paired_lift", "ci_low", "ci_high"]].rename(columns={"paired_lift":
                                                                                         "measured_lift"})
    out = out.merge(true.reset_index(), on="model", how="left")
    out = out.merge(uncertainty[["model", "boot_low", "boot_high"]], on="model", how="left")
    enough = out["n_pairs"].ge(2)
    out["t_covers"] = _covers(out["ci_low"].where(enough), out["ci_high"].where(enough), out["true_lift"])
    out["boot_covers"] = _covers(out["boot_low"].where(enough), out["boot_high"].where(enough), out["true_lift"])
    return out[LIFT_COLUMNS].reset_index(drop=True)


def clustered_floor_test(agree: np.ndarray, items: np.ndarray, floor: float = JUDGE_ACCURACY_FLOOR
                         ) -> tuple[float, float]:
    """One-sided p that accuracy is below ``floor``, items clustered by run: ``(design effect, p)``.

    The Rao–Scott adjustment of the exact binomial test: the design effect ``deff`` is the run-clustered
    (ratio-estimator, linearisation) variance of the accuracy over its variance were the items independent,
    floored at 1 (clustering never makes the test bolder); the item counts are divided by it — ``deff`` items
    of a run carry the information of one independent item — and the one-sided exact binomial p is read at those
    effective counts (the binomial CDF's regularised incomplete beta form, which takes non-integer counts). With
    every run's accuracy the same, ``deff`` is 1 and p is :func:`scipy.stats.binomtest`'s; with one run there is no
    between-run spread to measure, so the run counts as one item.

    Args:
        agree: per run, the items the judge got right; ``items``: per run, the items compared (same order).
    """
    a, m = np.asarray(agree, dtype=float), np.asarray(items, dtype=float)
    runs, n, k = len(m), float(m.sum()), float(a.sum())
    if n == 0:
        return float("nan"), float("nan")
    rate = k / n
    if runs < 2:
        deff = n
    else:
        clustered = runs / (runs - 1) * float(np.sum((a - rate * m) ** 2)) / n**2
        independent = rate * (1 - rate) / n
        deff = max(1.0, clustered / independent) if independent > 0 else 1.0
    n_eff, k_eff = n / deff, k / deff
    # P(X ≤ k) for X ~ Binomial(n, floor) is I_{1−floor}(n − k, k + 1); at k = n it is 1
    p = 1.0 if k_eff >= n_eff else float(betainc(n_eff - k_eff, k_eff + 1, 1 - floor))
    return deff, p


def judge_against_truth(scores: pd.DataFrame, truth: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Per item type, the judge's graded verdicts against the truth rows of the same run and item.

    Whether accuracy is credibly below :data:`JUDGE_ACCURACY_FLOOR` is :func:`clustered_floor_test` over the
    runs (``runs``, ``design_effect``): the claim is about the judge on answers, and one answer's items stand or
    fall together.

    Returns:
        (:data:`JUDGE_COLUMNS` per item type, the number of graded items without a truth row).
    """
    graded = scores[scores["graded"]].assign(run_id=lambda f: f["run_id"].astype(str),
                                              item_index=lambda f: pd.to_numeric(f["item_index"], errors="coerce"))
    key = truth[truth["item_type"].isin(ITEM_TYPES)][["run_id", "item_index", "item_type", "decided"]]
    both = graded.merge(key.rename(columns={"item_type": "truth_type"}), on=["run_id", "item_index"], how="left")
    matched = both[both["decided"].notna() & both["truth_type"].eq(both["item_type"])]
    rows = []
    for kind in ITEM_TYPES:
        block = matched[matched["item_type"].eq(kind)]
        judge_says = block["verdict"].eq(ALLOWED_VERDICTS[kind][0])
        truth_says = block["decided"].eq(CREDITED[kind])
        n, agree = len(block), int((judge_says == truth_says).sum())
        omitted = ~truth_says
        false_met = int((judge_says & omitted).sum())
        per_run = (judge_says == truth_says).groupby(block["run_id"]).agg(["sum", "size"])
        deff, p = clustered_floor_test(per_run["sum"].to_numpy(), per_run["size"].to_numpy())
        rows.append({"item_type": kind, "n": n, "agree": agree, "accuracy": agree / n if n else float("nan"),
                     "truth_omitted": int(omitted.sum()), "false_met": false_met,
                     "false_met_rate": false_met / int(omitted.sum()) if omitted.any() else float("nan"),
                     "runs": len(per_run), "design_effect": deff, "p_below_floor": p,
                     "below_floor": bool(n and p <= FLOOR_ALPHA)})
    return pd.DataFrame(rows, columns=JUDGE_COLUMNS), int(len(both) - len(matched))


def run_routes(truth: pd.DataFrame) -> pd.Series:
    """Each run's true activation route (its last attempt's, the same on every row), indexed by run id."""
    return truth.drop_duplicates("run_id").set_index("run_id")["activation_route"].astype(str).str.strip()


def activation_against_truth(manifest: pd.DataFrame, truth: pd.DataFrame) -> pd.DataFrame:
    """Per arm, the share of runs whose measured activation is the truth's route (runs with a truth row)."""
    routes = run_routes(truth)
    runs = manifest.assign(run_id=manifest["run_id"].astype(str))
    runs = runs[runs["run_id"].isin(routes.index)]
    measured = runs["skill_activation"].astype(str).str.strip().replace("", NO_ROUTE)
    agree = measured.eq(runs["run_id"].map(routes).replace("", NO_ROUTE))
    g = agree.groupby(runs["condition"].astype(str), sort=True)
    out = pd.DataFrame({"runs": g.size(), "agree": g.sum().astype(int)}).reset_index(names="condition")
    out["agreement"] = out["agree"] / out["runs"]
    return out[ACTIVATION_COLUMNS]


def truth_dormancy_activations(manifest: pd.DataFrame, truth: pd.DataFrame, pair: ArmPair) -> pd.Series:
    """Per ``(skill_family, model)``, dormancy runs of the false-trigger arms whose true route reached the skill."""
    routes = run_routes(truth)
    dorm = manifest[manifest["dormancy"].astype(bool) & false_trigger_arms(manifest["condition"], pair)]
    active = dorm["run_id"].astype(str).map(routes).fillna(NO_ROUTE).ne(NO_ROUTE)
    return active.groupby([dorm["skill_family"], dorm["model"]]).sum().astype(int)


def _one_vote_from(row: pd.Series, target: str) -> bool:
    """Whether the measured record reaches ``target`` with one stimulus's vote changed (n, contract and the
    objective record kept): the measured gate's verdict is then a boundary case of the truth's."""
    counts = [int(row[k]) for k in VOTE_KEYS]
    objective = (ObjectiveRecord(int(row["objective_n"]), int(row["objective_wins"]), int(row["objective_losses"]),
                                 float(row["objective_p"]), float(row["objective_net_loss"]))
                 if "objective_n" in row and not pd.isna(row["objective_n"]) else None)
    # a Holm member keeps its Holm multiplier (adjusted / raw p): one vote moves this record, not the week's others
    tested = "p_adjusted" in row and pd.notna(row["p_adjusted"]) and float(row["p_value"]) > 0
    multiplier = float(row["p_adjusted"]) / float(row["p_value"]) if tested else 1.0
    for src, dst in permutations(range(3), 2):
        if counts[src] == 0:
            continue
        moved = list(counts)
        moved[src] -= 1
        moved[dst] += 1
        record = GateRecord(*moved, reconciliation_complete=row["reason"] != INCOMPLETE_RECONCILIATION,
                            judge_errors=int(row["judge_errors"]),
                            dormancy_activations=int(row["dormancy_activations"]), objective=objective)
        if tested:
            record = replace(record, p_adjusted=min(1.0, record.p_value * multiplier))
        decision = decide_record(record)
        if decision.verdict == target:
            return True
    return False


def gate_against_truth(gate: pd.DataFrame | None, truth_votes: pd.DataFrame, manifest: pd.DataFrame,
                       truth: pd.DataFrame, pair: ArmPair, *, reconciliation_complete: Completeness = True,
                       transitions: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per skill family × model, the measured gate verdict against the verdict the truth implies.

    ``agrees``: the same verdict; ``one_vote``: they differ, but one stimulus voting otherwise gives the measured
    record the truth's verdict (:func:`_one_vote_from`); ``contradicts``: they differ and it would not (flagged).
    """
    if gate is None:
        return pd.DataFrame(columns=GATE_COLUMNS)
    implied = rubric_gate(truth_votes, manifest, pair, reconciliation_complete=reconciliation_complete,
                          dormancy=truth_dormancy_activations(manifest, truth, pair), transitions=transitions)
    measured = gate.rename(columns={"verdict": "measured", "evidence": "measured_evidence"})
    both = measured.merge(implied[["skill_family", "model", "verdict", "evidence"]].rename(
        columns={"verdict": "truth", "evidence": "truth_evidence"}), on=["skill_family", "model"], how="outer")
    both["agrees"] = both["measured"].eq(both["truth"])
    known = both["measured"].notna() & both["truth"].notna()
    both["one_vote"] = [bool(k and not a and _one_vote_from(row, row["truth"]))
                        for (_, row), k, a in zip(both.iterrows(), known, both["agrees"], strict=True)]
    both["contradicts"] = ~both["agrees"] & ~both["one_vote"]
    return both[GATE_COLUMNS].sort_values(["skill_family", "model"], kind="stable").reset_index(drop=True)


@dataclass(frozen=True)
class Measured:
    """What the scorecard measured that the simulation check holds against the truth."""

    coverage: pd.DataFrame  # which runs the measured lift is over: the graded ones
    lift: pd.DataFrame
    uncertainty: pd.DataFrame
    gate: pd.DataFrame | None  # the preference gate (None without ``pairs.csv``)
    transitions: pd.DataFrame | None = None  # the objective transitions (the gate's objective record is not judged)


def simulation_check(truth: pd.DataFrame | None, measured: Measured, *, endpoint: str, manifest: pd.DataFrame,
                     scores: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR,
                     reconciliation_complete: Completeness = True) -> SimulationCheck | None:
    """The simulation check of a week; ``None`` unless it ran on the simulated endpoint and has a truth.

    Args:
        truth: :func:`skillbench.ledgers.read_truth` output (None: no ``truth.csv``).
        measured: the scorecard's coverage, lift, uncertainty, gate and objective transitions.
        endpoint: the week's endpoint kind (:func:`skillbench.scorecard._compute.endpoint_kind`).
        manifest, scores: the week's ledgers.
        pair: the week's arms.
        reconciliation_complete: the week's reconciliation state, as the measured gate read it.
    """
    coverage, lift, uncertainty, gate = measured.coverage, measured.lift, measured.uncertainty, measured.gate
    transitions = measured.transitions
    if truth is None or endpoint != SIMULATED:
        return None
    final = final_truth(truth, manifest)
    graded = coverage[coverage["graded"] & ~coverage["dormancy"].astype(bool)
                      & coverage["condition"].astype(str).isin(pair.lift_arms)]["run_id"]
    true_reps = prompt_rep_scores(truth_scores(final, manifest, graded))
    judge, unmatched = judge_against_truth(scores, final)
    return SimulationCheck(
        lift=lift_against_truth(prompt_scores(true_reps), lift, uncertainty, pair),
        judge=judge,
        activation=activation_against_truth(manifest, final),
        gate=gate_against_truth(gate, rubric_votes(true_reps, manifest, pair), manifest, final, pair,
                                reconciliation_complete=reconciliation_complete, transitions=transitions),
        unmatched=unmatched,
    )

