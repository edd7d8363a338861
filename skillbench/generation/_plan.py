"""The run plan: scored prompts × models × conditions × reps, in a shuffled order with a recorded seed.

A condition is an arm, optionally at a git ref (``with-skill@main``, :mod:`skillbench.arms`): a version arm plans
like its arm and installs the files of that ref (:mod:`skillbench.generation._versions`).
Dormancy prompts run only in the arms that have skills installed (``with-skill``, ``plugin``): they measure
false triggering, and a no-skill run of them would measure nothing. A trigger-only prompt (a should-trigger query
of a trigger eval set) runs only in ``with-skill``: it measures trigger recall, which reads that arm alone.
The opt-in arms plan like ``no-skill``: ``aa`` is a second no-skill arm, and ``placebo`` (the family's placebo,
:mod:`skillbench.suite._placebo`) lists the real name and description, so it triggers like the skill and a dormancy
run of it would repeat the with-skill arm's false-trigger measurement while saying nothing about the content.
Held-out prompts are never planned here (``--generalization`` plans them in a week of their own).
The order is shuffled across arms so that a time-varying API cannot bias one arm.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from skillbench.arms import ConditionError, arm_kind, check_condition, is_skilled, is_with_skill
from skillbench.ledgers import PLAN_COLUMNS, PLAN_FILE, LedgerError, atomic_write_text, read_plan, slug
from skillbench.suite import Suite
from skillbench.vocab import AA, NO_SKILL, PLACEBO, SKILLED_ARMS, WITH_SKILL

SKILLED_CONDITIONS = SKILLED_ARMS


class PlanError(ValueError):
    """A plan that cannot be made or does not match the one already on disk."""


class SelectionError(PlanError):
    """``--prompts`` or ``--families`` names something the plan does not have (a usage error)."""


def run_name(prompt: str, model: str, condition: str, rep: int, run_key: str) -> str:
    """``<prompt>-<model>-<condition>-r<rep>-<run_key>``: qdrant's run id, before the slug rule."""
    return f"{prompt}-{model}-{condition}-r{rep}-{run_key}"


def run_id(prompt: str, model: str, condition: str, rep: int, run_key: str) -> str:
    """The run's id and folder name: :func:`run_name` through the one slug rule.

    Ordinary names give qdrant's id byte for byte; a name with a space, ``@``, ``/`` or another unsafe character
    gives a folder-safe id (:func:`skillbench.ledgers._slugs.slug`), which generate records in ``slugs.json``.
    """
    return slug(run_name(prompt, model, condition, rep, run_key))


def run_names(plan: pd.DataFrame, run_key: str) -> list[str]:
    """:func:`run_name` of every planned run (what ``slugs.json`` maps the run ids back to)."""
    return [run_name(r.prompt, r.model, r.condition, int(r.rep), run_key) for r in plan.itertuples(index=False)]


def installed_families(suite: Suite, family: str, condition: str) -> list[str]:
    """Skill families installed in an arm: none, the prompt's own, or every family of the suite.

    ``no-skill`` and ``aa`` install none; ``placebo`` names the prompt's own family, whose placebo is installed in
    its place (:func:`skillbench.generation._versions.install_dirs`). In a dotnet tree the plugin arm is dotnet's
    full-plugin variant: every skill of the prompt's plugin.
    """
    kind = arm_kind(condition)
    if kind in (NO_SKILL, AA):
        return []
    if kind in (WITH_SKILL, PLACEBO):
        return [family]
    plugin = suite.plugin_of.get(family)
    return suite.plugin_families(plugin) if plugin else list(suite.families)


def make_plan(
    suite: Suite,
    run_key: str,
    *,
    models: Sequence[str],
    conditions: Sequence[str],
    reps: int,
    seed: int,
) -> pd.DataFrame:
    """Every planned run, shuffled with ``seed``; ``order`` is the 0-based start order."""
    try:
        for condition in conditions:
            check_condition(condition)
    except ConditionError as exc:
        raise PlanError(str(exc)) from exc
    if len(set(conditions)) != len(conditions):
        raise PlanError(f"a condition is listed twice ({', '.join(conditions)})")
    if reps < 1 or not models or not conditions:
        raise PlanError("a plan needs at least one model, one condition and one rep")
    rows = []
    for spec in suite.scored_prompts:
        for model in models:
            for condition in conditions:
                if spec.dormancy and not is_skilled(condition):
                    continue
                if spec.trigger_only and not is_with_skill(condition):
                    continue
                for rep in range(1, reps + 1):
                    rows.append({
                        "run_id": run_id(spec.name, model, condition, rep, run_key),
                        "prompt": spec.name, "skill_family": spec.family, "skill_leaf": spec.leaf,
                        "model": model, "condition": condition, "rep": rep, "dormancy": int(spec.dormancy),
                    })
    plan = pd.DataFrame(rows, columns=list(PLAN_COLUMNS[:-1]))
    order = np.random.default_rng(seed).permutation(len(plan))
    plan["order"] = order
    return plan.sort_values("order").reset_index(drop=True)[list(PLAN_COLUMNS)]


def selected(plan: pd.DataFrame, suite: Suite, *, prompts: Sequence[str] = (),
             families: Sequence[str] = ()) -> pd.Series:
    """Which planned runs a ``--prompts``/``--families`` selection keeps (all of them without one).

    A run is kept when its prompt is among ``prompts`` (if any are given) and its family among ``families`` (if
    any are given). The rest of the plan stays planned: generate lists it as ``limited``.

    Raises:
        SelectionError: a name that is not a planned prompt or family of the suite, or a selection that keeps
            no planned run.
    """
    planned_prompts, planned_families = set(plan["prompt"]), set(plan["skill_family"])
    heldout = {p.name for p in suite.prompts} - {p.name for p in suite.scored_prompts}
    for name in prompts:
        if name not in planned_prompts:
            why = "is held out (never planned)" if name in heldout else "is not a prompt of the suite"
            raise SelectionError(f"--prompts {name}: {why} — planned prompts: {', '.join(sorted(planned_prompts))}")
    for name in families:
        if name not in planned_families:
            why = (f"is held out, so none of its runs is planned ({suite.invalid_families[name][0]}; `skillbench "
                   "validate` prints every line)" if name in suite.invalid_families else
                   "has no planned prompt" if name in suite.families else "is not a skill family of the suite")
            raise SelectionError(f"--families {name}: {why} — planned families: "
                                 f"{', '.join(sorted(planned_families))}")
    keep = pd.Series(True, index=plan.index)
    if prompts:
        keep &= plan["prompt"].isin(list(prompts))
    if families:
        keep &= plan["skill_family"].isin(list(families))
    if not keep.any():
        raise SelectionError(f"--prompts {' '.join(prompts)} --families {' '.join(families)}: no planned prompt is "
                             "in both (a prompt belongs to one family)")
    return keep


def write_plan(plan: pd.DataFrame, out_dir: Path) -> Path:
    """Write ``plan.csv`` before the first run; an existing plan must be the same plan (resume)."""
    path = out_dir / PLAN_FILE
    if path.exists():
        try:
            existing = read_plan(out_dir)
        except LedgerError as exc:
            raise PlanError(f"{exc} — use another --run-key or --out-dir") from exc
        columns = list(PLAN_COLUMNS)
        if existing is None or not existing[columns].astype(str).equals(plan[columns].astype(str)):
            raise PlanError(f"{path}: a different plan exists for this run key (models, reps, conditions, prompts or "
                            "seed changed) — use another --run-key or --out-dir")
        return path
    atomic_write_text(path, plan.to_csv(index=False))
    return path
