"""Generation: run the plan with the real Claude Code CLI, resumably and fail-closed.

Every planned run gets its own folder ``OUT_DIR/<run_id>/`` (transcript, stderr, metadata, the test prompt),
written under a temporary name and renamed into place when the run is over, so an interrupted generate
leaves either a finished run or a partial folder that the next call moves aside and reruns — never a
duplicate. Which folders count as finished is :func:`skillbench.signals.run_state` (ARCHITECTURE.md,
"Run states"), the same rule the reconciliation and the manifest use. A run that hits the external timeout, ends
in an API error or loses its Dask worker is retried once, and the retry is recorded in ``retries.json``; more than
``MAX_RETRIED_GROUPS`` retried runs in one model × condition leg stop that leg (a systemic failure must not
read as a bad skill). ``--max-total-usd`` stops starting runs once finished runs cost that much; ``--limit``,
``--prompts`` and ``--families`` keep runs out of the pass; the reconciliation lists every such run. When the
sandbox itself fails the pass stops, records the run as ``sandbox_failure``, and still writes the manifest and
a (failed-closed) reconciliation. A pass holds the run directory's lock (:mod:`skillbench.ledgers._lock`).
Runs start through one :class:`skillbench.limiter.AdaptiveLimiter` whose ceiling is ``--jobs`` (unset: the most the
machine may grow to, :mod:`skillbench.generation._jobs`): the CLI's own rate-limit retries, read from each attempt's
stream-json, lower it, and runs without them raise it back slowly (``GenerateOptions.adaptive = False``: a fixed
pool); :class:`RunsCap` caps it by the machine's idle CPUs and the endpoint's advertised limit; ``retries.json``
records both kinds of change. Where the runs run is
the pass context's executor (:class:`skillbench.runtime.PassContext`; ``--executor dask``: each sandbox run on a
Dask worker, opened by the caller with :mod:`skillbench.cluster`); everything else stays here, in this process.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.generation._cli_call import CliCall, cli_args, cli_env
from skillbench.generation._folders import (
    finished_runs,
    move_partials_aside,
    skills_sha,
    spent_so_far,
    write_test_prompt,
    write_truth,
)
from skillbench.generation._image import RUNNER_HOME
from skillbench.generation._jobs import JobsChoice, RunsCap, default_jobs, machine_facts, machine_sample
from skillbench.generation._limits import ContainerLimits
from skillbench.generation._options import GenerateOptions, default_out_dir
from skillbench.generation._plan import PlanError, make_plan, run_names, selected, write_plan
from skillbench.generation._reconciliation import reconcile
from skillbench.generation._relay import RelayPlan, relay_summary, write_relay_record
from skillbench.generation._retries import (
    MAX_RETRIED_GROUPS,
    LegState,
    RetryLog,
    needs_retry,
    note_rate_limits,
    pass_limiter,
)
from skillbench.generation._sandbox import Sandbox, SandboxFailure, SandboxResult, choose_sandbox, refuse_local_real
from skillbench.generation._shard_summary import write_generate_summary
from skillbench.generation._task_phase import (
    rebuild_checks_ledger,
    record_checks,
    refuse_local_workspace_checks,
    run_timeout,
    run_tools,
    task_metadata,
)
from skillbench.generation._versions import arm_versions, install_dirs, version_metadata, versions_json
from skillbench.generation._workspace import TaskError, prepare_task
from skillbench.ledgers import (
    ASIDE_DIR,
    METADATA_FILE,
    RELAY_FILE,
    RETRIES_FILE,
    RUN_FILE,
    STDERR_FILE,
    TEST_PROMPT_FILE,
    TMP_PREFIX,
    TRANSCRIPT_FILE,
    atomic_write_json,
    read_run_json,
    record_slugs,
    run_dir_lock,
)
from skillbench.limiter import Slot
from skillbench.runtime import Log, PassContext, Transport
from skillbench.signals import parse_transcript_text, relay_cost, relay_disagreements, write_manifest
from skillbench.suite import SkillsVersion, Suite
from skillbench.vocab import HARNESS_INVALID, SANDBOX_FAILURE, TAMPERED, WORKER_LOST

RATE_LIMIT_JOBS = 4
__all__ = ["MAX_RETRIED_GROUPS", "GenerateOptions", "LegState", "LocalExecutor", "RetryLog", "default_out_dir",
           "finished_runs", "generate", "move_partials_aside"]


def utc_stamp(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y%m%dT%H%M%SZ")


class LocalExecutor:
    """This process's threads (:class:`skillbench.runtime.Executor`): the sandbox :func:`choose_sandbox` picks,
    one run at a time unless ``--jobs`` says more, and the judge SDK's own transport."""

    kind = "local"

    def __init__(self, log: Log, limits: ContainerLimits | None = None):
        self.log, self.limits = log, limits

    def sandbox(self, requested: str | None, endpoint: Any, out_dir: Path) -> Sandbox:
        return choose_sandbox(requested, endpoint, out_dir, self.log, limits=self.limits)

    def width(self, jobs: int) -> int:
        """``--jobs``, or for 0 (unset) one run at a time (generate itself decides an unset --jobs from the machine:
        :func:`pass_jobs`)."""
        return jobs or 1

    def http_transport(self, *, simulated: bool) -> Transport | None:
        return None  # the SDK's own


@dataclass
class _Draft:
    """A run being written in its temporary folder: what its commit records besides the outcome."""

    row: pd.Series
    spec: Any
    tmp_dir: Path
    families: list[Path]
    attempts: list[dict[str, Any]]
    task_meta: dict[str, Any]
    argv: list[str]


class Generator:
    """Runs a plan; one instance per ``skillbench generate`` call."""

    def __init__(self, suite: Suite, opts: GenerateOptions, sandbox: Sandbox, endpoint, log=print,
                 retry_log: RetryLog | None = None, versions: dict[str, SkillsVersion] | None = None,
                 jobs: JobsChoice | None = None):
        self.suite, self.opts, self.sandbox, self.endpoint, self.log = suite, opts, sandbox, endpoint, log
        self.versions = versions if versions is not None else arm_versions(suite, opts.conditions, opts.out_dir,
                                                                           allow_dirty=opts.allow_dirty,
                                                                           given=opts.versions)
        self.lock = threading.Lock()
        self.spent = 0.0
        self.legs: dict[tuple[str, str], LegState] = {}
        self.capped: list[str] = []
        self.not_started: list[str] = []
        self.retry_log = retry_log or RetryLog(opts.out_dir / RETRIES_FILE)
        self.failure: SandboxFailure | None = None  # the sandbox failed: start nothing more
        self.stopping = False  # interrupted: start nothing more
        self.sha = skills_sha(suite)
        # ``jobs``: how the pass chose its runs at once; None (a caller's own Generator) is --jobs, fixed
        self.jobs = jobs or JobsChoice(max(1, opts.jobs), f"--jobs {opts.jobs}")
        self.limiter = pass_limiter(self.jobs.most, adaptive=opts.adaptive, log=self._say)
        # caps the limiter: what the machine keeps busy (an unset --jobs grows from one run per core while runs wait
        # on the endpoint) and what the endpoint's limit sustains
        self.cap = RunsCap(self.jobs.most, self.limiter, log=self._say, start=self.jobs.jobs,
                           machine=machine_sample if self.jobs.ceiling > self.jobs.jobs else None)
        self.rate_limited: list[str] = []  # runs of this pass whose CLI retried a 429/529
        self.written: list[str] = []  # run folders this pass committed (any state)

    @property
    def retries(self) -> list[dict[str, Any]]:
        """The runs this pass retried."""
        return list(self.retry_log.new)

    def _claim(self, row: pd.Series) -> str | None:
        """Decide under the lock whether a run may start; returns why not, or None."""
        with self.lock:
            if self.failure is not None or self.stopping:
                return "pass stopped"
            leg = self.legs.setdefault((row.model, row.condition), LegState())
            if leg.stopped:
                self.not_started.append(row.run_id)
                return "leg stopped"
            if self.opts.max_total_usd is not None and self.spent >= self.opts.max_total_usd:
                self.capped.append(row.run_id)
                return "capped"
        return None

    def run_one(self, row: pd.Series, slot: Slot | None = None) -> None:
        if self._claim(row):
            return
        spec = self.suite.prompt(row.prompt)
        version = self.versions[row.condition]
        families = install_dirs(self.suite, version, row.skill_family, row.condition, out_dir=self.opts.out_dir)
        task_extra = version_metadata(version, families)
        tmp_dir = self.opts.out_dir / f"{TMP_PREFIX}{row.run_id}"
        if tmp_dir.exists():
            shutil.rmtree(tmp_dir)
        tmp_dir.mkdir()
        write_test_prompt(spec, tmp_dir / TEST_PROMPT_FILE)
        attempts: list[dict[str, Any]] = []
        timeout_s, tools = run_timeout(spec, self.opts.timeout_s), run_tools(spec, self.suite.config.run)
        task_meta = {**task_metadata(spec, tools, timeout_s, None), **task_extra}
        draft = _Draft(row, spec, tmp_dir, families, attempts, task_meta, argv=[])
        try:
            task = prepare_task(spec)
        except TaskError as exc:  # the harness cannot set this run up: never a skill loss, rerun once fixed
            self._commit(draft, harness_invalid=str(exc))
            return
        draft.task_meta = task_meta = {**task_metadata(spec, tools, timeout_s, task), **task_extra}
        for attempt in (1, 2):
            call = CliCall(prompt=spec.test.prompt, model=row.model, run_id=row.run_id, attempt=attempt)
            draft.argv = argv = cli_args(call, self.suite.config.run, allowed_tools=tools)
            # the sandbox holds the run's token and the relay's address; the key and the faults stay on the host
            relay = RelayPlan.for_run(self.endpoint, row.run_id, attempt, faults=self.opts.faults,
                                      site_base=self.suite.site_base, paced=self.opts.paced)
            env = cli_env(call, base_url=relay.inside, api_key=relay.token, home=RUNNER_HOME, tmpdir="/tmp",
                          extra=self.opts.extra_env)
            try:
                result = self.sandbox.run(argv, env, families, timeout_s, row.run_id, task=task, relay=relay)
            except Exception as exc:  # the engine or the host failed, not the run: stop, keep what is written
                failure = SandboxFailure(f"run {row.run_id}: {self.sandbox.name} sandbox failed: "
                                         f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
                attempts.append({"attempt": attempt, "start": utc_stamp(time.time()), "sandbox_failure": str(failure)})
                with self.lock:
                    self.failure = self.failure or failure
                self._commit(draft, sandbox_failure=str(failure))
                raise failure from exc
            task_meta.update(result.record())  # the container's limits, the ones it hit, the output it cut
            self.cap.observe(result.exchanges, result.ended - result.started, self.limiter.in_flight)
            if result.setup_failed:  # harness-invalid: no CLI ran, no retry; the next pass reruns it
                attempts.append({"attempt": attempt, "start": utc_stamp(result.started), "setup": result.setup.detail})
                (tmp_dir / STDERR_FILE).write_bytes(result.stderr)
                record_checks(tmp_dir, spec, result)
                self._commit(draft, harness_invalid=result.setup.detail)
                return
            if result.worker:  # a Dask worker ran it: the metadata names the executor and the last attempt's worker
                task_meta.update(executor=getattr(self.sandbox, "executor", ""), worker=result.worker)
            reason = needs_retry(result)
            attempts.append({"attempt": attempt, "exit_code": result.exit_code, "start": utc_stamp(result.started),
                             "seconds": round(result.ended - result.started, 3), "retry_reason": reason,
                             **({"worker": result.worker} if result.worker else {})})
            attempts[-1]["total_cost_usd"] = (parse_transcript_text(result.stdout.decode("utf-8", "replace")).result
                                              or {}).get("total_cost_usd")
            if slot is not None and note_rate_limits(self.limiter, slot, result, attempts[-1]):
                with self.lock:
                    self.rate_limited.append(row.run_id)
            if reason and attempt == 1:
                with self.lock:
                    self.spent += float(attempts[-1]["total_cost_usd"] or 0.0)
                (tmp_dir / f"attempt-1.{TRANSCRIPT_FILE}").write_bytes(result.stdout)
                (tmp_dir / f"attempt-1.{STDERR_FILE}").write_bytes(result.stderr)
                write_relay_record(tmp_dir / f"attempt-1.{RELAY_FILE}", result.exchanges)
                stopped_now = False
                with self.lock:
                    leg = self.legs[(row.model, row.condition)]
                    leg.retried += 1
                    if leg.retried > MAX_RETRIED_GROUPS and not leg.stopped:
                        leg.stopped = stopped_now = True
                    # recorded before the retry starts: a kill from here on never under-counts
                    self.retry_log.record({"run_id": row.run_id, "model": row.model, "condition": row.condition,
                                           "reason": reason}, self.legs)
                if stopped_now:
                    self._say(f"generate: leg {row.model} × {row.condition} stopped: more than "
                              f"{MAX_RETRIED_GROUPS} runs needed a retry (systemic failure)")
                continue
            break
        if result.worker_lost:  # the retry lost its worker too: no output to read; the next pass reruns the run
            (tmp_dir / STDERR_FILE).write_bytes(result.stderr)
            self._commit(draft, result=result)
            return
        transcript = parse_transcript_text(result.stdout.decode("utf-8", "replace"))
        cost = (transcript.result or {}).get("total_cost_usd")
        (tmp_dir / TRANSCRIPT_FILE).write_bytes(result.stdout)
        (tmp_dir / STDERR_FILE).write_bytes(result.stderr)
        tampered = ""
        if result.exchanges is not None:  # the verdict is what the relay saw: a transcript that disagrees is forged
            write_relay_record(tmp_dir / RELAY_FILE, result.exchanges)
            task_meta["relay"] = relay_summary(result.exchanges)
            tampered = "; ".join(relay_disagreements(transcript, result.exchanges))
            if tampered:  # its transcript's cost cannot be believed: the spend cap counts what the relay saw
                self._say(f"generate: run {row.run_id} is tampered: {tampered}")
                self._commit(draft, result=result, tampered=tampered)
                with self.lock:
                    self.spent += relay_cost(result.exchanges)
                return
        has_checks = record_checks(tmp_dir, spec, result)  # checks.json commits with the run, never after it
        # The run's answer key before the run counts as finished: a kill in between reruns it (rows replaced).
        self._commit(draft, result=result, truth=lambda: write_truth(self.opts.out_dir, self.endpoint, [row.run_id]))
        if has_checks:
            rebuild_checks_ledger(self.opts.out_dir)
        with self.lock:
            self.spent += float(cost or 0.0)

    def _commit(self, draft: _Draft, *, result: SandboxResult | None = None, sandbox_failure: str = "",
                harness_invalid: str = "", tampered: str = "", truth: Callable[[], None] | None = None) -> None:
        """Write the run's metadata and rename its folder into place (the run's commit point).

        A run whose sandbox failed is committed too, with ``sandbox_failure`` in its metadata, so the week
        records what happened to it; :func:`run_state` reads it as ``sandbox_failure`` and resume reruns it.
        Likewise a task the harness could not set up (a failed setup command): ``harness_invalid``.
        """
        row, spec, tmp_dir, argv, attempts = draft.row, draft.spec, draft.tmp_dir, draft.argv, draft.attempts
        first = attempts[0] if attempts else {"start": utc_stamp(time.time())}
        meta = {
            "run_id": row.run_id, "run_key": self.opts.run_key, "prompt": row.prompt,
            "skill_family": row.skill_family, "skill_leaf": row.skill_leaf, "model": row.model,
            "condition": row.condition, "rep": int(row.rep), "dormancy": int(row.dormancy),
            "trigger_only": int(spec.trigger_only),
            "timestamp": first["start"], "start": first["start"],
            "end": utc_stamp(result.ended if result else time.time()),
            "exit_code": result.exit_code if result else None, "timed_out": bool(result and result.timed_out),
            "attempts": attempts, "flags": argv[1:-2], "installed_families": [f.name for f in draft.families],
            "sandbox": self.sandbox.name, "network": (result.network if result and result.network else
                                                      getattr(self.sandbox, "network", "")),
            "image_id": result.image_id if result else "",
            "endpoint": self.endpoint.kind, "site_base": self.endpoint.site_base,
            "suite_site_base": self.suite.site_base, "skills_sha": self.sha, "rubric_sha": spec.test.rubric_sha(),
        }
        meta.update(draft.task_meta)
        if sandbox_failure:
            meta[SANDBOX_FAILURE] = sandbox_failure
        if harness_invalid:
            meta[HARNESS_INVALID] = harness_invalid
        if tampered:
            meta[TAMPERED] = tampered
        if result is not None and result.worker_lost:
            meta[WORKER_LOST] = result.worker_lost
        atomic_write_json(tmp_dir / METADATA_FILE, meta)
        if truth is not None:
            truth()
        os.replace(tmp_dir, self.opts.out_dir / row.run_id)
        with self.lock:
            self.written.append(row.run_id)

    def _say(self, message: str) -> None:
        """A log line on its own line, never glued to the progress bar."""
        bar = getattr(self, "_bar", None)
        if bar is None:
            self.log(message)
            return
        with bar.external_write_mode(file=sys.stderr):
            self.log(message)

    def run(self, pending: pd.DataFrame) -> None:
        """Run ``pending`` with ``jobs`` workers; the bar is closed before any error reaches the caller.

        Raises:
            SandboxFailure: the sandbox failed (the first failure; the runs in flight finish or fail first).
        """
        from tqdm.auto import tqdm

        bar = tqdm(total=len(pending), desc=f"generate {self.opts.run_key}", unit="run", file=sys.stderr)
        self._bar = bar

        def work(row: pd.Series) -> None:
            try:
                # the limit (≤ --jobs) may drop while runs are in flight
                with self.limiter.slot() as slot:
                    self.run_one(row, slot)
            finally:
                bar.update(1)

        rows = [row for _, row in pending.iterrows()]
        try:
            with ThreadPoolExecutor(max_workers=self.jobs.most) as pool:
                futures = [pool.submit(work, r) for r in rows]
                try:
                    for future in futures:
                        try:
                            future.result()
                        except SandboxFailure:
                            pass  # self.failure holds the first one; the runs in flight end first
                except BaseException:
                    self.stopping = True  # Ctrl-C or a bug: start nothing more, let the runs in flight end
                    raise
        finally:
            bar.close()
            self._bar = None
        if self.failure is not None:
            raise self.failure


def generate(suite: Suite, opts: GenerateOptions, ctx: PassContext) -> dict[str, Any]:
    """Plan, run what is not finished, then write signals (manifest.csv) and the reconciliation.

    The pass holds the run directory's lock (re-entered when the caller, e.g. :func:`skillbench.weekly.
    run_generation`, already holds it).

    Args:
        suite: a loaded suite.
        opts: the run's options (an empty matrix part and no ``out_dir``: the suite's, :meth:`GenerateOptions.
            for_suite`).
        ctx: the endpoint (opened when there are runs to run: ``base_url``, ``api_key``, ``kind``, ``site_base``,
            ``fetch_truth``, see :func:`skillbench.weekly.model_endpoint`), the executor (None: this process's
            threads), the log, and the lock's ``wait``.

    Returns:
        The reconciliation report (also written to ``reconciliation.json``).

    Raises:
        RunDirBusy: another pass holds the run directory (and not ``ctx.wait``).
        SelectionError: ``opts.prompts`` or ``opts.families`` names something the plan does not have.
        SandboxFailure: the sandbox failed; the manifest and the (incomplete) reconciliation are written first.
    """
    opts = opts.for_suite(suite)
    with run_dir_lock(opts.out_dir, wait=ctx.wait, log=ctx.log):
        return _generate(suite, opts, ctx)


def _generate(suite: Suite, opts: GenerateOptions, ctx: PassContext) -> dict[str, Any]:
    log = ctx.log
    out_dir = opts.out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    plan = make_plan(suite, opts.run_key, models=opts.models, conditions=opts.conditions, reps=opts.reps,
                     seed=opts.seed)
    keep = selected(plan, suite, prompts=opts.prompts, families=opts.families)
    if opts.shard is not None:  # another leg of the matrix owns the rest: limited here, merged by consolidate
        keep &= plan.run_id.map(opts.shard.holds).astype(bool)
    try:
        previous = read_run_json(out_dir)
    except ValueError as exc:  # LedgerError: a damaged run.json must not be silently replaced
        raise PlanError(f"{exc} — repair or remove it, then rerun") from exc
    versions = arm_versions(suite, opts.conditions, None if opts.dry_run else out_dir, allow_dirty=opts.allow_dirty,
                            given=opts.versions, recorded=previous.get("versions"))
    write_plan(plan, out_dir)
    record_slugs(out_dir, run_names(plan, opts.run_key))  # changed run ids map back through slugs.json
    selection = {"prompts": list(opts.prompts), "families": list(opts.families)} \
        if opts.prompts or opts.families else None
    atomic_write_json(out_dir / RUN_FILE, {
        "run_key": opts.run_key, "seed": opts.seed, "models": opts.models, "conditions": opts.conditions,
        "reps": opts.reps, "suite_dir": str(suite.suite_dir), "run_settings": suite.config.run.model_dump(),
        **({"config_file": str(suite.config_file)} if suite.config_file is not None else {}),
        **({"selection": selection} if selection else {}),
        **({"invalid_families": suite.invalid_families} if suite.invalid_families else {}),
        **({"arms": opts.arms.as_json()} if opts.arms is not None else {}),
        **({"versions": versions_json(versions)} if versions_json(versions) else {}),
    })
    if opts.jobs >= RATE_LIMIT_JOBS and not opts.adaptive:
        log(f"generate: warning: --jobs {opts.jobs} ≥ {RATE_LIMIT_JOBS} risks API rate limits, and a rate-limited "
            "run can change results; 2–3 is the recommended range")
    elif opts.jobs >= RATE_LIMIT_JOBS:
        log(f"generate: --jobs {opts.jobs} is a ceiling: concurrency drops when the API rate-limits a run "
            "(retries.json's concurrency section, the manifest's rate_limited column)")
    done = finished_runs(out_dir) & set(plan.run_id)
    if not opts.dry_run:
        moved = move_partials_aside(out_dir, done, set(plan.run_id))
        if moved:
            log(f"generate: moved {len(moved)} partial or failed run folder(s) to {ASIDE_DIR}/ to rerun them")
    unfinished = ~plan.run_id.isin(done)
    pending = plan[unfinished & keep]
    limited: list[str] = list(plan.run_id[unfinished & ~keep])  # outside --prompts/--families: kept for later
    if opts.limit is not None and len(pending) > opts.limit:
        limited += list(pending.run_id.iloc[opts.limit:])
        pending = pending.iloc[: opts.limit]
    if not opts.dry_run:  # before the endpoint or any run starts
        refuse_local_workspace_checks(suite, pending.prompt, opts.sandbox or "")
    chosen = f"; only {_selection_text(selection)}" if selection else ""
    log(f"generate: {len(plan)} planned, {len(done)} finished, {len(pending)} to run "
        f"({', '.join(opts.models)} × {', '.join(opts.conditions)} × {opts.reps} reps{chosen})")
    if opts.dry_run:
        for _, row in pending.head(5).iterrows():
            spec = suite.prompt(row.prompt)
            call = CliCall(prompt=spec.test.prompt, model=row.model, run_id=row.run_id)
            argv = cli_args(call, suite.config.run, allowed_tools=run_tools(spec, suite.config.run))
            log("  " + " ".join(argv[:-1]) + " PROMPT  # " + row.run_id)
        return {"dry_run": True, "planned": len(plan), "pending": len(pending), "limited": len(limited)}

    gen: Generator | None = None
    failure: SandboxFailure | None = None
    retry_log = RetryLog(out_dir / RETRIES_FILE)
    try:
        if len(pending):
            with ctx.open_endpoint() as endpoint, ctx.open_executor() as opened:
                executor = opened or LocalExecutor(log, opts.limits)
                sandbox = executor.sandbox(opts.sandbox, endpoint, out_dir)  # local: choose_sandbox's
                refuse_local_workspace_checks(suite, pending.prompt, sandbox.name)  # local by fallback
                refuse_local_real(sandbox, endpoint, suite.suite_dir)
                choice = pass_jobs(opts.jobs, executor, sandbox)
                opts = dataclasses.replace(opts, jobs=choice.jobs)
                log(f"generate: {choice.jobs} run{'s' if choice.jobs != 1 else ''} at once ({choice.why})")
                try:
                    gen = Generator(suite, opts, sandbox, endpoint, log, retry_log=retry_log, versions=versions,
                                    jobs=choice)
                    gen.spent = spent_so_far(out_dir, done)  # the cap is per week, not per call
                    gen.run(pending)
                finally:
                    sandbox.close()  # the containers made ahead of runs that never came
    except SandboxFailure as exc:  # fail closed: the week's ledgers say what happened before the error does
        failure = exc
    retry_log.finish(gen.legs if gen else {}, gen.limiter if gen else None,
                     sorted(set(gen.rate_limited)) if gen else None)
    write_manifest(out_dir)
    rebuild_checks_ledger(out_dir)
    extra: dict[str, Any] = {}
    if selection:
        extra["selection"] = selection
    if opts.shard is not None:
        extra["shard"] = str(opts.shard)
    if failure is not None:
        extra["sandbox_failure"] = str(failure)
    report = reconcile(out_dir, capped=gen.capped if gen else [], limited=limited,
                       not_started=gen.not_started if gen else [],
                       stopped_legs=[k for k, v in retry_log.legs.items() if v["stopped"]],
                       invalid_families=suite.invalid_families, extra=extra)
    if opts.shard is not None:
        write_generate_summary(out_dir, opts.shard, suite, plan, written=gen.written if gen else [],
                               retry_log=retry_log, failure=str(failure or ""))
    if failure is not None:
        raise failure
    return report


def pass_jobs(jobs: int, executor: Any, sandbox: Sandbox) -> JobsChoice:
    """The pass's runs at once: ``--jobs``; unset (0), the machine's cores (this process's threads) or the
    cluster's width (Dask)."""
    if jobs:
        return JobsChoice(jobs, f"--jobs {jobs}")
    if isinstance(executor, LocalExecutor):
        limits = getattr(sandbox, "limits", None)
        return default_jobs(machine_facts(sandbox.name, engine=getattr(sandbox, "client", None),
                                          run_memory=limits.memory_mb << 20 if limits is not None else None))
    return JobsChoice(executor.width(0), f"the {executor.kind} executor's width")


def _selection_text(selection: dict[str, list[str]]) -> str:
    parts = [f"{key} {', '.join(values)}" for key, values in selection.items() if values]
    return " and ".join(parts)

