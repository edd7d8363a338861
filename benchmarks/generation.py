"""Benchmark: what a run costs over a bare CLI call, in wall and in CPU-seconds, and where the rest goes; generation's
wall at --jobs 1/2/3 against the CLI's CPU floor.

Every figure comes from one run of this script on the simulated endpoint (a profile that answers in one turn for the
per-run part, so the CLI's own work is the same in every case; the shipped multi-turn profile for the --jobs part).

* **Per run**: a bare CLI call (a subprocess with a fresh HOME, no relay), the local sandbox, ``docker run --rm
  IMAGE true`` (the engine's floor for one container), and the docker sandbox as generate runs it (``docker, warm``:
  each run's container created, started and sealed while the run before it ran, removed behind it, with the run's
  relay in place) and with every container made on the run's path (``docker, cold``). Wall is the median; CPU-s is
  per run over the whole series: the sum of its parts, each read from its own counter so another user's load does
  not leak in: this process (the relay, the docker client, the simulation, the pool's threads), the CLI's child
  processes (bare, local), the containers' cgroups and their containerd shims with the runc processes they waited
  for (read just before each container is removed), and the engine's daemons (dockerd, containerd: shared, so
  another user's containers leak in there). The kernel's own threads (a namespace's teardown) are not counted;
  the JSON's ``machine`` is ``/proc/stat`` less the idle rate measured before the series, meaningful only on a quiet
  machine.
  Targets: docker overhead ≤ 0.15 s wall per run over the bare CLI, with its CPU-s beside.
* **Breakdown** of a warm run's wall, on its path (taking the container, the relay's start, the one exec that
  unpacks the skills and runs the CLI, the relay's stop) and off it (making the next container, removing this one).
* **--jobs 1/2/3 and unset** on the machine's cores: a small week through ``generate`` (Docker), its wall and CPU; the
  floor is Σ per-run CLI CPU measured at ``--jobs 1`` (each run's exec in its container's cgroup) ÷ cores. Target: wall
  ≤ 1.3× the floor. Beside it, the bound no design with one fresh container per run can beat on a CPU-bound machine
  (the CLI's CPU plus ``docker run --rm IMAGE true``'s per run, ÷ cores). Then the same week with every answer waiting
  ``--latency`` seconds before its first byte (a real model's wait, the simulation's ``slow_first_byte``): ``--jobs``
  at the cores against ``--jobs`` unset, which grows while the machine's CPUs idle (generation._jobs).

    .venv/bin/python benchmarks/generation.py [--runs 10] [--reps 3] [--skip-build] [--skip-jobs] [--latency S]
        [--json FILE]
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
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import skillbench.generation._relay as relay_module  # noqa: E402
import skillbench.generation._sandbox as sandbox_module  # noqa: E402
import skillbench.generation._task_container as task_container  # noqa: E402
import skillbench.generation._warm as warm_module  # noqa: E402
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
    default_jobs,
    docker_available,
    generate,
    machine_facts,
)
from skillbench.generation._image import RUNNER_HOME  # noqa: E402
from skillbench.generation._jobs import machine_busy  # noqa: E402
from skillbench.runtime import PassContext  # noqa: E402
from skillbench.suite import load_suite  # noqa: E402
from skillbench.weekly import model_endpoint  # noqa: E402

SUITE = ROOT / "tests" / "data" / "tiny-suite"
ONE_TURN = {"trigger": 0.0, "file_read": 0.0, "follow_link": 0.0, "self_serve": 0.0, "web_search": 0.0,
            "deny_rate": 0.0, "budget_cross": 0.0}
TICK = os.sysconf("SC_CLK_TCK")
TARGET_OVERHEAD_S = 0.15
TARGET_FLOOR_RATIO = 1.3


# -- CPU accounting --------------------------------------------------------------------------------------------------


def process_cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(x) for x in fields[11:15]) / TICK  # utime, stime and its waited-for children's


def pids_named(*names: str) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() in names:
                    out.append(int(entry.name))
            except OSError:
                continue
    return out


ENGINE = pids_named("dockerd", "containerd")


def container_cpu(container_id: str) -> float | None:
    """A container's CPU-seconds so far, from its cgroup (v1 cpuacct, or v2 cpu.stat), None when not readable."""
    for path in (f"/sys/fs/cgroup/cpuacct/docker/{container_id}/cpuacct.usage",
                 f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/cpu.stat",
                 f"/sys/fs/cgroup/docker/{container_id}/cpu.stat"):
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        if path.endswith("cpuacct.usage"):
            return int(text) / 1e9
        stats = dict(line.split() for line in text.splitlines())
        return int(stats["usage_usec"]) / 1e6
    return None


def shim_cpu(container_id: str) -> float:
    """CPU-seconds of a container's containerd shim, with the runc processes it waited for (create, exec, kill)."""
    for pid in pids_named("containerd-shim"):
        try:
            if container_id in Path(f"/proc/{pid}/cmdline").read_bytes().decode("utf-8", "replace"):
                return process_cpu(pid)
        except OSError:
            continue
    return 0.0


class Ledger:
    """CPU of the containers (read before each is removed) and of the CLI execs, and the phases' wall times."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.containers = 0.0
        self.shims = 0.0
        self.cli_cpu: list[float] = []
        self.phases: dict[str, list[float]] = {}

    def phase(self, name: str, seconds: float) -> None:
        with self.lock:
            self.phases.setdefault(name, []).append(seconds)

    def reset(self) -> None:
        with self.lock:
            self.containers, self.shims, self.cli_cpu, self.phases = 0.0, 0.0, [], {}


LEDGER = Ledger()


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            LEDGER.phase(name, time.perf_counter() - t0)
    return wrapper


READY: dict[str, float] = {}  # a container's cgroup CPU when it was ready, before any exec


def count_container(container_id: str) -> None:
    """Add a container's CPU and its shim's to the ledger (just before it is removed: both go with it).

    The shim is the subreaper of every process an exec starts, so the CLI's CPU reaches the shim's waited-for
    children too: what the container's cgroup used after it was ready is taken off the shim's count.
    """
    used, shim = container_cpu(container_id) or 0.0, shim_cpu(container_id)
    ready = READY.pop(container_id, used)
    with LEDGER.lock:
        LEDGER.containers += used
        LEDGER.shims += max(0.0, shim - (used - ready))


def instrument() -> None:
    """Time each phase of a docker run and read each container's CPU, by wrapping the functions generate calls."""
    remove = warm_module.remove_warm

    def remove_counted(warm: Any) -> None:
        count_container(warm.container.id)
        t0 = time.perf_counter()
        remove(warm)
        LEDGER.phase("off path: remove the container", time.perf_counter() - t0)

    warm_module.remove_warm = sandbox_module.remove_warm = remove_counted
    prepare_and_run = task_container.prepare_and_run

    def exec_counted(container: Any, *args: Any, **kwargs: Any) -> Any:
        before = container_cpu(container.id)
        t0 = time.perf_counter()
        out = prepare_and_run(container, *args, **kwargs)
        LEDGER.phase("on path: one exec: unpack skills, run the CLI", time.perf_counter() - t0)
        after = container_cpu(container.id)
        if before is not None and after is not None:
            with LEDGER.lock:
                LEDGER.cli_cpu.append(after - before)
        return out

    task_container.prepare_and_run = exec_counted
    warm_up = timed("off path: create, start, seal the next container", sandbox_module.DockerSandbox._warm_up)

    def warm_up_counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        warm = warm_up(self, *args, **kwargs)
        READY[warm.container.id] = container_cpu(warm.container.id) or 0.0
        return warm

    sandbox_module.DockerSandbox._warm_up = warm_up_counted
    relay_module.Relay.start = timed("on path: the relay starts", relay_module.Relay.start)
    relay_module.Relay.stop = timed("on path: the relay stops", relay_module.Relay.stop)
    warm_module.WarmPool.take = timed("on path: take a warm container", warm_module.WarmPool.take)


def snapshot() -> dict[str, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    with LEDGER.lock:
        containers, shims = LEDGER.containers, LEDGER.shims
    return {"wall": time.perf_counter(), "machine": machine_busy(), "self": me.ru_utime + me.ru_stime,
            "children": kids.ru_utime + kids.ru_stime, "engine": sum(process_cpu(p) for p in ENGINE),
            "containers": containers, "shims": shims}


def idle_rate(seconds: float = 3.0) -> float:
    """CPUs busy with nothing of ours (other users, the kernel's own threads), measured before a series."""
    a = machine_busy()
    time.sleep(seconds)
    return (machine_busy() - a) / seconds


def per_run(before: dict[str, float], after: dict[str, float], n: int, idle: float) -> dict[str, float]:
    d = {k: (after[k] - before[k]) for k in before}
    d["machine"] -= idle * d["wall"]
    d["cpu"] = d["self"] + d["children"] + d["engine"] + d["containers"] + d["shims"]
    return {k: v / n for k, v in d.items()}


# -- the runs --------------------------------------------------------------------------------------------------------


def series(name: str, fn: Callable[[], None], n: int, results: dict[str, Any], after: Callable[[], None] | None = None
           ) -> None:
    fn()  # one to warm the page cache (and, warm, the pool)
    idle = idle_rate()
    LEDGER.reset()
    walls = []
    before = snapshot()
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
    if after is not None:
        after()  # the pool's removals behind the last runs count too
    cpu = per_run(before, snapshot(), n, idle)
    results[name] = {"wall": statistics.median(walls), "p90": sorted(walls)[int(0.9 * (n - 1))], "cpu": cpu,
                     "idle": idle, "load": os.getloadavg()[0],
                     "phases": {k: statistics.median(v) for k, v in LEDGER.phases.items()},
                     "cli_cpu": statistics.median(LEDGER.cli_cpu) if LEDGER.cli_cpu else None}
    print(f"  {name}: median {results[name]['wall']:.3f} s, {cpu['cpu']:.3f} CPU-s per run "
          f"(idle rate {idle:.2f} CPUs, load {os.getloadavg()[0]:.2f})", file=sys.stderr, flush=True)


def run_true(client: Any, tag: str) -> None:
    """``docker run --rm --network none IMAGE true`` through the engine's API: create, start, remove.

    Its command is ``sleep`` killed by the removal rather than ``true``: a container that exits takes its shim and
    cgroup with it before they can be read.
    """
    container = client.containers.create(tag, entrypoint=["sleep", "infinity"], network_mode="none")
    container.start()
    count_container(container.id)
    container.remove(force=True)


def print_per_run(results: dict[str, Any], runs: int) -> None:
    bare = results["bare CLI"]
    print(f"\nper run, {runs} runs each (wall: median; CPU-s: per run over the series; overhead: minus the bare CLI)")
    head = (f"{'':16}{'wall s':>8}{'p90 s':>8}{'+wall s':>9}{'CPU-s':>8}{'+CPU-s':>8}{'self':>7}{'CLI':>7}"
            f"{'contnr':>8}{'shims':>7}{'engine':>8}")
    print(head)
    for name, r in results.items():
        c = r["cpu"]
        print(f"{name:16}{r['wall']:8.3f}{r['p90']:8.3f}{r['wall'] - bare['wall']:+9.3f}{c['cpu']:8.3f}"
              f"{c['cpu'] - bare['cpu']['cpu']:+8.3f}{c['self']:7.3f}{c['children']:7.3f}"
              f"{c['containers']:8.3f}{c['shims']:7.3f}{c['engine']:8.3f}")
    warm, true = results.get("docker, warm"), results.get("docker run true")
    if warm:
        over = warm["wall"] - bare["wall"]
        print(f"\ndocker sandbox overhead over a bare CLI call: {over:+.3f} s wall per run (target ≤ "
              f"{TARGET_OVERHEAD_S} s: {'met' if over <= TARGET_OVERHEAD_S else 'MISSED'}), "
              f"{warm['cpu']['cpu'] - bare['cpu']['cpu']:+.3f} CPU-s per run; "
              f"a run costs {warm['wall'] / bare['wall']:.2f}× a bare call in wall, "
              f"{warm['cpu']['cpu'] / bare['cpu']['cpu']:.2f}× in CPU")
    if warm and true:
        print(f"against `docker run --rm IMAGE true` ({true['wall']:.3f} s, {true['cpu']['cpu']:.3f} CPU-s): the "
              f"overhead is {(warm['wall'] - bare['wall']) / true['wall']:.2f}× its wall and "
              f"{(warm['cpu']['cpu'] - bare['cpu']['cpu']) / true['cpu']['cpu']:.2f}× its CPU")
    if warm:
        print("\nwhere a warm run's wall goes (median per run)")
        for phase, seconds in sorted(warm["phases"].items()):
            print(f"  {phase:52}{seconds:7.3f} s")
        if warm["cli_cpu"] is not None:
            print(f"  the exec's CPU in the container (unpack + CLI): {warm['cli_cpu']:.3f} CPU-s; the bare CLI's "
                  f"{bare['cpu']['children']:.3f}")


def _week(suite: Any, label: str, jobs: int, reps: int, tmp: str, latency: float) -> dict[str, Any]:
    """One generate pass of the tiny suite (haiku × both arms × ``reps``) at ``jobs`` (0: unset), measured."""
    profiles = yaml.safe_load((ROOT / "skillbench" / "data" / "sim_profiles.yaml").read_text())
    if latency:  # every agent request waits before its first byte, as a real model's answer does
        profiles["faults"] = [*profiles.get("faults", []), {"kind": "slow_first_byte", "rate": 1.0, "role": "agent",
                                                             "delay_s": latency}]
    out_dir = Path(tmp) / label.replace(" ", "_").replace(",", "")
    opts = GenerateOptions(run_key="j", out_dir=out_dir, models=["haiku"], conditions=["no-skill", "with-skill"],
                           reps=reps, jobs=jobs, sandbox="docker")
    idle = idle_rate()
    LEDGER.reset()
    before = snapshot()
    report = generate(suite, opts, PassContext(log=lambda m: None, endpoint=lambda: model_endpoint(
        "sim", suite_dir=SUITE, profiles=profiles)))
    cpu = per_run(before, snapshot(), 1, idle)
    concurrency = json.loads((out_dir / "retries.json").read_text()).get("concurrency") or {}
    row = {"runs": len(LEDGER.cli_cpu), "wall": cpu["wall"], "cpu": cpu["cpu"], "engine": cpu["engine"],
           "cli_cpu": sum(LEDGER.cli_cpu), "load": os.getloadavg()[0], "complete": report.get("complete"),
           # no section: the cap never moved, so the pass ran at most its start (--jobs, or the machine's cores)
           "latency": latency, "max_in_flight": concurrency.get("max_in_flight") or jobs or default_jobs(
               machine_facts("docker")).jobs,
           "cap_changes": [(c["from"], c["to"]) for c in concurrency.get("cap_changes", [])]}
    print(f"  {label}: {row['runs']} runs, {cpu['wall']:.1f} s, at most {row['max_in_flight']} at once "
          f"(load {os.getloadavg()[0]:.2f})", file=sys.stderr, flush=True)
    return row


def jobs_section(suite: Any, reps: int, results: dict[str, Any], latency: float) -> None:
    cores = len(os.sched_getaffinity(0))
    out: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="skillbench-bench-jobs-") as tmp:
        for jobs in (1, 2, 3):
            out[f"--jobs {jobs}"] = _week(suite, f"--jobs {jobs}", jobs, reps, tmp, 0.0)
        out["--jobs unset"] = _week(suite, "--jobs unset", 0, reps, tmp, 0.0)
        if latency:
            out[f"--jobs {cores}, {latency:g} s wait"] = _week(suite, f"--jobs {cores}, wait", cores, reps, tmp,
                                                               latency)
            out[f"unset, {latency:g} s wait"] = _week(suite, "unset, wait", 0, reps, tmp, latency)
    one = out["--jobs 1"]
    floor = one["cli_cpu"] / cores
    print(f"\ngenerate, {one['runs']} runs of the tiny suite (haiku × no-skill, with-skill × {reps} reps, the "
          f"shipped sim profile, Docker) on {cores} cores; CLI floor = Σ per-run CLI CPU at --jobs 1 "
          f"({one['cli_cpu']:.1f} CPU-s) ÷ {cores} = {floor:.1f} s")
    print(f"{'':24}{'wall s':>8}{'× floor':>9}{'CPU-s':>8}{'CPU-s/run':>11}{'no engine':>11}{'CLI/run':>9}"
          f"{'at once':>9}{'load':>7}")
    for label, r in out.items():
        print(f"{label:24}{r['wall']:8.1f}{r['wall'] / floor:9.2f}{r['cpu']:8.1f}{r['cpu'] / r['runs']:11.3f}"
              f"{(r['cpu'] - r['engine']) / r['runs']:11.3f}{r['cli_cpu'] / r['runs']:9.3f}"
              f"{str(r['max_in_flight']):>9}{r['load']:7.2f}")
    best = min(r["wall"] for r in out.values() if not r["latency"])
    print(f"generation wall ÷ CLI floor, best without a wait: {best / floor:.2f} (target ≤ {TARGET_FLOOR_RATIO}: "
          f"{'met' if best / floor <= TARGET_FLOOR_RATIO else 'MISSED'})")
    true = results.get("docker run true")
    if true:
        # No design that gives each run a fresh container can spend less than the engine's own floor for one
        # container on top of the CLI: on a CPU-bound machine its wall is at least this.
        bound = (one["cli_cpu"] + one["runs"] * true["cpu"]["cpu"]) / cores
        print(f"any design with one fresh container per run, CPU-bound: ≥ (Σ CLI CPU + {one['runs']} × `docker run "
              f"--rm IMAGE true` at {true['cpu']['cpu']:.3f} CPU-s) ÷ {cores} = {bound:.1f} s = {bound / floor:.2f}× "
              f"the floor; this pass's CPU per run over that bound: "
              f"{min(r['cpu'] / r['runs'] for r in out.values()) / (bound * cores / one['runs']):.2f}×")
    if latency:
        fixed, grown = out[f"--jobs {cores}, {latency:g} s wait"], out[f"unset, {latency:g} s wait"]
        print(f"with a {latency:g} s wait before each answer (a real model's): --jobs {cores} {fixed['wall']:.1f} s "
              f"({fixed['wall'] / floor:.2f}× the floor), unset {grown['wall']:.1f} s ({grown['wall'] / floor:.2f}×; "
              f"runs at once {grown['cap_changes'] or 'unchanged'}): {fixed['wall'] / grown['wall']:.2f}× faster")
    results["jobs"] = {"floor_s": floor, "cores": cores, "by_jobs": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--reps", type=int, default=3, help="repetitions of the --jobs week")
    parser.add_argument("--skip-build", action="store_true", help="do not time a forced image rebuild")
    parser.add_argument("--skip-jobs", action="store_true", help="do not time --jobs 1/2/3")
    parser.add_argument("--latency", type=float, default=1.5,
                        help="seconds each simulated answer waits before its first byte, for the --jobs rows that "
                             "model a real endpoint (0: none)")
    parser.add_argument("--json", metavar="FILE", help="also write the measurements as JSON")
    args = parser.parse_args()
    print(f"load at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs", flush=True)

    suite = load_suite(SUITE)
    spec = suite.prompt("dates-day-month-swapped")
    family = [suite.family_dir("dates")]
    results: dict[str, Any] = {}
    instrument()
    with tempfile.TemporaryDirectory() as tmp:
        profiles = Path(tmp) / "profiles.yaml"
        profiles.write_text(yaml.safe_dump({"models": {"haiku": ONE_TURN}}))
        with model_endpoint("sim", suite_dir=SUITE, profiles=profiles) as ep:
            call = CliCall(prompt=spec.test.prompt, model="haiku", run_id="bench")
            argv = cli_args(call, suite.config.run)
            env = cli_env(call, base_url=ep.base_url, api_key=ep.api_key, home=RUNNER_HOME, tmpdir="/tmp")

            def bare() -> None:
                with tempfile.TemporaryDirectory() as home:
                    run_env = {**env, "HOME": home, "TMPDIR": home, "PATH": f"{claude_path().parent}:/usr/bin:/bin"}
                    subprocess.run([str(claude_path()), *argv[1:]], env=run_env, cwd=home, capture_output=True,
                                   check=False)

            def in_sandbox(sandbox: Any) -> Callable[[], None]:
                return lambda: sandbox.run(argv, env, family, 120, "bench", relay=RelayPlan.for_run(ep, "bench", 1))

            series("bare CLI", bare, args.runs, results)
            series("local sandbox", in_sandbox(LocalSandbox(claude_path())), args.runs, results)
            if docker_available():
                import docker

                docker_client = docker.from_env()
                tag = build_image(log=lambda m: None)
                series("docker run true", lambda: run_true(docker_client, tag), args.runs, results)
                series("docker, cold", in_sandbox(DockerSandbox(tag, out_dir=Path(tmp))), args.runs, results)
                warm = DockerSandbox(tag, out_dir=Path(tmp), warm=True)
                series("docker, warm", in_sandbox(warm), args.runs, results, after=warm.close)
        print_per_run(results, args.runs)

    if docker_available() and not args.skip_build:
        t0 = time.perf_counter()
        build_image(force=True, log=lambda m: None)
        print(f"\nimage build (forced): {time.perf_counter() - t0:.1f}s")
    if docker_available() and not args.skip_jobs:
        jobs_section(suite, args.reps, results, args.latency)
    print(f"load at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main()
