"""The week's controls: with-skill against a placebo, and the A/A arm's lift and gate verdict (the noise floor).

Two opt-in arms (:data:`~skillbench.vocab.PLACEBO`, :data:`~skillbench.vocab.AA`) answer two questions the
with-skill vs no-skill lift cannot:

* **placebo** — the family's name and description over a same-length neutral body. ``with-skill − placebo``
  (:class:`~skillbench.arms.ArmPair` ``(with-skill, placebo)``) is what the skill's *content* adds over any extra
  context installed the same way; it is shown beside the week's own lift.
* **aa** — a second no-skill arm. ``aa − no-skill`` has a true lift of zero, so its interval and its gate verdict
  say how often this harness "finds" an effect that is not there: the week's noise floor.

Every lift goes through the scorecard's own functions (:func:`~skillbench.scorecard._stats.lift_table`,
:func:`~skillbench.scorecard._stats.paired_differences`, :func:`~skillbench.scorecard._stats.uncertainty_table`)
with the control pair, so it is computed exactly as the headline lift is.

**The rubric gate.** ``pairs.csv`` holds only the week's pair (the pairwise judge never sees a control arm), so a
control's gate verdict is derived from the rubric scores instead: per prompt × model × rep, the rubric items the
treatment's answer satisfies against the control's gives a vote (more ``W``, as many ``T``, fewer ``L``; a rep
graded in one arm only has no vote), and the preference gate's own vote collapse
(:func:`~skillbench.scorecard._gate.collapse_votes`, one vote per prompt) and rule
(:func:`~skillbench.scorecard._verdicts.decide`) decide. "Satisfied" is the pairwise judge's own standard
(:mod:`skillbench.judge._protocol`: more musts met, more bonus items, fewer avoid harms, a committed harm weighing
as much as a missed must), counted one per item (:func:`satisfied_items`) as the simulated pairwise judge counts
it — the votes a judge following the protocol would cast. The A/A verdict skips the
activation contract (neither arm has a skill to trigger); the placebo's applies it as the preference gate does.
The simulation check derives the truth-implied gate verdict with the same functions (:func:`rubric_gate`).

**Controls that accumulate.** One A/A verdict per family × model a week is a coin flip, not a rate. Every recorded
week's control verdicts are kept in the history's controls sidecar (:func:`control_history_rows`, one row per
week × model × family × control), and :func:`accumulated_controls` counts them over the weeks of one endpoint kind
up to this one (a simulated week never enters a real week's rate): among the records the gate decided (a
``VALID_*`` state; an inconclusive record made no test), the share that passed, with its Clopper–Pearson exact
95 % interval (:func:`skillbench.scorecard._inference.rate_interval` with ``exact=True``: conservative at the small
counts a few weeks give). For the A/A arm that share is the harness's false-pass rate, to be read against the
gate's nominal 5 %; for the placebo it is how often the skill's content beat a neutral body of the same length.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from skillbench.arms import DEFAULT_PAIR, ArmPair
from skillbench.ledgers import parse_timestamps
from skillbench.scorecard import _objective as obj
from skillbench.scorecard._gate import (
    GATE_COLUMNS,
    Completeness,
    collapse_votes,
    dormancy_activations,
    family_completeness,
)
from skillbench.scorecard._inference import EXACT, rate_interval
from skillbench.scorecard._objective import objective_records
from skillbench.scorecard._stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    lift_table,
    paired_differences,
    uncertainty_table,
)
from skillbench.scorecard._verdicts import ALPHA, GateRecord, decide_week
from skillbench.vocab import AA, LOSS, NO_SKILL, PLACEBO, TIE, VALID_NO_CHANGE, VALID_PASS, VALID_REGRESSION, WIN

SATISFIED = "satisfied"  # rubric items satisfied: must and bonus met, avoid not committed (one each)
VOTE_METRIC = SATISFIED  # the prompt × rep measure whose sign (treatment − control) is a stimulus rep's vote
LIFT_COLUMNS = ["comparison", "treatment", "control", "model", "n_pairs", "must_no", "must_with", "must_lift",
                "paired_lift", "must_lift_se", "ci_low", "ci_high", "excludes_zero", "boot_low", "boot_high"]
VOTE_COLUMNS = ["skill_family", "model", "prompt", "rep", "outcome"]
DECIDED_STATES = frozenset({VALID_PASS, VALID_NO_CHANGE, VALID_REGRESSION})  # a record the gate made a test of
ACCUMULATED_COLUMNS = ["control", "comparison", "passes", "records", "weeks", "rate", "low", "high", "method",
                       "nominal"]


@dataclass(frozen=True)
class Controls:
    """The control comparisons of one week.

    Attributes:
        lift: :data:`LIFT_COLUMNS`, one row per comparison × model: the week's pair first, then
            ``with-skill vs placebo`` and ``aa vs no-skill`` when those arms ran.
        gate: ``comparison``, ``vote_basis``, then :data:`~skillbench.scorecard._gate.GATE_COLUMNS`: the rubric
            gate of each control comparison per skill family × model.
        arms: the control arms the week ran (``placebo``, ``aa``).
        ungraded: those of them with no graded run (their comparisons have no lift and no verdict yet).
    """

    lift: pd.DataFrame
    gate: pd.DataFrame
    arms: tuple[str, ...]
    ungraded: tuple[str, ...] = ()

    def frames(self) -> dict[str, pd.DataFrame]:
        """``controls_lift`` and ``controls_gate``."""
        return {"controls_lift": self.lift, "controls_gate": self.gate}


def control_pairs(conditions: pd.Series, pair: ArmPair = DEFAULT_PAIR) -> list[ArmPair]:
    """The control comparisons a week's conditions allow: ``(treatment, placebo)`` and ``(aa, no-skill)``."""
    present = {str(c) for c in conditions.unique()}
    out = []
    if PLACEBO in present and pair.treatment in present and pair.treatment != PLACEBO:
        out.append(ArmPair(treatment=pair.treatment, control=PLACEBO))
    if AA in present and NO_SKILL in present:
        out.append(ArmPair(treatment=AA, control=NO_SKILL))
    return out


def comparison_lift(prompts: pd.DataFrame, cells: pd.DataFrame, pair: ArmPair, *,
                    n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """The lift of ``pair`` per model, by the headline lift's functions: cell lift, paired lift ± SE, t and
    bootstrap intervals (:data:`LIFT_COLUMNS`).

    Args:
        prompts: :func:`skillbench.scorecard.prompt_scores` of the week (other arms' rows are ignored).
        cells: :func:`skillbench.scorecard.cell_scores` of the week, with cost columns.
        pair: the comparison (lift = treatment − control).
        n_resamples: bootstrap resamples.
        seed: bootstrap seed (the scorecard's, so the week's own pair gets the uncertainty table's interval).
    """
    arm_prompts = prompts[prompts["condition"].isin(pair.lift_arms)]
    arm_cells = cells[cells["condition"].isin(pair.lift_arms)]
    if arm_prompts.empty:
        return pd.DataFrame(columns=LIFT_COLUMNS)
    lift = lift_table(arm_prompts, arm_cells, pair=pair)
    boot = uncertainty_table(paired_differences(arm_prompts, pair=pair), n_resamples=n_resamples, seed=seed)
    out = lift.merge(boot[["model", "boot_low", "boot_high"]], on="model", how="left")
    out.insert(0, "comparison", pair.label)
    out.insert(1, "treatment", pair.treatment)
    out.insert(2, "control", pair.control)
    return out[LIFT_COLUMNS]


def satisfied_items(prompt_reps: pd.DataFrame) -> pd.Series:
    """Per prompt × rep, the graded rubric items its answer satisfies: musts and bonus items met, avoid items not
    committed, one each (ungraded items count nowhere).

    Args:
        prompt_reps: :func:`skillbench.scorecard.prompt_rep_scores` output (its ``n_*`` counts and metrics).
    """
    met_must = prompt_reps["must_coverage"].fillna(0.0) * prompt_reps["n_must"]
    met_bonus = prompt_reps["bonus_rate"].fillna(0.0) * prompt_reps["n_bonus"]
    clean = prompt_reps["n_avoid"] - prompt_reps["avoid_violations"].fillna(0.0)
    return (met_must + met_bonus + clean).round(9)  # the rates are quotients of counts: back to whole counts


def rubric_votes(prompt_reps: pd.DataFrame, manifest: pd.DataFrame, pair: ArmPair,
                 metric: str = VOTE_METRIC) -> pd.DataFrame:
    """One vote per prompt × model × rep graded in both arms: the sign of treatment − control in ``metric``.

    Args:
        prompt_reps: :func:`skillbench.scorecard.prompt_rep_scores` output (measured, or the truth's).
        manifest: the run manifest (each prompt's skill family; dormancy prompts never vote).
        pair: the comparison.
        metric: the prompt × rep measure compared: :data:`SATISFIED` (:func:`satisfied_items`, the default) or a
            column of ``prompt_reps`` (e.g. ``must_coverage``).

    Returns:
        :data:`VOTE_COLUMNS` (``outcome`` ``W``/``T``/``L`` for the treatment), in the shape of ``pairs.csv``.
    """
    dormant = set(manifest.loc[manifest["dormancy"].astype(bool), "prompt"])
    reps = prompt_reps[prompt_reps["condition"].isin(pair.lift_arms) & ~prompt_reps["prompt"].isin(dormant)]
    if metric == SATISFIED and SATISFIED not in reps:
        reps = reps.assign(**{SATISFIED: satisfied_items(reps)})
    wide = reps.pivot_table(index=["model", "prompt", "rep"], columns="condition", values=metric, aggfunc="first")
    wide = wide.reindex(columns=list(pair.lift_arms)).dropna()
    if wide.empty:
        return pd.DataFrame(columns=VOTE_COLUMNS)
    sign = np.sign(wide[pair.treatment] - wide[pair.control])
    out = pd.DataFrame({"outcome": np.select([sign > 0, sign < 0], [WIN, LOSS], TIE)}, index=wide.index)
    out = out.reset_index()
    families = manifest.drop_duplicates("prompt").set_index("prompt")["skill_family"]
    out["skill_family"] = out["prompt"].map(families)
    return out[VOTE_COLUMNS].sort_values(["skill_family", "model", "prompt", "rep"], kind="stable").reset_index(
        drop=True)


def rubric_gate(votes: pd.DataFrame, manifest: pd.DataFrame, pair: ArmPair, *,
                reconciliation_complete: Completeness = True, dormancy: pd.Series | None = None,
                transitions: pd.DataFrame | None = None) -> pd.DataFrame:
    """The preference gate's rule on rubric votes (:func:`rubric_votes`), per skill family × model.

    Args:
        votes: :data:`VOTE_COLUMNS` rows.
        manifest: the run manifest: every family × model with a scored treatment run gets a row (no votes:
            underpowered), as in :func:`skillbench.scorecard._gate.preference_gate`.
        pair: the comparison.
        reconciliation_complete: false makes every record ``INVALID_INCONCLUSIVE``, as the preference gate does (a
            predicate: per family).
        dormancy: dormancy activations per ``(skill_family, model)`` for the activation contract (None: not
            applied, e.g. the A/A arm has no skill to trigger).
        transitions: the comparison's objective transitions (a week with checks), for ``VALID_REGRESSION``.

    Returns:
        :data:`~skillbench.scorecard._gate.GATE_COLUMNS` (``judge_errors`` is 0: a rubric vote has no judge call).
    """
    objective = objective_records(transitions)
    if votes.empty:
        record = pd.DataFrame(columns=[WIN, TIE, LOSS])
    else:
        collapsed = collapse_votes(votes)
        record = (collapsed.assign(**{k: collapsed["vote"].eq(k) for k in (WIN, TIE, LOSS)})
                  .groupby(["skill_family", "model"])[[WIN, TIE, LOSS]].sum())
    scored = manifest[~manifest["dormancy"].astype(bool) & manifest["condition"].eq(pair.treatment)]
    index = set(record.index) | set(zip(scored["skill_family"], scored["model"], strict=True))
    complete = family_completeness(reconciliation_complete)
    keys = sorted(index)
    records = []
    for family, model in keys:
        w, t, lo = (int(record.at[(family, model), k]) if (family, model) in record.index else 0
                    for k in (WIN, TIE, LOSS))
        acts = int(dormancy.get((family, model), 0)) if dormancy is not None else 0
        records.append(GateRecord(w, t, lo, reconciliation_complete=complete(family), dormancy_activations=acts,
                                  objective=objective.get((family, model))))
    rows = []
    # decided as the week's gate is: Holm across the records that reach the sign test
    for (family, model), rec, dec in zip(keys, records, decide_week(records), strict=True):
        rows.append({"skill_family": family, "model": model, "state": dec.state, "reason": dec.reason,
                     "verdict": dec.verdict, "n": dec.n, "wins": rec.wins, "ties": rec.ties, "losses": rec.losses,
                     "p_value": dec.p_value, "p_adjusted": dec.p_adjusted, "net_win": dec.net_win,
                     "judge_errors": 0, "dormancy_activations": rec.dormancy_activations,
                     "evidence": dec.evidence})
    return pd.DataFrame(rows, columns=GATE_COLUMNS)


@dataclass(frozen=True)
class ScoringFrames:
    """The scorecard's scoring frames of every graded arm (:mod:`skillbench.scorecard._scoring`)."""

    prompts: pd.DataFrame  # per prompt × model × arm
    prompt_reps: pd.DataFrame  # per prompt × model × arm × rep
    cells: pd.DataFrame  # per run


def control_checks(frames: ScoringFrames, manifest: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR, *,
                   reconciliation_complete: Completeness = True, check_stimuli: pd.DataFrame | None = None,
                   models: list[str] | None = None, n_resamples: int = DEFAULT_RESAMPLES,
                   seed: int = DEFAULT_SEED) -> Controls | None:
    """The placebo and A/A comparisons of a week; ``None`` when it ran neither arm.

    Args:
        frames: the scorecard's scoring frames (every graded arm).
        manifest: the run manifest.
        pair: the week's pair (its lift is the first row; its treatment is measured against the placebo).
        reconciliation_complete: the week is fully accounted for (else every rubric gate is inconclusive).
        check_stimuli: :func:`skillbench.scorecard._objective.stimulus_outcomes` of a week with checks.
        models: the scorecard's model order (each comparison's rows follow it; None: sorted).
        n_resamples: bootstrap resamples.
        seed: bootstrap seed.
    """
    prompts, prompt_reps, cells = frames.prompts, frames.prompt_reps, frames.cells
    scored = manifest[~manifest["dormancy"].astype(bool)]
    ran = control_pairs(scored["condition"], pair)
    if not ran:
        return None
    arms = tuple(a for a in (PLACEBO, AA) if any(a in (p.treatment, p.control) for p in ran))
    # A control arm the rubric judge has not graded has nothing to compare yet: said, never shown as a zero.
    graded = set(prompts["condition"].astype(str))
    ungraded = tuple(a for a in arms if a not in graded)
    pairs = [p for p in ran if not set(p.lift_arms) & set(ungraded)]
    lifts = [comparison_lift(prompts, cells, p, n_resamples=n_resamples, seed=seed) for p in [pair, *pairs]]
    if models:
        rank = {m: i for i, m in enumerate(models)}
        lifts = [x.assign(_r=x["model"].map(rank)).sort_values("_r", kind="stable").drop(columns="_r")
                 for x in lifts]
    gates = []
    for p in pairs:
        contract = None if p.treatment == AA else dormancy_activations(manifest, p).set_index(
            ["skill_family", "model"])["dormancy_activations"]
        transitions = obj.transitions(check_stimuli, p) if check_stimuli is not None and not check_stimuli.empty \
            else None
        gate = rubric_gate(rubric_votes(prompt_reps, manifest, p), manifest, p,
                           reconciliation_complete=reconciliation_complete, dormancy=contract,
                           transitions=transitions)
        gate.insert(0, "vote_basis", f"rubric {VOTE_METRIC}")  # the measure the votes came from
        gate.insert(0, "comparison", p.label)
        gates.append(gate)
    empty_gate = pd.DataFrame(columns=["comparison", "vote_basis", *GATE_COLUMNS])
    return Controls(lift=pd.concat([x for x in lifts if not x.empty] or [pd.DataFrame(columns=LIFT_COLUMNS)],
                                   ignore_index=True),
                    gate=pd.concat(gates, ignore_index=True) if gates else empty_gate, arms=arms, ungraded=ungraded)


def control_history_rows(controls: Controls | None, window_end: str, endpoint: str) -> pd.DataFrame:
    """A week's rows for the history's controls sidecar: one per model × family × control comparison of its
    rubric gate (``HISTORY_CONTROL_COLUMNS`` without ``run_key``; empty when the week ran no control)."""
    columns = ["window_end", "endpoint", "model", "skill_family", "control", "state", "reason"]
    if controls is None or controls.gate.empty:
        return pd.DataFrame(columns=columns)
    gate = controls.gate
    aa_label = ArmPair(treatment=AA, control=NO_SKILL).label  # control_checks names each gate row by its pair
    arm = [AA if c == aa_label else PLACEBO for c in gate["comparison"]]
    out = pd.DataFrame({"window_end": window_end, "endpoint": endpoint, "model": gate["model"].astype(str),
                        "skill_family": gate["skill_family"].astype(str), "control": arm,
                        "state": gate["state"].astype(str), "reason": gate["reason"].fillna("").astype(str)})
    return out[columns].reset_index(drop=True)


def accumulated_controls(recorded: pd.DataFrame, endpoint: str, window_end: str = "") -> pd.DataFrame:
    """Each control's pass rate over the recorded weeks of ``endpoint`` up to ``window_end``, with its exact interval.

    Args:
        recorded: the history's controls sidecar (``HISTORY_CONTROL_COLUMNS``).
        endpoint: this week's endpoint kind; only weeks of this kind count.
        window_end: this week's window end; a week that ran later does not count ("": every week).

    Returns:
        :data:`ACCUMULATED_COLUMNS`, one row per control that has a decided record: ``passes`` of ``records``
        (decided records, :data:`DECIDED_STATES`) in ``weeks`` weeks, the rate and its Clopper–Pearson 95 %
        interval (``method``), and the gate's nominal false-pass rate (``nominal``, its α).
    """
    rows = recorded[recorded["endpoint"].astype(str) == endpoint]
    if window_end and not rows.empty:
        ends = parse_timestamps(rows["window_end"].astype(str))
        rows = rows[~(ends > parse_timestamps(pd.Series([window_end])).iloc[0]).fillna(False).to_numpy()]
    rows = rows[rows["state"].isin(DECIDED_STATES)]
    out = []
    for arm in (AA, PLACEBO):
        mine = rows[rows["control"] == arm]
        if mine.empty:
            continue
        passes, records = int(mine["state"].eq(VALID_PASS).sum()), len(mine)
        ci = rate_interval(passes, records, exact=True)
        # Only the weekly pair keeps a history (keeps_history): the placebo is measured against its treatment.
        comparison = (ArmPair(treatment=AA, control=NO_SKILL) if arm == AA
                      else ArmPair(treatment=DEFAULT_PAIR.treatment, control=PLACEBO)).label
        out.append({"control": arm, "comparison": comparison, "passes": passes, "records": records,
                    "weeks": int(mine["run_key"].nunique()), "rate": ci.rate, "low": ci.low, "high": ci.high,
                    "method": EXACT, "nominal": ALPHA})
    return pd.DataFrame(out, columns=ACCUMULATED_COLUMNS)


def accumulated_text(r: Any, endpoint: str) -> str:
    """One :func:`accumulated_controls` row as a page says it: ``A/A false-pass rate over 14 records in 3 real
    weeks: **0.071** [0.002, 0.339] (nominal 5 %)``."""
    from skillbench.markdown import md_text, span

    what = "A/A false-pass rate" if r.control == AA else f"`{md_text(r.comparison)}` pass rate"
    nominal = f" (nominal {r.nominal * 100:g} %)" if r.control == AA else ""
    weeks = f"{r.weeks} {endpoint} week{'s' if r.weeks != 1 else ''}"
    return (f"{what} over {r.records} record{'s' if r.records != 1 else ''} in {weeks}: "
            f"**{r.rate:.3f}** {span(r.low, r.high, 3)}{nominal}")
