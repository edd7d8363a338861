"""``skillbench identifiers``: check a week's graded answers for fabricated identifiers."""

from __future__ import annotations

import argparse
from pathlib import Path

from skillbench.commands import add_selection_args, add_wait_arg, listed, week_folder


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "identifiers",
        help="check a week's graded answers for fabricated identifiers (RUN_DIR/identifiers.csv)",
        description="Extract the identifiers every graded answer uses (the runs the rubric judge grades) and resolve "
        "each against the API surfaces the suite declares ([[api]] in skillbench.toml): resolved, unresolved (a "
        "fabrication candidate) or unchecked (a language or library the suite did not declare, a surface not "
        "cached). Appends RUN_DIR/identifiers.csv and writes identifiers.json; resumes: an answer already checked "
        "is kept. A suite without [[api]] is one note, never an error. The weekly chain runs it in its judging "
        "stage. Exit 0 done (or nothing declared), 2 usage, config or ledger error, or another pass holds the week.",
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="a week's folder (holds manifest.csv)")
    p.add_argument("--suite", metavar="SUITE_DIR",
                   help="the suite whose skillbench.toml declares the surfaces (default: the config the week was "
                   "generated with: run.json's config_file, else its suite_dir's)")
    p.add_argument("--config", metavar="FILE", help="a skillbench.toml to read instead (a repository that commits "
                   "none, such as qdrant's)")
    add_selection_args(p, what="check")
    p.add_argument("--include-plugin", action="store_true", help="check the plugin arm's answers too")
    p.add_argument("--fresh", action="store_true", help="drop identifiers.csv and check every answer again")
    add_wait_arg(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from skillbench.commands import UsageError
    from skillbench.identifiers import IdentifierOptions, IdentifierPassError, SurfaceError
    from skillbench.judge import WeekSelectionError, check_selection
    from skillbench.ledgers import LedgerError
    from skillbench.runtime import PassContext, stderr_log
    from skillbench.weekly import identifiers_week

    run_dir = week_folder(args.run_dir)
    if args.suite and not Path(args.suite).is_dir():
        raise UsageError(f"--suite {args.suite}: not a folder (SUITE_DIR holds the suite's skillbench.toml)")
    try:
        selection = check_selection(run_dir, listed(args.prompts) or (), listed(args.families) or ())
        opts = IdentifierOptions(suite_dir=Path(args.suite) if args.suite else None,
                                 config=Path(args.config) if args.config else None,
                                 selection=selection,
                                 include_plugin=args.include_plugin, fresh=args.fresh)
        report = identifiers_week(run_dir, opts, PassContext(log=stderr_log, wait=args.wait))
    except (IdentifierPassError, SurfaceError, LedgerError, WeekSelectionError) as exc:
        raise UsageError(str(exc)) from exc
    print(report.line())
    return 0
