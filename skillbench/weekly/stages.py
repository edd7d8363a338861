"""The stage functions: what each notebook of the chain runs, and what the CLI's commands run.

One function per stage, so ``skillbench generate`` and ``01_generate`` (and judge, judge-pairs, calibrate,
scorecard) wire options and endpoints in one place. Each opens its endpoint with
:func:`skillbench.weekly.model_endpoint` (``backend`` None → the default; ``endpoint`` "" → start our own
simulation for ``sim``). The notebook-facing forms raise :class:`StageError` when the stage must stop the
chain; the CLI reads the same reports and chooses its exit code.

Every stage that writes a week's ledgers holds the run directory's lock for its whole pass
(:func:`skillbench.ledgers.run_dir_lock`): a second pass on the same week refuses at once with
:class:`skillbench.ledgers.RunDirBusy` naming the holder, or waits with ``wait=True``. The chain's stages
take it in their own kernels; the chain never holds it across stages.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from skillbench.ledgers.files import RUN_FILE
from skillbench.ledgers.lock import run_dir_lock
from skillbench.ledgers.readers import json_object_or_none
from skillbench.vocab import BUDGET_HIT, COMPLETE_STATES, FINISHED
from skillbench.weekly.calibration_stage import (  # the 04 stage's functions live there; re-exported here
    calibrate_week as calibrate_week,
)
from skillbench.weekly.calibration_stage import gold_path as gold_path
from skillbench.weekly.calibration_stage import sentinel_week as sentinel_week
from skillbench.weekly.calibration_stage import study_week as study_week
from skillbench.weekly.notebook import StageError, _path, collapsed_progress, resolve_run_dir

Log = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def _matrix(suite: Any, models: Sequence[str], reps: int, conditions: Sequence[str]) -> tuple[list[str], int,
                                                                                                list[str]]:
    """The run matrix: what was asked for, else the suite config's."""
    run = suite.config.run
    return list(models or run.models), int(reps or run.reps), list(conditions or run.conditions)


# -- 01 generate ------------------------------------------------------------------------------------------------


def plan_week(suite_dir: str | Path, run_key: str, run_dir: str | Path = "", *, models: Sequence[str] = (),
              reps: int = 0, conditions: Sequence[str] = (), seed: int = 0, prompts: Sequence[str] = (),
              families: Sequence[str] = (), skip_missing: bool = False) -> pd.DataFrame:
    """The week's plan (what ``generate`` would run) with each run's status, writing nothing.

    ``skip_missing``: load the suite as ``--skip-missing`` does (:mod:`skillbench.suite.skip_missing`).

    Returns:
        ``plan.csv``'s columns plus ``status``: the run's state when its folder holds a complete run
        (``finished`` or ``budget_hit``, :func:`skillbench.generation.run_state`), ``limited`` when
        ``prompts``/``families`` keep it out of this pass, else ``pending``.

    Raises:
        SelectionError: ``prompts`` or ``families`` names something the plan does not have.
    """
    from skillbench.generation.plan import make_plan, selected
    from skillbench.signals.manifest import run_states
    from skillbench.suite.load import load_suite

    suite = load_suite(_path(suite_dir), skip_missing=skip_missing)
    models, reps, conditions = _matrix(suite, models, reps, conditions)
    plan = make_plan(suite, run_key, models=models, conditions=conditions, reps=reps, seed=seed)
    keep = selected(plan, suite, prompts=list(prompts), families=list(families))
    folder = resolve_run_dir(suite_dir, run_key, run_dir)
    states = plan["run_id"].map(run_states(folder) if folder.is_dir() else {})
    done = states.isin(COMPLETE_STATES)
    status = np.where(done, states, np.where(keep, "pending", "limited"))
    return plan.assign(status=status)


def plan_matrix(plan: pd.DataFrame) -> pd.DataFrame:
    """Runs per model × condition, split by status (a compact view of a plan)."""
    columns = [FINISHED, *([BUDGET_HIT] if plan["status"].eq(BUDGET_HIT).any() else []), "pending",
               *(["limited"] if plan["status"].eq("limited").any() else [])]
    return (plan.pivot_table(index=["model", "condition"], columns="status", values="run_id", aggfunc="count",
                             fill_value=0).reindex(columns=columns, fill_value=0)
            .assign(total=lambda f: f.sum(axis=1)).reset_index())


def cli_preview(suite_dir: str | Path, plan: pd.DataFrame, n: int = 3, *, skip_missing: bool = False) -> str:
    """The first ``n`` pending runs' Claude Code command lines (the prompt elided), as generate would run them."""
    from skillbench.generation.cli_call import CliCall, cli_args
    from skillbench.generation.task_phase import run_tools
    from skillbench.suite.load import load_suite

    suite = load_suite(_path(suite_dir), skip_missing=skip_missing)
    lines = []
    for row in plan[plan["status"].eq("pending")].head(n).itertuples(index=False):
        spec = suite.prompt(row.prompt)
        call = CliCall(prompt=spec.test.prompt, model=row.model, run_id=row.run_id)
        argv = cli_args(call, suite.config.run, allowed_tools=run_tools(spec, suite.config.run))
        lines.append(" ".join(argv[:-1]) + " PROMPT  # " + row.run_id)
    return "\n".join(lines) if lines else "(nothing pending: every planned run is finished)"


def run_generation(suite: Any, run_key: str, *, out_dir: str | Path | None = None, backend: str | None = None,
                   endpoint: str = "", models: Sequence[str] = (), reps: int = 0, conditions: Sequence[str] = (),
                   jobs: int = 2, sandbox: str = "", seed: int = 0, timeout_s: float = 900.0,
                   limit: int | None = None, dry_run: bool = False, max_total_usd: float | None = None,
                   prompts: Sequence[str] = (), families: Sequence[str] = (), wait: bool = False,
                   holder: str | None = None, log: Log = _stderr, allow_dirty: bool = False,
                   arms: Any = None, versions: dict[str, Any] | None = None,
                   adaptive: bool = True, shard: Any = None, executor: str = "local",
                   scheduler: str | None = None) -> dict[str, Any]:
    """Run (or resume) a week's generation for a loaded suite; what ``skillbench generate`` does.

    ``jobs`` is the ceiling of the adaptive limiter (``adaptive``; False: a fixed pool of ``jobs``); 0 is the
    executor's width: 1 locally, the cluster's worker threads with ``executor="dask"`` (``scheduler``: its
    address; :mod:`skillbench.cluster`).

    The run key, the matrix, the ``prompts``/``families`` selection and every version arm's ref (``@HEAD`` on a
    dirty tree without ``allow_dirty``) are checked before anything is written; then the pass holds the run
    directory's lock. ``arms`` (an :class:`skillbench.arms.ArmPair`) is recorded in ``run.json`` for the stages
    after generation; ``versions`` are conditions the caller resolved already (``skillbench compare``).

    Returns:
        The reconciliation report (also in ``reconciliation.json``); ``{"dry_run": True, …}`` for a dry run.

    Raises:
        RunKeyError, PlanError, SelectionError: bad input (nothing written).
        RunDirBusy: another pass holds the run directory (and not ``wait``).
        SandboxFailure: the sandbox failed mid-pass (manifest and reconciliation written first).
    """
    from skillbench.generation.plan import make_plan, selected
    from skillbench.generation.run import GenerateOptions, default_out_dir, generate
    from skillbench.generation.versions import arm_versions
    from skillbench.ledgers.keys import check_run_key
    from skillbench.weekly.endpoint import model_endpoint

    check_run_key(run_key)
    models, reps, conditions = _matrix(suite, models, reps, conditions)
    opts = GenerateOptions(run_key=run_key, out_dir=Path(out_dir) if out_dir else default_out_dir(suite, run_key),
                           models=models, conditions=conditions, reps=reps, jobs=jobs, limit=limit,
                           dry_run=dry_run, sandbox=sandbox or None, max_total_usd=max_total_usd, seed=seed,
                           timeout_s=timeout_s, prompts=list(prompts), families=list(families), wait=wait,
                           allow_dirty=allow_dirty, arms=arms, versions=dict(versions or {}), adaptive=adaptive,
                           shard=shard, executor=executor, scheduler=scheduler)
    plan = make_plan(suite, run_key, models=models, conditions=conditions, reps=reps, seed=seed)
    selected(plan, suite, prompts=opts.prompts, families=opts.families)  # a bad name writes nothing, not even a folder
    arm_versions(suite, conditions, None, allow_dirty=allow_dirty, given=opts.versions)  # a bad ref: likewise

    def endpoint_factory():
        return model_endpoint(backend, endpoint=endpoint, suite_dir=suite, seed=seed)  # the suite as loaded

    with run_dir_lock(opts.out_dir, command=holder, wait=wait, log=log):
        return generate(suite, opts, endpoint_factory=endpoint_factory, log=log)


def generate_week(suite_dir: str | Path, run_key: str, run_dir: str | Path = "", *, backend: str = "sim",
                  endpoint: str = "", models: Sequence[str] = (), reps: int = 0, conditions: Sequence[str] = (),
                  jobs: int = 2, sandbox: str = "", seed: int = 0, timeout_s: float = 900.0,
                  prompts: Sequence[str] = (), families: Sequence[str] = (), skip_missing: bool = False,
                  executor: str = "local", scheduler: str = "") -> dict[str, Any]:
    """The chain's generation stage: :func:`run_generation` with progress collapsed for the notebook (and
    relayed live to the chain's terminal, see :func:`skillbench.weekly.collapsed_progress`); ``executor``,
    ``scheduler`` as there ("": a local cluster for ``dask``).

    Raises:
        StageError: a planned run is unaccounted for (the week must not read as complete).
    """
    from skillbench.suite.load import load_suite

    suite = load_suite(_path(suite_dir), skip_missing=skip_missing)
    with collapsed_progress():
        report = run_generation(suite, run_key, out_dir=resolve_run_dir(suite_dir, run_key, run_dir),
                                backend=backend, endpoint=endpoint, models=models, reps=reps, conditions=conditions,
                                jobs=jobs, sandbox=sandbox, seed=seed, timeout_s=timeout_s, prompts=prompts,
                                families=families, log=print, executor=executor, scheduler=scheduler or None)
    if not report.get("accounted", False):
        lists = {k: v for k, v in report.items() if isinstance(v, list) and v}
        raise StageError(f"generation left planned runs unaccounted for: {lists} — rerun the same run key to resume")
    return report


# -- 02 signals -------------------------------------------------------------------------------------------------


def signals_week(run_dir: str | Path, *, write: bool = False, wait: bool = False, holder: str | None = None):
    """The week's ledgers (:class:`skillbench.ledgers.WeekLedgers`), after rewriting the manifest when ``write``
    (under the run directory's lock; what ``skillbench signals`` does)."""
    from skillbench.ledgers.week import load_week

    folder = _path(run_dir)
    if write:
        write_signals(folder, wait=wait, holder=holder)
    return load_week(folder)


def write_signals(run_dir: str | Path, *, wait: bool = False, holder: str | None = None,
                  log: Log = _stderr) -> pd.DataFrame:
    """Rewrite ``manifest.csv`` (and ``checks.csv``, and ``trigger-f1.csv``: the measured triggering per family)
    from the run folders under the run directory's lock; returns the manifest.

    Raises:
        RunDirBusy: another pass holds the run directory (and not ``wait``).
        SignalsError: a run folder's metadata cannot be read.
    """
    from skillbench.checks.ledger import write_checks_ledger
    from skillbench.quality.trigger_f1 import write_trigger_f1
    from skillbench.signals.manifest import write_manifest

    with run_dir_lock(_path(run_dir), command=holder, wait=wait, log=log) as folder:
        manifest = write_manifest(folder)
        write_checks_ledger(folder)
        write_trigger_f1(folder)
        return manifest


# -- 03 judge ---------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _judging(folder: Path, prompts: Sequence[str], families: Sequence[str], *, backend: str | None, endpoint: str,
             seed: int, wait: bool, holder: str | None, log: Log) -> Iterator[Any]:
    """A judge's pass: the selection checked (nothing written on a bad name), the week locked, the endpoint open.

    Yields:
        ``(endpoint, selection)``.
    """
    from skillbench.judge.answers import check_selection
    from skillbench.weekly.endpoint import model_endpoint

    selection = check_selection(folder, prompts, families)
    with run_dir_lock(folder, command=holder, wait=wait, log=log), \
            model_endpoint(backend, endpoint=endpoint, seed=seed) as ep:
        yield ep, selection


def grade_week(run_dir: str | Path, options: Any, *, backend: str | None = None, endpoint: str = "",
               prompts: Sequence[str] = (), families: Sequence[str] = (), wait: bool = False,
               holder: str | None = None, log: Log = _stderr):
    """Grade the week's answers with the rubric judge (resumes); what ``skillbench judge`` does.

    Args:
        options: :class:`skillbench.judge.JudgeOptions`.
        prompts, families: grade only these prompts' and families' runs (empty: all).
        wait: another pass holds the run directory: wait for it instead of refusing.
        holder: how this pass names itself in the lock (default: the process's command line).

    Returns:
        :class:`skillbench.judge.JudgeReport`.

    Raises:
        WeekSelectionError: the week has no run of a named prompt or family (nothing written).
        RunDirBusy: another pass holds the run directory (and not ``wait``).
    """
    from skillbench.judge.run import judge_run_dir

    folder = _path(run_dir)
    with _judging(folder, prompts, families, backend=backend, endpoint=endpoint, seed=options.seed, wait=wait,
                  holder=holder, log=log) as (ep, selection):
        options = dataclasses.replace(options, selection=selection or None)
        return judge_run_dir(folder, options, base_url=ep.base_url, api_key=ep.api_key, endpoint_kind=ep.kind,
                             log=log)


def pair_week(run_dir: str | Path, *, backend: str | None = None, endpoint: str = "", judge_model: str = "",
              fresh: bool = False, jobs: int = 2, seed: int = 0, max_retries: int = 4, timeout: float = 120.0,
              prompts: Sequence[str] = (), families: Sequence[str] = (), wait: bool = False,
              holder: str | None = None, log: Log = _stderr, batch: bool = False,
              batch_wait_s: float | None = None, executor: str = "local", scheduler: str | None = None):
    """Judge the week's pairs in both orders (resumes); what ``skillbench judge-pairs`` does.

    ``batch``: through Message Batches (``batch_wait_s`` bounds the wait; then
    :class:`skillbench.judge.batch.JudgePending`). ``executor`` ``dask``: every request from a worker of
    ``scheduler``'s cluster.

    Returns:
        :class:`skillbench.judge.PairsReport`.

    Raises:
        WeekSelectionError: the week has no run of a named prompt or family (nothing written).
        RunDirBusy: another pass holds the run directory (and not ``wait``).
    """
    from skillbench.judge.client import DEFAULT_JUDGE_MODEL
    from skillbench.judge.pairwise import judge_pairs

    folder = _path(run_dir)
    with _judging(folder, prompts, families, backend=backend, endpoint=endpoint, seed=seed, wait=wait,
                  holder=holder, log=log) as (ep, selection):
        return judge_pairs(folder, base_url=ep.base_url, api_key=ep.api_key,
                           judge_model=judge_model or DEFAULT_JUDGE_MODEL, fresh=fresh, jobs=jobs, seed=seed,
                           max_retries=max_retries, timeout=timeout, selection=selection or None, log=log,
                           batch=batch, batch_wait_s=batch_wait_s, simulated=ep.simulated, executor=executor,
                           scheduler=scheduler)


@dataclass
class JudgeOutcome:
    """What the judging stage did."""

    rubric: Any = None
    pairs: Any = None


def judge_settings(run_dir: str | Path) -> Any:
    """The ``[judge]`` table of the suite a week was generated from (``run.json``'s ``suite_dir``; defaults
    when the week or its suite has none)."""
    from skillbench.suite.config import ConfigError, JudgeSettings, load_config

    suite_dir = (json_object_or_none(_path(run_dir) / RUN_FILE) or {}).get("suite_dir") or ""
    if not suite_dir or not Path(suite_dir).is_dir():
        return JudgeSettings()
    try:
        return load_config(suite_dir).judge
    except ConfigError as exc:
        raise StageError(str(exc)) from exc


def judge_week(run_dir: str | Path, *, backend: str = "sim", endpoint: str = "", judge_model: str = "",
               samples: int = 1, jobs: int = 2, seed: int = 0, retry_ungraded: bool = True,
               prompts: Sequence[str] = (), families: Sequence[str] = (), batch: bool | None = None,
               batch_wait_s: float | None = None, cache: bool = False, executor: str = "local",
               scheduler: str = "") -> JudgeOutcome:
    """The chain's judging stage: :func:`grade_week`, then :func:`pair_week`; both skip what is already graded.

    One lock is held across both, so no other pass slips in between the rubric and the pairwise judge.
    ``executor`` ``dask``: every judge request from a worker of ``scheduler``'s cluster ("": a local cluster).
    ``batch``, ``batch_wait_s``: None reads the suite's ``[judge]`` table (:func:`judge_settings`). ``cache``:
    prompt-cache sample 1 (pays only when calibration follows with caching on).
    Batched, the stage waits at most ``batch_wait_s`` for a round of batches, then stops "judge pending" — the
    kernel is not held for a batch that can take hours; rerunning the run key polls the same batches.

    Raises:
        StageError: items stay ungraded or pairs errored after retries (a judge failure must never read as a
            skill loss), or batches are still pending; rerunning the run key continues.
    """
    from skillbench.judge.batch import JudgePending
    from skillbench.judge.client import DEFAULT_JUDGE_MODEL
    from skillbench.judge.run import JudgeOptions

    settings = judge_settings(run_dir)
    batch = settings.batch if batch is None else batch
    wait_s = settings.batch_wait_s if batch_wait_s is None else batch_wait_s
    model = judge_model or DEFAULT_JUDGE_MODEL
    opts = JudgeOptions(judge_model=model, samples=samples, jobs=jobs, seed=seed, retry_ungraded=retry_ungraded,
                        batch=batch, batch_wait_s=wait_s if batch else None,
                        cache=cache, executor=executor, scheduler=scheduler or None)
    try:
        with collapsed_progress(), run_dir_lock(_path(run_dir), log=print):
            rubric = grade_week(run_dir, opts, backend=backend, endpoint=endpoint, prompts=prompts,
                                families=families, log=print)
            pairs = pair_week(run_dir, backend=backend, endpoint=endpoint, judge_model=model, jobs=jobs, seed=seed,
                              prompts=prompts, families=families, log=print, batch=batch,
                              batch_wait_s=opts.batch_wait_s, executor=executor, scheduler=scheduler or None)
    except JudgePending as exc:
        raise StageError(str(exc)) from exc
    if not rubric.ok:
        raise StageError(f"{rubric.ungraded_items} rubric item(s) could not be graded (reasons in each run's "
                         "judge.json) — rerun the same run key to grade them again")
    if pairs.errors:
        raise StageError(f"{pairs.errors} pair(s) could not be judged — rerun the same run key to judge them again")
    return JudgeOutcome(rubric, pairs)


# -- 04 calibration: skillbench/weekly/calibration_stage.py (calibrate, the drift sentinel, the judge study) ----


# -- 05 scorecard -----------------------------------------------------------------------------------------------


@dataclass
class WeekScorecard:
    """The scorecard's data (tables for figures) and its markdown."""

    data: Any
    markdown: str
    path: Path | None

    @property
    def complete(self) -> bool:
        """The reconciliation accounts for every planned run (else the scorecard says INCOMPLETE)."""
        return not self.data.incomplete

    @property
    def frames(self) -> Mapping[str, pd.DataFrame]:
        return self.data.frames()


def scorecard_week(run_dir: str | Path, history_path: str | Path = "", *, write: bool = False,
                   n_resamples: int | None = None, run_key: str | None = None, seed: int | None = None,
                   site: str | None = None, wait: bool = False, holder: str | None = None) -> WeekScorecard:
    """Write ``scorecard.md`` and upsert the history (``write``, under the run directory's lock), or compute it
    without writing.

    What ``skillbench scorecard`` (``write=True``) and ``05_scorecard`` run. Without ``write`` the history is read
    as it is (this week already in it, or added in memory only). A comparison neither reads nor writes it
    (:func:`skillbench.scorecard.write.week_history`).

    Raises:
        RunDirBusy: ``write`` and another pass holds the run directory (and not ``wait``).
    """
    from skillbench.ledgers.week import load_week
    from skillbench.scorecard.compute import compute_scorecard
    from skillbench.scorecard.render import render_markdown
    from skillbench.scorecard.stats import DEFAULT_RESAMPLES, DEFAULT_SEED
    from skillbench.scorecard.write import default_history_path, week_history, write_scorecard

    folder = _path(run_dir)
    hpath = _path(history_path) if str(history_path) else default_history_path(folder)
    n = n_resamples or DEFAULT_RESAMPLES
    seed = DEFAULT_SEED if seed is None else seed
    if write:
        with run_dir_lock(folder, command=holder, wait=wait, log=_stderr):
            result = write_scorecard(folder, history_path=hpath, n_resamples=n, run_key=run_key, seed=seed,
                                     site=site)
        return WeekScorecard(result.data, result.markdown, result.path)
    ledgers = load_week(folder)
    data = compute_scorecard(ledgers, history=week_history(ledgers, hpath), n_resamples=n, run_key=run_key,
                             seed=seed, site=site)
    return WeekScorecard(data, render_markdown(data), None)
