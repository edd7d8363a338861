"""The run plan: scored prompts × models × conditions × reps, in a shuffled order with a recorded seed.

Dormancy prompts run only in the arms that have skills installed (``with-skill``, ``plugin``): they measure
false triggering, and a no-skill run of them would measure nothing. Held-out prompts are never planned.
The order is shuffled across arms so that a time-varying API cannot bias one arm.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from skillbench.ledgers.atomic import atomic_write_text
from skillbench.ledgers.files import PLAN_FILE
from skillbench.suite.format import Suite
from skillbench.vocab import CONDITIONS, NO_SKILL, SKILLED_ARMS, WITH_SKILL

PLAN_COLUMNS = ["run_id", "prompt", "skill_family", "skill_leaf", "model", "condition", "rep", "dormancy", "order"]
SKILLED_CONDITIONS = SKILLED_ARMS


class PlanError(ValueError):
    """A plan that cannot be made or does not match the one already on disk."""


def run_id(prompt: str, model: str, condition: str, rep: int, run_key: str) -> str:
    """``<prompt>-<model>-<condition>-r<rep>-<run_key>`` (qdrant's run id)."""
    return f"{prompt}-{model}-{condition}-r{rep}-{run_key}"


def installed_families(suite: Suite, family: str, condition: str) -> list[str]:
    """Skill families installed in an arm: none, the prompt's own, or every family of the suite."""
    if condition == NO_SKILL:
        return []
    if condition == WITH_SKILL:
        return [family]
    return list(suite.families)


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
    unknown = [c for c in conditions if c not in CONDITIONS]
    if unknown:
        raise PlanError(f"unknown condition {unknown[0]!r} (allowed: {', '.join(CONDITIONS)})")
    if reps < 1 or not models or not conditions:
        raise PlanError("a plan needs at least one model, one condition and one rep")
    rows = []
    for spec in suite.scored_prompts:
        for model in models:
            for condition in conditions:
                if spec.dormancy and condition not in SKILLED_CONDITIONS:
                    continue
                for rep in range(1, reps + 1):
                    rows.append({
                        "run_id": run_id(spec.name, model, condition, rep, run_key),
                        "prompt": spec.name, "skill_family": spec.family, "skill_leaf": spec.leaf,
                        "model": model, "condition": condition, "rep": rep, "dormancy": int(spec.dormancy),
                    })
    plan = pd.DataFrame(rows, columns=PLAN_COLUMNS[:-1])
    order = np.random.default_rng(seed).permutation(len(plan))
    plan["order"] = order
    return plan.sort_values("order").reset_index(drop=True)[PLAN_COLUMNS]


def write_plan(plan: pd.DataFrame, out_dir: Path) -> Path:
    """Write ``plan.csv`` before the first run; an existing plan must be the same plan (resume)."""
    path = out_dir / PLAN_FILE
    if path.exists():
        existing = pd.read_csv(path, dtype={"run_id": str})
        if not existing[PLAN_COLUMNS].astype(str).equals(plan[PLAN_COLUMNS].astype(str)):
            raise PlanError(f"{path}: a different plan exists for this run key (models, reps, conditions, prompts or "
                            "seed changed) — use another --run-key or --out-dir")
        return path
    atomic_write_text(path, plan.to_csv(index=False))
    return path
