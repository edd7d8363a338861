"""Benchmark: the weekly chain on the bundled suite with the simulated endpoint — wall time by stage, and the
chain's own overhead (kernel start-up and shutdown, papermill bookkeeping, HTML export) as a share of the total.

Targets: the whole demo (``make weekly`` after set-up: 2 models × 3 conditions × 2 reps) in ≤ 5 minutes on
2 cores, overhead ≤ 20 %. A stage's overhead is its ``execute_notebook`` wall time minus the time its cells
ran (papermill records each cell's duration), plus its HTML export; the index pages are counted too.

The suite is copied to a temporary folder, so the bundled ``evals/weekly/`` history is not touched.

    .venv/bin/python benchmarks/weekly.py [--suite evals] [--jobs N] [--models sonnet haiku] [--reps 2]
                                          [--keep DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillbench.generation import default_jobs, docker_available, machine_facts  # noqa: E402
from skillbench.weekly import WeeklyOptions, run_weekly  # noqa: E402

TARGET_TOTAL_S = 300.0
TARGET_OVERHEAD = 0.20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default=str(ROOT / "evals"), help="suite to run (copied first)")
    parser.add_argument("--jobs", type=int, default=None, help="default: one per core the runs get, as weekly's")
    parser.add_argument("--models", nargs="+", default=None, help="default: the suite config")
    parser.add_argument("--reps", type=int, default=None, help="default: the suite config")
    parser.add_argument("--keep", metavar="DIR", help="keep the suite copy and reports in DIR")
    parser.add_argument("--json", metavar="FILE", help="also write the measurements as JSON")
    args = parser.parse_args()

    if not args.jobs:
        choice = default_jobs(machine_facts("docker" if docker_available() else "local"))
        args.jobs = choice.jobs
        print(f"jobs {choice.jobs} ({choice.why})", file=sys.stderr)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="skillbench-bench-weekly-"))
    work.mkdir(parents=True, exist_ok=True)
    suite = work / "suite"
    if suite.exists():
        shutil.rmtree(suite)
    shutil.copytree(args.suite, suite, ignore=shutil.ignore_patterns("weekly"))
    opts = WeeklyOptions(suite_dir=suite, run_key="bench", backend="sim", models=args.models, reps=args.reps,
                         jobs=args.jobs, reports_dir=work / "reports")
    t0 = time.perf_counter()
    result = run_weekly(opts, log=lambda line: print(line, file=sys.stderr, flush=True))
    total = time.perf_counter() - t0
    try:
        rows = []
        for s in result.stages:
            cells = s.cell_seconds or 0.0
            kernel = max((s.seconds or 0.0) - cells, 0.0)
            rows.append({"stage": f"{s.number}_{s.name}", "status": s.status, "wall_s": s.seconds or 0.0,
                         "cells_s": cells, "kernel_s": kernel, "export_s": s.export_seconds or 0.0})
        stage_sum = sum(r["wall_s"] + r["export_s"] for r in rows)
        overhead = sum(r["kernel_s"] + r["export_s"] for r in rows) + max(total - stage_sum, 0.0)
        print(f"\nweekly chain on {args.suite} ({result.state.get('sandbox')} sandbox, jobs {args.jobs}): "
              f"{'complete' if result.ok else 'FAILED at ' + str(result.failed_stage)}\n")
        print(f"{'stage':<16}{'wall s':>9}{'cells s':>9}{'kernel s':>10}{'export s':>10}")
        for r in rows:
            print(f"{r['stage']:<16}{r['wall_s']:>9.1f}{r['cells_s']:>9.1f}{r['kernel_s']:>10.1f}{r['export_s']:>10.2f}")
        print(f"{'chain (other)':<16}{max(total - stage_sum, 0.0):>9.1f}")
        share = overhead / total if total else float("nan")
        met_total = "met" if total <= TARGET_TOTAL_S else "MISSED"
        print(f"\ntotal {total:.1f} s (target ≤ {TARGET_TOTAL_S:.0f} s: {met_total})"
              f"; overhead {overhead:.1f} s = {share:.1%} "
              f"(target ≤ {TARGET_OVERHEAD:.0%}: {'met' if share <= TARGET_OVERHEAD else 'MISSED'})")
        gen = next((r for r in rows if r["stage"] == "01_generate"), None)
        if gen:
            print(f"generation is {gen['cells_s'] / total:.0%} of the total")
        if args.json:
            Path(args.json).write_text(json.dumps({"total_s": total, "overhead_s": overhead, "overhead_share": share,
                                                   "stages": rows, "ok": result.ok,
                                                   "sandbox": result.state.get("sandbox")}, indent=2))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
