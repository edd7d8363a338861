"""Benchmark: the judge's dollars per graded run for the bundled suite's week — synchronous, synchronous with
prompt caching, batched (Message Batches) — as ratios of the synchronous design. Aim: batched ≤ 0.5.

The week is the weekly chain's judging: the rubric judge (1 sample), the pairwise judge (both orders) and
calibration (``--repeat 3``, the chain's default), each design on a fresh copy of one simulated week of the bundled
suite (``reports/demo-history/suite/weekly/demo-w01``, else a week generated into a temp dir) and a fresh simulated
endpoint with seed 0, so every design asks the same questions. Dollars come from the usage the endpoint reported,
priced by ``skillbench.prices`` (the batch price for batched replies). Measured once, nothing timed.

    .venv/bin/python benchmarks/judge_cost.py [--week RUN_DIR] [--repeat 3] [--jobs 4]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillbench.calibration import CalibrationOptions, calibrate  # noqa: E402
from skillbench.judge import (  # noqa: E402
    JudgeOptions,
    judge_pairs,  # noqa: E402
    judge_run_dir,
)
from skillbench.runtime import PassContext  # noqa: E402
from skillbench.weekly import model_endpoint  # noqa: E402

DEMO_WEEK = ROOT / "reports" / "demo-history" / "suite" / "weekly" / "demo-w01"
DESIGNS = {  # name: (batch, cache)
    "synchronous": (False, False),
    "synchronous + cache": (False, True),
    "batched": (True, False),
    "batched + cache": (True, True),
}
LEDGERS = ("scores.csv", "judge-skips.csv", "judge.json", "pairs.csv", "judge-batches.json", "calibration.csv",
           "calibration-grades.csv", "calibration.md", "pairwise-bias.csv", "sentinel-grades.csv", "sentinel.json")


def source_week(week: str, tmp: Path) -> Path:
    if week:
        return Path(week)
    if DEMO_WEEK.is_dir():
        return DEMO_WEEK
    out = tmp / "generated" / "bench-w01"
    subprocess.run([sys.executable, "-m", "skillbench.cli", "generate", str(ROOT / "evals"), "--run-key", "bench-w01",
                    "--out-dir", str(out), "--backend", "sim", "--reps", "1", "--jobs", "2"], check=True, cwd=ROOT)
    return out


def fresh_copy(week: Path, dest: Path) -> Path:
    """The week without any judging (its runs, manifest and plan only)."""
    shutil.copytree(week, dest, ignore=shutil.ignore_patterns("judge.json", "judge_cost.txt", "judge_cost.json"))
    for name in LEDGERS:
        (dest / name).unlink(missing_ok=True)
    return dest


def measure(week: Path, batch: bool, cache: bool, repeat: int, jobs: int) -> dict[str, float]:
    quiet = lambda _m: None  # noqa: E731
    with model_endpoint("sim") as ep:
        rubric = judge_run_dir(week, JudgeOptions(jobs=jobs, batch=batch, cache=cache),
                               PassContext(endpoint=ep, log=quiet))
        pairs = judge_pairs(week, JudgeOptions(jobs=jobs, batch=batch), PassContext(endpoint=ep, log=quiet))
        cal = calibrate(week, CalibrationOptions(repeat=repeat, jobs=jobs, batch=batch, cache=cache,
                                                 endpoint_kind=ep.kind), PassContext(endpoint=ep, log=quiet))
    last = json.loads((week / "judge.json").read_text())["passes"][-1]
    return {"graded": rubric.graded, "rubric": rubric.cost_usd, "pairs": pairs.cost_usd, "calibration": cal.cost_usd,
            "total": rubric.cost_usd + pairs.cost_usd + cal.cost_usd, "ungraded": rubric.ungraded_items,
            "cache_write": last.get("cache", {}).get("cache_write_tokens", 0),
            "cache_saved": last.get("cache", {}).get("saved_usd", 0.0)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--week", default="", help="a generated week (default: the bundled demo's first week)")
    ap.add_argument("--repeat", type=int, default=3, help="calibration gradings per answer (default 3)")
    ap.add_argument("--jobs", type=int, default=4, help="synchronous judge calls at once (default 4)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        week = source_week(args.week, tmp)
        print(f"week: {week} (judge: rubric 1 sample, pairs both orders, calibration --repeat {args.repeat})")
        rows = {}
        for name, (batch, cache) in DESIGNS.items():
            rows[name] = measure(fresh_copy(week, tmp / name.replace(" ", "_").replace("+", "")), batch, cache,
                                 args.repeat, args.jobs)
    base = rows["synchronous"]
    print(f"{'design':22} {'graded':>6} {'$/graded run':>12} {'rubric':>8} {'pairs':>8} {'calib.':>8} "
          f"{'ratio':>6} {'rubric ratio':>12}")
    for name, r in rows.items():
        per_run = r["total"] / max(r["graded"], 1)
        print(f"{name:22} {r['graded']:6d} {per_run:12.5f} {r['rubric']:8.4f} {r['pairs']:8.4f} "
              f"{r['calibration']:8.4f} {r['total'] / base['total']:6.3f} {r['rubric'] / base['rubric']:12.3f}")
    for name, r in rows.items():
        if r["cache_write"]:
            print(f"{name}: the rubric pass wrote {r['cache_write']} cache tokens (its own saving "
                  f"${r['cache_saved']:.4f}: writes are repaid by calibration's first repeat)")
    batched = rows["batched"]["total"] / base["total"]
    print(f"batched / synchronous = {batched:.3f} (aim ≤ 0.5): {'met' if batched <= 0.5 + 1e-9 else 'NOT met'}")
    return 0 if batched <= 0.5 + 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
