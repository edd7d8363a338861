"""``skillbench sentinel build`` and ``sentinel check``: the judge drift sentinel's gold set and its weekly check."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from skillbench.commands import (
    add_backend_args,
    add_judge_call_args,
    add_wait_arg,
    model_names,
    positive_int,
    week_folder,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sentinel", help="judge drift sentinel: a frozen gold set re-graded every week")
    actions = p.add_subparsers(dest="sentinel_action", metavar="ACTION", required=True)
    b = actions.add_parser("build", help="build the frozen gold set from a week's graded runs",
                           description="Sample --n rubric items, stratified by item type, from the week's graded "
                           "runs, with agreed labels: from --human (a filled labels export sheet; with two or more "
                           "labelers only the items they all agree on) or, on a simulated week, from the "
                           "simulation's truth. Writes one JSON object per answer; refuses to overwrite without "
                           "--force.")
    b.add_argument("run_dir", metavar="RUN_DIR", help="a judged week's output folder")
    b.add_argument("--n", type=positive_int, default=60, metavar="N", help="items in the gold set (default 60)")
    b.add_argument("--human", metavar="LABELS.csv", help="a filled labels sheet (default: the simulation's truth)")
    b.add_argument("--out", metavar="FILE", help="the gold file (default SUITE_DIR/judge-gold/gold.jsonl, SUITE_DIR "
                   "being RUN_DIR/../..)")
    b.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    b.add_argument("--force", action="store_true", help="replace an existing gold set (later weeks start a new "
                   "baseline)")
    b.set_defaults(func=run_build)

    c = actions.add_parser("check", help="grade the gold set with the week's judge and flag drift",
                           description="Grade every gold answer once with the week's judge (same protocol and "
                           "evidence check), compare with the most recent earlier week of the same weekly folder, "
                           "gold set and endpoint kind, and write sentinel-grades.csv and sentinel.json. Exit 1 "
                           "when the week is flagged (judge drift or a changed judge: re-certify).")
    c.add_argument("run_dir", metavar="RUN_DIR", help="a week's output folder")
    c.add_argument("--gold", metavar="FILE", help="the gold file (default SUITE_DIR/judge-gold/gold.jsonl)")
    c.add_argument("--suite", metavar="SUITE_DIR", help="the suite whose gold set to use (default RUN_DIR/../..)")
    add_backend_args(c)
    c.add_argument("--judge-model", type=model_names, metavar="M", help="judge model (default: the week's judge)")
    add_judge_call_args(c)
    add_wait_arg(c)
    c.set_defaults(func=run_check)


def run_build(args: argparse.Namespace) -> int:
    from skillbench.calibration import GoldError, LabelsError, build_gold, write_gold
    from skillbench.commands import UsageError
    from skillbench.weekly import gold_path

    run_dir = week_folder(args.run_dir)
    if args.human and not Path(args.human).is_file():
        raise UsageError(f"--human {args.human}: not a file")
    out = Path(args.out) if args.out else gold_path(run_dir)
    if out.exists() and not args.force:  # checked before sampling: nothing is read or written
        raise UsageError(f"{out} exists (a frozen gold set: replacing it starts every week's sentinel over from a "
                         "baseline) — pass --force to replace it, or --out elsewhere")
    try:
        gold = build_gold(run_dir, n=args.n, human=args.human, seed=args.seed)
        write_gold(gold, out, force=args.force)
    except (GoldError, LabelsError) as exc:
        raise UsageError(str(exc)) from exc
    kinds: dict[str, int] = {}
    for g in gold:
        for _, kind, _ in g.items:
            kinds[kind] = kinds.get(kind, 0) + 1
    print(f"gold set: {sum(kinds.values())} items ({', '.join(f'{v} {k}' for k, v in sorted(kinds.items()))}) of "
          f"{len(gold)} answers; labels: {gold[0].source.split('labels: ', 1)[-1]}")
    print(out)
    return 0


def run_check(args: argparse.Namespace) -> int:
    from skillbench.calibration import GoldError, SentinelOptions
    from skillbench.commands import UsageError
    from skillbench.generation import BackendError
    from skillbench.ledgers import SENTINEL_FILE
    from skillbench.weekly import StageRuntime, gold_path, sentinel_week

    run_dir = week_folder(args.run_dir)
    gold = gold_path(run_dir, args.suite or "", args.gold or "")
    if not gold.is_file():
        raise UsageError(f"no gold set: {gold} — build one with skillbench sentinel build")
    try:
        opts = SentinelOptions(judge_model=args.judge_model or None, seed=args.seed, jobs=args.jobs,
                               max_retries=args.max_retries, timeout=args.timeout)
        runtime = StageRuntime(backend=args.backend, endpoint=args.endpoint or "", wait=args.wait,
                               log=lambda m: print(m, file=sys.stderr))
        result = sentinel_week(run_dir, opts, runtime, gold=gold, fresh=True)
    except (BackendError, GoldError) as exc:
        raise UsageError(str(exc)) from exc
    print(run_dir / SENTINEL_FILE)
    return 1 if result is not None and result.flagged else 0
