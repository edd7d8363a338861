"""Benchmark: per-run overhead of each sandbox, image build time, and wall-clock speedup at --jobs 1/2/3.

Overhead is measured against a bare CLI call (a subprocess with a fresh HOME, nothing else) on the same
simulated endpoint, with a profile that answers in one turn, so the CLI's own work is the same in every
case. Target: ≤ 0.15 s per run for the docker sandbox including the skill copy. ``docker, warm`` is what generate
runs: each run's container made and started while the run before it ran (:mod:`skillbench.generation._warm`).

    .venv/bin/python benchmarks/generation.py [--runs 10] [--skip-build] [--skip-jobs]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillbench.generation import (  # noqa: E402
    CliCall,
    DockerSandbox,
    GenerateOptions,
    LocalSandbox,
    RelayPlan,
    build_image,
    claude_path,
    cli_args,
    cli_env,
    docker_available,
    generate,
)
from skillbench.generation._image import RUNNER_HOME  # noqa: E402
from skillbench.runtime import PassContext  # noqa: E402
from skillbench.suite import load_suite  # noqa: E402
from skillbench.weekly import model_endpoint  # noqa: E402

SUITE = ROOT / "tests" / "data" / "tiny-suite"
ONE_TURN = {"trigger": 0.0, "file_read": 0.0, "follow_link": 0.0, "self_serve": 0.0, "web_search": 0.0,
            "deny_rate": 0.0, "budget_cross": 0.0}


def bare_run(argv, env) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        run_env = {**env, "HOME": tmp, "TMPDIR": tmp, "PATH": f"{claude_path().parent}:/usr/bin:/bin"}
        t0 = time.perf_counter()
        subprocess.run([str(claude_path()), *argv[1:]], env=run_env, cwd=tmp, capture_output=True, check=False)
        return time.perf_counter() - t0


def sandbox_run(sandbox, argv, env, families, ep) -> float:
    t0 = time.perf_counter()  # the relay's start and stop are part of a run's cost
    sandbox.run(argv, env, families, 120, "bench", relay=RelayPlan.for_run(ep, "bench", 1))
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--skip-build", action="store_true", help="do not time a forced image rebuild")
    parser.add_argument("--skip-jobs", action="store_true", help="do not time the --jobs 1/2/3 speedup")
    args = parser.parse_args()

    suite = load_suite(SUITE)
    spec = suite.prompt("dates-day-month-swapped")
    family = [suite.family_dir("dates")]
    with tempfile.TemporaryDirectory() as tmp:
        profiles = Path(tmp) / "profiles.yaml"
        profiles.write_text(yaml.safe_dump({"models": {"haiku": ONE_TURN}}))
        with model_endpoint("sim", suite_dir=SUITE, profiles=profiles) as ep:
            call = CliCall(prompt=spec.test.prompt, model="haiku", run_id="bench")
            argv = cli_args(call, suite.config.run)
            env = cli_env(call, base_url=ep.base_url, api_key=ep.api_key, home=RUNNER_HOME, tmpdir="/tmp")
            bare_run(argv, env)  # warm the page cache
            bare = [bare_run(argv, env) for _ in range(args.runs)]
            results = {"bare CLI": bare}
            local = LocalSandbox(claude_path())
            results["local sandbox"] = [sandbox_run(local, argv, env, family, ep) for _ in range(args.runs)]
            if docker_available():
                tag = build_image(log=lambda m: None)
                docker_sb = DockerSandbox(tag, out_dir=Path(tmp))
                sandbox_run(docker_sb, argv, env, family, ep)
                results["docker sandbox"] = [sandbox_run(docker_sb, argv, env, family, ep) for _ in range(args.runs)]
                # what generate uses: the next run's container started while this one runs, removed behind it
                warm_sb = DockerSandbox(tag, out_dir=Path(tmp), warm=True)
                try:
                    sandbox_run(warm_sb, argv, env, family, ep)
                    results["docker, warm"] = [sandbox_run(warm_sb, argv, env, family, ep) for _ in range(args.runs)]
                finally:
                    warm_sb.close()
        base = statistics.median(bare)
        print(f"per-run time, median of {args.runs} (overhead = median - bare median {base:.3f}s):")
        for name, times in results.items():
            med = statistics.median(times)
            print(f"  {name:15s} median {med:.3f}s  p90 {sorted(times)[int(0.9 * (len(times) - 1))]:.3f}s  "
                  f"overhead {med - base:+.3f}s")

        if docker_available() and not args.skip_build:
            t0 = time.perf_counter()
            build_image(force=True, log=lambda m: None)
            print(f"image build (forced): {time.perf_counter() - t0:.1f}s")

        if not args.skip_jobs:
            walls = {}
            for jobs in (1, 2, 3):
                out = Path(tmp) / f"jobs{jobs}"
                opts = GenerateOptions(run_key=f"j{jobs}", out_dir=out, models=["haiku"],
                                       conditions=["no-skill", "with-skill"], reps=2, jobs=jobs,
                                       sandbox="docker" if docker_available() else "local")
                t0 = time.perf_counter()
                generate(suite, opts, PassContext(log=lambda m: None, endpoint=lambda: model_endpoint(
                    "sim", suite_dir=SUITE, profiles=profiles)))
                walls[jobs] = time.perf_counter() - t0
            print("wall clock of a 10-run week: " + ", ".join(
                f"--jobs {j}: {w:.1f}s (speedup {walls[1] / w:.2f}x)" for j, w in walls.items()))


if __name__ == "__main__":
    main()
