"""Benchmark of the simulated Messages endpoint under the real Claude Code CLI (prints numbers; not a test).

Measures:
  * server-side time per request (p50, p99): from the start of a request to its last byte;
  * the endpoint's share of a CLI run's wall time (we aim at <= 5 %);
  * runs per second sustained at 1, 2 and 3 concurrent CLI runs.

Usage: ``python benchmarks/sim_endpoint.py [--suite evals] [--runs 6] [--jobs 1,2,3]``. As root it re-runs
itself in a loopback-only network namespace (``unshare -n``), so nothing can leave the machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from skillbench.generation import CliCall, claude_path, cli_args, cli_env
from skillbench.sim import SimServer
from skillbench.suite import load_suite
from skillbench.wire import SIM_API_KEY

NETNS_FLAG = "SKILLBENCH_BENCH_NETNS"


def _enter_loopback_namespace() -> None:
    """Re-exec under ``unshare -n`` with ``lo`` up (root only); endpoint and CLI then share that namespace."""
    if os.environ.get(NETNS_FLAG) or os.geteuid() != 0 or not shutil.which("unshare"):
        return
    env = {**os.environ, NETNS_FLAG: "1"}
    script = 'ip link set lo up && exec "$@"'
    os.execvpe("unshare", ["unshare", "-n", "sh", "-c", script, "sh", sys.executable, *sys.argv], env)


def _one_run(server: SimServer, claude: str, suite, spec, model: str, run_id: str, work: Path) -> float:
    """One with-skill CLI run in a fresh HOME/TMPDIR/cwd; returns its wall time in seconds."""
    root = Path(tempfile.mkdtemp(prefix="bench-", dir=work))
    home, tmp, cwd = root / "home", root / "tmp", root / "cwd"
    for d in (home, tmp, cwd):
        d.mkdir()
    shutil.copytree(suite.family_dir(spec.family), home / ".claude" / "skills" / spec.family)
    call = CliCall(prompt=spec.test.prompt, model=model, run_id=run_id)
    env = cli_env(call, base_url=server.base_url, api_key=SIM_API_KEY, home=str(home), tmpdir=str(tmp))
    t0 = time.perf_counter()
    proc = subprocess.run(cli_args(call, suite.config.run, claude=claude), cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - t0
    if '"type":"result"' not in proc.stdout:
        raise RuntimeError(f"{run_id}: no result event (exit {proc.returncode}): {proc.stderr[-500:]}")
    shutil.rmtree(root, ignore_errors=True)
    return wall


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="evals", help="suite folder (default: evals)")
    ap.add_argument("--runs", type=int, default=6, help="CLI runs per concurrency level (default 6)")
    ap.add_argument("--jobs", default="1,2,3", help="concurrency levels (default 1,2,3)")
    args = ap.parse_args(argv)
    _enter_loopback_namespace()
    claude = str(claude_path())
    suite = load_suite(args.suite)
    prompts = [p for p in suite.prompts if p.preference_eligible] or suite.prompts
    models = ("sonnet", "haiku")
    print(f"network namespace: {'loopback-only' if os.environ.get(NETNS_FLAG) else 'host (not root)'}")
    print(f"suite: {suite.suite_dir} ({len(prompts)} prompts); CLI: {claude}")
    with tempfile.TemporaryDirectory(prefix="sim-bench-") as work, SimServer(suite, seed=1) as server:
        _one_run(server, claude, suite, prompts[0], "sonnet", "warmup", Path(work))  # CLI and cache warm-up
        server.timings.clear()
        all_walls: list[float] = []
        print(f"{'jobs':>4} {'runs':>4} {'wall s':>7} {'runs/s':>7} {'run p50 s':>9}")
        for jobs in [int(j) for j in args.jobs.split(",")]:
            tasks = [(prompts[i % len(prompts)], models[i % 2], f"bench-j{jobs}-{i}") for i in range(args.runs)]
            t0 = time.perf_counter()
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                walls = list(pool.map(lambda t: _one_run(server, claude, suite, *t, Path(work)), tasks))
            elapsed = time.perf_counter() - t0
            all_walls += walls
            print(f"{jobs:>4} {len(tasks):>4} {elapsed:>7.2f} {len(tasks) / elapsed:>7.3f} "
                  f"{statistics.median(walls):>9.2f}")
        per_request = [s for _, s in server.timings]
        per_run: dict[str, float] = {}
        for run_id, seconds in server.timings:
            per_run[run_id] = per_run.get(run_id, 0.0) + seconds
    n = len(per_request)
    print(f"server time per request: p50 {1000 * _pct(per_request, 0.5):.2f} ms, "
          f"p99 {1000 * _pct(per_request, 0.99):.2f} ms over {n} requests")
    share = sum(per_run.values()) / sum(all_walls)
    print(f"endpoint share of CLI wall time: {100 * share:.2f} % (aim <= 5 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
