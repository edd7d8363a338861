"""``skillbench validate``: the preflight gate."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "validate",
        help="check a suite's prompts, rubrics and skills before any model call",
        description="Check a suite (prompts, rubrics, skills, config). Writes nothing. "
        "Exit 0 clean, 1 errors (or warnings with --strict), 2 usage error.",
    )
    p.add_argument("suite_dir", nargs="?", default="evals", metavar="SUITE_DIR",
                   help="folder that contains test-prompts/, or a dotnet tree's tests/ and plugins/ (default: evals)")
    from skillbench.suite import FORMATS, detection_summary

    # The registry's names and detection rules are read only when used (a bad --format, --help): declaring them
    # imports no layout, so building the command line stays as fast as before.
    fmt = p.add_argument("--format", choices=FORMATS, metavar="FORMAT", default=None,
                         help="suite layout, one of %(choices)s (default: detected — %(detection)s)")
    fmt.detection = _Lazy(detection_summary)  # type: ignore[attr-defined] - read by argparse's %(detection)s
    p.add_argument("--trigger-set", metavar="FILE", help="a skill-creator trigger eval set (a JSON list of "
                   "{query, should_trigger}) for the one skill of SUITE_DIR")
    p.add_argument("--skills-root", metavar="DIR", help="skills tree (overrides [suite].skills_root); for a dotnet "
                   "tree, another tree's plugins/ folder")
    p.add_argument("--site-base", metavar="URL", help="published site base of skill_url (overrides the config)")
    p.add_argument("--heldout-prefix", action="append", metavar="P",
                   help="name prefix of held-out prompts; repeatable (overrides the config)")
    p.add_argument("--skip-missing", action="store_true",
                   help="a task's workspace file the tree lacks drops it and what uses it (a warning each), "
                        "instead of an error")
    p.add_argument("--strict", action="store_true", help="treat warnings as errors")
    p.set_defaults(func=run)


class _Lazy:
    """A help-text value computed when the help is printed."""

    def __init__(self, text: Callable[[], str]):
        self.text = text

    def __str__(self) -> str:
        return self.text()


def run(args: argparse.Namespace) -> int:
    from skillbench.commands import UsageError
    from skillbench.suite import preflight

    if not Path(args.suite_dir).is_dir():
        raise UsageError(f"{args.suite_dir}: not a folder (SUITE_DIR is the folder that contains test-prompts/, or "
                         "a dotnet tree's tests/ and plugins/)")
    if args.trigger_set and not Path(args.trigger_set).is_file():
        raise UsageError(f"--trigger-set {args.trigger_set}: not a file")
    if args.skills_root and not Path(args.skills_root).is_dir():
        raise UsageError(f"--skills-root {args.skills_root}: not a folder")
    report = preflight(args.suite_dir, skills_root=args.skills_root, site_base=args.site_base,
                       heldout_prefixes=args.heldout_prefix, format=args.format,
                       skip_missing=args.skip_missing, trigger_set=args.trigger_set)
    for defect in report.errors + report.warnings:
        label = "error" if defect.severity == "error" else "warning"
        print(f"{label}: {defect}", file=sys.stdout)
    print(report.summary())
    return 0 if report.ok(strict=args.strict) else 1
