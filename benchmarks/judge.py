"""Benchmark: rubric-judge throughput on the simulated endpoint, and what the ledger's durability costs.

Not a test. Builds a synthetic week of N runs (answers composed the way the simulated agent writes them,
in run folders shaped like generation's), then per ``--jobs`` value grades it from scratch and prints
runs/s and items/s, the share of wall time spent inside judge calls, and the time of a resume pass that
finds everything graded (the ledger read). The simulated judge answers in about a millisecond, so this
measures skillbench's own overhead: request building, verification, fsync'd appends.

    .venv/bin/python benchmarks/judge.py [--runs 200] [--jobs 1 2 4] [--samples 1]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillbench.judge import JudgeClient, JudgeOptions, judge_run_dir  # noqa: E402
from skillbench.runtime import PassContext  # noqa: E402
from skillbench.sim._answers import compose  # noqa: E402
from skillbench.suite import load_suite  # noqa: E402
from skillbench.weekly import model_endpoint  # noqa: E402

SUITE = ROOT / "tests" / "data" / "tiny-suite"


def synthetic_week(out: Path, n_runs: int, seed: int = 0) -> Path:
    """``n_runs`` finished runs over the tiny suite's lift prompts, half no-skill and half with-skill."""
    suite = load_suite(SUITE)
    specs = [p for p in suite.prompts if p.preference_eligible]
    rnd = random.Random(seed)
    for i in range(n_runs):
        spec = specs[i % len(specs)]
        condition = ("no-skill", "with-skill")[(i // len(specs)) % 2]
        model = ("sonnet", "haiku")[(i // (2 * len(specs))) % 2]
        rep = i // (4 * len(specs)) + 1
        run_id = f"{spec.name}-{model}-{condition}-r{rep}-bench"
        items = [(it.type, it.text) for it in spec.test.rubric]
        stated = [k for k in range(len(items)) if rnd.random() < 0.5]
        answer = compose(items, stated, rnd, 1.0)
        folder = out / run_id
        folder.mkdir(parents=True)
        shutil.copy2(spec.path, folder / "test-prompt.json")
        skills = [spec.family] if condition == "with-skill" else []
        events = [{"type": "system", "subtype": "init", "skills": skills, "model": f"claude-{model}-5-5"},
                  {"type": "assistant", "message": {"model": f"claude-{model}-5-5",
                                                    "content": [{"type": "text", "text": answer}]}},
                  {"type": "result", "subtype": "success", "is_error": False, "result": answer, "num_turns": 1,
                   "total_cost_usd": 0.01, "duration_ms": 1000}]
        (folder / "transcript.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n")
        meta = {"run_id": run_id, "prompt": spec.name, "skill_family": spec.family, "skill_leaf": spec.leaf,
                "model": model, "condition": condition, "rep": rep, "dormancy": 0, "exit_code": 0,
                "attempts": [{"attempt": 1}], "endpoint": "simulated"}
        (folder / "metadata.json").write_text(json.dumps(meta))
    return out


class TimedClient(JudgeClient):
    """The real client, adding up the seconds spent inside calls."""

    seconds = 0.0

    def create(self, request, headers):
        t0 = time.perf_counter()
        try:
            return super().create(request, headers)
        finally:
            TimedClient.seconds += time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--samples", type=int, choices=[1, 2], default=1)
    args = ap.parse_args()
    import skillbench.judge._rubric as judge_module

    judge_module.JudgeClient = TimedClient  # count call time inside the unchanged pass
    with tempfile.TemporaryDirectory() as tmp, model_endpoint("sim") as ep:
        template = synthetic_week(Path(tmp) / "template", args.runs)
        n_items = sum(len(json.loads((f / "test-prompt.json").read_text())["rubric"]) for f in template.iterdir())
        print(f"{args.runs} runs, {n_items} rubric items, samples={args.samples}")
        print(f"{'jobs':>4} {'seconds':>8} {'runs/s':>8} {'items/s':>8} {'in calls':>9} {'resume s':>9}")
        for jobs in args.jobs:
            week = Path(tmp) / f"week-{jobs}"
            shutil.copytree(template, week)
            opts = JudgeOptions(jobs=jobs, samples=args.samples, max_retries=1)
            TimedClient.seconds = 0.0
            t0 = time.perf_counter()
            report = judge_run_dir(week, opts, PassContext(endpoint=ep, log=lambda m: None))
            wall = time.perf_counter() - t0
            t1 = time.perf_counter()
            judge_run_dir(week, opts, PassContext(endpoint=ep, log=lambda m: None))
            resume = time.perf_counter() - t1
            assert report.graded == args.runs and report.ok
            share = TimedClient.seconds / jobs / wall
            print(f"{jobs:>4} {wall:>8.2f} {args.runs / wall:>8.1f} {n_items / wall:>8.1f} {share:>8.0%} "
                  f"{resume:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
