"""``skillbench compare``: the whole comparison of two versions, from the refs to ``compare.md``.

The pipeline, in one place:

1. :func:`~skillbench.compare._comparison.plan_comparison` — resolve both refs, find the changed families, refuse
   what could never get a verdict (nothing is written before this passes);
2. generation of ``no-skill``, ``with-skill@BASE`` and ``with-skill@HEAD`` for those families only
   (:func:`skillbench.weekly.run_generation`, the week's ``run.json`` recording the pair and both commits); the
   families the head adds run ``no-skill`` and ``with-skill@HEAD`` in a week of their own, ``RUN_DIR/_new/``
   (:meth:`~skillbench.compare._comparison.Comparison.weeks`);
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

import pandas as pd

from skillbench.compare._comparison import (
    COMPARE_DIR,
    ComparedWeek,
    Comparison,
    heldout_prompts,
    heldout_week,
    plan_comparison,
    run_key_for,
)
from skillbench.compare._report import render_compare, render_compare_comment
from skillbench.compare._results import (
    Arms,
    ChangeSet,
    CompareResults,
    FamilyVerdict,
    GapRecord,
    Generalization,
    Health,
    Version,
    WornPrompt,
)
from skillbench.compare._verdicts import commit_mismatches, compare_verdicts, exit_code
from skillbench.ledgers import COMPARE_COMMENT_FILE, VERSIONS_DIR, atomic_write_text
from skillbench.scorecard import StimulusTables, stimulus_tables
from skillbench.suite import HEAD, Ownership, SuiteOverrides, SuiteRepo, VersionError, rubric_ownership

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
    """What ``skillbench compare`` was asked to do.

    ``suite`` is the suite argument group (:class:`skillbench.suite.SuiteOverrides`): the working tree is read
    with it, and so is a head materialized from another commit (its skills root and config mapped there).
    """

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
    suite: SuiteOverrides = dataclasses.field(default_factory=SuiteOverrides)
    generalization: bool = False  # also run the changed families' held-out prompts (recorded; never scored)


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
    o, log = options, runtime.log
    backend = resolve_backend(runtime.backend)  # once: every stage then uses the same backend without saying so again
    suite = _working_tree(suite_dir, o)
    run_dir = resolve_run_dir(suite, o.base, o.head, o.out_dir, allow_dirty=o.allow_dirty)
    comp = plan_comparison(suite, o.base, o.head, allow_dirty=o.allow_dirty, cache_dir=run_dir / VERSIONS_DIR,
                           overrides=o.suite)
    for note in comp.notes:  # before any run: where the config came from, which family can never pass
        log(f"compare: {note}")
    ownership = changed_ownership(comp)  # report-only: said here and under the verdicts, never a verdict
    for overlap in ownership.overlaps:
        log(f"compare: {overlap}")
    record = checked_record(comp) if o.generalization else None  # a damaged or reset use record refuses here
    run_dir.mkdir(parents=True, exist_ok=True)
    models = list(o.models) or list(comp.suite.config.run.models)
    weeks = comp.weeks(run_dir)
    held = HeldoutPlan.of(comp, weeks, record, log) if record is not None else None
    if not comp.changes.families:
        log(f"compare: no skill family or prompt differs between {o.base} and {o.head}: nothing to run")
        return write_outcome(comp, run_dir, [], fail_on=o.fail_on, models=models, ownership=ownership)
    new = set(comp.changes.added)
    log(f"compare: {', '.join(f + (' (new)' if f in new else '') for f in comp.changes.families)} changed between "
        f"{o.base} ({comp.base.commit[:12]}) and {o.head} ({comp.head.commit[:12]})"
        + "".join(f"; {', '.join(w.families)}: arms {', '.join(w.conditions)}" for w in weeks))
    if not weeks:
        log("compare: no changed family has a preference-eligible prompt: nothing to run")
        return write_outcome(comp, run_dir, [], fail_on=o.fail_on, models=models, ownership=ownership)
    with shared_endpoint(backend, runtime.endpoint, comp.suite, o.seed) as url:
        # one endpoint for every stage; the lock names the comparison
        shared = dataclasses.replace(runtime, backend=backend, endpoint=url, holder="skillbench compare")
        for week in weeks:
            _generate(week, o, shared)
            _judge(week.run_dir, o, shared)
        if held is not None:  # after the scored weeks, which never wait on (nor see) the held-out runs
            held.run(comp, o, shared)
    from skillbench.runtime import PassContext
    from skillbench.weekly import scorecard_week

    ctx = PassContext(wait=runtime.wait, holder="skillbench compare")
    cards = [(week, scorecard_week(week.run_dir, write=True, ctx=ctx)) for week in weeks]
    general = held.result(comp, cards, models) if held is not None else None
    return write_outcome(comp, run_dir, cards, fail_on=o.fail_on, models=models, ownership=ownership,
                         generalization=general)


@dataclass
class HeldoutPlan:
    """``--generalization``: the held-out weeks beside the scored ones, and the suite's use record.

    Attributes:
        weeks: each held-out week (:func:`skillbench.compare._comparison.heldout_week`) of a scored week.
        prompts: ``(family, prompt)`` of every held-out prompt run.
        record: the suite's ``heldout-uses.csv``.
        added: rows this use appended to it (0 on a rerun of the same comparison).
    """

    weeks: list[ComparedWeek]
    prompts: list[tuple[str, str]]
    record: Path
    added: int = 0

    @classmethod
    def of(cls, comp: Comparison, weeks: Sequence[ComparedWeek], record: Path, log: Any) -> HeldoutPlan:
        """Plan the held-out weeks of ``weeks`` (``record``: the use record, :func:`checked_record`'s)."""
        held = [h for h in (heldout_week(w) for w in weeks) if h is not None]
        prompts = heldout_prompts(comp.suite, [f for w in weeks for f in w.families])
        families = sorted({f for f, _ in prompts})
        log(f"compare: --generalization: {len(prompts)} held-out prompt(s) of {', '.join(families) or 'no family'} "
            "run in the pair of arms the lift compares, in a week of their own (_heldout/), never in the scored "
            "numbers; the use is "
            f"recorded in {record}")
        return cls(held, prompts, record)

    def run(self, comp: Comparison, o: CompareOptions, runtime: StageRuntime) -> None:
        """Record the use (before the runs: a prompt run has been seen), then generate and grade each week."""
        from skillbench.ledgers import record_heldout_use

        if self.prompts:
            self.added = record_heldout_use(self.record, command="skillbench compare --generalization",
                                            run_key=comp.run_key, prompts=self.prompts,
                                            base_commit=comp.base.commit, head_commit=comp.head.commit)
        for week in self.weeks:
            _generate(week, o, runtime)
            _judge(week.run_dir, o, runtime, pairs=False)

    def result(self, comp: Comparison, cards: Cards, models: Sequence[str]) -> Generalization:
        """The gap per family × model, the rule, and the held-out prompts' wear."""
        from skillbench.ledgers import LedgerError, heldout_decisions, load_week, read_heldout_uses
        from skillbench.scorecard import (
            INTERVAL,
            RULE,
            family_differences,
            gap_table,
            prompt_rep_scores,
            prompt_scores,
            worn,
        )

        eligible = [p.name for p in comp.suite.preference_eligible_prompts]
        names = [p for _, p in self.prompts]
        scored = [family_differences(card.data.prompts, card.data.pair, eligible) for _, card in cards]
        heldout, expected, written, complete = [], 0, 0, True
        for week in self.weeks:
            if week.run_dir.is_dir():
                ledgers = load_week(week.run_dir)
                heldout.append(family_differences(prompt_scores(prompt_rep_scores(ledgers.scores)), ledgers.arms,
                                                  names))
                rec = ledgers.reconciliation
                expected += rec.expected if rec else 0
                written += rec.written if rec else 0
                complete = complete and bool(rec and rec.is_complete)
            else:
                complete = False
        families = [f for week, _ in cards for f in week.families]
        seen = [str(m) for _, card in cards for m in card.data.models]
        table = gap_table(_concat(scored), _concat(heldout), families, list(dict.fromkeys(seen)) or list(models))
        limit = int(comp.suite.config.suite.heldout_wear)
        try:
            decisions = heldout_decisions(read_heldout_uses(self.record))
        except LedgerError as exc:
            worn_now, record = [], f"the held-out use record could not be read, so their wear is unknown: {exc}"
        else:
            worn_now = worn(decisions, names, limit)
            added = (f"added {self.added} row(s)" if self.added
                     else "was already recorded (a rerun of the same comparison)")
            most = max((int(decisions.get(p, 0)) for p in names), default=0)
            record = (f"{self.record}: this use {added}; its {len(names)} held-out prompt(s) have informed at most "
                      f"{most} decision(s), the limit is {limit}")
        return Generalization(
            run_dirs=[str(w.run_dir) for w in self.weeks], prompts=names,
            records=[GapRecord(**{k: _number(v) if isinstance(v, float) else v for k, v in row.items()})
                     for row in table.to_dict("records")],
            rule=RULE, interval=INTERVAL, wear_limit=limit,
            worn=[WornPrompt(prompt=p, decisions=n) for p, n in worn_now], record=record, complete=complete,
            runs=f"expected {expected} · written {written} — " + ("complete" if complete else "**INCOMPLETE**: the "
                                                                  "held-out lifts rest on fewer runs; rerun to resume"))


def checked_record(comp: Comparison) -> Path:
    """The suite's held-out use record, checked before anything is written.

    Raises:
        CompareError: it is damaged, or the head's copy does not extend the base's (one line: repair it; the record
            is never reset).
    """
    from skillbench.compare._comparison import CompareError
    from skillbench.ledgers import LedgerError, heldout_uses_path, read_heldout_uses

    record = heldout_uses_path(suite_home(comp))
    try:
        uses = read_heldout_uses(record)
    except LedgerError as exc:
        raise CompareError(f"--generalization: {exc}") from exc
    rewritten = rewritten_since_base(comp, record, uses)
    if rewritten:  # the pull request under review may not reset the wear of the prompts it is judged on
        raise CompareError(f"--generalization: {rewritten}")
    return record


def rewritten_since_base(comp: Comparison, record: Path, uses: pd.DataFrame) -> str:
    """One line when the working tree's use record does not extend the base commit's copy (rows removed or
    rewritten: an append-only record reset), else "" (also when the base has no record to compare with)."""
    import io

    from skillbench.ledgers import HELDOUT_USE_COLUMNS, HELDOUT_USES_FILE
    from skillbench.suite import git

    rel = (Path(comp.repo.rel) / HELDOUT_USES_FILE).as_posix()
    try:
        text = str(git(comp.repo.repo, "show", f"{comp.base.commit}:{rel}"))
        base = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (VersionError, ValueError):
        return ""  # no record at the base (or none readable there): nothing it could have lost
    columns = list(HELDOUT_USE_COLUMNS)
    if list(base.columns) == columns and len(uses) >= len(base) and uses.iloc[:len(base)].reset_index(
            drop=True).equals(base.reset_index(drop=True)):
        return ""
    return (f"{record}: does not extend its copy at the base {comp.base.ref} ({len(base)} row(s)): recorded uses were "
            f"removed or rewritten — restore them (git checkout {comp.base.commit[:12]} -- {rel}); the record is "
            "append-only")


def suite_home(comp: Comparison) -> Path:
    """The suite's folder in the repository's working tree (a head materialized elsewhere keeps its records
    here)."""
    return comp.repo.repo / comp.repo.rel


def _concat(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=["model", "prompt", "skill_family", "d"])
    return pd.concat(frames, ignore_index=True)


def _working_tree(suite_dir: str | Path, o: CompareOptions) -> Any:
    """The suite in the working tree. With the default head it is what runs, so it must load; with another head
    it only says where the roots are and which config applies — the head's own files are checked when it is
    materialized — so a working tree whose prompts need other flags (a later site base) does not stop it.

    Raises:
        SuiteError: the working tree is the head and has errors, or its config cannot be read.
    """
    from skillbench.suite import SuiteError, load_suite, preflight

    if o.head == HEAD:
        return load_suite(suite_dir, o.suite)
    report = preflight(suite_dir, o.suite)
    if report.stopped:
        raise SuiteError(report)
    return report.suite


def _generate(week: ComparedWeek, o: CompareOptions, runtime: StageRuntime) -> dict[str, Any]:
    from skillbench.generation import GenerateOptions
    from skillbench.weekly import run_generation

    opts = GenerateOptions(run_key=week.run_key, out_dir=week.run_dir, models=list(o.models), reps=o.reps,
                           conditions=list(week.conditions), jobs=o.jobs, sandbox=o.sandbox or None, seed=o.seed,
                           timeout_s=o.timeout_s, allow_dirty=o.allow_dirty, arms=week.arms,
                           versions=dict(week.versions))
    return run_generation(week.suite, opts, runtime.context(seed=o.seed, suite=week.suite))


def _judge(run_dir: Path, o: CompareOptions, runtime: StageRuntime, *, pairs: bool = True) -> None:
    """The identifiers pass (as the weekly judging stage: deterministic evidence first), the rubric judge, then the
    pairwise judge (``pairs``; a held-out week has no gate to vote in), under one lock. A judge failure is not
    raised: the verdicts read it as ``INVALID_INCONCLUSIVE (judge_errors)`` and a rerun retries it."""
    from skillbench.identifiers import IdentifierOptions
    from skillbench.judge import JudgeOptions, resolve_judge_model
    from skillbench.ledgers import run_dir_lock
    from skillbench.weekly import grade_week, identifiers_week, pair_week

    opts = JudgeOptions(judge_model=resolve_judge_model(o.judge_model), jobs=o.jobs, seed=o.seed)
    ctx = dataclasses.replace(runtime, holder=None).context(seed=o.seed)
    with run_dir_lock(run_dir, command="skillbench compare", wait=runtime.wait, log=runtime.log):
        runtime.log(identifiers_week(run_dir, IdentifierOptions(), ctx).line())
        grade_week(run_dir, opts, ctx)
        if pairs:
            pair_week(run_dir, opts, ctx)


Cards = Sequence[tuple[ComparedWeek, Any]]  # each week run, with its scorecard


def build_results(comp: Comparison, run_dir: Path, cards: Cards, *, fail_on: str | None,
                  models: Sequence[str] = ()) -> CompareResults:
    """The :class:`CompareResults` of a comparison whose weeks' scorecards are ``cards`` (none: nothing ran)."""
    from skillbench.ledgers import read_run_json

    seen = [str(m) for _, card in cards for m in card.data.models]
    models = list(dict.fromkeys(seen)) or list(models)
    eligible = {f: sum(p.family == f for p in comp.suite.preference_eligible_prompts) for f in comp.changes.families}
    frames, lift, mismatched = [], {}, []
    for week, card in cards:
        data = card.data
        mismatches = commit_mismatches(data.manifest, read_run_json(week.run_dir).get("versions") or {})
        mismatched += list(mismatches["run_id"])
        frames.append(compare_verdicts(data.gate, week.families, models, mismatches, new=week.new))
        lift |= {(f, str(r.model)): r.must_lift for r in data.lift.itertuples(index=False) for f in week.families}
    ran = {f for week, _ in cards for f in week.families}
    unrun = [f for f in comp.changes.families if f not in ran]
    if unrun:  # no pair judged: underpowered, and the evidence says why
        frames += [compare_verdicts(None, [f], models, new=f in comp.changes.added, eligible=eligible) for f in unrun]
    verdicts = merged_verdicts(frames)
    items = [FamilyVerdict(**{k: (None if k == "net_win" and v != v else v) for k, v in row.items()},
                           must_lift=_number(lift.get((row["skill_family"], row["model"]))))
             for row in verdicts.to_dict("records")]
    recs = [card.data.reconciliation for _, card in cards if card.data.reconciliation is not None]
    health = Health(
        expected=sum(r.expected for r in recs), observed=sum(r.observed for r in recs),
        written=sum(r.written for r in recs),
        complete=len(recs) == len(cards) and all(bool(r.is_complete) for r in recs),
        missing=[m for r in recs for m in r.missing],
        judge_errors=sum(int(card.data.health["pair_errors"]) for _, card in cards),
        ungraded=sum(int(card.data.health["ungraded"]) for _, card in cards),
        underpowered=[f"{v.skill_family} × {v.model}" for v in items if v.reason == "underpowered"],
        commit_mismatches=mismatched)
    arms = comp.arms
    c = comp.changes
    return CompareResults(
        run_key=comp.run_key, run_dir=str(run_dir), endpoint=cards[0][1].data.endpoint if cards else "",
        base=Version(**comp.base.as_json()), head=Version(**comp.head.as_json()),
        arms=Arms(treatment=arms.treatment, control=arms.control, reference=arms.reference), models=models,
        changes=ChangeSet(files=c.files, families=c.families, prompts=c.prompts, added=c.added, removed=c.removed,
                          unmeasured=[f for f in c.families if not eligible.get(f)]),
        notes=list(comp.notes), verdicts=items, health=health, fail_on=fail_on,
        noise_floor=noise_floor(comp, cards[0][1].data.endpoint if cards else ""),
        exit_code=exit_code(verdicts, fail_on))


def noise_floor(comp: Comparison, endpoint: str) -> list[str]:
    """The suite's weekly A/A record, as the weekly scorecard accumulates it, among weeks of ``endpoint``'s kind.

    A comparison runs no A/A arm of its own; the weekly runs of the same suite (``SUITE_DIR/weekly``, beside its
    history) say how often the gate passes where nothing changed. A damaged record is one line, never a stop.
    """
    from skillbench.ledgers import (
        HISTORY_CONTROLS_SUFFIX,
        HISTORY_FILE,
        LedgerError,
        history_sidecar,
        read_history_controls,
    )
    from skillbench.scorecard import accumulated_controls, accumulated_text

    if not endpoint:
        return []
    path = history_sidecar(comp.repo.repo / comp.repo.rel / "weekly" / HISTORY_FILE, HISTORY_CONTROLS_SUFFIX)
    try:
        recorded = read_history_controls(path)
    except LedgerError as exc:
        return [f"the weekly control record could not be read: {exc}"]
    return [accumulated_text(r, endpoint) for r in accumulated_controls(recorded, endpoint).itertuples(index=False)]


def merged_verdicts(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The weeks' verdict rows as one table, worst finding first (as :func:`compare_verdicts` orders one)."""
    from skillbench.compare._verdicts import FINDINGS, VERDICT_COLUMNS

    if not frames:
        return pd.DataFrame(columns=VERDICT_COLUMNS)
    out = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    rank = {f: i for i, f in enumerate(FINDINGS)}
    return out.sort_values(["finding", "skill_family", "model"], key=lambda s: s.map(rank) if s.name == "finding"
                           else s).reset_index(drop=True)


def _number(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if out == out else None


def _tables(cards: Cards) -> StimulusTables | None:
    """The per-stimulus votes and dormancy contracts of every week run (head vs base, and the new families')."""
    each = [stimulus_tables(card.data) for _, card in cards]
    if not each:
        return None
    # the check columns are named after the first week's arms (head vs base); a new family's rows are head vs
    # no-skill, which its verdict line already says
    return StimulusTables(pd.concat([t.stimuli for t in each], ignore_index=True),
                          pd.concat([t.dormancy for t in each], ignore_index=True), each[0].pair)


def changed_ownership(comp: Comparison) -> Ownership:
    """Who wrote the changed families' skills and rubrics, in the history up to the head's commit (its suite may
    be a copy materialized at that commit: the copy's top stands for the repository's)."""
    top = Path(comp.repo.suite_dir)
    for _ in Path(comp.repo.rel).parts:  # "." has none
        top = top.parent
    return rubric_ownership(comp.suite, comp.changes.families, repo=comp.repo.repo, commit=comp.head.commit or HEAD,
                            checkout=top)


def write_outcome(comp: Comparison, run_dir: Path, cards: Cards, *, fail_on: str | None,
                  models: Sequence[str] = (), ownership: Ownership | None = None,
                  generalization: Generalization | None = None) -> CompareOutcome:
    """Write ``results.json``, ``compare.md`` and ``compare-comment.md`` (each atomically) and say where they are;
    ``ownership``: the changed families' rubric ownership, said under the verdicts (report-only);
    ``generalization``: the held-out check, when asked (its own section; the verdicts never read it)."""
    results = build_results(comp, run_dir, cards, fail_on=fail_on, models=models)
    results = results.model_copy(update={"generalization": generalization})
    results_path, report_path = run_dir / RESULTS_FILE, run_dir / COMPARE_REPORT_FILE
    atomic_write_text(results_path, results.model_dump_json(indent=2) + "\n")
    scorecard = next((card.path for _, card in cards if card.path), "")
    tables = _tables(cards)
    atomic_write_text(report_path, render_compare(results, tables=tables, scorecard_path=str(scorecard),
                                                  results_path=str(results_path), ownership=ownership))
    atomic_write_text(run_dir / COMPARE_COMMENT_FILE,
                      render_compare_comment(results, tables=tables, full_report=COMPARE_REPORT_FILE,
                                             ownership=ownership))
    return CompareOutcome(results=results, run_dir=run_dir, report_path=report_path, results_path=results_path)
