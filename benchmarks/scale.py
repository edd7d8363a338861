"""Benchmark: one simulated matrix three ways — the local executor, a local Dask cluster, two shards + consolidate.

The same matrix (the tiny suite by default; haiku; no-skill and with-skill; ``--reps`` reps; the Docker sandbox;
the simulated endpoint with its shipped profiles, seed 0) runs

* (a) in this process with the local executor, ``--jobs 2``;
* (b) in this process with ``--executor dask`` against a ``distributed.LocalCluster`` of 2 worker processes × 1
  thread on loopback (allowed failures 0), ``--jobs 2``;
* (c) as 2 concurrent ``skillbench generate --shard i/2`` processes (each starts its own simulated endpoint, as CI
  legs do), ``--jobs 1`` each so the three passes run two runs at a time, then ``skillbench consolidate``.

A two-run warm-up pass goes first. On a shared 2-core machine the walls move by several seconds between runs of
this script: compare ratios measured in the same run, not across runs.

Printed: each pass's wall time and whether it came out complete, the ratios b/a and c/a, and two costs of the
client on Dask. **Overhead per run** is the headline: for every run, the time the client waited for its Dask task
(``DaskSandbox.run``: submit → result) minus the task's own compute time on the worker (the scheduler's task
stream). It is what going through Dask adds to one run — pickling the job (skills tar included) and the result
(transcript), scheduling, transfer — and does not depend on how long the run itself takes, so it says how short a
run can be before Dask stops paying. **Client CPU per run** (``time.process_time`` of the pass ÷ runs; for (b) it
includes the LocalCluster's scheduler, which runs in this process) says how many runs one client can feed.

    .venv/bin/python benchmarks/scale.py [--reps 2] [--suite DIR] [--families F ...] [--models M ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillbench.generation import GenerateOptions, docker_available, generate  # noqa: E402
from skillbench.runtime import PassContext  # noqa: E402
from skillbench.suite import load_suite  # noqa: E402
from skillbench.weekly import model_endpoint  # noqa: E402

SUITE = ROOT / "tests" / "data" / "tiny-suite"
SKILLBENCH = Path(sys.executable).with_name("skillbench")
WORKERS = 2
RUN_TASK_PREFIX = "skillbench-run-"  # DaskSandbox.task_key


def matrix_args(args: argparse.Namespace) -> list[str]:
    """The matrix as `skillbench generate` flags (the same for every pass)."""
    out = ["--backend", "sim", "--models", *args.models, "--conditions", "no-skill", "with-skill",
           "--reps", str(args.reps), "--sandbox", "docker", "--seed", "0"]
    return out + (["--families", *args.families] if args.families else [])


def options(args: argparse.Namespace, out: Path, **extra) -> GenerateOptions:
    return GenerateOptions(run_key="scale", out_dir=out, models=list(args.models),
                           conditions=["no-skill", "with-skill"], reps=args.reps, jobs=2, sandbox="docker", seed=0,
                           families=list(args.families or []), **extra)


def in_process(args: argparse.Namespace, out: Path, scheduler: str | None = None, **extra) -> dict:
    """One pass of generate in this process (on ``scheduler``'s Dask cluster when given): wall, CPU, runs and
    completeness."""
    from skillbench.cluster import executor_opener

    suite = load_suite(args.suite)
    cpu0, t0 = time.process_time(), time.perf_counter()
    report = generate(suite, options(args, out, **extra), PassContext(
        log=lambda m: None, endpoint=lambda: model_endpoint("sim", suite_dir=suite, seed=0),
        executor=executor_opener("dask", scheduler, log=lambda m: None) if scheduler else None))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    runs = sum(1 for p in out.iterdir() if (p / "metadata.json").is_file())
    return {"wall_s": wall, "cpu_s": cpu, "runs": runs, "complete": bool(report.get("complete"))}


def dask_pass(args: argparse.Namespace, out: Path) -> dict:
    """Pass (b): a LocalCluster of 2 processes × 1 thread; every run's client wait and worker compute time."""
    import dask
    from distributed import Client, LocalCluster

    from skillbench.cluster import DaskSandbox

    waits: list[float] = []
    original = DaskSandbox.run

    def timed_run(self, *a, **k):  # the client's view of one run: submit → result
        t0 = time.perf_counter()
        try:
            return original(self, *a, **k)
        finally:
            waits.append(time.perf_counter() - t0)

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True, host="127.0.0.1",
                         dashboard_address=":0") as cluster, Client(cluster, set_as_default=False) as probe:
        started = time.time()
        probe.get_task_stream(start=started)  # installs the scheduler's task-stream plugin before the pass
        DaskSandbox.run = timed_run
        try:
            result = in_process(args, out, scheduler=cluster.scheduler_address)
        finally:
            DaskSandbox.run = original
        stream = probe.get_task_stream(start=started)
    computes = [sum(s["stop"] - s["start"] for s in task["startstops"] if s["action"] == "compute")
                for task in stream if str(task["key"]).startswith(RUN_TASK_PREFIX)]
    return {**result, "waits": waits, "computes": computes}


def shard_pass(args: argparse.Namespace, root: Path) -> dict:
    """Pass (c): two `generate --shard i/2` processes at once, then `consolidate` of their folders."""
    legs = [root / f"leg-{i}" for i in (1, 2)]
    t0 = time.perf_counter()
    procs = [subprocess.Popen([str(SKILLBENCH), "generate", str(args.suite), "--run-key", "scale", *matrix_args(args),
                               "--jobs", "1", "--shard", f"{i}/2", "--out-dir", str(leg)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for i, leg in enumerate(legs, start=1)]
    errors = [p.communicate()[1] for p in procs]
    legs_wall = time.perf_counter() - t0
    week = root / "week"
    done = subprocess.run([str(SKILLBENCH), "consolidate", *map(str, legs), "--out", str(week), "--expect", "2"],
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    failed = [f"leg {i}: exit {p.returncode}: {err.strip().splitlines()[-1:]}"
              for i, (p, err) in enumerate(zip(procs, errors, strict=True), start=1) if p.returncode]
    if done.returncode:
        failed.append(f"consolidate: exit {done.returncode}: {(done.stdout + done.stderr).strip()[-400:]}")
    runs = sum(1 for p in week.iterdir() if (p / "metadata.json").is_file()) if week.is_dir() else 0
    return {"wall_s": wall, "legs_wall_s": legs_wall, "consolidate_s": wall - legs_wall, "runs": runs,
            "complete": done.returncode == 0, "problems": failed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2, help="repetitions per cell (default 2)")
    parser.add_argument("--suite", type=Path, default=SUITE, help="suite folder (default: the tiny test suite)")
    parser.add_argument("--families", nargs="+", help="run only these skill families (e.g. a slice of evals/)")
    parser.add_argument("--models", nargs="+", default=["haiku"])
    args = parser.parse_args()
    if not docker_available():
        sys.exit("scale.py: needs the Docker engine and the runner image (make setup): --executor dask runs in Docker")

    with tempfile.TemporaryDirectory(prefix="skillbench-scale-") as tmp:
        root = Path(tmp)
        in_process(args, root / "warm-up", limit=2)  # the first pass would pay for cold caches (image, CLI binary)
        a = in_process(args, root / "local")
        b = dask_pass(args, root / "dask")
        c = shard_pass(args, root / "shards")

    print(f"matrix: {args.suite.name}, {' '.join(args.models)}, no-skill + with-skill, {args.reps} reps; docker; sim")
    print(f"  (a) local executor, --jobs 2:             {a['wall_s']:6.1f}s  {a['runs']} runs  "
          f"complete={a['complete']}  client CPU {a['cpu_s'] / max(a['runs'], 1) * 1000:.0f} ms/run")
    print(f"  (b) Dask LocalCluster {WORKERS} procs x 1 thread:  {b['wall_s']:6.1f}s  {b['runs']} runs  "
          f"complete={b['complete']}  client CPU {b['cpu_s'] / max(b['runs'], 1) * 1000:.0f} ms/run "
          f"(scheduler included)")
    print(f"  (c) 2 shards + consolidate:               {c['wall_s']:6.1f}s  {c['runs']} runs  "
          f"complete={c['complete']}  (legs {c['legs_wall_s']:.1f}s, consolidate {c['consolidate_s']:.1f}s)")
    for problem in c["problems"]:
        print(f"      {problem}")
    print(f"ratios: b/a = {b['wall_s'] / a['wall_s']:.2f}, c/a = {c['wall_s'] / a['wall_s']:.2f}")
    waits, computes = b["waits"], b["computes"]
    if waits and computes:
        overhead = statistics.mean(waits) - statistics.mean(computes)
        print(f"Dask client overhead per run: {overhead * 1000:.0f} ms (client wait {statistics.mean(waits):.2f}s "
              f"mean over {len(waits)} attempts - worker compute {statistics.mean(computes):.2f}s mean over "
              f"{len(computes)} tasks; median wait {statistics.median(waits):.2f}s, "
              f"median compute {statistics.median(computes):.2f}s)")
    print(json.dumps({"a": a, "b": {k: v for k, v in b.items() if k not in ("waits", "computes")},
                      "c": c}, default=str))


if __name__ == "__main__":
    main()
