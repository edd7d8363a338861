"""``skillbench validate``: the preflight gate."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from skillbench.commands import add_suite_args


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "validate",
        help="check a suite's prompts, rubrics and skills before any model call",
        description="Check a suite (prompts, rubrics, skills, config). Writes nothing. "
        "Exit 0 clean, 1 errors (or warnings with --strict), 2 usage error.",
    )
    p.add_argument("suite_dir", nargs="?", default="evals", metavar="SUITE_DIR",
                   help="folder that contains test-prompts/, or a dotnet tree's tests/ and plugins/ (default: evals)")
    add_suite_args(p)
    p.add_argument("--trigger-set", metavar="FILE", help="a skill-creator trigger eval set (a JSON list of "
                   "{query, should_trigger}) for the one skill of SUITE_DIR")
    p.add_argument("--strict", action="store_true", help="treat warnings as errors")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from skillbench.commands import UsageError, suite_overrides
    from skillbench.suite import preflight

    if not Path(args.suite_dir).is_dir():
        raise UsageError(f"{args.suite_dir}: not a folder (SUITE_DIR is the folder that contains test-prompts/, or "
                         "a dotnet tree's tests/ and plugins/)")
    if args.trigger_set and not Path(args.trigger_set).is_file():
        raise UsageError(f"--trigger-set {args.trigger_set}: not a file")
    report = preflight(args.suite_dir, suite_overrides(args, trigger_set=args.trigger_set))
    for defect in report.errors + report.warnings:
        label = "error" if defect.severity == "error" else "warning"
        print(f"{label}: {defect}", file=sys.stdout)
    if not report.stopped:  # report-only: who wrote what never changes the exit code, not even with --strict
        print("\n".join(report.ownership.lines()))
    print(report.summary())
    return 0 if report.ok(strict=args.strict) else 1
