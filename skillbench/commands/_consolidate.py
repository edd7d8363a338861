"""``skillbench consolidate``: merge the legs of a CI matrix into one run directory, failing closed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from skillbench.commands import add_wait_arg, positive_int


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "consolidate",
        help="merge the legs of `generate --shard i/N` (or `judge --shard i/N`) into one run directory",
        description="Merge the legs of a CI matrix into RUN_DIR. Generate legs (each SHARD_DIR holds one leg's "
        "run directory and its shard-i-of-N.json) merge into an empty RUN_DIR, or replace an earlier consolidation "
        "of the same plan; judge legs (each ran `skillbench judge COPY --shard i/N` on a copy of the consolidated "
        "generation) merge into that generation. Nothing is written unless there is exactly one summary per shard "
        "1..N, every planned run comes from exactly the leg that owns it, and every leg ran the same commit, suite, "
        "image tag, CLI version, config and plan (judge legs: the same judge, samples, protocol, commit and "
        "generation). A leg whose runs are not all complete (or graded) is merged and the result labelled "
        "INCOMPLETE (consolidation.json, reconciliation.json; the scorecard keeps the week out of the history). "
        "Exit 0 complete, 1 refused (nothing written) or merged INCOMPLETE — the report names each problem and its "
        "shard folder —, 2 usage error, RUN_DIR holding something else, or another pass holding RUN_DIR.",
    )
    p.add_argument("shard_dirs", nargs="+", metavar="SHARD_DIR", help="one folder per leg")
    p.add_argument("--out", required=True, metavar="RUN_DIR",
                   help="the merged run directory (judge legs: the consolidated generation they graded)")
    p.add_argument("--expect", type=positive_int, metavar="N",
                   help="the matrix's declared number of shards (default: what the summaries say)")
    add_wait_arg(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from skillbench.commands import UsageError
    from skillbench.consolidate import ConsolidationRefused, OutputRefused, consolidate, report_lines
    from skillbench.ledgers import CONSOLIDATION_FILE, LedgerError

    def say(line: str) -> None:
        print(f"skillbench consolidate: {line}", file=sys.stderr)

    try:
        result = consolidate(args.shard_dirs, Path(args.out), expect=args.expect, wait=args.wait, log=say)
    except ConsolidationRefused as exc:
        for line in report_lines(exc.problems, written=False):
            say(line)
        return 1
    except OutputRefused as exc:
        raise UsageError(str(exc)) from exc
    except LedgerError as exc:  # a leg's ledger that cannot be read (its one line names file and field)
        say(f"{exc} — rerun that leg; nothing was written")
        return 1
    for line in report_lines(result.problems, written=True):
        say(line)
    print(result.run_dir / CONSOLIDATION_FILE)
    if not result.complete:
        say(f"{result.run_dir}: INCOMPLETE — merged, but it is not a complete week (see {CONSOLIDATION_FILE}); "
            "rerun the leg(s) named above, then consolidate again")
        return 1
    return 0
