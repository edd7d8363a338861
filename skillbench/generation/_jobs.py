"""How many runs at once by default: the cores the runs get, and no more than the endpoint's request limit sustains.

A run on the simulated endpoint is CPU-bound (the CLI's own work; the simulation answers at once), so more runs at once
than cores only makes each run slower and every container's start, exec and removal compete with the CLIs. Which
cores count depends on where the CLI runs:

* ``docker``: the **Docker engine's NCPU** (``docker info``), the CPUs the engine's process may use. The containers are
  the engine's children in their own cgroups, not this process's: this process's affinity and cgroup quota do not
  bound them (a CI job limited to one CPU that talks to the host's engine still runs its containers on every core),
  and a remote engine's machine is not this one.
* ``local``: the CLI is this process's child, so **this process's cores**: its CPU affinity
  (``os.sched_getaffinity``), lowered by a cgroup CPU quota when one is set (``cpu.max`` in cgroup v2,
  ``cpu.cfs_quota_us ÷ cpu.cfs_period_us`` in v1), rounded up (a quota of 1.5 CPUs still runs two processes).

The endpoint's part is learned from what it advertises: every answer the run's relay records carries
``anthropic-ratelimit-requests-limit`` when the endpoint limits requests (the API does; so does the simulation's
``rate_limit`` profile). A run sends its requests one after another, so ``R`` requests a minute sustain
``R ÷ (the requests one run sends per minute)`` runs at once (Little's law), measured over the pass's finished runs;
:class:`RunsCap` keeps the runs in flight at or below that (never below one), and says so once per change. It is
conservative where an endpoint limits each model separately (it counts every request against one limit), and it
cannot act before the first run has ended, when nothing has been advertised yet; until then the pacing relay
(:class:`skillbench.limiter.RateBudget`) holds each request for its turn, and the adaptive limiter still answers a 429
the way it always did.

**Runs that wait on the endpoint.** One run per core is right only while a run keeps its core busy. A real model
answers in seconds, and a run spends most of its wall waiting on it with its core idle; on such an endpoint one run
per core leaves the machine mostly idle. So an unset ``--jobs`` may grow: the start is one run per core, and the
ceiling is :data:`GROWTH` runs per core, no more than the memory available holds with every run at its container's
memory limit (a hostile run may use all of it, on purpose; :data:`RUN_MEMORY` for the local sandbox's runs).
Each finished run reads the machine's busy CPUs (``/proc/stat``) over the window since the last reading (at least
:data:`WINDOW_S`): with every slot in use and at least :data:`IDLE_GROW` CPUs idle, the runs at once grow toward what
would keep the CPUs busy at the window's CPU per run (Little's law), at most doubling per window; below
:data:`IDLE_SHRINK` idle CPUs, one run above the start is given back. The machine's CPUs are the ones read, not this
process's: the containers are the engine's children, and the engine of a sealed run is this machine's (the relay's
socket is a bind mount). Another user's load counts as busy, so a shared machine is not oversubscribed; on the
simulated endpoint, which answers at once, the runs keep the cores busy and the start stands. A ``--jobs`` given is
the user's number and never grows.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillbench.limiter import RATELIMIT_PREFIX, AdaptiveLimiter

REQUESTS_LIMIT_HEADER = f"{RATELIMIT_PREFIX}requests-limit"  # requests per minute, on every limited answer
CGROUP_ROOT = Path("/sys/fs/cgroup")
GROWTH = 4  # an unset --jobs grows to at most this many runs per core, when runs wait on the endpoint
# Planned per local run in flight (no container limit): the CLI's Node process with the agent's tools, with room for a
# task's build. A Docker run counts its container's whole memory limit (ContainerLimits.memory_mb) instead.
RUN_MEMORY = 1 << 30
WINDOW_S = 2.0  # the shortest window the machine's idle CPUs are read over (one run's end is noise)
IDLE_GROW = 1.0  # a whole CPU idle over the window, every slot in use: one more run at once
IDLE_SHRINK = 0.25  # less than this idle: a run above the start is given back
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class MachineFacts:
    """What the default number of runs at once is decided from (each None when it could not be read).

    Attributes:
        sandbox: ``docker`` or ``local``: where the CLI runs.
        affinity: CPUs this process may run on (``os.sched_getaffinity``).
        quota: this process's cgroup CPU quota, in CPUs (None: no quota).
        engine_cpus: the Docker engine's NCPU (None: no engine answered).
        memory: bytes of memory available (``MemAvailable``; None: not read, and the runs at once never grow).
        run_memory: bytes one run may use: its container's memory limit (None: :data:`RUN_MEMORY`, the local
            sandbox's runs, which have no limit).
    """

    sandbox: str
    affinity: int | None = None
    quota: float | None = None
    engine_cpus: int | None = None
    memory: int | None = None
    run_memory: int | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MachineFacts:
        return cls(sandbox=str(data["sandbox"]), affinity=data.get("affinity"), quota=data.get("quota"),
                   engine_cpus=data.get("engine_cpus"), memory=data.get("memory"),
                   run_memory=data.get("run_memory"))


@dataclass(frozen=True)
class JobsChoice:
    """The number of runs at once and why, in words a log line can end with.

    ``ceiling`` is how far the runs at once may grow while runs wait on the endpoint (0: never above ``jobs``).
    """

    jobs: int
    why: str
    ceiling: int = 0

    @property
    def most(self) -> int:
        """The most runs at once the pass may reach."""
        return max(self.jobs, self.ceiling)


def default_jobs(facts: MachineFacts) -> JobsChoice:
    """Runs at once when ``--jobs`` is not given: one per core the runs get to start with, growing to at most
    :data:`GROWTH` per core within the memory available (see the module's text); at least one."""
    start = _start_jobs(facts)
    if not facts.memory:
        return start
    # every run in flight may use its whole limit at once (a hostile run may, on purpose): together they fit
    ceiling = max(start.jobs, min(start.jobs * GROWTH, int(facts.memory) // int(facts.run_memory or RUN_MEMORY)))
    if ceiling == start.jobs:
        return start
    return JobsChoice(start.jobs, f"{start.why}; up to {ceiling} while runs wait on the endpoint", ceiling)


def _start_jobs(facts: MachineFacts) -> JobsChoice:
    if facts.sandbox == "docker" and facts.engine_cpus:
        n = int(facts.engine_cpus)
        return JobsChoice(max(1, n), f"the Docker engine's {n} CPU{'s' if n != 1 else ''} (NCPU), where the "
                                     "containers run")
    if facts.affinity and facts.quota:
        n = min(facts.affinity, math.ceil(facts.quota))
        return JobsChoice(max(1, n), f"this process's {facts.affinity} CPUs under a cgroup quota of "
                                     f"{facts.quota:g} CPUs")
    if facts.affinity:
        return JobsChoice(max(1, facts.affinity), f"the {facts.affinity} CPUs this process may run on")
    if facts.quota:
        n = math.ceil(facts.quota)
        return JobsChoice(max(1, n), f"a cgroup quota of {facts.quota:g} CPUs")
    return JobsChoice(1, "the CPUs could not be read")


def machine_facts(sandbox: str, *, engine: Any = None, run_memory: int | None = None) -> MachineFacts:
    """This machine's facts for ``sandbox`` (``engine``: a docker client to ask; None: one from the environment;
    ``run_memory``: bytes one run's container may use)."""
    return MachineFacts(sandbox=sandbox, affinity=_affinity(), quota=cgroup_quota(),
                        engine_cpus=engine_cpus(engine) if sandbox == "docker" else None, memory=memory_available(),
                        run_memory=run_memory)


def memory_available(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """``MemAvailable`` in bytes, or None when it cannot be read (not Linux)."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def machine_busy(stat: Path = Path("/proc/stat")) -> float | None:
    """CPU-seconds every CPU of the machine has been busy (user, nice, system, irq, softirq), or None (not Linux)."""
    try:
        v = [int(x) for x in stat.read_text().splitlines()[0].split()[1:]]
        return (v[0] + v[1] + v[2] + v[5] + v[6]) / TICK
    except (OSError, ValueError, IndexError):
        return None


def _affinity() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count()


def cgroup_quota(root: Path = CGROUP_ROOT, membership: Path = Path("/proc/self/cgroup")) -> float | None:
    """This process's cgroup CPU quota in CPUs, or None when there is none (or it cannot be read).

    The smallest quota on the way from the process's cgroup up to the root (a pod's quota holds for its children):
    cgroup v2 ``cpu.max`` (``max 100000`` means none); v1 ``cpu.cfs_quota_us`` ÷ ``cpu.cfs_period_us`` of the
    ``cpu`` hierarchy (-1 means none). ``membership``: which cgroups the process is in.
    """
    try:
        lines = membership.read_text().splitlines()
    except OSError:
        return None
    quotas: list[float] = []
    for line in lines:
        if line.count(":") < 2:
            continue
        _, controllers, path = line.split(":", 2)
        if controllers == "":  # v2 (the unified hierarchy, mounted at the root)
            mounts = [root] if (root / "cgroup.controllers").is_file() else []
        elif "cpu" in controllers.split(","):
            mounts = [root / name for name in (controllers, "cpu", "cpu,cpuacct") if (root / name).is_dir()][:1]
        else:
            continue
        for mount in mounts:
            folder = mount / path.lstrip("/")
            while True:
                quota = _quota_of(folder)
                if quota is not None:
                    quotas.append(quota)
                if folder == mount or mount not in folder.parents:
                    break
                folder = folder.parent
    return min(quotas) if quotas else None


def _quota_of(folder: Path) -> float | None:
    try:
        if (folder / "cpu.max").is_file():
            return _quota_v2((folder / "cpu.max").read_text())
        if (folder / "cpu.cfs_quota_us").is_file():
            return _quota_v1((folder / "cpu.cfs_quota_us").read_text(), (folder / "cpu.cfs_period_us").read_text())
    except OSError:
        return None
    return None


def _quota_v2(text: str) -> float | None:
    parts = text.split()
    if len(parts) != 2 or parts[0] == "max":
        return None
    try:
        return int(parts[0]) / int(parts[1])
    except (ValueError, ZeroDivisionError):
        return None


def _quota_v1(quota: str, period: str) -> float | None:
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None


def engine_cpus(client: Any = None) -> int | None:
    """The Docker engine's NCPU, or None when no engine answers."""
    try:
        if client is None:
            import docker

            client = docker.from_env(timeout=10)
        n = int(client.info().get("NCPU") or 0)
    except Exception:  # noqa: BLE001 - no engine, or one that does not say: the local facts decide
        return None
    return n or None


# -- the endpoint's part ---------------------------------------------------------------------------------------------


def sustained_jobs(requests_per_minute: float, run_requests_per_minute: float) -> int:
    """Runs at once that ``requests_per_minute`` sustains when each run sends ``run_requests_per_minute`` (≥ 1)."""
    if run_requests_per_minute <= 0:
        return 1 << 30  # a run that sends nothing asks nothing of the limit
    return max(1, math.floor(requests_per_minute / run_requests_per_minute))


def advertised_limit(exchanges: Sequence[Mapping[str, Any]]) -> float | None:
    """The last ``anthropic-ratelimit-requests-limit`` a run's relay recorded (requests per minute), or None."""
    for exchange in reversed(exchanges):
        value = (exchange.get("response_headers") or {}).get(REQUESTS_LIMIT_HEADER)
        try:
            limit = float(value) if value is not None else None
        except (TypeError, ValueError):
            continue  # an answer's header is the endpoint's word, not ours: a bad one is ignored
        if limit is not None and limit > 0 and math.isfinite(limit):
            return limit
    return None


Sampler = Callable[[], "tuple[float, float] | None"]  # (the machine's busy CPU-seconds, monotonic seconds)


def machine_sample() -> tuple[float, float] | None:
    """The machine's busy CPU-seconds now, with the monotonic time they were read at (None: not readable)."""
    busy = machine_busy()
    return None if busy is None else (busy, time.monotonic())


class RunsCap:
    """The pass's runs at once: what the machine keeps busy and the endpoint's advertised request limit sustains, at
    most ``ceiling``. It caps the pass's one limiter (:meth:`skillbench.limiter.AdaptiveLimiter.cap_at`), whose
    slots every run takes.

    Args:
        ceiling: the most runs at once (the cap never rises above it).
        limiter: the pass's limiter the cap is applied to (None: computed only).
        log: where a change is said (one line).
        start: the runs at once to begin with (None: ``ceiling``, and no growth).
        machine: reads the machine's busy CPUs (:func:`machine_sample`; None: no growth).
        cpus: the machine's CPUs (``os.cpu_count()``), what ``machine``'s readings are idle against.
    """

    def __init__(self, ceiling: int, limiter: AdaptiveLimiter | None = None,
                 log: Callable[[str], None] = lambda _line: None, *, start: int | None = None,
                 machine: Sampler | None = None, cpus: int | None = None):
        self.ceiling = max(1, int(ceiling))
        self.start = max(1, min(int(start), self.ceiling)) if start is not None else self.ceiling
        self.limiter = limiter
        self.log = log
        self._cond = threading.Condition()
        self._machine = machine if self.start < self.ceiling else None
        self._cpus = cpus or os.cpu_count() or 1
        self._last = self._machine() if self._machine is not None else None
        self._busy_cap = self.start  # what the machine keeps busy
        self._rate_cap = self.ceiling  # what the endpoint's limit sustains
        self._cap = self.start
        self._requests = 0
        self._seconds = 0.0
        self.limit: float | None = None  # the endpoint's last advertised requests per minute
        self.changes: list[dict[str, Any]] = []
        if limiter is not None and self._cap < limiter.cap:
            limiter.cap_at(self._cap)  # the start: not a change

    @property
    def cap(self) -> int:
        with self._cond:
            return self._cap

    def observe(self, exchanges: Sequence[Mapping[str, Any]] | None, seconds: float, in_flight: int = 0) -> None:
        """A finished attempt: its relay record, how long it ran, and the runs in flight as it ended (itself
        included); the cap follows the limit it advertised and the machine's idle CPUs since the last one."""
        lines: list[str] = []
        with self._cond:
            if exchanges and seconds > 0:
                self._learn_limit(exchanges, seconds, lines)
            if self._machine is not None:
                self._follow_machine(self._machine, in_flight, lines)
            old, new = self._cap, min(self.ceiling, self._busy_cap, self._rate_cap)
            if new == old:
                return
            self._cap, reason = new, "; ".join(lines)
            self.changes.append({"from": old, "to": new, "reason": reason})
        if self.limiter is not None:
            self.limiter.cap_at(new, reason)
        self.log(f"generate: runs at once {old} → {new}: {reason}")

    def _learn_limit(self, exchanges: Sequence[Mapping[str, Any]], seconds: float, lines: list[str]) -> None:
        self._requests += sum(1 for e in exchanges if e.get("route") == "messages")
        self._seconds += seconds
        limit = advertised_limit(exchanges)
        if limit is not None:
            self.limit = limit
        if self.limit is None:
            return
        per_run = 60.0 * self._requests / self._seconds
        rate = min(self.ceiling, sustained_jobs(self.limit, per_run))
        if rate != self._rate_cap:
            self._rate_cap = rate
            lines.append(f"the endpoint allows {self.limit:g} requests/min ({REQUESTS_LIMIT_HEADER}) and a run sends "
                         f"about {per_run:.0f}/min")

    def _follow_machine(self, machine: Sampler, in_flight: int, lines: list[str]) -> None:
        sample = machine()
        if sample is None or self._last is None:
            self._last = sample
            return
        (busy, now), (busy0, then) = sample, self._last
        if now - then < WINDOW_S:
            return
        self._last = sample
        used = (busy - busy0) / (now - then)
        idle = self._cpus - used
        full = in_flight >= min(self._busy_cap, self._rate_cap)
        if idle >= IDLE_GROW and full and self._busy_cap < min(self.ceiling, self._rate_cap):
            # Little's law on the CPUs: runs at once that would keep them busy at this window's CPU per run (another
            # user's load counted as ours: an underestimate), reached by at most doubling per window
            target = math.floor(in_flight * self._cpus / max(used, 0.1))
            self._busy_cap = min(self.ceiling, self._rate_cap, max(self._busy_cap + 1, min(2 * self._busy_cap, target)))
            lines.append(f"{idle:.1f} of the machine's {self._cpus} CPUs were idle with every run slot in use (the "
                         "runs wait on the endpoint)")
        elif idle < IDLE_SHRINK and self._busy_cap > self.start:
            self._busy_cap -= 1
            lines.append(f"the machine's {self._cpus} CPUs were busy ({idle:.2f} idle)")
