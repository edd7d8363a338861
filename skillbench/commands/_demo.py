"""``skillbench demo-history``: N simulated weeks with a scripted story, and whether the measurement saw it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from skillbench.commands import add_suite_args, listed, model_names, positive_int
from skillbench.weekly import DEFAULT_DRAFT_GAIN, DEFAULT_DRIFT, DEFAULT_JUDGE_LENIENCY


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo-history", help="run N simulated weeks with scripted moves (a skill edit, a model drift)",
        description="Run the weekly chain for N simulated weeks on a copy of the suite, with a scripted story: a "
        "skill edit that raises one family's lift (week --edit-week), a judge that turns lenient (week "
        "--judge-week; the drift sentinel should flag it) and a model-build drift that moves one model's baseline "
        "(week --drift-week). Writes REPORTS/demo-history/demo.md (which moves were scripted and "
        "whether the week-over-week rule caught them), demo.html and explore_weeks.html, and each week's report "
        "in REPORTS/demo-wNN/. Rerunning resumes. Prints the page's path. Exit 0 every week complete, 1 a week "
        "failed, 2 usage error.")
    p.add_argument("--weeks", type=positive_int, default=8, metavar="N", help="simulated weeks (default 8)")
    p.add_argument("--suite", default=None, metavar="DIR", help="suite folder (default: the bundled evals/)")
    p.add_argument("--models", nargs="+", type=model_names, metavar="M", help="default: the suite config")
    p.add_argument("--reps", type=positive_int, metavar="k", help="repetitions per cell (default: the suite config)")
    p.add_argument("--families", nargs="+", metavar="F", help="copy only these families into the demo's suite")
    p.add_argument("--jobs", type=positive_int, default=None, metavar="N", help="runs and judge calls at once")
    p.add_argument("--seed", type=int, default=0, help="seed of the plans and the simulated endpoint")
    p.add_argument("--reports", default=None, metavar="DIR", help="reports folder (default: reports/)")
    p.add_argument("--out-dir", default=None, metavar="DIR", help="the demo's folder (default REPORTS/demo-history/)")
    p.add_argument("--sandbox", choices=["docker", "local"], help="default docker when the engine answers")
    p.add_argument("--edit-week", type=int, default=None, metavar="W",
                   help="week of the skill edit (0: none; default: 60 %% of the way in, at least week 4 — week 5 of 8)")
    p.add_argument("--drift-week", type=int, default=None, metavar="W",
                   help="week of the model drift (0: none; default: 85 %% of the way in, after the edit — week 7 of 8)")
    p.add_argument("--edit-family", default="", metavar="F", help="family edited (default: the one with most prompts)")
    p.add_argument("--drift-model", default="", metavar="M",
                   help="model that drifts (default: the one the skill helps most in the profiles)")
    p.add_argument("--drift", type=float, default=DEFAULT_DRIFT, metavar="X",
                   help=f"rise of the drifting model's baseline must coverage (default {DEFAULT_DRIFT})")
    p.add_argument("--judge-week", type=int, default=None, metavar="W",
                   help="week the judge becomes more lenient, for the drift sentinel to flag (0: none; default: the "
                   "last week)")
    p.add_argument("--judge-leniency", type=float, default=DEFAULT_JUDGE_LENIENCY, metavar="X",
                   help=f"the judge's added leniency from that week (default {DEFAULT_JUDGE_LENIENCY})")
    p.add_argument("--draft-gain", type=float, default=DEFAULT_DRAFT_GAIN, metavar="X",
                   help="share of the skill's effect the edited family's draft is worth, -1 to 1 (default "
                   f"{DEFAULT_DRAFT_GAIN}: a draft whose advice misleads)")
    p.add_argument("--profiles", metavar="FILE",
                   help="the simulated endpoint's profile file the story starts from (default: the shipped one)")
    p.add_argument("--quiet", action="store_true", help="do not relay the notebooks' output")
    add_suite_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from skillbench.commands import UsageError, suite_overrides
    from skillbench.commands._weekly import TerminalLines
    from skillbench.paths import DEFAULT_SUITE, REPORTS_DIR
    from skillbench.weekly import DEFAULT_JOBS, DemoOptions, WeeklyError, WeeklyOptions, run_demo

    weekly = WeeklyOptions(suite_dir=Path(args.suite) if args.suite else DEFAULT_SUITE, backend="sim",
                           models=listed(args.models), reps=args.reps, families=listed(args.families),
                           jobs=args.jobs or DEFAULT_JOBS, seed=args.seed, sandbox=args.sandbox,
                           reports_dir=Path(args.reports) if args.reports else REPORTS_DIR,
                           suite_overrides=suite_overrides(args))
    terminal = TerminalLines()
    weekly.stream = None if args.quiet else terminal
    opts = DemoOptions(weekly=weekly, weeks=args.weeks, out_dir=Path(args.out_dir) if args.out_dir else None,
                       edit_week=args.edit_week, drift_week=args.drift_week, edit_family=args.edit_family,
                       drift_model=args.drift_model, drift=args.drift,
                       judge_week=args.judge_week, judge_leniency=args.judge_leniency,
                       before_gain=args.draft_gain, base_profiles=Path(args.profiles) if args.profiles else None)
    try:
        result = run_demo(opts, log=terminal.line, progress=terminal.progress)
    except (ValueError, WeeklyError) as exc:
        raise UsageError(str(exc)) from exc
    finally:
        terminal.close()
    for line in result.failed:
        print(f"skillbench demo-history: {line} — rerun the same command to resume", file=sys.stderr)
    print(result.page)
    return 0 if result.ok else 1
