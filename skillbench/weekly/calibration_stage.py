"""The calibration stage's functions (04_calibration) and the judge study: each wires its options and endpoint.

Part of :mod:`skillbench.weekly.stages` (which re-exports them): ``calibrate_week`` (what ``skillbench calibrate``
and 04_calibration run), ``sentinel_week`` (the judge drift sentinel on the suite's frozen gold set, in
04_calibration and ``skillbench sentinel check``) and ``study_week`` (``skillbench judge-study``). Each holds the
run directory's lock for its whole pass.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skillbench.ledgers.lock import run_dir_lock
from skillbench.weekly.notebook import _path, collapsed_progress

Log = Callable[[str], None]




def calibrate_week(run_dir: str | Path, *, backend: str | None = "sim", endpoint: str = "", repeat: int = 3,
                   sample: int = 0, other_judge: str = "", human_labels: str = "", jobs: int = 2, seed: int = 0,
                   fresh: bool = False, judge_model: str = "", include_plugin: bool = False, max_retries: int = 4,
                   timeout: float = 120.0, log: Log = print, collapse_progress: bool = True, wait: bool = False,
                   holder: str | None = None, sentinel: bool = False, suite_dir: str = "", gold: str = "",
                   batch: bool | None = None, batch_wait_s: float | None = None, cache: bool = False,
                   executor: str = "local", scheduler: str = ""):
    """Calibrate the judge on the week's answers, unless the calibration on disk is current and not ``fresh``;
    with ``sentinel``, then run the drift sentinel (:func:`sentinel_week`'s rules) in the same pass.

    What ``skillbench calibrate`` (always ``fresh``, no sentinel) and ``04_calibration`` (resumes, with the
    sentinel) run, under the run directory's lock (``wait``: wait for another pass instead of refusing).
    ``batch`` None reads the suite's ``[judge] batch`` (and ``batch_wait_s``); ``cache`` prompt-caches the
    gradings that repeat the judge pass's requests. ``executor`` ``dask``: every grading request from a worker of
    ``scheduler``'s cluster ("": a local cluster; :mod:`skillbench.cluster`).

    Raises:
        skillbench.cluster.executor.ExecutorError: ``dask`` and the cluster cannot be used (one line).
        skillbench.judge.batch.JudgePending: a batched pass's wait ran out with a batch still processing (a rerun
            polls the same batches).

    Returns:
        The :class:`skillbench.calibration.Calibration`, or None when it reused ``calibration.csv`` or there was
        nothing to grade.
    """
    folder = _path(run_dir)
    with run_dir_lock(folder, command=holder, wait=wait, log=log):
        cal = _calibrate_locked(folder, backend=backend, endpoint=endpoint, repeat=repeat, sample=sample,
                                other_judge=other_judge, human_labels=human_labels, jobs=jobs, seed=seed, fresh=fresh,
                                judge_model=judge_model, include_plugin=include_plugin, max_retries=max_retries,
                                timeout=timeout, log=log, collapse_progress=collapse_progress, batch=batch,
                                batch_wait_s=batch_wait_s, cache=cache, executor=executor,
                                scheduler=scheduler or None)
        if sentinel:
            _sentinel_locked(folder, gold_path(folder, suite_dir, gold), backend=backend, endpoint=endpoint,
                             judge_model=judge_model, jobs=jobs, seed=seed, fresh=fresh, max_retries=max_retries,
                             timeout=timeout, log=log)
        return cal


def _calibrate_locked(folder: Path, *, backend: str | None, endpoint: str, repeat: int, sample: int,
                      other_judge: str, human_labels: str, jobs: int, seed: int, fresh: bool, judge_model: str,
                      include_plugin: bool, max_retries: int, timeout: float, log: Log, collapse_progress: bool,
                      batch: bool | None = None, batch_wait_s: float | None = None, cache: bool = False,
                      executor: str = "local", scheduler: str | None = None):
    from skillbench.calibration.run import CalibrationOptions, calibrate, calibration_current
    from skillbench.judge.answers import select_runs
    from skillbench.weekly.endpoint import model_endpoint

    if calibration_current(folder) and not fresh and not human_labels:
        log("calibration.csv is newer than scores.csv: reusing it (pass fresh=True to grade again)")
        return None
    from skillbench.weekly.stages import judge_settings

    settings = judge_settings(folder)
    opts = CalibrationOptions(repeat=repeat, sample=sample or None, judge_model=judge_model or None,
                              other_judge=other_judge or None, human=_path(human_labels) if human_labels else None,
                              include_plugin=include_plugin, seed=seed, jobs=jobs, max_retries=max_retries,
                              timeout=timeout, batch=settings.batch if batch is None else batch,
                              batch_wait_s=settings.batch_wait_s if batch_wait_s is None else batch_wait_s,
                              cache=cache, executor=executor, scheduler=scheduler)
    calls = repeat >= 2 or bool(other_judge)
    if calls and not human_labels and not fresh and not select_runs(folder)[0]:
        log("no gradeable run with an answer this week: nothing to calibrate (see 03_judge's skips)")
        return None
    with collapsed_progress() if collapse_progress else contextlib.nullcontext(), \
            (model_endpoint(backend, endpoint=endpoint, seed=seed) if calls else contextlib.nullcontext()) as ep:
        if ep is not None:
            opts.endpoint_kind = ep.kind
        return calibrate(folder, opts, base_url=ep.base_url if ep else None, api_key=ep.api_key if ep else None,
                         log=log)


def gold_path(run_dir: str | Path, suite_dir: str | Path = "", gold: str | Path = "") -> Path:
    """The gold set a week's sentinel grades: ``gold``, else ``SUITE_DIR/judge-gold/gold.jsonl`` (the suite
    default: the week's ``SUITE_DIR/weekly/<run_key>/`` layout)."""
    from skillbench.calibration.gold import suite_gold_path

    if str(gold):
        return _path(gold)
    return suite_gold_path(_path(suite_dir) if str(suite_dir) else _path(run_dir).resolve().parent.parent)


def sentinel_week(run_dir: str | Path, *, suite_dir: str | Path = "", gold: str | Path = "",
                  backend: str | None = "sim", endpoint: str = "", judge_model: str = "", jobs: int = 2,
                  seed: int = 0, fresh: bool = False, max_retries: int = 4, timeout: float = 120.0, log: Log = print,
                  wait: bool = False, holder: str | None = None):
    """Run the judge drift sentinel on the week (what ``skillbench sentinel check`` runs), under the week's lock.

    Returns:
        The :class:`skillbench.calibration.sentinel.Sentinel`, or None when the suite has no gold set or
        ``sentinel.json`` is current (same gold file, same judge) and not ``fresh``.

    Raises:
        GoldError: the gold set cannot be read.
    """
    folder = _path(run_dir)
    with run_dir_lock(folder, command=holder, wait=wait, log=log):
        return _sentinel_locked(folder, gold_path(folder, suite_dir, gold), backend=backend, endpoint=endpoint,
                                judge_model=judge_model, jobs=jobs, seed=seed, fresh=fresh, max_retries=max_retries,
                                timeout=timeout, log=log)


def _sentinel_locked(folder: Path, gold: Path, *, backend: str | None, endpoint: str, judge_model: str, jobs: int,
                     seed: int, fresh: bool, max_retries: int, timeout: float, log: Log):
    from skillbench.calibration.sentinel import DRIFT_BANNER, run_sentinel, sentinel_current
    from skillbench.weekly.endpoint import model_endpoint

    if not gold.is_file():
        log(f"no gold set: {gold} — build one with skillbench sentinel build")
        return None
    if not fresh and sentinel_current(folder, gold, judge_model or None):
        log("sentinel.json is current (same gold set and judge): reusing it (pass fresh=True to grade again)")
        return None
    with model_endpoint(backend, endpoint=endpoint, seed=seed) as ep:
        result = run_sentinel(folder, gold, judge_model=judge_model or None, base_url=ep.base_url,
                              api_key=ep.api_key, seed=seed, jobs=jobs, endpoint=ep.kind, max_retries=max_retries,
                              timeout=timeout)
    s = result.summary
    num = {k: "n/a" if s[k] is None else f"{s[k]:.3f}" for k in ("agreement", "must_credit")}
    log(f"sentinel: {s['flag']} — {s['n_items']} gold items, agreement {num['agreement']}, must credit "
        f"{num['must_credit']} ({s['judge_model']}, snapshot {s['judge_snapshot'] or 'unknown'}); "
        f"{'; '.join(s['reasons'])}")
    if result.flagged:
        log(DRIFT_BANNER)
    return result


def study_week(run_dir: str | Path, options: Any, *, backend: str | None = None, endpoint: str = "",
               notebook: bool = True, wait: bool = False, log: Log = print, holder: str | None = None,
               sim_note: str = "") -> tuple[Any, Path | None]:
    """Run a judge study on the week (what ``skillbench judge-study`` runs), under the week's lock.

    Args:
        run_dir: the week.
        options: a :class:`skillbench.calibration.study.StudyOptions`.
        backend: ``sim`` or ``anthropic`` (None: the default).
        endpoint: a running endpoint's URL ("" → start one).
        notebook: execute ``judge_study.ipynb`` into ``study.html`` afterwards.
        wait: wait for another pass on the week instead of refusing.
        log: where progress lines go.
        holder: the command named in the lock.
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
    from skillbench.weekly.endpoint import model_endpoint

    folder = _path(run_dir)
    with run_dir_lock(folder, command=holder, wait=wait, log=log):
        plan = plan_study(folder, options)
        if (study_dir(folder) / STUDY_JSON).is_file():
            log(f"judge-study: replacing the previous study in {study_dir(folder)}")
        with model_endpoint(backend, endpoint=endpoint, seed=options.seed) as ep:
            study = judge_study(folder, options, ep.base_url, ep.api_key, log=log, plan=plan,
                                notes=[sim_note] if ep.simulated and sim_note else [])
        html = execute_study_notebook(folder) if notebook else None
    return study, html
