"""``skillbench optimize-description FAMILY``: a better description, chosen on train, reported on held-out test."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from skillbench.commands import (
    add_backend_args,
    add_suite_args,
    model_names,
    nonnegative_int,
    positive_float,
    positive_int,
)

DEFAULT_NEAR_MISSES = 4  # generated should-not queries (one model call); 0 keeps the suite's queries alone


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "optimize-description", help="rewrite a family's description from train-set trigger failures; report test F1",
        description="Build the family's trigger set (its prompts and trigger-evals/<family>.json should trigger; "
        "dormancy prompts, its should-not queries, other families' prompts and --near-misses N generated "
        "near-misses should not), split it 60/40 train/test per stratum with --seed (the test side rounded up), "
        "measure the original description with the real CLI (k runs per query, only the "
        "description changed), ask the rewriter for improved descriptions from the train failures alone, keep "
        "the best on train and report its test F1 against the original's. Writes a new folder "
        "OUT_DIR/<family>-<stamp>/ (SKILL.md, SKILL.md.diff, candidates.csv, trigger-set.json, optimize.md); the "
        "suite is never written. Exit 0 done, 1 the runs, the near-miss generator or the rewriter failed, 2 usage "
        "error — including a family whose test split would have fewer than 4 should-trigger or 4 should-not queries.")
    p.add_argument("family", metavar="FAMILY", help="the skill family (its hub SKILL.md's description is rewritten)")
    p.add_argument("--suite", default="evals", metavar="SUITE_DIR", help="the suite (default: evals)")
    add_suite_args(p)
    p.add_argument("--trigger-set", metavar="FILE",
                   help="more queries for FAMILY, skill-creator's format [{\"query\": …, \"should_trigger\": …}]")
    p.add_argument("--near-misses", type=nonnegative_int, default=DEFAULT_NEAR_MISSES, metavar="N",
                   help="should-not queries the rewriter model proposes from the descriptions alone, labelled "
                   f"generated (default {DEFAULT_NEAR_MISSES}; 0: none); their cost counts toward --max-total-usd")
    p.add_argument("--iterations", type=nonnegative_int, default=3, metavar="N", help="rewrites to try (default 3)")
    p.add_argument("--k", type=positive_int, default=3, metavar="K", help="runs per query (default 3)")
    p.add_argument("--out-dir", metavar="DIR", help="default reports/optimize/")
    p.add_argument("--max-total-usd", type=positive_float, metavar="X",
                   help="stop starting runs once the runs and rewriter calls cost X")
    add_backend_args(p)
    p.add_argument("--model", type=model_names, default="sonnet", metavar="M", help="the model the CLI runs")
    p.add_argument("--rewriter-model", default=None, metavar="M",
                   help="the rewriter and near-miss generator (default claude-opus-5-5)")
    p.add_argument("--jobs", type=positive_int, default=2, metavar="N", help="runs at once, at most (default 2)")
    p.add_argument("--sandbox", choices=["docker", "local"], help="default docker when the engine answers")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from skillbench.commands import UsageError, suite_overrides
    from skillbench.generation import BackendError
    from skillbench.judge import SlotFailed
    from skillbench.ledgers import OPTIMIZE_DIR, OPTIMIZE_REPORT_MD
    from skillbench.paths import REPORTS_DIR
    from skillbench.quality import RunSpec, TriggerSetError, score_text
    from skillbench.suite import SuiteError, load_suite
    from skillbench.weekly import DEFAULT_REWRITER_MODEL, OptimizeError, OptimizeOptions, run_optimize

    if not Path(args.suite).is_dir():
        raise UsageError(f"--suite {args.suite}: not a folder")
    try:
        suite = load_suite(args.suite, suite_overrides(args))
    except SuiteError as exc:
        print(f"skillbench optimize-description: suite has errors: {exc}", file=sys.stderr)
        return 1
    spec = RunSpec(backend=args.backend, endpoint=args.endpoint or "", model=args.model, k=args.k, jobs=args.jobs,
                   seed=args.seed, sandbox=args.sandbox or "")
    out_dir = Path(args.out_dir) if args.out_dir else REPORTS_DIR / OPTIMIZE_DIR
    try:
        options = OptimizeOptions(iterations=args.iterations, near_misses=args.near_misses,
                                  rewriter_model=args.rewriter_model or DEFAULT_REWRITER_MODEL,
                                  max_total_usd=args.max_total_usd,
                                  trigger_set=Path(args.trigger_set) if args.trigger_set else None)
        result, paths = run_optimize(suite, args.family, out_dir, options, spec=spec)
    except (TriggerSetError, OptimizeError) as exc:
        raise UsageError(str(exc)) from exc
    except (BackendError, SlotFailed) as exc:
        print(f"skillbench optimize-description: {exc}", file=sys.stderr)
        return 1
    first, win = result.candidates[0], result.winner
    won, was = score_text(win.test.get("f1")), score_text(first.test.get("f1"))
    print(f"optimize-description {args.family}: selected candidate {win.index}, test F1 {won} vs original {was}; "
          f"spent ${result.spent_usd:.4f}"
          + (" (--max-total-usd hit)" if result.capped else ""))
    print(f"optimize-description {args.family}: {result.call}")
    print(paths[OPTIMIZE_REPORT_MD])
    return 0

