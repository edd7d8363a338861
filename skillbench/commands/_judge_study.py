"""``skillbench judge-study``: which judge to trust, at what price (several judges on the same sampled answers)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from skillbench.commands import (
    add_backend_args,
    add_judge_call_args,
    add_wait_arg,
    listed,
    model_names,
    positive_int,
    week_folder,
)

SIM_NOTE = ("simulated endpoint: its judges draw their errors from the same random numbers for the same answer, "
            "item and sample, so two judges' errors overlap more than independent judges' would — judge-against-"
            "judge κ is optimistic and the paired κ differences are tighter than on a real endpoint; each judge's "
            "agreement with the reference is not affected")


def margin(text: str) -> float:
    """An argparse type: a κ margin from 0 up to (not including) 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (use e.g. 0.10)") from None
    if not math.isfinite(value) or not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"{text}: must be from 0 up to 1 (a difference in κ), e.g. 0.10")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "judge-study", help="several judges grade the same sampled answers: agreement with intervals, cost, and "
        "which judge to use",
        description="Sample N gradeable runs (seeded) and have every judge grade each of them --repeat times, blind, "
        "with the same protocol and rubric order. Against the reference (--human FILE, else on a simulated week the "
        "simulation's truth) it measures, per judge and item type, self-agreement, raw agreement, Cohen's κ, PABAK, "
        "the false-met rate and the confusion counts, each with a bootstrap interval that resamples runs; judge "
        "against judge κ; hallucinated evidence; cost per graded run; and recommends the cheapest judge whose κ is "
        "not credibly below the best's (paired interval, --margin). Writes RUN_DIR/judge-study/ (study.md, "
        "study.csv, study-judges.csv, study-grades.csv, study.json, and study.html from notebooks/judge_study.ipynb "
        "unless --no-notebook); rerunning replaces the study. Prints the page's path. Exit 0 written, 1 the "
        "notebook failed, 2 bad input or another pass holds RUN_DIR.")
    p.add_argument("run_dir", metavar="RUN_DIR", help="a week's output folder (from skillbench generate)")
    p.add_argument("--judges", nargs="+", required=True, type=model_names, metavar="M",
                   help="the judge models to study (space- or comma-separated)")
    p.add_argument("--repeat", type=positive_int, default=2, metavar="N",
                   help="gradings of each answer by each judge (default 2; 2 or more gives self-agreement)")
    p.add_argument("--human", metavar="FILE", help="filled labels file(s) from skillbench labels export: the "
                   "reference (default on a simulated week: the simulation's truth)")
    p.add_argument("--sample", type=positive_int, default=40, metavar="N",
                   help="gradeable runs to study (default 40; with --human, among the labelled runs)")
    p.add_argument("--margin", type=margin, default=0.10, metavar="X",
                   help="non-inferiority margin on κ (default 0.10)")
    p.add_argument("--include-plugin", action="store_true", help="include plugin-arm runs")
    add_judge_call_args(p)
    p.add_argument("--no-notebook", action="store_true", help="write study.md only, not study.html")
    add_backend_args(p)
    add_wait_arg(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from skillbench.calibration import LabelsError, StudyOptions
    from skillbench.commands import UsageError
    from skillbench.generation import BackendError
    from skillbench.ledgers import RunDirBusy
    from skillbench.weekly import StageRuntime, study_week

    run_dir = week_folder(args.run_dir)
    if args.human and not Path(args.human).is_file():
        raise UsageError(f"--human {args.human}: not a file (a filled sheet from skillbench labels export)")
    opts = StudyOptions(judges=listed(args.judges) or [], repeat=args.repeat,
                        human=Path(args.human) if args.human else None, sample=args.sample, margin=args.margin,
                        seed=args.seed, jobs=args.jobs, include_plugin=args.include_plugin,
                        max_retries=args.max_retries, timeout=args.timeout)

    def say(message: str) -> None:
        print(message, file=sys.stderr)

    try:
        runtime = StageRuntime(backend=args.backend, endpoint=args.endpoint or "", wait=args.wait, log=say)
        study, html = study_week(run_dir, opts, runtime, notebook=not args.no_notebook, sim_note=SIM_NOTE)
    except (LabelsError, ValueError, BackendError) as exc:
        raise UsageError(str(exc)) from exc
    except RunDirBusy:
        raise  # the CLI's one line naming the holder
    except RuntimeError as exc:
        print(f"skillbench judge-study: the notebook failed: {exc} (the study's files are written)", file=sys.stderr)
        return 1
    rec = study.recommendation
    if rec is None:
        say("judge-study: no reference labels, so no recommendation (judges compared with each other only)")
    else:
        say(f"judge-study: best {rec.best}; recommended {rec.recommended} (margin {rec.margin:.2f})")
        for warning in rec.warnings:
            say(f"judge-study: warning: {warning}")
    if html is not None:
        say(str(html))
    from skillbench.calibration import study_dir
    from skillbench.ledgers import STUDY_MD

    print(study_dir(run_dir) / STUDY_MD)
    return 0
