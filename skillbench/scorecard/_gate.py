"""The paired preference gate (dotnet/skills adapter policy), per skill family × model, from ``pairs.csv``.

Each row of ``pairs.csv`` is one (prompt, model, rep) judged twice with positions swapped; its ``outcome`` is
``W``/``T``/``L`` for the treatment's answer (the week's :class:`~skillbench.arms.ArmPair`: with-skill in a weekly
run, ``with-skill@HEAD`` in a comparison, so a comparison's gate counts the head's wins). The gate:

1. collapses reps to **one vote per prompt** (a stimulus): the majority direction among the reps' wins and
   losses (``W`` when wins outnumber losses, ``L`` when losses do, ``T`` on an even split — ties inside the
   reps carry no direction), because repeated runs of one task are not independent tasks;
2. counts ``n = W + T + L`` over the family's preference-eligible prompts (dormancy prompts never vote);
3. decides every record of the report together by the one verdict specification,
   :mod:`skillbench.scorecard._verdicts` (:func:`~skillbench.scorecard._verdicts.decide_week`: an exact one-sided
   sign test of ``W`` against ``L`` with a net-win and an eligibility floor, after the objective record and the
   health checks, Holm-adjusted across the records that reach it; every state, its precedence and its plain words
   live there).

This module builds the records from the ledgers: the stimulus votes, the judge errors, the activation contract's
dormancy activations and the objective record of deterministic checks per skill family × model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from skillbench.arms import DEFAULT_PAIR, ArmPair
from skillbench.scorecard._objective import objective_records
from skillbench.scorecard._verdicts import FabricationRecord, GateRecord, decide_record, decide_week
from skillbench.signals import false_trigger_arms
from skillbench.vocab import ACTIVATION_CONTRACT_FAILED

# Whether a family's planned runs are all accounted for: one answer for the whole week, or one per family
# (:meth:`skillbench.ledgers.Reconciliation.family_complete`), so a pass over some families decides those.
Completeness = bool | Callable[[str], bool]


def family_completeness(complete: Completeness) -> Callable[[str], bool]:
    """``complete`` as a per-family predicate (a bool holds for every family)."""
    return complete if callable(complete) else (lambda _family: bool(complete))

GATE_COLUMNS = ["skill_family", "model", "state", "reason", "verdict", "n", "wins", "ties", "losses", "p_value",
                "p_adjusted", "net_win", "judge_errors", "dormancy_activations", "evidence"]
OBJECTIVE_COLUMNS = ["objective_n", "objective_wins", "objective_ties", "objective_losses", "objective_p",
                     "objective_net_loss"]


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


def dormancy_causes(manifest: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> dict[tuple[str, str], str]:
    """Per family × model whose activation contract failed, which dormancy prompts the skill fired on, in how many
    of their runs: ``activated on dormancy-x in 4/8 runs, dormancy-y in 1/8`` (the cause a verdict line names)."""
    dorm = manifest[manifest["dormancy"] & false_trigger_arms(manifest["condition"], pair)]
    if dorm.empty:
        return {}
    active = dorm["skill_activation"].fillna("none").str.strip().ne("none") & dorm["skill_activation"].ne("")
    g = dorm.assign(_a=active).groupby(["skill_family", "model", "prompt"], sort=True)["_a"].agg(["sum", "size"])
    out: dict[tuple[str, str], str] = {}
    for (family, model), block in g[g["sum"] > 0].groupby(level=["skill_family", "model"], sort=True):
        block = block.sort_values("sum", ascending=False, kind="stable")
        parts = [f"{prompt} in {int(r['sum'])}/{int(r['size'])}" for (_, _, prompt), r in block.iterrows()]
        out[(family, model)] = "activated on " + parts[0] + " runs" + "".join(f", {x}" for x in parts[1:])
    return out


def preference_gate(pairs: pd.DataFrame, manifest: pd.DataFrame, *, reconciliation_complete: Completeness = True,
                    transitions: pd.DataFrame | None = None, pair: ArmPair = DEFAULT_PAIR,
                    fabrication: Mapping[tuple[str, str], FabricationRecord] | None = None) -> pd.DataFrame:
    """The gate for every skill family × model that has pairwise judgments or runs of the treatment.

    Args:
        pairs: ``pairs.csv`` (:func:`skillbench.ledgers.read_pairs`), outcomes for the treatment.
        manifest: the run manifest (dormancy flags and activations).
        reconciliation_complete: false makes every record ``INVALID_INCONCLUSIVE``; a predicate decides per family
            (false for a family: its records are).
        transitions: the week's objective transitions (a week with checks); adds :data:`OBJECTIVE_COLUMNS`.
        pair: the week's arms: the treatment's scored runs name the records, its dormancy runs (and the plugin
            arm's) feed the activation contract.
        fabrication: per family × model, the opt-in fabrication rule's record
            (:func:`skillbench.scorecard._fabrication.gate_records`; None or empty: the rule is off).

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
    # every family the treatment ran gets a record: one with only dormancy prompts too (it can never vote, so it
    # reads underpowered, or its contract failed), never a family missing from the verdicts
    ran = manifest[manifest["condition"].eq(pair.treatment)]
    index = (set(record.index) | set(errors.index)
             | set(zip(ran["skill_family"], ran["model"], strict=True)))
    acts = dormancy_activations(manifest, pair).set_index(["skill_family", "model"])["dormancy_activations"]
    complete = family_completeness(reconciliation_complete)
    keys = sorted(index)
    records = []
    for family, model in keys:
        w, t, lo = (int(record.at[(family, model), k]) if (family, model) in record.index else 0
                    for k in ("W", "T", "L"))
        records.append(GateRecord(w, t, lo, reconciliation_complete=complete(family),
                                  judge_errors=int(errors.get((family, model), 0)),
                                  dormancy_activations=int(acts.get((family, model), 0)),
                                  objective=objective.get((family, model)),
                                  fabrication=(fabrication or {}).get((family, model))))
    causes = dormancy_causes(manifest, pair)
    rows = []
    for (family, model), rec, dec in zip(keys, records, decide_week(records), strict=True):
        # a failed activation contract names its cause: which dormancy prompts the skill fired on, how often
        cause = f"; {causes[(family, model)]}" if dec.reason == ACTIVATION_CONTRACT_FAILED and \
            (family, model) in causes else ""
        row = {"skill_family": family, "model": model, "state": dec.state, "reason": dec.reason,
               "verdict": dec.verdict, "n": dec.n, "wins": rec.wins, "ties": rec.ties, "losses": rec.losses,
               "p_value": dec.p_value, "p_adjusted": dec.p_adjusted, "net_win": dec.net_win,
               "judge_errors": rec.judge_errors, "dormancy_activations": rec.dormancy_activations,
               "evidence": dec.evidence + cause}
        checked = rec.objective
        if objective:
            values = ((checked.n, checked.wins, checked.ties, checked.losses, checked.p_value, checked.net_loss)
                      if checked else (0, 0, 0, 0, float("nan"), float("nan")))
            row |= dict(zip(OBJECTIVE_COLUMNS, values, strict=True))
        rows.append(row)
    return pd.DataFrame(rows, columns=GATE_COLUMNS + (OBJECTIVE_COLUMNS if objective else []))


def invalid_family_rows(gate: pd.DataFrame, invalid: Mapping[str, Sequence[str]],
                        models: Sequence[str]) -> pd.DataFrame:
    """``gate`` with one ``INVALID_INCONCLUSIVE (invalid_spec)`` record per invalid family × model.

    A family whose eval or prompt failed validation was never planned, so it has no run and no vote; its record
    says so, with the validator's first line as the evidence (all of them are in ``reconciliation.json``), so
    the gate lists every family of the suite — the invalid ones too.
    """
    if not invalid or not models:
        return gate
    rows = []
    for family in sorted(invalid):
        lines = list(invalid[family])
        dec = decide_record(GateRecord(0, 0, 0, invalid_spec=True))
        more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
        for model in models:
            row = dict.fromkeys(gate.columns)
            row |= {"skill_family": family, "model": model, "state": dec.state, "reason": dec.reason,
                    "verdict": dec.verdict, "n": 0, "wins": 0, "ties": 0, "losses": 0, "p_value": dec.p_value,
                    "net_win": dec.net_win, "judge_errors": 0, "dormancy_activations": 0,
                    "evidence": (lines[0] if lines else "invalid spec") + more}
            rows.append(row)
    kept = gate[~gate["skill_family"].isin(list(invalid))]
    added = pd.DataFrame(rows, columns=gate.columns)
    both = pd.concat([x for x in (kept, added) if not x.empty] or [gate.iloc[0:0]], ignore_index=True)
    return both.sort_values(["skill_family", "model"], kind="stable").reset_index(drop=True)
