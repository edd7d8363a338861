"""``skillbench consolidate``: merge the legs of a CI matrix into one run directory, failing closed.

:func:`consolidate` reads every leg (:mod:`.inputs`), decides from their summaries whether they are generate or
judge legs, runs every check before it writes anything, and then either refuses (:class:`ConsolidationRefused`:
nothing written, each problem named with its shard folder) or builds the merge in a temporary sibling of
``RUN_DIR`` and puts it in place in one step (:mod:`.output`), holding ``RUN_DIR``'s lock
(:func:`skillbench.ledgers.run_dir_lock`) throughout. Which problems refuse and which write an INCOMPLETE merge is
:mod:`.problems`' rule.

Generate legs merge into an empty ``RUN_DIR`` (or replace an earlier consolidation of the same plan)
(:mod:`.merge_generate`); judge legs merge into the generation they graded (:mod:`.merge_judge`).
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillbench.consolidate import _inputs as inputs
from skillbench.consolidate._generation_checks import check_generation_runs, check_side_files, slug_problems
from skillbench.consolidate._inputs import Leg
from skillbench.consolidate._judge_checks import check_judge_legs, gradeable_runs
from skillbench.consolidate._leg_ledgers import check_leg_ledgers
from skillbench.consolidate._merge_generate import build_generation, read_object
from skillbench.consolidate._merge_judge import build_judge, copy_generation
from skillbench.consolidate._output import check_generation_out, check_judge_out, commit, staging_dir
from skillbench.consolidate._problems import ConsolidationRefused, OutputRefused, Problem, blocking
from skillbench.consolidate._report import consolidation, merge_record
from skillbench.generation import summary_line
from skillbench.ledgers import (
    COMPLETE,
    CONSOLIDATION_FILE,
    MANIFEST_FILE,
    PASS_FILE,
    PLAN_FILE,
    LedgerError,
    atomic_write_json,
    file_sha,
    read_plan_ids,
    run_dir_lock,
)

Log = Callable[[str], None]


@dataclass
class ConsolidationResult:
    """What a consolidation wrote: the run directory, its record, and the problems that make it INCOMPLETE."""

    run_dir: Path
    kind: str
    record: dict[str, Any]
    problems: list[Problem] = field(default_factory=list)
    summary: str = ""

    @property
    def complete(self) -> bool:
        return self.record.get("status") == COMPLETE


def consolidate(folders: Sequence[str | Path], out: str | Path, *, expect: int | None = None, wait: bool = False,
                log: Log = lambda message: None) -> ConsolidationResult:
    """Merge the legs in ``folders`` into ``out``.

    Raises:
        ConsolidationRefused: a blocking problem (nothing written).
        OutputRefused: ``out`` holds something this merge must not replace (nothing written).
        RunDirBusy: another pass holds ``out`` (and ``wait`` is false).
    """
    legs, problems = inputs.read_legs(folders)
    count, declared = inputs.check_declared(legs, expect=expect)
    problems += declared
    if blocking(problems) or count is None:
        raise ConsolidationRefused(blocking(problems) or [Problem("shards", "no leg to merge")])
    if legs[0].kind == "generate":
        return _generate(legs, Path(out), problems, wait=wait, log=log)
    return _judge(legs, Path(out), problems, wait=wait, log=log)


def _generate(legs: list[Leg], out: Path, problems: list[Problem], *, wait: bool, log: Log) -> ConsolidationResult:
    problems += inputs.identity_problems(legs, inputs.GENERATE_IDENTITY, observed=inputs.GENERATE_OBSERVED_IDENTITY)
    try:
        plan_ids = read_plan_ids(legs[0].folder)
        why = "" if plan_ids is not None else f"no {PLAN_FILE}"
    except LedgerError as exc:  # the library's one line says what is wrong with it
        plan_ids, why = None, str(exc)
    if plan_ids is None:
        problems.append(Problem(legs[0].label, f"{why} — rerun the leg"))
        raise ConsolidationRefused(blocking(problems))
    contributions, found = check_generation_runs(legs, plan_ids)
    problems += found + check_side_files(legs) + check_leg_ledgers(contributions, plan_ids)
    if blocking(problems):
        raise ConsolidationRefused(blocking(problems))
    existed = out.exists()
    try:
        with run_dir_lock(out, wait=wait, log=log) as run_dir:
            previous = check_generation_out(run_dir, plan_sha=str(legs[0].field("plan_sha")), run_ids=plan_ids)
            with _staging(run_dir) as staging:
                report = build_generation(staging, contributions)
                complete = {r for part in contributions for r in part.complete}
                runs = {"planned": len(plan_ids), "complete": len(complete),
                        "missing": sorted(set(plan_ids) - complete)}
                data = consolidation(merge_record("generate", legs, inputs.GENERATE_IDENTITY, problems, runs),
                                     previous)
                atomic_write_json(staging / CONSOLIDATION_FILE, data)
                commit(staging, run_dir)
    except BaseException:
        if not existed and out.is_dir() and not any(out.iterdir()):
            out.rmdir()  # the lock made the folder: a refused or failed merge leaves nothing behind
        raise
    log(f"{len(legs)} generate legs → {run_dir}: {summary_line(report)}")
    return ConsolidationResult(run_dir, "generate", data, problems, summary_line(report))


def _judge(legs: list[Leg], out: Path, problems: list[Problem], *, wait: bool, log: Log) -> ConsolidationResult:
    problems += inputs.identity_problems(legs, inputs.JUDGE_IDENTITY, observed=inputs.JUDGE_OBSERVED_IDENTITY)
    if not out.is_dir():
        raise OutputRefused(f"{out}: not a folder — a judge merge goes into the generation the legs graded")
    with run_dir_lock(out, wait=wait, log=log) as run_dir:
        previous = check_judge_out(run_dir)
        reference = {"manifest_sha": file_sha(run_dir / MANIFEST_FILE), "plan_sha": file_sha(run_dir / PLAN_FILE)}
        problems += inputs.reference_problems(legs, reference, what=str(run_dir))
        if blocking(problems):
            raise ConsolidationRefused(blocking(problems))
        items = gradeable_runs(run_dir, include_plugin=bool(legs[0].field("include_plugin")))
        parts, found = check_judge_legs(legs, items)
        problems += found + slug_problems(legs)
        if blocking(problems):
            raise ConsolidationRefused(blocking(problems))
        with _staging(run_dir) as staging:
            copy_generation(run_dir, staging, replace_judge=bool(previous.get("judge")))
            build_judge(staging, parts, previous_pass=read_object(run_dir / PASS_FILE))
            graded = {r for part in parts for r in part.graded}
            runs = {"gradeable": len(items), "graded": len(graded), "missing": sorted(set(items) - graded)}
            data = consolidation(merge_record("judge", legs, inputs.JUDGE_IDENTITY, problems, runs), previous)
            atomic_write_json(staging / CONSOLIDATION_FILE, data)
            commit(staging, run_dir)
    line = f"{len(items)} gradeable, {len(graded)} fully graded, {len(items) - len(graded)} not"
    log(f"{len(legs)} judge legs → {run_dir}: {line}")
    return ConsolidationResult(run_dir, "judge", data, problems, line)


@contextlib.contextmanager
def _staging(run_dir: Path) -> Iterator[Path]:
    """A temporary sibling of ``RUN_DIR`` for the merge, removed whatever happens (committed: it is already gone)."""
    staging = staging_dir(run_dir)
    try:
        yield staging
    finally:
        if staging.exists():
            shutil.rmtree(staging)
