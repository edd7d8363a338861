"""The stage functions: what each notebook of the chain runs, and what the CLI's commands run.

One function per stage, so ``skillbench generate`` and ``01_generate`` (and judge, judge-pairs, calibrate,
scorecard) wire options and endpoints in one place. A pass takes its options object (what to do) and a
:class:`skillbench.runtime.PassContext` (where and how); :class:`StageRuntime` is the flags' and the notebooks'
spelling of the latter (``backend`` None → the default; ``endpoint`` "" → start our own simulation for ``sim``;
``executor`` ``dask`` → the workers of ``scheduler``'s cluster, "" a local cluster), turned into a context by
:meth:`StageRuntime.context`, which is where the Dask executor is opened (:mod:`skillbench.cluster`). The
notebook-facing forms raise :class:`StageError` when the stage must stop the chain; the CLI reads the same
reports and chooses its exit code.

Every stage that writes a week's ledgers holds the run directory's lock for its whole pass
(:func:`skillbench.ledgers.run_dir_lock`): a second pass on the same week refuses at once with
:class:`skillbench.ledgers.RunDirBusy` naming the holder, or waits with ``wait=True``. The chain's stages
take it in their own kernels; the chain never holds it across stages.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from skillbench.ledgers import RUN_FILE, json_object_or_none, run_dir_lock
from skillbench.runtime import PassContext
from skillbench.vocab import BUDGET_HIT, COMPLETE_STATES, FINISHED
from skillbench.weekly._notebook import StageError, _path, collapsed_progress, resolve_run_dir

if TYPE_CHECKING:  # the options classes load their packages: imported where a pass runs
    from skillbench.calibration import CalibrationOptions, SentinelOptions
    from skillbench.generation import GenerateOptions
    from skillbench.identifiers import IdentifierOptions, IdentifierReport
    from skillbench.judge import JudgeOptions
    from skillbench.suite import SuiteOverrides

Log = Callable[[str], None]


# A pass that sends no request: no endpoint, this process's threads, stderr, and a busy week refused at once.
LOCAL_PASS = PassContext()


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


@dataclass(frozen=True)
class StageRuntime:
    """Where and how a stage runs, as the CLI's flags and the notebooks' parameters spell it."""

    backend: str | None = None  # sim or anthropic (None: the default, :func:`skillbench.generation.resolve_backend`)
    endpoint: str = ""  # a running endpoint's URL ("": start our own simulation for ``sim``)
    executor: str = "local"  # local (this process's threads) or dask (the workers of ``scheduler``'s cluster)
    scheduler: str = ""  # the dask.distributed scheduler's address ("": a local cluster for the pass)
    log: Log = _stderr
    wait: bool = False  # another pass holds the run directory: wait for it instead of refusing
    holder: str | None = None  # how the pass names itself in the lock (None: the process's command line)

    def context(self, *, seed: int, suite: Any = None) -> PassContext:
        """The pass's context: the endpoint and the executor opened when the pass has work (``seed``: the
        simulation's; ``suite``: the loaded suite a simulation serves, else the one it finds)."""
        from skillbench.cluster import executor_opener
        from skillbench.weekly._endpoint import model_endpoint

        where = {"suite_dir": suite} if suite is not None else {}
        return PassContext(endpoint=functools.partial(model_endpoint, self.backend, endpoint=self.endpoint, seed=seed,
                                                      **where),
                           executor=executor_opener(self.executor, self.scheduler or None, log=self.log),
                           log=self.log, wait=self.wait, holder=self.holder)


# -- 01 generate ------------------------------------------------------------------------------------------------


def plan_week(suite_dir: str | Path, opts: GenerateOptions, run_dir: str | Path = "", *,
              overrides: SuiteOverrides | None = None) -> pd.DataFrame:
    """The week's plan (what ``generate`` would run with ``opts``) with each run's status, writing nothing.

    ``overrides``: load the suite as the command line's suite flags say (``--skip-missing``, ``--site-base``, …).

    Returns:
        ``plan.csv``'s columns plus ``status``: the run's state when its folder holds a complete run
        (``finished`` or ``budget_hit``, :func:`skillbench.signals.run_state`), ``limited`` when
        ``prompts``/``families`` keep it out of this pass, else ``pending``.

    Raises:
        SelectionError: ``prompts`` or ``families`` names something the plan does not have.
    """
    from skillbench.generation import make_plan, selected
    from skillbench.signals import run_states
    from skillbench.suite import load_families

    suite = load_families(_path(suite_dir), overrides)
    opts = opts.for_suite(suite)
    plan = make_plan(suite, opts.run_key, models=opts.models, conditions=opts.conditions, reps=opts.reps,
                     seed=opts.seed)
    keep = selected(plan, suite, prompts=list(opts.prompts), families=list(opts.families))
    folder = resolve_run_dir(suite_dir, opts.run_key, run_dir)
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


def cli_preview(suite_dir: str | Path, plan: pd.DataFrame, n: int = 3, *,
                overrides: SuiteOverrides | None = None) -> str:
    """The first ``n`` pending runs' Claude Code command lines (the prompt elided), as generate would run them."""
    from skillbench.generation import CliCall, cli_args, run_tools
    from skillbench.suite import load_families

    suite = load_families(_path(suite_dir), overrides)
    lines = []
    for row in plan[plan["status"].eq("pending")].head(n).itertuples(index=False):
        spec = suite.prompt(row.prompt)
        call = CliCall(prompt=spec.test.prompt, model=row.model, run_id=row.run_id)
        argv = cli_args(call, suite.config.run, allowed_tools=run_tools(spec, suite.config.run))
        lines.append(" ".join(argv[:-1]) + " PROMPT  # " + row.run_id)
    return "\n".join(lines) if lines else "(nothing pending: every planned run is finished)"


def run_generation(suite: Any, opts: GenerateOptions, ctx: PassContext) -> dict[str, Any]:
    """Run (or resume) a week's generation for a loaded suite; what ``skillbench generate`` does.

    ``opts.jobs`` is the ceiling of the adaptive limiter (``adaptive``; False: a fixed pool of ``jobs``); 0 is the
    executor's width: 1 locally, the cluster's worker threads with a Dask executor in ``ctx``. An empty matrix part
    and no ``out_dir`` are the suite's (:meth:`GenerateOptions.for_suite`).

    The run key, the matrix, the ``prompts``/``families`` selection and every version arm's ref (``@HEAD`` on a
    dirty tree without ``allow_dirty``) are checked before anything is written; then the pass holds the run
    directory's lock (``ctx.holder``, ``ctx.wait``). ``opts.arms`` (an :class:`skillbench.arms.ArmPair`) is recorded
    in ``run.json`` for the stages after generation; ``opts.versions`` are conditions the caller resolved already
    (``skillbench compare``).

    Returns:
        The reconciliation report (also in ``reconciliation.json``); ``{"dry_run": True, …}`` for a dry run.

    Raises:
        RunKeyError, PlanError, SelectionError: bad input (nothing written).
        RunDirBusy: another pass holds the run directory (and not ``ctx.wait``).
        SandboxFailure: the sandbox failed mid-pass (manifest and reconciliation written first).
    """
    from skillbench.generation import arm_versions, generate, make_plan, selected
    from skillbench.ledgers import check_run_key

    check_run_key(opts.run_key)
    opts = opts.for_suite(suite)
    plan = make_plan(suite, opts.run_key, models=opts.models, conditions=opts.conditions, reps=opts.reps,
                     seed=opts.seed)
    selected(plan, suite, prompts=opts.prompts, families=opts.families)  # a bad name writes nothing, not even a folder
    arm_versions(suite, opts.conditions, None, allow_dirty=opts.allow_dirty, given=opts.versions)  # a bad ref: likewise
    with run_dir_lock(opts.out_dir, command=ctx.holder, wait=ctx.wait, log=ctx.log):
        return generate(suite, opts, ctx)


def generate_week(suite_dir: str | Path, opts: GenerateOptions, run_dir: str | Path = "", *,
                  runtime: StageRuntime = StageRuntime(backend="sim"),
                  overrides: SuiteOverrides | None = None) -> dict[str, Any]:
    """The chain's generation stage: :func:`run_generation` with progress collapsed for the notebook (and
    relayed live to the chain's terminal, see :func:`skillbench.weekly.collapsed_progress`), into ``run_dir``
    ("": the suite's ``weekly/<run_key>/``), run where ``runtime`` says (its log: the notebook's output).

    Raises:
        StageError: a planned run is unaccounted for (the week must not read as complete).
    """
    from skillbench.suite import load_families

    suite = load_families(_path(suite_dir), overrides)
    opts = dataclasses.replace(opts, out_dir=resolve_run_dir(suite_dir, opts.run_key, run_dir))
    with collapsed_progress():
        ctx = dataclasses.replace(runtime, log=print).context(seed=opts.seed, suite=suite)
        report = run_generation(suite, opts, ctx)
    if not report.get("accounted", False):
        lists = {k: v for k, v in report.items() if isinstance(v, list) and v}
        raise StageError(f"generation left planned runs unaccounted for: {lists} — rerun the same run key to resume")
    return report


# -- 02 signals -------------------------------------------------------------------------------------------------


def signals_week(run_dir: str | Path, *, write: bool = False, wait: bool = False, holder: str | None = None):
    """The week's ledgers (:class:`skillbench.ledgers.WeekLedgers`), after rewriting the manifest when ``write``
    (under the run directory's lock; what ``skillbench signals`` does)."""
    from skillbench.ledgers import load_week

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
    from skillbench.checks import write_checks_ledger
    from skillbench.quality import write_trigger_f1
    from skillbench.signals import write_manifest

    with run_dir_lock(_path(run_dir), command=holder, wait=wait, log=log) as folder:
        manifest = write_manifest(folder)
        write_checks_ledger(folder)
        write_trigger_f1(folder)
        return manifest


# -- 03 judge ---------------------------------------------------------------------------------------------------


def _checked(folder: Path, options: JudgeOptions) -> JudgeOptions:
    """The options with the judge model resolved, after checking the selection (nothing written on a bad name).

    Raises:
        WeekSelectionError: the week has no run of a named prompt or family.
    """
    from skillbench.judge import check_selection, resolve_judge_model

    selection = check_selection(folder, options.selection.prompts, options.selection.families)
    return dataclasses.replace(options, selection=selection, judge_model=resolve_judge_model(options.judge_model))


def grade_week(run_dir: str | Path, options: JudgeOptions, ctx: PassContext):
    """Grade the week's answers with the rubric judge (resumes); what ``skillbench judge`` does.

    Args:
        options: :class:`skillbench.judge.JudgeOptions` (its ``selection``: grade only these prompts' and
            families' runs; empty: all).
        ctx: the endpoint, the executor, the log; the lock's holder and ``wait``.

    Returns:
        :class:`skillbench.judge.JudgeReport`.

    Raises:
        WeekSelectionError: the week has no run of a named prompt or family (nothing written).
        RunDirBusy: another pass holds the run directory (and not ``ctx.wait``).
    """
    from skillbench.judge import judge_run_dir

    folder = _path(run_dir)
    options = _checked(folder, options)
    with run_dir_lock(folder, command=ctx.holder, wait=ctx.wait, log=ctx.log):
        return judge_run_dir(folder, options, ctx)


def pair_week(run_dir: str | Path, options: JudgeOptions, ctx: PassContext):
    """Judge the week's pairs in both orders (resumes); what ``skillbench judge-pairs`` does.

    ``options.batch``: through Message Batches (``batch_wait_s`` bounds the wait; then
    :class:`skillbench.judge._batch.JudgePending`). A Dask executor in ``ctx``: every request from its workers.

    Returns:
        :class:`skillbench.judge.PairsReport`.

    Raises:
        WeekSelectionError: the week has no run of a named prompt or family (nothing written).
        RunDirBusy: another pass holds the run directory (and not ``ctx.wait``).
    """
    from skillbench.judge import judge_pairs

    folder = _path(run_dir)
    options = _checked(folder, options)
    with run_dir_lock(folder, command=ctx.holder, wait=ctx.wait, log=ctx.log):
        return judge_pairs(folder, options, ctx)


def identifiers_week(run_dir: str | Path, options: IdentifierOptions, ctx: PassContext = LOCAL_PASS
                     ) -> IdentifierReport:
    """Check the week's graded answers for fabricated identifiers against the suite's declared API surfaces
    (resumes; :func:`skillbench.identifiers.check_week`); what ``skillbench identifiers`` does, and the judging
    stage's first step: deterministic evidence before the judge. A suite without ``[[api]]`` is one note.

    Raises:
        IdentifierPassError, SurfaceError: the suite's config or a declared surface cannot be read (one line).
        RunDirBusy: another pass holds the run directory (and not ``ctx.wait``).
    """
    from skillbench.identifiers import check_week

    folder = _path(run_dir)
    with run_dir_lock(folder, command=ctx.holder, wait=ctx.wait, log=ctx.log):
        return check_week(folder, options, ctx)


@dataclass
class JudgeOutcome:
    """What the judging stage did."""

    rubric: Any = None
    pairs: Any = None
    identifiers: Any = None  # the identifiers pass's report (IdentifierReport)


def judge_settings(run_dir: str | Path) -> Any:
    """The ``[judge]`` table of the config a week was generated with (``run.json``'s ``config_file``, else its
    ``suite_dir``'s own; :func:`skillbench.suite.week_config`); defaults when the week or its suite has none)."""
    from skillbench.suite import ConfigError, JudgeSettings, week_config

    try:
        found = week_config(json_object_or_none(_path(run_dir) / RUN_FILE) or {})
    except ConfigError as exc:
        raise StageError(str(exc)) from exc
    return found[0].judge if found is not None else JudgeSettings()


def judge_week(run_dir: str | Path, options: JudgeOptions, runtime: StageRuntime = StageRuntime(backend="sim"),
               *, batch: bool | None = None, batch_wait_s: float | None = None) -> JudgeOutcome:
    """The chain's judging stage: :func:`identifiers_week` (deterministic evidence first: the answers' identifiers
    against the suite's declared API surfaces), then :func:`grade_week`, then :func:`pair_week` with the same
    options; each skips what is already done.

    One lock is held across all three, so no other pass slips in between the rubric and the pairwise judge.
    ``batch``, ``batch_wait_s``: None reads the suite's ``[judge]`` table (:func:`judge_settings`);
    ``options.batch`` and ``options.batch_wait_s`` are replaced by them. ``options.cache``: prompt-cache sample 1
    (pays only when calibration follows with caching on). Batched, the stage waits at most ``batch_wait_s`` for a
    round of batches, then stops "judge pending" — the kernel is not held for a batch that can take hours;
    rerunning the run key polls the same batches.

    Raises:
        StageError: items stay ungraded or pairs errored after retries (a judge failure must never read as a
            skill loss), or batches are still pending; rerunning the run key continues; or a declared API surface
            cannot be read.
    """
    from skillbench.identifiers import IdentifierOptions, IdentifierPassError, SurfaceError
    from skillbench.judge import JudgePending

    settings = judge_settings(run_dir)
    batch = settings.batch if batch is None else batch
    wait_s = settings.batch_wait_s if batch_wait_s is None else batch_wait_s
    options = dataclasses.replace(options, batch=batch, batch_wait_s=wait_s if batch else None)
    ctx = dataclasses.replace(runtime, log=print).context(seed=options.seed)
    try:
        with collapsed_progress(), run_dir_lock(_path(run_dir), log=print):
            checked = identifiers_week(run_dir, IdentifierOptions(selection=options.selection,
                                                                  include_plugin=options.include_plugin), ctx)
            ctx.log(checked.line())
            rubric = grade_week(run_dir, options, ctx)
            pairs = pair_week(run_dir, options, ctx)
    except (JudgePending, IdentifierPassError, SurfaceError) as exc:
        raise StageError(str(exc)) from exc
    if not rubric.ok:
        raise StageError(f"{rubric.ungraded_items} rubric item(s) could not be graded (reasons in each run's "
                         "judge.json) — rerun the same run key to grade them again")
    if pairs.errors:
        raise StageError(f"{pairs.errors} pair(s) could not be judged — rerun the same run key to judge them again")
    return JudgeOutcome(rubric, pairs, checked)


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
                   site: str | None = None, ctx: PassContext = LOCAL_PASS) -> WeekScorecard:
    """Write ``scorecard.md`` and upsert the history (``write``, under the run directory's lock), or compute it
    without writing.

    What ``skillbench scorecard`` (``write=True``) and ``05_scorecard`` run. Without ``write`` the history is read
    as it is (this week already in it, or added in memory only). A comparison neither reads nor writes it
    (:func:`skillbench.scorecard._write.week_history`).

    ``ctx``: the lock's holder and ``wait``, and its log (nothing here sends a request).

    Raises:
        RunDirBusy: ``write`` and another pass holds the run directory (and not ``ctx.wait``).
    """
    from skillbench.ledgers import load_week
    from skillbench.scorecard import (
        DEFAULT_RESAMPLES,
        DEFAULT_SEED,
        compute_scorecard,
        default_history_path,
        render_markdown,
        week_history,
        write_scorecard,
    )

    folder = _path(run_dir)
    hpath = _path(history_path) if str(history_path) else default_history_path(folder)
    n = n_resamples or DEFAULT_RESAMPLES
    seed = DEFAULT_SEED if seed is None else seed
    if write:
        with run_dir_lock(folder, command=ctx.holder, wait=ctx.wait, log=ctx.log):
            result = write_scorecard(folder, history_path=hpath, n_resamples=n, run_key=run_key, seed=seed,
                                     site=site)
        return WeekScorecard(result.data, result.markdown, result.path)
    ledgers = load_week(folder)
    data = compute_scorecard(ledgers, history=week_history(ledgers, hpath), n_resamples=n, run_key=run_key,
                             seed=seed, site=site)
    return WeekScorecard(data, render_markdown(data), None)


# -- 04 calibration, the sentinel and the judge study -----------------------------------------------------------
# ``calibrate_week`` (what ``skillbench calibrate`` and 04_calibration run), ``sentinel_week`` (the judge drift
# sentinel on the suite's frozen gold set, in 04_calibration and ``skillbench sentinel check``) and ``study_week``
# (``skillbench judge-study``).


def calibrate_week(run_dir: str | Path, options: CalibrationOptions, runtime: StageRuntime, *, fresh: bool = False,
                   sentinel_gold: Path | None = None, batch: bool | None = None, batch_wait_s: float | None = None,
                   collapse_progress: bool = True):
    """Calibrate the judge on the week's answers, unless the calibration on disk is current and not ``fresh``;
    with ``sentinel_gold`` (a gold set, :func:`gold_path`), then run the drift sentinel (:func:`sentinel_week`'s
    rules, with the options' judge, seed, concurrency and retries) in the same pass.

    What ``skillbench calibrate`` (always ``fresh``, no sentinel) and ``04_calibration`` (resumes, with the
    sentinel) run, under the run directory's lock (``runtime.wait``: wait for another pass instead of refusing).
    ``batch`` None reads the suite's ``[judge] batch`` (and ``batch_wait_s``; both replace the options'); the
    options' ``cache`` prompt-caches the gradings that repeat the judge pass's requests. ``runtime.executor``
    ``dask``: every grading request from a worker of ``runtime.scheduler``'s cluster ("": a local cluster;
    :mod:`skillbench.cluster`).

    Raises:
        skillbench.cluster._executor.ExecutorError: ``dask`` and the cluster cannot be used (one line).
        skillbench.judge._batch.JudgePending: a batched pass's wait ran out with a batch still processing (a rerun
            polls the same batches).

    Returns:
        The :class:`skillbench.calibration.Calibration`, or None when it reused ``calibration.csv`` or there was
        nothing to grade.
    """
    from skillbench.calibration import SentinelOptions

    folder = _path(run_dir)
    settings = judge_settings(folder)
    options = dataclasses.replace(options, batch=settings.batch if batch is None else batch,
                                  batch_wait_s=settings.batch_wait_s if batch_wait_s is None else batch_wait_s)
    with run_dir_lock(folder, command=runtime.holder, wait=runtime.wait, log=runtime.log):
        cal = _calibrate_locked(folder, options, runtime, fresh=fresh, collapse_progress=collapse_progress)
        if sentinel_gold is not None:
            again = SentinelOptions(judge_model=options.judge_model, seed=options.seed, jobs=options.jobs,
                                    max_retries=options.max_retries, timeout=options.timeout)
            _sentinel_locked(folder, sentinel_gold, again, runtime, fresh=fresh)
        return cal


def _calibrate_locked(folder: Path, options: CalibrationOptions, runtime: StageRuntime, *, fresh: bool,
                      collapse_progress: bool):
    from skillbench.calibration import calibrate, calibration_current
    from skillbench.judge import select_runs

    if calibration_current(folder) and not fresh and options.human is None:
        runtime.log("calibration.csv is newer than scores.csv: reusing it (pass fresh=True to grade again)")
        return None
    calls = options.repeat >= 2 or bool(options.other_judge)
    if calls and options.human is None and not fresh and not select_runs(folder)[0]:
        runtime.log("no gradeable run with an answer this week: nothing to calibrate (see 03_judge's skips)")
        return None
    ctx = runtime.context(seed=options.seed)
    with collapsed_progress() if collapse_progress else contextlib.nullcontext():
        return calibrate(folder, options, ctx)  # the endpoint and the executor open only to grade again


def gold_path(run_dir: str | Path, suite_dir: str | Path = "", gold: str | Path = "") -> Path:
    """The gold set a week's sentinel grades: ``gold``, else ``SUITE_DIR/judge-gold/gold.jsonl`` (the suite
    default: the week's ``SUITE_DIR/weekly/<run_key>/`` layout)."""
    from skillbench.calibration import suite_gold_path

    if str(gold):
        return _path(gold)
    return suite_gold_path(_path(suite_dir) if str(suite_dir) else _path(run_dir).resolve().parent.parent)


def sentinel_week(run_dir: str | Path, options: SentinelOptions, runtime: StageRuntime, *, gold: Path,
                  fresh: bool = False):
    """Run the judge drift sentinel on the week with the gold set ``gold`` (:func:`gold_path`; what ``skillbench
    sentinel check`` runs), under the week's lock.

    Returns:
        The :class:`skillbench.calibration._sentinel.Sentinel`, or None when the suite has no gold set or
        ``sentinel.json`` is current (same gold file, same judge) and not ``fresh``.

    Raises:
        GoldError: the gold set cannot be read.
    """
    folder = _path(run_dir)
    with run_dir_lock(folder, command=runtime.holder, wait=runtime.wait, log=runtime.log):
        return _sentinel_locked(folder, gold, options, runtime, fresh=fresh)


def _sentinel_locked(folder: Path, gold: Path, options: SentinelOptions, runtime: StageRuntime, *, fresh: bool):
    from skillbench.calibration import DRIFT_BANNER, run_sentinel, sentinel_current

    log = runtime.log
    if not gold.is_file():
        log(f"no gold set: {gold} — build one with skillbench sentinel build")
        return None
    if not fresh and sentinel_current(folder, gold, options.judge_model):
        log("sentinel.json is current (same gold set and judge): reusing it (pass fresh=True to grade again)")
        return None
    result = run_sentinel(folder, gold, options, runtime.context(seed=options.seed))
    s = result.summary
    num = {k: "n/a" if s[k] is None else f"{s[k]:.3f}" for k in ("agreement", "must_credit")}
    log(f"sentinel: {s['flag']} — {s['n_items']} gold items, agreement {num['agreement']}, must credit "
        f"{num['must_credit']} ({s['judge_model']}, snapshot {s['judge_snapshot'] or 'unknown'}); "
        f"{'; '.join(s['reasons'])}")
    if result.flagged:
        log(DRIFT_BANNER)
    return result


def study_week(run_dir: str | Path, options: Any, runtime: StageRuntime, *, notebook: bool = True,
               sim_note: str = "") -> tuple[Any, Path | None]:
    """Run a judge study on the week (what ``skillbench judge-study`` runs), under the week's lock.

    Args:
        run_dir: the week.
        options: a :class:`skillbench.calibration._study.StudyOptions`.
        runtime: the backend and endpoint, the log, the lock's holder and ``wait``.
        notebook: execute ``judge_study.ipynb`` into ``study.html`` afterwards.
        sim_note: the page's note when the endpoint is simulated.

    Returns:
        ``(the JudgeStudy, the study.html path or None)``.

    Raises:
        ValueError, LabelsError: bad input (one line each); BackendError: no endpoint.
        RuntimeError: the notebook failed (the study's files are written).
    """
    from skillbench.calibration import execute_study_notebook, judge_study, plan_study, study_dir
    from skillbench.ledgers import STUDY_JSON

    folder, log = _path(run_dir), runtime.log
    with run_dir_lock(folder, command=runtime.holder, wait=runtime.wait, log=log):
        plan = plan_study(folder, options)
        if (study_dir(folder) / STUDY_JSON).is_file():
            log(f"judge-study: replacing the previous study in {study_dir(folder)}")
        with runtime.context(seed=options.seed).open_endpoint() as ep:
            study = judge_study(folder, options, ep.base_url, ep.api_key, log=log, plan=plan,
                                notes=[sim_note] if ep.simulated and sim_note else [])
        html = execute_study_notebook(folder) if notebook else None
    return study, html
