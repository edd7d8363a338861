"""Benchmark of the command line's start-up against another commit (prints numbers; not a test).

The package fronts are lazy so that ``skillbench --help`` and ``skillbench validate`` do not pay for pandas, scipy
and the SDKs. This measures both commands in this checkout and in ``--base`` (a commit, checked out into a
temporary ``git worktree``), alternating the two so that load on the machine falls on both alike, and prints the
median wall and CPU seconds of each and their ratio (this checkout ÷ base; ≤ 1.0 is no slower). It also prints the
number of modules each command imports, which does not depend on load.

Usage: ``python benchmarks/startup.py [--base 7dd86ec] [--runs 9] [--suite evals]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COUNT_MODULES = "import runpy, sys; sys.argv = ['skillbench', *sys.argv[1:]]; \
import atexit; atexit.register(lambda: print(len(sys.modules), file=sys.stderr)); \
runpy.run_module('skillbench.cli', run_name='__main__')"


def _run(checkout: Path, argv: list[str]) -> tuple[float, float]:
    """One run of ``python -m skillbench.cli ARGV`` from ``checkout``: (wall s, CPU s of the child)."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "skillbench.cli", *argv], env=env, cwd=checkout,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _modules(checkout: Path, argv: list[str]) -> int:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    out = subprocess.run([sys.executable, "-c", COUNT_MODULES, *argv], env=env, cwd=checkout, text=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    return int(out.stderr.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="7dd86ec", help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=9, help="runs of each command in each checkout")
    parser.add_argument("--suite", default="evals", help="the suite validate reads (relative to each checkout)")
    args = parser.parse_args()
    commands = {"--help": ["--help"], "validate": ["validate", args.suite]}
    with tempfile.TemporaryDirectory(prefix="skillbench-startup-") as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(base), args.base], check=True)
        try:
            results = {}
            for name, argv in commands.items():
                runs: dict[str, list[tuple[float, float]]] = {"head": [], "base": []}
                for _ in range(args.runs):  # alternate, so load falls on both alike
                    runs["head"].append(_run(ROOT, argv))
                    runs["base"].append(_run(base, argv))
                row = {}
                for side in ("head", "base"):
                    row[side] = {"wall_s": statistics.median(w for w, _ in runs[side]),
                                 "cpu_s": statistics.median(c for _, c in runs[side]),
                                 "modules": _modules(ROOT if side == "head" else base, argv)}
                row["wall_ratio"] = row["head"]["wall_s"] / row["base"]["wall_s"]
                row["cpu_ratio"] = row["head"]["cpu_s"] / row["base"]["cpu_s"]
                results[name] = row
                print(f"skillbench {name}: wall {row['head']['wall_s']:.3f} s vs {row['base']['wall_s']:.3f} s "
                      f"({row['wall_ratio']:.2f}x), CPU {row['head']['cpu_s']:.3f} s vs {row['base']['cpu_s']:.3f} s "
                      f"({row['cpu_ratio']:.2f}x), modules {row['head']['modules']} vs {row['base']['modules']}")
            print(json.dumps({"base": args.base, "runs": args.runs, "results": results}, indent=2))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
