"""``skillbench compare``: the whole comparison of two versions, from the refs to ``compare.md``.

The pipeline, in one place:

1. :func:`~skillbench.compare._comparison.plan_comparison` — resolve both refs, find the changed families, refuse
   what could never get a verdict (nothing is written before this passes);
2. generation of ``no-skill``, ``with-skill@BASE`` and ``with-skill@HEAD`` for those families only
   (:func:`skillbench.weekly.run_generation`, the week's ``run.json`` recording the pair and both commits);
3. the rubric judge (all three arms) and the pairwise judge (head against base), under one lock;
4. the scorecard of the pair — the lift is head − base — written to ``scorecard.md``; a comparison never writes
   the weekly history;
5. the verdicts (:mod:`skillbench.compare._verdicts`) with the exact-commit check, then ``results.json``
   (:mod:`skillbench.compare._results`) and ``compare.md`` (:mod:`skillbench.compare._report`).

Rerunning the same comparison resumes it: the run key is made of the two commits.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillbench.compare._comparison import COMPARE_DIR, Comparison, plan_comparison, run_key_for
from skillbench.compare._report import render_compare, render_compare_comment
from skillbench.compare._results import Arms, ChangeSet, CompareResults, FamilyVerdict, Health, Version
from skillbench.compare._verdicts import commit_mismatches, compare_verdicts, exit_code
from skillbench.ledgers import COMPARE_COMMENT_FILE, VERSIONS_DIR, atomic_write_text
from skillbench.scorecard import stimulus_tables
from skillbench.suite import HEAD, SuiteRepo, VersionError

if TYPE_CHECKING:
    from skillbench.weekly import StageRuntime

COMPARE_REPORT_FILE = "compare.md"
RESULTS_FILE = "results.json"


@dataclass
class CompareOutcome:
    """What a comparison wrote."""

    results: CompareResults
    run_dir: Path
    report_path: Path
    results_path: Path

    @property
    def exit_code(self) -> int:
        return self.results.exit_code


@contextlib.contextmanager
def shared_endpoint(backend: str | None, endpoint: str, suite: Any, seed: int) -> Iterator[str]:
    """One simulated endpoint for every stage of the comparison (the sim without ``endpoint``), else ``endpoint``."""
    from skillbench.generation import resolve_backend

    if endpoint or resolve_backend(backend) != "sim":
        yield endpoint
        return
    from skillbench.generation import sim_api_key
    from skillbench.sim import Serving, SimServer

    with SimServer(suite, seed=seed, serving=Serving(api_key=sim_api_key())) as server:  # on loopback
        yield server.base_url


def resolve_run_dir(suite: Any, base: str, head: str, out_dir: str | Path | None, *, allow_dirty: bool) -> Path:
    """``--out-dir``, else ``SUITE_DIR/compare/<run key>/`` from the two commits (known before any file is written).

    Raises:
        CompareError: a ref that names no commit, or a dirty tree for ``HEAD`` without ``allow_dirty``.
    """
    from skillbench.compare._comparison import CompareError
    from skillbench.suite import resolve_version

    if out_dir:
        return Path(out_dir)
    try:
        repo = SuiteRepo.of(suite)
        head_version = resolve_version(suite, head, allow_dirty=allow_dirty, repo=repo) if head == HEAD else None
        key = run_key_for(repo.commit(base), head_version.commit if head_version else repo.commit(head),
                          head_version.diff if head_version else "")
    except VersionError as exc:
        raise CompareError(str(exc)) from exc
    return Path(suite.suite_dir) / COMPARE_DIR / key


@dataclass(frozen=True)
class CompareOptions:
    """What ``skillbench compare`` was asked to do."""

    base: str
    head: str = HEAD
    models: Sequence[str] = ()  # empty: the suite config's
    reps: int = 0  # 0: the suite config's
    jobs: int = 2
    out_dir: str | Path | None = None  # None: SUITE_DIR/compare/<key>/
    seed: int = 0
    sandbox: str = ""  # docker or local; "": docker when the engine answers
    timeout_s: float = 900.0
    allow_dirty: bool = False
    fail_on: str | None = None
    judge_model: str = ""  # "": the default judge
    skip_missing: bool = False


def compare(suite_dir: str | Path, options: CompareOptions, runtime: StageRuntime) -> CompareOutcome:
    """Compare the skills at ``options.head`` with those at ``options.base`` and write the merge report, with the
    backend, endpoint, log and lock of ``runtime``.

    Returns:
        :class:`CompareOutcome` (``exit_code`` follows ``fail_on``).

    Raises:
        CompareError: the comparison cannot be planned (nothing written).
        PlanError, BackendError, RunDirBusy, SandboxFailure: as ``skillbench generate``.
    """
    from skillbench.generation import resolve_backend
    from skillbench.suite import load_suite

    o, log = options, runtime.log
    backend = resolve_backend(runtime.backend)  # once: every stage then uses the same backend without saying so again
    suite = load_suite(suite_dir, skip_missing=o.skip_missing)
    run_dir = resolve_run_dir(suite, o.base, o.head, o.out_dir, allow_dirty=o.allow_dirty)
    comp = plan_comparison(suite, o.base, o.head, allow_dirty=o.allow_dirty, cache_dir=run_dir / VERSIONS_DIR,
                           load=lambda folder: load_suite(folder, skip_missing=o.skip_missing))
    run_dir.mkdir(parents=True, exist_ok=True)
    if not comp.changes.families:
        log(f"compare: no skill family or prompt differs between {o.base} and {o.head}: nothing to run")
        return write_outcome(comp, run_dir, None, fail_on=o.fail_on)
    log(f"compare: {', '.join(comp.changes.families)} changed between {o.base} ({comp.base.commit[:12]}) and "
        f"{o.head} ({comp.head.commit[:12]}); arms {', '.join(comp.conditions)}")
    with shared_endpoint(backend, runtime.endpoint, comp.suite, o.seed) as url:
        # one endpoint for both stages; the lock names the comparison
        shared = dataclasses.replace(runtime, backend=backend, endpoint=url, holder="skillbench compare")
        _generate(comp, run_dir, o, shared)
        _judge(run_dir, o, shared)
    from skillbench.runtime import PassContext
    from skillbench.weekly import scorecard_week

    card = scorecard_week(run_dir, write=True, ctx=PassContext(wait=runtime.wait, holder="skillbench compare"))
    return write_outcome(comp, run_dir, card, fail_on=o.fail_on)


def _generate(comp: Comparison, run_dir: Path, o: CompareOptions, runtime: StageRuntime) -> dict[str, Any]:
    from skillbench.generation import GenerateOptions
    from skillbench.weekly import run_generation

    opts = GenerateOptions(run_key=comp.run_key, out_dir=run_dir, models=list(o.models), reps=o.reps,
                           conditions=list(comp.conditions), jobs=o.jobs, sandbox=o.sandbox or None, seed=o.seed,
                           timeout_s=o.timeout_s, allow_dirty=o.allow_dirty, arms=comp.arms,
                           versions=dict(comp.versions(run_dir)))
    return run_generation(comp.suite, opts, runtime.context(seed=o.seed, suite=comp.suite))


def _judge(run_dir: Path, o: CompareOptions, runtime: StageRuntime) -> None:
    """The rubric judge, then the pairwise judge, under one lock. A judge failure is not raised: the verdicts
    read it as ``INVALID_INCONCLUSIVE (judge_errors)`` and a rerun retries it."""
    from skillbench.judge import JudgeOptions, resolve_judge_model
    from skillbench.ledgers import run_dir_lock
    from skillbench.weekly import grade_week, pair_week

    opts = JudgeOptions(judge_model=resolve_judge_model(o.judge_model), jobs=o.jobs, seed=o.seed)
    ctx = dataclasses.replace(runtime, holder=None).context(seed=o.seed)
    with run_dir_lock(run_dir, command="skillbench compare", wait=runtime.wait, log=runtime.log):
        grade_week(run_dir, opts, ctx)
        pair_week(run_dir, opts, ctx)


def build_results(comp: Comparison, run_dir: Path, card: Any, *, fail_on: str | None) -> CompareResults:
    """The :class:`CompareResults` of a comparison whose scorecard is ``card`` (``None``: nothing changed)."""
    from skillbench.ledgers import read_run_json

    data = card.data if card is not None else None
    models = list(data.models) if data is not None else []
    declared = read_run_json(run_dir).get("versions") or {}
    mismatches = commit_mismatches(data.manifest, declared) if data is not None else None
    verdicts = compare_verdicts(data.gate if data is not None else None, comp.changes.families, models, mismatches)
    lift = ({str(r.model): r.must_lift for r in data.lift.itertuples(index=False)} if data is not None else {})
    rec = data.reconciliation if data is not None else None
    items = [FamilyVerdict(**{k: (None if k == "net_win" and v != v else v) for k, v in row.items()},
                           must_lift=_number(lift.get(row["model"])))
             for row in verdicts.to_dict("records")]
    health = Health(
        expected=rec.expected if rec else 0, observed=rec.observed if rec else 0, written=rec.written if rec else 0,
        complete=bool(rec.is_complete) if rec else data is None, missing=list(rec.missing) if rec else [],
        judge_errors=int(data.health["pair_errors"]) if data is not None else 0,
        ungraded=int(data.health["ungraded"]) if data is not None else 0,
        underpowered=[f"{v.skill_family} × {v.model}" for v in items if v.reason == "underpowered"],
        commit_mismatches=list(mismatches["run_id"]) if mismatches is not None else [])
    arms = comp.arms
    return CompareResults(
        run_key=comp.run_key, run_dir=str(run_dir), endpoint=data.endpoint if data is not None else "",
        base=Version(**comp.base.as_json()), head=Version(**comp.head.as_json()),
        arms=Arms(treatment=arms.treatment, control=arms.control, reference=arms.reference), models=models,
        changes=ChangeSet(files=comp.changes.files, families=comp.changes.families, prompts=comp.changes.prompts,
                          added=comp.changes.added, removed=comp.changes.removed),
        verdicts=items, health=health, fail_on=fail_on, exit_code=exit_code(verdicts, fail_on))


def _number(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if out == out else None


def write_outcome(comp: Comparison, run_dir: Path, card: Any, *, fail_on: str | None) -> CompareOutcome:
    """Write ``results.json``, ``compare.md`` and ``compare-comment.md`` (each atomically) and say where they are."""
    results = build_results(comp, run_dir, card, fail_on=fail_on)
    results_path, report_path = run_dir / RESULTS_FILE, run_dir / COMPARE_REPORT_FILE
    atomic_write_text(results_path, results.model_dump_json(indent=2) + "\n")
    scorecard = card.path if card is not None and card.path else ""
    tables = stimulus_tables(card.data) if card is not None else None
    atomic_write_text(report_path, render_compare(results, tables=tables, scorecard_path=str(scorecard),
                                                  results_path=str(results_path)))
    atomic_write_text(run_dir / COMPARE_COMMENT_FILE,
                      render_compare_comment(results, tables=tables, full_report=COMPARE_REPORT_FILE))
    return CompareOutcome(results=results, run_dir=run_dir, report_path=report_path, results_path=results_path)
