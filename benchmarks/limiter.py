"""Benchmark: generation and the judge under the simulated endpoint's rate limit — paced, AIMD alone, fixed pools.

The same matrix (the tiny suite, haiku, no-skill and with-skill, one turn per run) runs once per pass against an
endpoint whose ``rate_limit`` profile admits ``--rpm`` requests a minute from a bucket of ``--burst`` seconds'
refill; each pass gets a fresh endpoint (a full bucket) and its own rate budget:

* ``paced-N``: N (each of ``--paced``) as the adaptive limiter's ceiling, and every run's relay waiting for its
  turn in the endpoint's :class:`skillbench.limiter.RateBudget` (the default);
* ``aimd-N``: ``--jobs`` as the ceiling, relays forwarding at once (``GenerateOptions(paced=False)``): the limiter
  alone, reacting to the 429s the CLIs saw (the design before the budget);
* ``fixed-N``: a fixed pool of N (``adaptive=False``, unpaced) for each N of ``--pools``; the best of them is the
  one with the least wall time.

On a shared machine a pass's wall time moves with what else runs, so every pass runs ``--rounds`` times, each round
in a new random order, and a pass's wall time is its least over the rounds (its requests and 429s are summed).
Printed per pass, from the runs' relay records (every request a CLI sent, and its status): requests, 429s and their
share, wall time (least, and every round's), runs, finished runs, rate-limited runs (the manifest's), the seconds
relays waited for their turn. Then each paced pass's wall time over the best fixed pool's, and the 429 share of
every paced pass, against the targets (≤ 1.1×, ≤ 2 %). Then the judge path: the rubric judge over a paced week,
against a fresh limited endpoint (``--judge-rpm``, same burst), ``--jobs`` workers: requests and 429s as the
endpoint counted them, and the budget's waits.

Then the batched judge (``--batch``: Message Batches) against an endpoint whose batch routes have their own limit
(``batches.rate_limit``: ``--batch-rpm`` requests a minute over all batch routes, a bucket of ``--burst`` seconds),
judged by the rubric judge and then the pairwise judge on a fresh copy of ``--batch-week`` (default the tiny week's
last run key), ``--batch-rounds`` times each, in a new random order each round:

* ``batch-paced``: every Batches call (create, each poll's retrieve, the results' two requests) waits its turn in the
  batch routes' budget (the default);
* ``batch-unpaced``: the same calls sent at once, a 429 waited out after the fact (``JudgeOptions(batch_paced=
  False)``: the path before the budget).

Printed per design: the batch routes' requests and 429s as the endpoint counted them, and their share; what the
passes recorded (``judge.json``'s ``batch.pacing``: requests, 429s, seconds waited for a turn); the least wall time
of a round (rubric + pairs); runs graded, and items left ungraded plus pairs not judged (a batch whose polls
kept meeting 429s counts as unreadable: its requests go once more, then stay ungraded); then the paced 429 share
against the target (≤ 2 %). ``--batch-only`` runs this part alone.

    .venv/bin/python benchmarks/limiter.py [--jobs 8] [--paced 2,8] [--reps 8] [--rpm 40] [--burst 6]
        [--pools 1,2,4,8] [--rounds 2] [--judge-rpm 40] [--sandbox docker|local]
        [--batch-rpm 40] [--batch-rounds 2] [--batch-week RUN_DIR] [--batch-only]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillbench.generation import Endpoint, GenerateOptions, docker_available, generate  # noqa: E402
from skillbench.ledgers import read_manifest  # noqa: E402
from skillbench.limiter import endpoint_budget  # noqa: E402
from skillbench.runtime import PassContext  # noqa: E402
from skillbench.sim import Serving, SimServer  # noqa: E402
from skillbench.suite import load_suite  # noqa: E402
from skillbench.weekly import model_endpoint  # noqa: E402

SUITE = ROOT / "tests" / "data" / "tiny-suite"
BATCH_WEEK = ROOT / "tests" / "data" / "tiny-week" / "20261130"
JUDGED = ("judge.json", "judge_cost.txt", "judge-batches.json", "scores.csv", "pairs.csv", "judge-skips.csv",
          "calibration*", "identifiers.*")
ONE_TURN = {"trigger": 0.0, "file_read": 0.0, "follow_link": 0.0, "self_serve": 0.0, "web_search": 0.0,
            "deny_rate": 0.0, "budget_cross": 0.0}
CLI_RETRIES = "6"  # the CLI's own backoff then spans about 30 s, so a run outlasts a short wait for the bucket
TARGET_WALL = 1.1  # the paced pass's wall time over the best fixed pool's
TARGET_429_SHARE = 0.02


def relay_counts(week: Path) -> dict[str, float]:
    """Messages requests the week's CLIs sent (every attempt's relay record), 429s among them, and relay waits."""
    requests = limited = 0
    waited = 0.0
    for path in week.glob("*/*relay.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            ex = json.loads(line) if line.strip() else {}
            if ex.get("route") != "messages":
                continue
            requests += 1
            limited += ex.get("status") == 429
            waited += float(ex.get("paced_s") or 0.0)
    return {"requests": requests, "429s": limited, "waited_s": waited}


def one_pass(root: Path, name: str, *, adaptive: bool, paced: bool, jobs: int, args: argparse.Namespace,
             sandbox: str) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    profiles = root / f"profiles-{name}.yaml"
    limit = {"requests_per_minute": args.rpm, "burst_s": args.burst}
    profiles.write_text(yaml.safe_dump({"models": {"default": ONE_TURN}, "rate_limit": limit}), encoding="utf-8")
    suite = load_suite(SUITE)
    out = root / name
    opts = GenerateOptions(run_key="bench", out_dir=out, models=["haiku"], conditions=["no-skill", "with-skill"],
                           reps=args.reps, jobs=jobs, seed=11, timeout_s=240, sandbox=sandbox, adaptive=adaptive,
                           paced=paced, extra_env={"CLAUDE_CODE_MAX_RETRIES": CLI_RETRIES})
    t0 = time.perf_counter()
    report = generate(suite, opts, PassContext(endpoint=lambda: model_endpoint("sim", suite_dir=suite, seed=11,
                                                                           profiles=profiles), log=lambda m: None))
    wall = time.perf_counter() - t0
    manifest = read_manifest(out / "manifest.csv")
    limited = manifest["rate_limited"].astype(str).isin({"1", "True"})
    return {"wall_s": wall, "runs": len(manifest), "finished": int(manifest["run_state"].eq("finished").sum()),
            "complete": bool(report.get("complete")), "rate_limited": int(limited.sum()), **relay_counts(out)}


def judge_pass(week: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The rubric judge over ``week`` against a fresh limited endpoint: its requests and 429s, as it counted them."""
    from skillbench.judge import JudgeOptions, judge_run_dir

    key = "sk-bench-judge"
    spec = {"rate_limit": {"requests_per_minute": args.judge_rpm, "burst_s": args.burst}}
    with SimServer(None, seed=11, profiles=spec, serving=Serving(api_key=key)) as server:
        endpoint = Endpoint(base_url=server.base_url, api_key=key, kind="simulated")
        t0 = time.perf_counter()
        report = judge_run_dir(week, JudgeOptions(jobs=args.jobs, fresh=True),
                               PassContext(endpoint=endpoint, log=lambda m: None))
        wall = time.perf_counter() - t0
        requests = len(server.received)  # every POST /v1/messages it was sent, answered or 429
        rejected = server.rate_limits.rejected if server.rate_limits is not None else 0
    budget = endpoint_budget(endpoint.base_url, key).summary()
    return {"wall_s": wall, "graded": report.graded, "requests": requests, "429s": rejected,
            "waited_s": budget["waited_s"], "capped": budget["capped"]}


def batch_pass(week: Path, dest: Path, paced: bool, args: argparse.Namespace) -> dict[str, Any]:
    """The batched rubric and pairwise judges on a fresh copy of ``week`` against an endpoint whose batch routes
    are limited: the endpoint's count of batch-route requests and 429s, and what the passes recorded."""
    from skillbench.judge import JudgeOptions, judge_pairs, judge_run_dir

    shutil.copytree(week, dest, ignore=shutil.ignore_patterns(*JUDGED))
    key = f"sk-bench-{dest.name}"  # a key of its own: this pass's budget never meets an earlier pass's state
    spec = {"batches": {"rate_limit": {"requests_per_minute": args.batch_rpm, "burst_s": args.burst}}}
    options = JudgeOptions(jobs=args.jobs, fresh=True, batch=True, batch_paced=paced)
    with SimServer(None, seed=11, profiles=spec, serving=Serving(api_key=key)) as server:
        ctx = PassContext(endpoint=Endpoint(base_url=server.base_url, api_key=key, kind="simulated"),
                          log=lambda m: None)
        t0 = time.perf_counter()
        rubric = judge_run_dir(dest, options, ctx)
        pairs = judge_pairs(dest, options, ctx)
        wall = time.perf_counter() - t0
        sent = list(server.batch_received)
    record = json.loads((dest / "judge.json").read_text(encoding="utf-8"))  # the passes' own account
    recorded = [record["passes"][-1]["batch"]["pacing"], record["pairs_passes"][-1]["batch"]["pacing"]]
    return {"wall_s": wall, "graded": rubric.graded, "ungraded": rubric.ungraded_items + pairs.errors,
            "requests": len(sent), "429s": sum(s == 429 for _, _, s in sent),
            "recorded_requests": sum(r["requests"] for r in recorded),
            "recorded_429s": sum(r["rate_limited"] for r in recorded),
            "waited_s": sum(r["waited_s"] for r in recorded)}


def batch_benchmark(args: argparse.Namespace) -> None:
    """Paced against unpaced batched judging under the batch routes' limit; prints the table and the target."""
    designs = {"batch-paced": True, "batch-unpaced": False}
    walls: dict[str, list[float]] = {name: [] for name in designs}
    totals = {name: {"requests": 0, "429s": 0, "recorded_requests": 0, "recorded_429s": 0, "waited_s": 0.0,
                     "graded": 0, "ungraded": 0} for name in designs}
    loads = [os.getloadavg()[0]]
    rng = random.Random(13)
    week = Path(args.batch_week)
    with tempfile.TemporaryDirectory(prefix="skillbench-batch-limiter-") as tmp:
        for round_ in range(args.batch_rounds):
            order = list(designs)
            rng.shuffle(order)
            for name in order:
                r = batch_pass(week, Path(tmp) / f"{name}-{round_}", designs[name], args)
                walls[name].append(r["wall_s"])
                for key in totals[name]:
                    totals[name][key] += r[key]
                loads.append(os.getloadavg()[0])
    print(f"batched judge (rubric, then pairs) on {week} under a sim limit of {args.batch_rpm:g} requests/min over "
          f"all batch routes (burst {args.burst:g} s), --jobs {args.jobs}, {args.batch_rounds} round(s); 1-min load "
          f"{min(loads):.1f}–{max(loads):.1f} over the run")
    print(f"{'design':<14} {'requests':>8} {'429s':>5} {'share':>6} {'recorded req/429s':>17} {'waited s':>8} "
          f"{'wall s':>7} {'rounds s':>15} {'graded':>6} {'ungraded':>8}")
    for name in designs:
        t = totals[name]
        share = t["429s"] / t["requests"] if t["requests"] else 0.0
        rounds = "/".join(f"{w:.1f}" for w in walls[name])
        print(f"{name:<14} {t['requests']:8d} {t['429s']:5d} {share:6.1%} "
              f"{t['recorded_requests']:>9d}/{t['recorded_429s']:<7d} {t['waited_s']:8.1f} {min(walls[name]):7.1f} "
              f"{rounds:>15} {t['graded']:6d} {t['ungraded']:8d}")
    t = totals["batch-paced"]
    share = t["429s"] / t["requests"] if t["requests"] else 0.0
    ratio = min(walls["batch-paced"]) / min(walls["batch-unpaced"])
    print(f"batch-paced: 429s {t['429s']} of {t['requests']} batch-route requests = {share:.1%} (target ≤ "
          f"{TARGET_429_SHARE:.0%}: {'met' if share <= TARGET_429_SHARE else 'NOT met'}); wall / batch-unpaced "
          f"{ratio:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=8, help="the AIMD pass's ceiling, and the judge's workers")
    parser.add_argument("--paced", default="2,8", help="the paced passes' ceilings")
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--rpm", type=float, default=40.0, help="the sim's requests_per_minute")
    parser.add_argument("--burst", type=float, default=6.0, help="the sim's burst_s (bucket size in seconds)")
    parser.add_argument("--pools", default="1,2,4,8", help="the fixed pools' sizes")
    parser.add_argument("--rounds", type=int, default=2, help="runs of every pass, each round in a new order")
    parser.add_argument("--judge-rpm", type=float, default=40.0, help="the judge endpoint's requests_per_minute")
    parser.add_argument("--sandbox", choices=["docker", "local"], default=None)
    parser.add_argument("--batch-rpm", type=float, default=40.0,
                        help="the sim's batches.rate_limit requests_per_minute (all batch routes)")
    parser.add_argument("--batch-rounds", type=int, default=2, help="runs of each batched design")
    parser.add_argument("--batch-week", default=str(BATCH_WEEK), help="the week the batched judges grade (a copy)")
    parser.add_argument("--batch-only", action="store_true", help="only the batched judge's part")
    args = parser.parse_args()
    if args.batch_only:
        batch_benchmark(args)
        return
    sandbox = args.sandbox or ("docker" if docker_available() else "local")
    passes: dict[str, tuple[bool, bool, int]] = {}  # name -> (adaptive, paced, jobs)
    for n in (int(x) for x in args.paced.split(",") if x.strip()):
        passes[f"paced-{n}"] = (True, True, n)
    passes[f"aimd-{args.jobs}"] = (True, False, args.jobs)
    for n in (int(x) for x in args.pools.split(",") if x.strip()):
        passes[f"fixed-{n}"] = (False, False, n)
    loads = [os.getloadavg()[0]]
    walls: dict[str, list[float]] = {name: [] for name in passes}
    totals: dict[str, dict[str, Any]] = {}
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="skillbench-limiter-") as tmp:
        for round_ in range(args.rounds):
            order = list(passes)
            rng.shuffle(order)
            for name in order:
                adaptive, paced, jobs = passes[name]
                r = one_pass(Path(tmp) / f"round{round_}", name, adaptive=adaptive, paced=paced, jobs=jobs,
                             args=args, sandbox=sandbox)
                walls[name].append(r["wall_s"])
                t = totals.setdefault(name, {"requests": 0, "429s": 0, "runs": 0, "finished": 0, "rate_limited": 0,
                                             "waited_s": 0.0})
                for key in t:
                    t[key] += r[key]
                loads.append(os.getloadavg()[0])
        paced_week = Path(tmp) / "round0" / next(n for n in passes if n.startswith("paced-"))
        judged = judge_pass(paced_week, args)
    print(f"generation under a sim rate limit of {args.rpm:g} requests/min (burst {args.burst:g} s), {sandbox} "
          f"sandbox, CLAUDE_CODE_MAX_RETRIES={CLI_RETRIES}, {args.reps} reps, {args.rounds} round(s); 1-min load "
          f"{min(loads):.1f}–{max(loads):.1f} over the run")
    print(f"{'pass':<9} {'jobs':>4} {'requests':>8} {'429s':>5} {'share':>6} {'wall s':>7} {'rounds s':>15} "
          f"{'runs':>5} {'finished':>8} {'rate-limited':>12} {'relay wait s':>12}")
    for name in passes:
        t = totals[name]
        share = t["429s"] / t["requests"] if t["requests"] else 0.0
        rounds = "/".join(f"{w:.0f}" for w in walls[name])
        print(f"{name:<9} {passes[name][2]:4d} {t['requests']:8d} {t['429s']:5d} {share:6.1%} {min(walls[name]):7.1f} "
              f"{rounds:>15} {t['runs']:5d} {t['finished']:8d} {t['rate_limited']:12d} {t['waited_s']:12.1f}")
    best = min((n for n in passes if n.startswith("fixed-")), key=lambda n: min(walls[n]))
    for name in (n for n in passes if n.startswith("paced-")):
        t = totals[name]
        ratio = min(walls[name]) / min(walls[best])
        share = t["429s"] / t["requests"] if t["requests"] else 0.0
        print(f"{name} / best fixed pool ({best}): wall time {ratio:.2f} (target ≤ {TARGET_WALL:g}: "
              f"{'met' if ratio <= TARGET_WALL else 'NOT met'}); 429s {t['429s']} of {t['requests']} requests = "
              f"{share:.1%} (target ≤ {TARGET_429_SHARE:.0%}: {'met' if share <= TARGET_429_SHARE else 'NOT met'}); "
              f"/ aimd-{args.jobs} wall {min(walls[name]) / min(walls[f'aimd-{args.jobs}']):.2f}")
    jshare = judged["429s"] / judged["requests"] if judged["requests"] else 0.0
    print(f"judge: {judged['graded']} runs graded at --jobs {args.jobs} against {args.judge_rpm:g} requests/min "
          f"(burst {args.burst:g} s): {judged['requests']} requests, {judged['429s']} 429s ({jshare:.1%}), "
          f"wall {judged['wall_s']:.1f} s, budget waits {judged['waited_s']:.1f} s ({judged['capped']} capped)")
    batch_benchmark(args)


if __name__ == "__main__":
    main()
