"""``weekly --generalization``: the week's held-out prompts, run apart, before the scorecard reads the week.

Held-out prompts (the suite's held-out prefix, or a dotnet spec's held-out tag) are validated and never run unless
asked. Asked, this pass runs the held-out prompts of the week's families (``--families``, or those of
``--prompts``; all otherwise) in the week's lift arms (with-skill and no-skill) as a week of their own,
``RUN_DIR/_heldout/`` (run key ``<key>-heldout``), and grades them with the same rubric judge. Nothing of theirs is
in the week's top folder, so the lift, the gate, the history and the sentinel never read them; the scorecard reads
them only for its "Generalization" section (:func:`skillbench.scorecard.week_generalization`).

Each use is appended to the suite's ``heldout-uses.csv`` before the runs (a prompt run has been seen); a rerun of
the same week adds nothing. What was recorded and the prompts' wear go to ``_heldout/heldout-use.json``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from skillbench.ledgers import (
    HELDOUT_DIR,
    LedgerError,
    heldout_decisions,
    heldout_uses_path,
    read_heldout_uses,
    record_heldout_use,
    write_heldout_use,
)
from skillbench.vocab import NO_SKILL, WITH_SKILL

COMMAND = "skillbench weekly --generalization"


def check_heldout_record(suite_dir: Path) -> None:
    """Refuse a damaged use record before the chain starts (it is never reset).

    Raises:
        LedgerError: one line naming the file.
    """
    read_heldout_uses(heldout_uses_path(suite_dir))


def heldout_selection(suite: Any, families: Sequence[str], prompts: Sequence[str]) -> list[Any]:
    """The held-out prompts of the week's families, each marked scored so that their own week plans it."""
    chosen = set(families) | {p.family for p in suite.prompts if p.name in set(prompts)}
    return [dataclasses.replace(p, heldout=False) for p in suite.prompts
            if p.heldout and (not chosen or p.family in chosen)]


def run_heldout_week(opts: Any, *, suite_dir: Path, run_dir: Path, endpoint: str, sandbox: str, backend: str,
                     log: Callable[[str], None]) -> Path | None:
    """Record the use, run and grade the held-out week, and write its ``heldout-use.json``.

    Args:
        opts: the week's :class:`skillbench.weekly.WeeklyOptions` (matrix, selection, jobs, seed, suite flags).

    Returns:
        The held-out week's folder, or None when the week's families have no held-out prompt.

    Raises:
        LedgerError: the suite's use record is damaged.
    """
    from skillbench.generation import GenerateOptions
    from skillbench.judge import JudgeOptions, resolve_judge_model
    from skillbench.scorecard import worn
    from skillbench.suite import load_families
    from skillbench.weekly._stages import StageRuntime, grade_week, run_generation

    suite = load_families(suite_dir, opts.suite_overrides)
    held = heldout_selection(suite, opts.families or [], opts.prompts or [])
    if not held:
        log(f"weekly {opts.run_key}: --generalization: the week's families have no held-out prompt: nothing to run")
        return None
    record = heldout_uses_path(suite_dir)
    pairs = [(p.family, p.name) for p in held]
    added = record_heldout_use(record, command=COMMAND, run_key=opts.run_key, prompts=pairs)
    folder = Path(run_dir) / HELDOUT_DIR
    families = sorted({p.family for p in held})
    log(f"weekly {opts.run_key}: --generalization: {len(held)} held-out prompt(s) of {', '.join(families)} in "
        f"{folder} (never in the week's lift, gate or history); use recorded in {record}")
    runtime = StageRuntime(backend=backend, endpoint=endpoint, executor=opts.executor, scheduler=opts.scheduler,
                           log=log, wait=opts.wait, holder=COMMAND)
    gen = GenerateOptions(run_key=f"{opts.run_key}-heldout", out_dir=folder, models=list(opts.models or []),
                          reps=int(opts.reps or 0), conditions=[NO_SKILL, WITH_SKILL],
                          jobs=0 if opts.jobs_grow else opts.jobs,
                          sandbox=sandbox or None, seed=opts.seed)
    week = dataclasses.replace(suite, prompts=held)
    run_generation(week, gen, runtime.context(seed=opts.seed, suite=week))
    grade_week(folder, JudgeOptions(judge_model=resolve_judge_model(""), jobs=opts.jobs, seed=opts.seed),
               runtime.context(seed=opts.seed))
    limit = int(suite.config.suite.heldout_wear)
    names = [p.name for p in held]
    try:
        decisions = heldout_decisions(read_heldout_uses(record))
    except LedgerError as exc:
        note, worn_now = f"the held-out use record could not be read, so their wear is unknown: {exc}", []
    else:
        worn_now = worn(decisions, names, limit)
        note = (f"{record}: this week {'added ' + str(added) + ' row(s)' if added else 'was already recorded'}; its "
                f"{len(names)} held-out prompt(s) have informed at most "
                f"{max((int(decisions.get(p, 0)) for p in names), default=0)} decision(s), the limit is {limit}")
    write_heldout_use(folder, {"families": families, "prompts": names, "record": note, "added": added,
                               "wear_limit": limit, "worn": [[p, n] for p, n in worn_now]})
    return folder
