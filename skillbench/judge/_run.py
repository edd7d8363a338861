"""A rubric-judging pass over a week: select, grade in parallel, append, resume, record provenance.

``judge_run_dir`` is what ``skillbench judge`` and the weekly chain's ``03_judge`` run. Files written in
``RUN_DIR``: ``scores.csv`` (qdrant's 12 columns, then ours), ``judge-skips.csv`` (``run_id, reason`` for
gradeable runs that were not graded), ``judge.json`` (the pass's provenance: judge model, samples, seeds, rubric
and judge-prompt hashes, evidence rates, cost), and per run folder ``judge.json`` (every call) and
``judge_cost.txt``. A rerun skips runs whose rows are all present and refuses a damaged ledger (naming the file
and row) rather than keep or drop a row it cannot trust; ``fresh`` starts over. A pass context whose executor is
a Dask cluster's (:class:`skillbench.runtime.PassContext`) sends every judge request from one of its workers; the
grading, the ledger and the retries stay in this process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import sys
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillbench.judge._answers import RunAnswer, RunSelection, Skip, select_runs
from skillbench.judge._batch_api import BatchPacing
from skillbench.judge._client import DEFAULT_JUDGE_MODEL, JudgeClient
from skillbench.judge._costs import cache_summary, clear_judge_cost, record_judge_cost
from skillbench.judge._evidence import evidence_summary
from skillbench.judge._protocol import judge_prompt_sha
from skillbench.judge._rubric import RubricJudge, ScoresLedger, score_rows
from skillbench.ledgers import (
    JUDGE_LEG_FILES,
    JUDGE_SKIPS_COLUMNS,
    JUDGE_SKIPS_FILE,
    MANIFEST_FILE,
    PASS_FILE,
    PLAN_FILE,
    RUN_JUDGE_FILE,
    SCORES_FILE,
    LedgerConflict,
    Shard,
    atomic_write_json,
    atomic_write_text,
    csv_text,
    file_sha,
    git_commit,
    leg_files,
    pass_record_or_empty,
    read_judge_cost,
    read_pass_record,
    read_run_judge,
    write_summary,
)
from skillbench.paths import PROJECT_ROOT
from skillbench.runtime import PassContext
from skillbench.signals import run_dirs
from skillbench.vocab import UNGRADED

PAIRS_PASSES = "pairs_passes"  # judge.json: the pairwise judge's passes (kept by every rubric pass)


@dataclass(frozen=True)
class JudgeOptions:
    """What ``skillbench judge`` and ``skillbench judge-pairs`` were asked to do (the pairwise judge reads the
    judge model, ``fresh``, ``jobs``, ``seed``, the retries, the selection and the batching)."""

    judge_model: str = DEFAULT_JUDGE_MODEL
    samples: int = 1
    fresh: bool = False
    jobs: int = 2
    include_plugin: bool = False
    seed: int = 0
    retry_ungraded: bool = False
    max_retries: int = 4
    timeout: float = 120.0
    limit: int | None = None
    selection: RunSelection = field(default_factory=RunSelection)  # --prompts/--families: only these runs
    batch: bool = False  # --batch: every call through Message Batches (half price; judge.batch)
    batch_wait_s: float | None = None  # the longest wait for one round of batches (None: until they end)
    # False: Batches calls go at once and only react to a 429 (benchmarks/limiter.py's baseline); the CLI never sets it
    batch_paced: bool = True
    cache: bool = False  # --cache: a prompt-cache breakpoint on sample 1's calls (calibration resends them)
    shard: Shard | None = None  # --shard i/N: grade only the runs this leg of a CI matrix owns (ledgers.shards)


@dataclass
class JudgeReport:
    """What a pass did; also the ``passes`` entry of ``RUN_DIR/judge.json``."""

    judge_model: str
    samples: int
    planned: int  # gradeable runs with an answer
    already: int  # complete in the ledger before this pass
    graded: int  # graded in this pass
    skipped: int  # judge-skips.csv rows
    ungraded_items: int  # in the whole ledger
    cost_usd: float  # this pass
    evidence: dict[str, Any]
    started: str
    finished: str = ""
    judge_snapshot: str = ""  # the resolved snapshot(s) that answered this pass (the replies' ``model``)
    usages: list[dict[str, int]] = dataclasses.field(default_factory=list, repr=False)  # each reply's usage
    batches: dict[str, Any] = dataclasses.field(default_factory=dict)  # a batched pass: ids and request counts

    @property
    def ok(self) -> bool:
        return self.ungraded_items == 0


def _now() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def write_skips(run_dir: Path, skips: Sequence[Skip]) -> None:
    """Rewrite ``judge-skips.csv`` (one row per run id, first reason wins)."""
    seen: dict[str, str] = {}
    for s in skips:
        seen.setdefault(s.run_id, s.reason)
    rows = [list(JUDGE_SKIPS_COLUMNS), *([k, v] for k, v in sorted(seen.items()))]
    atomic_write_text(run_dir / JUDGE_SKIPS_FILE, csv_text(rows))


def _failed_runs(rows: Mapping[str, list[dict[str, str]]], folders: Mapping[str, Path]) -> list[Skip]:
    """Runs whose every item is ungraded, with the recorded reason (the judge failed, not the skill)."""
    out = []
    for run_id, group in rows.items():
        if group and all(r["verdict"] == UNGRADED for r in group):
            reason = "judge failed"
            folder = folders.get(run_id)
            if folder is not None and (folder / RUN_JUDGE_FILE).is_file():
                reasons = (read_run_judge(folder) or {}).get("ungraded", {})
                if reasons:
                    reason = f"judge failed: {next(iter(reasons.values()))}"
            out.append(Skip(run_id, reason[:300]))
    return out


def reset(run_dir: Path) -> None:
    """Forget every rubric grade of a run directory (``--fresh``)."""
    for name in (SCORES_FILE, JUDGE_SKIPS_FILE, PASS_FILE):
        (run_dir / name).unlink(missing_ok=True)
    for folder in run_dirs(run_dir):
        (folder / RUN_JUDGE_FILE).unlink(missing_ok=True)
        clear_judge_cost(folder, "rubric")


def judge_run_dir(run_dir: str | Path, options: JudgeOptions, ctx: PassContext) -> JudgeReport:
    """Grade every gradeable run of ``run_dir`` that the ledger does not have yet.

    Args:
        run_dir: a week's output folder (made by ``skillbench generate``).
        options: judge model, samples, fresh/resume, concurrency, plugin arm, seed, retries.
        ctx: the Messages endpoint (its kind is recorded), the executor, the log.

    Returns:
        What the pass did (also merged into ``RUN_DIR/judge.json``).

    Raises:
        LedgerConflict: an existing ledger from another judge model, protocol or layout, or with a row the
            scorecard would refuse (an unknown verdict, a credit outside its item type's range, an item twice:
            :meth:`ScoresLedger.check`); one line naming the file and row — fix it or pass ``fresh``.
    """
    with ctx.open_endpoint() as endpoint:
        return _judge_run_dir(Path(run_dir), options, ctx, endpoint)


def _judge_run_dir(run_dir: Path, options: JudgeOptions, ctx: PassContext, endpoint: Any) -> JudgeReport:
    log, endpoint_kind = ctx.log, endpoint.kind
    if options.fresh:
        reset(run_dir)
    runs, skips = select_runs(run_dir, include_plugin=options.include_plugin, selection=options.selection or None)
    if options.shard is not None:  # another leg of the matrix grades the rest; consolidate merges the legs
        runs = [r for r in runs if options.shard.holds(r.run_id)]
        skips = [s for s in skips if options.shard.holds(s.run_id)]
    ledger = ScoresLedger(run_dir)
    existing = ledger.read()
    _check_compatible(existing, options.judge_model, judge_prompt_sha(), ledger.path)
    redo = set()
    if options.retry_ungraded:
        redo = {r["run_id"] for r in existing if r["verdict"] == UNGRADED}
    done = ledger.resume({r.run_id: len(r.items) for r in runs}, drop=redo)
    report = JudgeReport(options.judge_model, options.samples, len(runs), sum(r.run_id in done for r in runs), 0,
                         0, 0, 0.0, {}, _now())
    write_skips(run_dir, skips)

    todo = [r for r in runs if r.run_id not in done]
    random.Random(f"judge-order:{options.seed}").shuffle(todo)  # no arm or model is graded first
    if options.limit is not None:
        todo = todo[: options.limit]
    log(f"judge: {len(runs)} gradeable runs with an answer, {report.already} already graded, {len(todo)} to grade "
        f"({options.judge_model}, {options.samples} sample{'s' if options.samples > 1 else ''}); "
        f"{len(skips)} not gradeable")

    # --executor dask: every judge request is one Dask task (nothing to grade: no cluster is opened)
    passing = contextlib.ExitStack()
    transport = passing.enter_context(ctx.judge_transport(needed=bool(todo), simulated=endpoint.simulated))
    client = JudgeClient(endpoint.base_url, endpoint.api_key, options.judge_model, max_retries=options.max_retries,
                         timeout=options.timeout, transport=transport)
    batcher = None
    if options.batch:
        from skillbench.judge._batch import BatchClient
        from skillbench.judge._batch_store import BatchStore

        # Even with --fresh an unfinished pass's accepted requests are polled, not sent again: they are the very
        # requests this pass would send, and none of their answers reached the ledger.
        batcher = BatchClient(client, BatchStore(run_dir), "rubric", simulated=endpoint_kind == "simulated",
                              wait_s=options.batch_wait_s, log=log, pacing=batch_pacing(options))
    judge = RubricJudge(batcher or client, seed=options.seed, cache=options.cache)
    spent = [0.0]
    lock = threading.Lock()

    def work(run: RunAnswer) -> None:
        grading = judge.grade(run, options.samples)
        atomic_write_json(run.folder / RUN_JUDGE_FILE, grading.to_json())
        record_judge_cost(run.folder, "rubric", grading.cost_usd)
        ledger.append(score_rows(run, grading))  # the commit point: after this the run is graded
        with lock:
            spent[0] += grading.cost_usd
            report.graded += 1
            report.usages.extend(c["usage"] for c in grading.calls if "usage" in c)

    from tqdm.auto import tqdm

    try:
        if batcher is not None:
            batcher.run(todo, work, lambda r: ("rubric", r.run_id))
            batcher.store.close(["rubric"])  # the pass is complete: its requests are answered and committed
        else:
            with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool, \
                    tqdm(total=len(todo), desc="judge", unit="run", file=sys.stderr, disable=not todo) as bar:
                for future in [pool.submit(work, r) for r in todo]:
                    future.result()
                    bar.update(1)
    finally:
        client.close()
        passing.close()
    report.judge_snapshot = (batcher or client).snapshot
    if batcher is not None:
        report.batches = batch_provenance(batcher)

    final = ledger.resume({r.run_id: len(r.items) for r in runs})
    failed = _failed_runs({k: v for k, v in final.items() if k in {r.run_id for r in runs}},
                          {r.run_id: r.folder for r in runs})
    write_skips(run_dir, [*skips, *failed])
    report.skipped = len({s.run_id for s in [*skips, *failed]})
    report.ungraded_items = sum(r["verdict"] == UNGRADED for g in final.values() for r in g)
    report.cost_usd = spent[0]
    evidence = evidence_summary(run_dir)
    report.evidence = {row.judge_model: {k: (None if isinstance(v, float) and v != v else v)
                                         for k, v in row._asdict().items() if k != "judge_model"}
                       for row in evidence.itertuples(index=False)}
    report.finished = _now()
    _write_pass(run_dir, report, runs, options, endpoint_kind)
    if options.shard is not None:
        write_judge_summary(run_dir, options.shard, report, runs, final)
    return report


def write_judge_summary(run_dir: Path, shard: Shard, report: JudgeReport, runs: Sequence[RunAnswer],
                        final: Mapping[str, list[dict[str, str]]]) -> Path:
    """``shard-i-of-N.json`` of a judge leg: the gradeable runs it owns, those with every item graded, and which
    generation and judge they came from (consolidate merges only legs that graded the same week the same way)."""
    own = {r.run_id for r in runs}
    graded = sorted(run_id for run_id, rows in final.items()
                    if run_id in own and rows and all(row["verdict"] != UNGRADED for row in rows))
    # the pass's own record, written just before: which arms it graded
    include_plugin = bool(pass_record_or_empty(run_dir).get("include_plugin"))
    return write_summary(run_dir, shard, "judge", {
        "run_key": report_run_key(run_dir), "expected": len(own), "observed": len(graded), "written": report.graded,
        "retries": report.ungraded_items, "expected_runs": sorted(own), "observed_runs": graded,
        "judge_model": report.judge_model, "judge_snapshot": report.judge_snapshot, "samples": report.samples,
        "judge_prompt_sha": judge_prompt_sha(), "include_plugin": include_plugin,
        "skillbench_commit": git_commit(PROJECT_ROOT),
        "plan_sha": file_sha(run_dir / PLAN_FILE), "manifest_sha": file_sha(run_dir / MANIFEST_FILE),
        "files": leg_files(run_dir, JUDGE_LEG_FILES),  # what the leg wrote: consolidate holds its files to it
        "finished": _now(),
    })


def report_run_key(run_dir: Path) -> str:
    from skillbench.ledgers import week_run_key

    try:
        return week_run_key(run_dir)
    except (OSError, ValueError):
        return ""


def _check_compatible(rows: Sequence[Mapping[str, str]], judge_model: str, prompt_sha: str, path: Path) -> None:
    models = {r["judge_model"] for r in rows if r["judge_model"]}
    shas = {r["judge_prompt_sha"] for r in rows if r["judge_prompt_sha"]}
    if models - {judge_model}:
        raise LedgerConflict(f"{path} was graded by {', '.join(sorted(models))}, not {judge_model}; one ledger holds "
                          "one judge — pass --fresh to start over (or use the same --judge-model)")
    if shas - {prompt_sha}:
        raise LedgerConflict(f"{path} was graded with another judge protocol ({', '.join(sorted(shas))}, now "
                          f"{prompt_sha}); pass --fresh to grade again with this one")


def _write_pass(run_dir: Path, report: JudgeReport, runs: Sequence[RunAnswer], options: JudgeOptions,
                endpoint_kind: str) -> None:
    path = run_dir / PASS_FILE
    old = read_pass_record(run_dir)
    costs = [cost for r in runs if (cost := read_judge_cost(r.folder)) is not None]
    passes = [*old.get("passes", []), {
        "started": report.started, "finished": report.finished, "graded": report.graded, "already": report.already,
        "samples": options.samples, "seed": options.seed, "cost_usd": round(report.cost_usd, 8),
        "retry_ungraded": options.retry_ungraded, "endpoint": endpoint_kind,
        "judge_snapshot": report.judge_snapshot,
        # Only a batched or cached pass records these, so a plain pass's provenance reads as before.
        **({"batch": report.batches} if options.batch else {}),
        **({"cache": cache_summary(options.judge_model, report.usages, batch=options.batch)}
           if options.cache or any(u.get("cache_read_input_tokens") or u.get("cache_creation_input_tokens")
                                   for u in report.usages) else {}),
    }]
    atomic_write_json(path, {
        "judge_model": options.judge_model,
        "judge_prompt_sha": judge_prompt_sha(),
        "samples": options.samples,
        "include_plugin": options.include_plugin,
        "order": f"runs shuffled with random.Random('judge-order:{options.seed}'); each call's rubric order "
                 "seed is in the run's judge.json",
        "rubric_sha": {r.prompt: r.rubric_sha for r in sorted(runs, key=lambda r: r.prompt)},
        "runs_gradeable": report.planned,
        "ungraded_items": report.ungraded_items,
        "skipped_runs": report.skipped,
        "evidence": report.evidence,
        "judge_cost_usd": round(sum(costs), 8),
        # A pass that graded nothing saw no reply: the week's snapshot stays the one that last answered.
        "judge_snapshot": report.judge_snapshot or old.get("judge_snapshot", ""),
        "passes": passes,
        **({PAIRS_PASSES: old[PAIRS_PASSES]} if PAIRS_PASSES in old else {}),
    })


def batch_provenance(batcher: Any) -> dict[str, Any]:
    """A batched pass's record: its batch ids, requests sent and reused, how each request ended, and ``pacing``:
    its HTTP requests to the batch routes, the 429s among them and the waits for a turn in their budget
    (:class:`skillbench.judge._batch_api.BatchPacing`; read by ``benchmarks/limiter.py``)."""
    return {"batch_ids": list(batcher.batch_ids), "submitted": batcher.submitted, "reused": batcher.reused,
            "results": {k: v for k, v in batcher.counts.items() if v}, "pacing": batcher.pacing.summary()}


def batch_pacing(options: JudgeOptions) -> BatchPacing | None:
    """The batch client's pacing for these options (None: paced by the endpoint's batch budget)."""
    return None if options.batch_paced else BatchPacing.unpaced()


def record_pairs_pass(run_dir: str | Path, entry: Mapping[str, Any]) -> None:
    """Append a pairwise pass's provenance (its judge model and snapshot) to ``judge.json``'s ``pairs_passes``."""
    path = Path(run_dir) / PASS_FILE
    old = read_pass_record(run_dir)
    old[PAIRS_PASSES] = [*old.get(PAIRS_PASSES, []), dict(entry)]
    atomic_write_json(path, old)


def week_judge_snapshot(run_dir: str | Path) -> str:
    """The resolved snapshot of the week's rubric judge as ``judge.json`` records it ("" when unknown)."""
    return str(pass_record_or_empty(run_dir).get("judge_snapshot", "") or "")
