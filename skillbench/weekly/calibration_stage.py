"""The calibration stage's functions (04_calibration) and the judge study: each wires its options and endpoint.

Part of :mod:`skillbench.weekly.stages` (which re-exports them): ``calibrate_week`` (what ``skillbench calibrate``
and 04_calibration run), ``sentinel_week`` (the judge drift sentinel on the suite's frozen gold set, in
04_calibration and ``skillbench sentinel check``) and ``study_week`` (``skillbench judge-study``). Each holds the
run directory's lock for its whole pass.
"""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillbench.ledgers.lock import run_dir_lock
from skillbench.weekly.notebook import _path, collapsed_progress

if TYPE_CHECKING:  # the passes' packages load where a pass runs
    from skillbench.calibration.run import CalibrationOptions
    from skillbench.calibration.sentinel import SentinelOptions
    from skillbench.weekly.stages import StageRuntime

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
        skillbench.cluster.executor.ExecutorError: ``dask`` and the cluster cannot be used (one line).
        skillbench.judge.batch.JudgePending: a batched pass's wait ran out with a batch still processing (a rerun
            polls the same batches).

    Returns:
        The :class:`skillbench.calibration.Calibration`, or None when it reused ``calibration.csv`` or there was
        nothing to grade.
    """
    from skillbench.calibration.sentinel import SentinelOptions
    from skillbench.weekly.stages import judge_settings

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
    from skillbench.calibration.run import calibrate, calibration_current
    from skillbench.judge.answers import select_runs

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
    from skillbench.calibration.gold import suite_gold_path

    if str(gold):
        return _path(gold)
    return suite_gold_path(_path(suite_dir) if str(suite_dir) else _path(run_dir).resolve().parent.parent)


def sentinel_week(run_dir: str | Path, options: SentinelOptions, runtime: StageRuntime, *, gold: Path,
                  fresh: bool = False):
    """Run the judge drift sentinel on the week with the gold set ``gold`` (:func:`gold_path`; what ``skillbench
    sentinel check`` runs), under the week's lock.

    Returns:
        The :class:`skillbench.calibration.sentinel.Sentinel`, or None when the suite has no gold set or
        ``sentinel.json`` is current (same gold file, same judge) and not ``fresh``.

    Raises:
        GoldError: the gold set cannot be read.
    """
    folder = _path(run_dir)
    with run_dir_lock(folder, command=runtime.holder, wait=runtime.wait, log=runtime.log):
        return _sentinel_locked(folder, gold, options, runtime, fresh=fresh)


def _sentinel_locked(folder: Path, gold: Path, options: SentinelOptions, runtime: StageRuntime, *, fresh: bool):
    from skillbench.calibration.sentinel import DRIFT_BANNER, run_sentinel, sentinel_current

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
        options: a :class:`skillbench.calibration.study.StudyOptions`.
        runtime: the backend and endpoint, the log, the lock's holder and ``wait``.
        notebook: execute ``judge_study.ipynb`` into ``study.html`` afterwards.
        sim_note: the page's note when the endpoint is simulated.

    Returns:
        ``(the JudgeStudy, the study.html path or None)``.

    Raises:
        ValueError, LabelsError: bad input (one line each); BackendError: no endpoint.
        RuntimeError: the notebook failed (the study's files are written).
    """
    from skillbench.calibration.study import judge_study, plan_study
    from skillbench.calibration.study_report import execute_study_notebook, study_dir
    from skillbench.ledgers.files import STUDY_JSON

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
