"""``skillbench judge``, ``judge-pairs``, ``calibrate`` and ``labels export``/``merge``: grading a week's answers."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from skillbench.commands import (
    add_backend_args,
    add_executor_args,
    add_judge_call_args,
    add_selection_args,
    add_shard_arg,
    add_wait_arg,
    listed,
    model_names,
    nonnegative_int,
    positive_float,
    positive_int,
    week_folder,
)
from skillbench.ledgers import CALIBRATION_MD, PAIRS_FILE, SCORES_FILE
from skillbench.runtime import Log, stderr_log
from skillbench.vocab import CALIBRATION_MUST_FLOOR as MUST_FLOOR

if TYPE_CHECKING:
    from skillbench.judge import RunSelection
    from skillbench.weekly import StageRuntime


def _client_args(p: argparse.ArgumentParser) -> None:
    add_backend_args(p)
    p.add_argument("--judge-model", type=model_names, metavar="M",
                   help="judge model (default claude-opus-5-5; calibrate: the ledger's judge); an unknown model "
                   "exits 2")
    add_judge_call_args(p)
    add_wait_arg(p)


def _batch_args(p: argparse.ArgumentParser, *, cache: bool = True) -> None:
    p.add_argument("--batch", action="store_true",
                   help="send every judge call through Message Batches (half the price; replies can take hours; "
                   "a killed pass rerun polls the same batches, RUN_DIR/judge-batches.json)")
    p.add_argument("--batch-wait", type=positive_float, metavar="S",
                   help="with --batch: stop after S seconds of waiting for a batch ('judge pending', exit 3); "
                   "rerun to continue (default: wait until the batches end)")
    if cache:
        p.add_argument("--cache", action="store_true",
                       help="prompt-cache the first sample's requests (calibration sends them again)")


def _pending(command: str, exc: Exception) -> int:
    print(f"skillbench {command}: {exc}", file=sys.stderr)
    return PENDING_EXIT


PENDING_EXIT = 3  # a batched pass stopped waiting (--batch-wait); a rerun continues


def _selection(args: argparse.Namespace) -> RunSelection:
    from skillbench.judge import RunSelection

    return RunSelection(tuple(listed(args.prompts) or ()), tuple(listed(args.families) or ()))


def _runtime(args: argparse.Namespace, log: Log = stderr_log) -> StageRuntime:
    """Where a judging command runs, from its flags."""
    from skillbench.weekly import StageRuntime

    return StageRuntime(backend=args.backend, endpoint=args.endpoint or "", executor=args.executor,
                        scheduler=args.scheduler or "", wait=args.wait, log=log)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("judge", help="grade each run's final answer against its rubric (blind, resumable)",
                       description="Grade the no-skill and with-skill runs (a comparison week: its treatment, "
                       "control and reference arms) of the week's preference-eligible "
                       "prompts into RUN_DIR/scores.csv, blind, with verified evidence. Rerunning resumes; runs "
                       "that cannot be graded go to judge-skips.csv. Exit 1 when an item stays ungraded, 2 usage "
                       "error or another pass holds the week.")
    p.add_argument("run_dir", metavar="RUN_DIR", help="a week's output folder (from skillbench generate)")
    _client_args(p)
    p.add_argument("--samples", type=int, choices=[1, 2], default=1,
                   help="judge samples per item; 2 asks a third on disagreement (majority, contested)")
    p.add_argument("--fresh", action="store_true", help="discard scores.csv and grade every run again")
    p.add_argument("--include-plugin", action="store_true", help="grade the plugin arm too")
    p.add_argument("--retry-ungraded", action="store_true",
                   help="grade again the runs that have ungraded items (e.g. after a judge outage)")
    p.add_argument("--limit", type=positive_int, metavar="N", help="grade at most N runs in this pass")
    add_selection_args(p, what="grade")
    add_shard_arg(p, what="grade")
    add_executor_args(p)
    _batch_args(p)
    p.set_defaults(func=run_judge)

    q = sub.add_parser("judge-pairs", help="pairwise judge: with-skill vs no-skill answers, both orders",
                       description="Judge the no-skill and with-skill answers (a comparison week: treatment and "
                       "control, run.json's arms) of each (prompt, model, rep) twice "
                       "with positions swapped into RUN_DIR/pairs.csv; a win only when both orders agree.")
    q.add_argument("run_dir", metavar="RUN_DIR", help="a week's output folder")
    _client_args(q)
    q.add_argument("--fresh", action="store_true", help="discard pairs.csv and judge every pair again")
    add_selection_args(q, what="judge the pairs of")
    add_executor_args(q)
    _batch_args(q, cache=False)
    q.set_defaults(func=run_pairs)

    c = sub.add_parser("calibrate", help="judge self-agreement, agreement with another judge or with people",
                       description="Grade answers again to measure the judge — a stratified sample of at least "
                       "--musts must items, grown while the must bar is undecided: self-agreement over --repeat "
                       "gradings (bar: >= 95 % unanimous musts, on the interval's lower end), agreement with "
                       "--other-judge and with --human labels (κ, α, PABAK with intervals, confusion). Writes "
                       "calibration.csv, calibration-grades.csv, calibration-sample.json and calibration.md. Exit 1 "
                       "when the must bar fails (its estimate below the bar).")
    c.add_argument("run_dir", metavar="RUN_DIR", help="a week's output folder")
    _client_args(c)
    c.add_argument("--repeat", type=positive_int, default=3, metavar="N",
                   help="gradings of each answer for self-agreement (default 3; 1 = none)")
    c.add_argument("--sample", type=positive_int, metavar="N", help="calibrate on exactly N gradeable runs, drawn "
                   "stratified by family × model × arm (default: the size rule, --musts)")
    c.add_argument("--musts", type=nonnegative_int, default=MUST_FLOOR, metavar="N",
                   help=f"the size rule: grade again a stratified sample holding at least N must items, doubled while "
                   f"the must bar's interval straddles it (default {MUST_FLOOR}; 0 = every gradeable run)")
    c.add_argument("--sample-nonce", metavar="HEX", type=_nonce, help="draw with this nonce (default: the week's "
                   "recorded one in calibration-sample.json, else a fresh one): reproduces a recorded sample")
    c.add_argument("--human", metavar="FILE", help="filled labels file (from skillbench labels export)")
    c.add_argument("--other-judge", type=model_names, metavar="M", help="a second judge model to compare with")
    c.add_argument("--include-plugin", action="store_true", help="include plugin-arm runs")
    c.add_argument("--cluster-by", choices=["run", "prompt"], default="run",
                   help="what the κ/α/PABAK intervals resample: runs (default) or prompts (wider: for a claim about "
                   "prompts in general)")
    add_executor_args(c)
    _batch_args(c)
    c.set_defaults(func=run_calibrate)

    lab = sub.add_parser("labels", help="human labels for judge calibration")
    actions = lab.add_subparsers(dest="labels_command", metavar="ACTION", required=True)
    e = actions.add_parser("export", help="write a stratified sheet of rubric items for people to label",
                           description="Write RUN_DIR/labels.csv: N graded rubric items stratified by arm and item "
                           "type, with the prompt and the answer, and blank verdict/labeler columns (no judge "
                           "verdict), and its companion labels.json (how the sheet was drawn). --disagreements "
                           "over-samples the items the raters of gradings files disagree on; --same-as writes a "
                           "sheet's items again for a second labeler.")
    e.add_argument("run_dir", metavar="RUN_DIR", help="a judged week's output folder")
    e.add_argument("--n", type=positive_int, default=60, metavar="N", help="items to export (default 60)")
    e.add_argument("--seed", type=int, default=0, help="seed of the sample and its order")
    e.add_argument("--out", metavar="FILE", help="where to write (default RUN_DIR/labels.csv)")
    e.add_argument("--force", action="store_true", help="replace an existing file")
    e.add_argument("--labeler", default="", metavar="NAME", help="pre-fill the labeler column with NAME")
    e.add_argument("--disagreements", nargs="+", action="extend", default=[], metavar="GRADES_CSV",
                   help="gradings files (calibration-grades.csv, judge-study/study-grades.csv): the items their "
                   "raters are not unanimous on are over-sampled")
    e.add_argument("--disagreement-share", type=_share, default=0.5, metavar="S",
                   help="the most of the sheet the disagreement items take (0 < S <= 1; default 0.5)")
    e.add_argument("--same-as", metavar="SHEET", help="write the items of SHEET (same order, blank verdicts) for "
                   "another labeler; needs --labeler and --out")
    e.set_defaults(func=run_labels_export)
    m = actions.add_parser("merge", help="combine one filled sheet per labeler into one sheet",
                           description="Check that every file is a labels sheet of one labeler, that the labelers "
                           "differ and that each item (run_id, item_index) has the same type and text in every "
                           "file; write one row per item per labeler (what calibrate --human reads) and print how "
                           "many items all/some labelers labelled and the items they disagree on.")
    m.add_argument("sheets", nargs="+", metavar="SHEET", help="filled labels sheets, one labeler each")
    m.add_argument("--out", required=True, metavar="FILE", help="the merged sheet")
    m.add_argument("--force", action="store_true", help="replace an existing file")
    m.set_defaults(func=run_labels_merge)


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text}: must be a number above 0 and at most 1")
    return value


def run_judge(args: argparse.Namespace) -> int:
    from skillbench.cluster import ExecutorError, check_executor_args
    from skillbench.commands import UsageError
    from skillbench.generation import BackendError
    from skillbench.judge import BatchStoreError, JudgeOptions, JudgePending, WeekSelectionError, resolve_judge_model
    from skillbench.ledgers import LedgerConflict
    from skillbench.weekly import grade_week

    run_dir = week_folder(args.run_dir)
    try:
        check_executor_args(args.executor, args.scheduler)
    except ExecutorError as exc:
        raise UsageError(str(exc)) from exc
    opts = JudgeOptions(judge_model=resolve_judge_model(args.judge_model), samples=args.samples, fresh=args.fresh,
                        jobs=args.jobs, include_plugin=args.include_plugin, seed=args.seed,
                        retry_ungraded=args.retry_ungraded, max_retries=args.max_retries, timeout=args.timeout,
                        limit=args.limit, batch=args.batch, batch_wait_s=args.batch_wait, cache=args.cache,
                        shard=args.shard, selection=_selection(args))
    try:
        report = grade_week(run_dir, opts, _runtime(args).context(seed=args.seed))
    except (BackendError, ExecutorError, LedgerConflict, WeekSelectionError, BatchStoreError) as exc:
        raise UsageError(str(exc)) from exc
    except JudgePending as exc:
        return _pending("judge", exc)
    ev = report.evidence.get(opts.judge_model, {})
    rate = ev.get("hallucinated_evidence_rate")
    print(f"graded {report.graded} run(s) now, {report.already} before; {report.skipped} not gradeable "
          f"(judge-skips.csv); {report.ungraded_items} ungraded item(s); judge spend this pass "
          f"${report.cost_usd:.4f}")
    if ev:
        print(f"hallucinated evidence ({opts.judge_model}): {ev['unverified']} of {ev['positive_verdicts']} "
              f"met/violated quotes not in the answer ({'n/a' if rate is None else f'{rate:.1%}'}); "
              f"{ev['still_unverified']} still unverified after the re-ask (scored missing/clean, flagged)")
    print(run_dir / SCORES_FILE)
    if not report.ok:
        print(f"skillbench judge: {report.ungraded_items} item(s) could not be graded (reasons in each run's "
              "judge.json); rerun with --retry-ungraded", file=sys.stderr)
    return 0 if report.ok else 1


def run_pairs(args: argparse.Namespace) -> int:
    from skillbench.cluster import ExecutorError, check_executor_args
    from skillbench.commands import UsageError
    from skillbench.generation import BackendError
    from skillbench.judge import JudgeOptions, JudgePending, resolve_judge_model
    from skillbench.ledgers import LedgerConflict
    from skillbench.weekly import pair_week

    run_dir = week_folder(args.run_dir)
    try:
        check_executor_args(args.executor, args.scheduler)
    except ExecutorError as exc:
        raise UsageError(str(exc)) from exc
    try:
        opts = JudgeOptions(judge_model=resolve_judge_model(args.judge_model), fresh=args.fresh, jobs=args.jobs,
                            seed=args.seed, max_retries=args.max_retries, timeout=args.timeout,
                            selection=_selection(args), batch=args.batch, batch_wait_s=args.batch_wait)
        report = pair_week(run_dir, opts, _runtime(args).context(seed=args.seed))
    except JudgePending as exc:
        return _pending("judge-pairs", exc)
    except (BackendError, ExecutorError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    except LedgerConflict as exc:
        print(f"skillbench judge-pairs: {exc}", file=sys.stderr)
        return 1
    o = report.outcomes
    print(f"{report.pairs} pair(s): {o['W']}W/{o['T']}T/{o['L']}L for the {report.arms.treatment} arm, "
          f"{report.errors} judge error(s); judged {report.judged} now; spend this pass ${report.cost_usd:.4f}")
    print(run_dir / PAIRS_FILE)
    return 1 if report.errors else 0


def _nonce(text: str) -> str:
    """``--sample-nonce``: a recorded draw's nonce (hex)."""
    value = text.strip().lower()
    if not value or len(value) > 64 or any(c not in "0123456789abcdef" for c in value):
        raise argparse.ArgumentTypeError(f"{text!r}: a hex string, as calibration-sample.json records it")
    return value


def run_calibrate(args: argparse.Namespace) -> int:
    from skillbench.calibration import CalibrationOptions, LabelsError
    from skillbench.cluster import ExecutorError, check_executor_args
    from skillbench.commands import UsageError
    from skillbench.generation import BackendError
    from skillbench.judge import JudgePending
    from skillbench.weekly import calibrate_week

    run_dir = week_folder(args.run_dir)
    if args.human and not Path(args.human).is_file():
        raise UsageError(f"--human {args.human}: not a file")
    try:
        check_executor_args(args.executor, args.scheduler)
    except ExecutorError as exc:
        raise UsageError(str(exc)) from exc
    try:
        opts = CalibrationOptions(repeat=args.repeat, sample=args.sample or None, min_musts=args.musts or None,
                                  sample_nonce=args.sample_nonce, judge_model=args.judge_model or None,
                                  other_judge=args.other_judge or None, human=Path(args.human) if args.human else None,
                                  include_plugin=args.include_plugin, seed=args.seed, jobs=args.jobs,
                                  max_retries=args.max_retries, timeout=args.timeout, cache=args.cache,
                                  cluster_by=args.cluster_by)
        cal = calibrate_week(run_dir, opts, _runtime(args), fresh=True, batch=args.batch,
                             batch_wait_s=args.batch_wait, collapse_progress=False)
    except JudgePending as exc:
        return _pending("calibrate", exc)
    except (BackendError, ExecutorError, LabelsError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    if cal.drawn is not None and cal.drawn.sampled:
        print(f"a stratified sample: {cal.drawn.runs} of {cal.drawn.population_runs} runs, "
              f"{cal.drawn.items.get('must', 0)} of {cal.drawn.population_items.get('must', 0)} musts "
              f"(key {cal.drawn.key}; calibration-sample.json)")
    if not cal.self_agreement.empty:
        must = cal.self_agreement.set_index("item_type").loc["must"]
        print(f"self-agreement: {must['unanimous']} of {must['n_items']} musts unanimous over {args.repeat} "
              f"gradings, 95 % interval [{must['unanimity_low']:.3f}, {must['unanimity_high']:.3f}] — "
              f"{must['bar_state'] or 'n/a'} (bar 95 % on the interval's lower end); {len(cal.flipping)} flipping "
              "item(s)")
    overall = cal.agreement[cal.agreement["item_type"].eq("all")]
    for row in overall.itertuples(index=False):
        kappa = row.cohen_kappa if row.rater_b else row.fleiss_kappa
        print(f"{row.comparison}: {row.rater_a}{' vs ' + row.rater_b if row.rater_b else ''}: n={row.n_units}, "
              f"agreement {row.raw_agreement:.3f}, κ {kappa:.3f} ({row.landis_koch}), α {row.krippendorff_alpha:.3f} "
              f"({row.krippendorff_reading}); intervals: {row.interval_method}")
    print(run_dir / CALIBRATION_MD)
    return 1 if cal.musts_pass is False else 0


def run_labels_export(args: argparse.Namespace) -> int:
    from skillbench.calibration import LabelsError, SheetOptions, companion_path, export_labels
    from skillbench.commands import UsageError

    run_dir = week_folder(args.run_dir)
    if args.same_as and args.disagreements:
        raise UsageError("--same-as repeats a sheet's items; it takes no --disagreements")
    if args.same_as and not (args.labeler and args.out):
        raise UsageError("--same-as needs --labeler NAME (the second person) and --out FILE (e.g. labels-b.csv)")
    for f in [args.same_as or "", *args.disagreements]:
        if f and not Path(f).is_file():
            raise UsageError(f"{f}: not a file")
    try:
        sheet_options = SheetOptions(n=args.n, seed=args.seed, labeler=args.labeler, disagreements=args.disagreements,
                                     disagreement_share=args.disagreement_share, same_as=args.same_as)
        path, sheet = export_labels(run_dir, sheet_options, out=args.out, overwrite=args.force)
    except LabelsError as exc:
        raise UsageError(str(exc)) from exc
    companion = companion_path(path)
    if args.disagreements:
        picked = json.loads(companion.read_text())["disagreements"]
        print(f"{picked['picked']} of the {len(sheet)} item(s) are ones the raters disagree on "
              f"({picked['disagreement_items']} such item(s) in {len(args.disagreements)} file(s); share up to "
              f"{args.disagreement_share:.0%})")
    fill = "'verdict'" if args.labeler else "'verdict' and 'labeler'"
    print(f"{len(sheet)} item(s) to label ({sheet.groupby('item_type').size().to_dict()}); fill {fill} "
          "(must: met/missing, bonus: met/absent, avoid: violated/clean), then run "
          f"skillbench calibrate {run_dir} --human {path}")
    print(f"how it was drawn: {companion}")
    print(path)
    return 0


def run_labels_merge(args: argparse.Namespace) -> int:
    from skillbench.calibration import LabelsError, merge_labels
    from skillbench.commands import UsageError

    for f in args.sheets:
        if not Path(f).is_file():
            raise UsageError(f"{f}: not a file")
    try:
        merged = merge_labels(args.sheets, args.out, overwrite=args.force)
    except LabelsError as exc:
        raise UsageError(str(exc)) from exc
    print(f"{merged.items} item(s) from {len(merged.labelers)} labeler(s) ({', '.join(merged.labelers)}): "
          f"{merged.by_all} labelled by all, {merged.by_some} by some; {len(merged.disagreements)} on which they "
          "disagree")
    for row in merged.disagreements.to_dict("records"):
        verdicts = ", ".join(f"{n}: {row[n] if isinstance(row[n], str) else '-'}" for n in merged.labelers)
        print(f"  {row['run_id']} item {row['item_index']} ({row['item_type']}) {row['item_text'][:60]!r}: "
              f"{verdicts}")
    print(merged.path)
    return 0
