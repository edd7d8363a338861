"""``skillbench scorecard``: the weekly scorecard and its history row."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from skillbench.commands import add_wait_arg, run_key


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "scorecard",
        help="write RUN_DIR/scorecard.md and upsert the week into scorecard-history.csv",
        description="Aggregate a run directory's ledgers (manifest.csv, scores.csv, judge-skips.csv, "
        "reconciliation.json, pairs.csv) into scorecard.md and upsert the week into the history (a comparison "
        "week, whose run.json names other arms, never reads or writes the history). "
        "Exit 0 written, 1 written but the reconciliation is incomplete, 2 usage or ledger error, or another pass "
        "holds the week.",
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="a week's folder (holds manifest.csv)")
    p.add_argument("--history", metavar="FILE",
                   help="history CSV to upsert into (default: RUN_DIR/../scorecard-history.csv)")
    p.add_argument("--run-key", type=run_key, metavar="K",
                   help="run key (default: reconciliation.json's, else the folder name)")
    p.add_argument("--bootstrap", metavar="N", type=int, default=None,
                   help="bootstrap resamples of the lift CI (default: 10000)")
    p.add_argument("--seed", metavar="S", type=int, default=None, help="bootstrap seed")
    p.add_argument("--site", metavar="HOST",
                   help="published skills site named in the lift caveat (default: from the runs' metadata.json)")
    add_wait_arg(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from skillbench.commands import UsageError
    from skillbench.ledgers import MANIFEST_FILE, LedgerError
    from skillbench.runtime import PassContext
    from skillbench.scorecard import DEFAULT_RESAMPLES, HistoryError
    from skillbench.weekly import scorecard_week

    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        raise UsageError(f"{run_dir}: not a folder (RUN_DIR is a week's folder that holds {MANIFEST_FILE})")
    if not (run_dir / MANIFEST_FILE).is_file():
        raise UsageError(f"{run_dir}: no {MANIFEST_FILE} (run `skillbench signals {run_dir}` first)")
    n_resamples = DEFAULT_RESAMPLES if args.bootstrap is None else args.bootstrap
    if n_resamples < 1:
        raise UsageError(f"--bootstrap {args.bootstrap}: must be at least 1")
    try:
        result = scorecard_week(run_dir, args.history or "", write=True, run_key=args.run_key,
                                n_resamples=n_resamples, seed=args.seed, site=args.site,
                                ctx=PassContext(wait=args.wait))
    except (LedgerError, HistoryError) as exc:
        raise UsageError(str(exc)) from exc
    print(result.path)
    if not result.complete:
        why = "; ".join(result.data.incomplete_reasons) or "reconciliation incomplete"
        print(f"skillbench scorecard: {run_dir}: INCOMPLETE — {why}", file=sys.stderr)
        return 1
    return 0
