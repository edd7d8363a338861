"""``skillbench lint-skills [SUITE_DIR]``: static checks of every skill, and with ``--judge`` the anchored judge."""

from __future__ import annotations

import argparse
import sys

from skillbench.commands import (
    add_backend_args,
    add_judge_call_args,
    add_suite_args,
    listed,
    model_names,
    positive_int,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "lint-skills", help="static checks of each SKILL.md and an anchored LLM judge of four quality dimensions",
        description="Check every skill family and sub-skill before any run: 'Use when' contexts, exclusions, "
        "description length, lines against the category's target (category from frontmatter 'category:' or "
        "[quality].categories), links that resolve, sub-skills reachable from the hub, references/ where the size "
        "calls for it. --judge adds PluginEval's anchored dimensions (triggering accuracy, orchestration fitness, "
        "output quality, scope calibration; five anchors each, evidence quoted and verified), --judges K samples "
        "with kappa per dimension, and the composite (weights normalised to sum to 1). Writes skill-quality.csv, "
        ".json, .md and .html to --out, else the --week run directory, else SUITE_DIR/quality/. Exit 1 when a "
        "check found an error or a score stayed ungraded.")
    p.add_argument("suite_dir", nargs="?", default="evals", metavar="SUITE_DIR",
                   help="the suite (the folder with test-prompts/; default evals)")
    p.add_argument("--judge", action="store_true", help="score each family with the anchored LLM judge")
    p.add_argument("--judges", type=positive_int, default=3, metavar="K",
                   help="independent judge samples per family (default 3: Fleiss' kappa; 2: Cohen's)")
    p.add_argument("--judge-model", type=model_names, metavar="M", help="judge model (default the rubric judge's)")
    p.add_argument("--week", metavar="RUN_DIR",
                   help="a week's run directory: write there, with its measured trigger F1 beside the prediction")
    p.add_argument("--out", metavar="DIR", help="write the files here (default: --week, else SUITE_DIR/quality/)")
    p.add_argument("--families", nargs="+", metavar="F", help="lint only these families")
    add_suite_args(p)
    p.add_argument("--no-html", action="store_true", help="do not write skill-quality.html")
    add_backend_args(p)
    add_judge_call_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from skillbench.commands import UsageError, suite_overrides
    from skillbench.generation import BackendError
    from skillbench.weekly import LintOptions, QualityError, StageRuntime, lint_skills

    suite_dir = Path(args.suite_dir)
    if not suite_dir.is_dir():
        raise UsageError(f"{args.suite_dir}: not a folder (SUITE_DIR is the folder that contains test-prompts/)")
    if args.week and not Path(args.week).is_dir():
        raise UsageError(f"--week {args.week}: not a folder (RUN_DIR is a week's output folder)")
    try:
        options = LintOptions(judge=args.judge, judges=args.judges, judge_model=args.judge_model or "", seed=args.seed,
                              week=args.week or "", out=args.out or "", measured=True if args.week else None,
                              suite=suite_overrides(args),
                              families=listed(args.families) or (), jobs=args.jobs, max_retries=args.max_retries,
                              timeout=args.timeout, html=not args.no_html)
        runtime = StageRuntime(backend=args.backend, endpoint=args.endpoint or "",
                               log=lambda m: print(m, file=sys.stderr))
        result, paths = lint_skills(suite_dir, options, runtime)
    except (QualityError, BackendError) as exc:
        raise UsageError(str(exc)) from exc
    c = result.severity_counts
    print(f"lint-skills: {len(result.units)} families: {c['error']} errors, {c['warning']} warnings, "
          f"{c['info']} notes")
    if result.judge is not None:
        comp = ", ".join(f"{f} {v:.2f}" for f, v in result.composite.dropna().items())
        kap = ", ".join(f"{r.dimension} {r.kappa:.2f} ({r.reading})" if r.kappa == r.kappa else
                        f"{r.dimension} undefined" for r in result.kappa.itertuples())
        print(f"composite: {comp}\nkappa: {kap}\njudge cost: ${result.judge.cost_usd:.4f}")
    for path in paths.values():
        print(path)
    if c["error"] or result.ungraded:
        why = [f"{c['error']} static error(s)"] if c["error"] else []
        why += [f"{result.ungraded} ungraded score(s)"] if result.ungraded else []
        print(f"lint-skills: {' and '.join(why)} (see {paths.get('md', 'the page')})", file=sys.stderr)
        return 1
    return 0
