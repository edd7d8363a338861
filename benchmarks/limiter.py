"""Benchmark: generation under the simulated endpoint's rate limit, the adaptive limiter against a fixed pool.

The same matrix (the tiny suite, haiku, no-skill and with-skill, one turn per run) runs twice at ``--jobs 8``
against an endpoint whose ``rate_limit`` profile admits ``--rpm`` requests a minute from a bucket of ``--burst``
seconds' refill: once with the adaptive limiter (``--jobs`` as the ceiling), once as a fixed pool of 8
(``GenerateOptions(adaptive=False)``: increase 0, decrease 1). Each pass gets a fresh endpoint, so both start
with a full bucket. Printed per pass: wall time, runs finished, runs rate-limited (the manifest's
``rate_limited``), 429s the CLIs saw (from their transcripts) and the lowest concurrency reached; then the
adaptive pass's ratios to the fixed pool's, all measured in this one run.

    .venv/bin/python benchmarks/limiter.py [--jobs 8] [--reps 8] [--rpm 40] [--burst 6] [--sandbox docker|local]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillbench.generation import GenerateOptions, docker_available, generate  # noqa: E402
from skillbench.ledgers import read_manifest  # noqa: E402
from skillbench.runtime import PassContext  # noqa: E402
from skillbench.signals import rate_limit_retries  # noqa: E402
from skillbench.suite import load_suite  # noqa: E402
from skillbench.weekly import model_endpoint  # noqa: E402

SUITE = ROOT / "tests" / "data" / "tiny-suite"
ONE_TURN = {"trigger": 0.0, "file_read": 0.0, "follow_link": 0.0, "self_serve": 0.0, "web_search": 0.0,
            "deny_rate": 0.0, "budget_cross": 0.0}
CLI_RETRIES = "6"  # the CLI's own backoff then spans about 30 s, so a run outlasts a short wait for the bucket


def count_429s(week: Path) -> int:
    """429s the week's CLI processes saw: each rate-limit ``api_retry``, plus a final API-error result of 429."""
    total = 0
    for path in week.glob("*/*transcript.jsonl"):
        events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        total += len(rate_limit_retries(events))
        total += sum(1 for e in events if e.get("type") == "result" and e.get("api_error_status") in (429, 529))
    return total


def one_pass(root: Path, *, adaptive: bool, jobs: int, reps: int, rpm: float, burst: float, sandbox: str) -> dict:
    profiles = root / f"profiles-{adaptive}.yaml"
    limit = {"requests_per_minute": rpm, "burst_s": burst}
    profiles.write_text(yaml.safe_dump({"models": {"default": ONE_TURN}, "rate_limit": limit}), encoding="utf-8")
    suite = load_suite(SUITE)
    out = root / ("adaptive" if adaptive else "fixed")
    opts = GenerateOptions(run_key="bench", out_dir=out, models=["haiku"], conditions=["no-skill", "with-skill"],
                           reps=reps, jobs=jobs, seed=11, timeout_s=240, sandbox=sandbox, adaptive=adaptive,
                           extra_env={"CLAUDE_CODE_MAX_RETRIES": CLI_RETRIES})
    t0 = time.perf_counter()
    report = generate(suite, opts, PassContext(endpoint=lambda: model_endpoint("sim", suite_dir=suite, seed=11,
                                                                           profiles=profiles), log=lambda m: None))
    wall = time.perf_counter() - t0
    manifest = read_manifest(out / "manifest.csv")
    limited = manifest["rate_limited"].astype(str).isin({"1", "True"})
    retries = json.loads((out / "retries.json").read_text(encoding="utf-8")) if (out / "retries.json").is_file() \
        else {}
    section = retries.get("concurrency") or {}
    return {"wall_s": wall, "runs": len(manifest), "finished": int(manifest["run_state"].eq("finished").sum()),
            "complete": bool(report.get("complete")), "rate_limited": int(limited.sum()), "429s": count_429s(out),
            "min_concurrency": section.get("min_reached", jobs), "changes": len(section.get("changes") or []),
            "retried_runs": len(retries.get("retried_runs") or [])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--rpm", type=float, default=40.0, help="the sim's requests_per_minute")
    parser.add_argument("--burst", type=float, default=6.0, help="the sim's burst_s (bucket size in seconds)")
    parser.add_argument("--sandbox", choices=["docker", "local"], default=None)
    args = parser.parse_args()
    sandbox = args.sandbox or ("docker" if docker_available() else "local")
    with tempfile.TemporaryDirectory(prefix="skillbench-limiter-") as tmp:
        results = {name: one_pass(Path(tmp), adaptive=name == "adaptive", jobs=args.jobs, reps=args.reps,
                                  rpm=args.rpm, burst=args.burst, sandbox=sandbox) for name in ("fixed", "adaptive")}
    print(f"generation at --jobs {args.jobs}, sim rate limit {args.rpm:g} requests/min (burst {args.burst:g} s), "
          f"{sandbox} sandbox, "
          f"CLAUDE_CODE_MAX_RETRIES={CLI_RETRIES}")
    print(f"{'pass':<9} {'wall s':>7} {'runs':>5} {'finished':>8} {'rate-limited':>12} {'429s':>5} "
          f"{'min conc.':>9} {'changes':>7} {'retried':>7}")
    for name, r in results.items():
        print(f"{name:<9} {r['wall_s']:7.1f} {r['runs']:5d} {r['finished']:8d} {r['rate_limited']:12d} "
              f"{r['429s']:5d} {r['min_concurrency']:9d} {r['changes']:7d} {r['retried_runs']:7d}")
    a, f = results["adaptive"], results["fixed"]

    def ratio(key: str) -> str:
        return f"{a[key] / f[key]:.2f}" if f[key] else ("—" if not a[key] else "∞")

    print(f"adaptive / fixed: wall time {ratio('wall_s')}, rate-limited runs {ratio('rate_limited')} "
          f"({a['rate_limited']} vs {f['rate_limited']}), 429s {ratio('429s')} ({a['429s']} vs {f['429s']})")


if __name__ == "__main__":
    main()
