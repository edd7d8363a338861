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
cannot act before the first run has ended, when nothing has been advertised yet; the adaptive limiter
(:mod:`skillbench.limiter`) still answers a 429 the way it always did.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillbench.limiter import RATELIMIT_PREFIX, AdaptiveLimiter

REQUESTS_LIMIT_HEADER = f"{RATELIMIT_PREFIX}requests-limit"  # requests per minute, on every limited answer
CGROUP_ROOT = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class MachineFacts:
    """What the default number of runs at once is decided from (each None when it could not be read).

    Attributes:
        sandbox: ``docker`` or ``local``: where the CLI runs.
        affinity: CPUs this process may run on (``os.sched_getaffinity``).
        quota: this process's cgroup CPU quota, in CPUs (None: no quota).
        engine_cpus: the Docker engine's NCPU (None: no engine answered).
    """

    sandbox: str
    affinity: int | None = None
    quota: float | None = None
    engine_cpus: int | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MachineFacts:
        return cls(sandbox=str(data["sandbox"]), affinity=data.get("affinity"), quota=data.get("quota"),
                   engine_cpus=data.get("engine_cpus"))


@dataclass(frozen=True)
class JobsChoice:
    """The number of runs at once and why, in words a log line can end with."""

    jobs: int
    why: str


def default_jobs(facts: MachineFacts) -> JobsChoice:
    """Runs at once when ``--jobs`` is not given: one per core the runs get (see the module's text); at least one."""
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


def machine_facts(sandbox: str, *, engine: Any = None) -> MachineFacts:
    """This machine's facts for ``sandbox`` (``engine``: a docker client to ask; None: one from the environment)."""
    return MachineFacts(sandbox=sandbox, affinity=_affinity(), quota=cgroup_quota(),
                        engine_cpus=engine_cpus(engine) if sandbox == "docker" else None)


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


class RunsCap:
    """What the endpoint's advertised request limit sustains in runs at once, at most ``jobs``; it caps the pass's one
    limiter (:meth:`skillbench.limiter.AdaptiveLimiter.cap_at`), whose slots every run takes.

    Args:
        jobs: the pass's runs at once (the ceiling; the cap never rises above it).
        limiter: the pass's limiter the cap is applied to (None: computed only).
        log: where a change is said (one line).
    """

    def __init__(self, jobs: int, limiter: AdaptiveLimiter | None = None,
                 log: Callable[[str], None] = lambda _line: None):
        self.jobs = max(1, int(jobs))
        self.limiter = limiter
        self.log = log
        self._cond = threading.Condition()
        self._cap = self.jobs
        self._requests = 0
        self._seconds = 0.0
        self.limit: float | None = None  # the endpoint's last advertised requests per minute
        self.changes: list[dict[str, Any]] = []

    @property
    def cap(self) -> int:
        with self._cond:
            return self._cap

    def observe(self, exchanges: Sequence[Mapping[str, Any]] | None, seconds: float) -> None:
        """A finished attempt: its relay record and how long it ran; the cap follows the limit it advertised."""
        if not exchanges or seconds <= 0:
            return
        sent = sum(1 for e in exchanges if e.get("route") == "messages")
        limit = advertised_limit(exchanges)
        with self._cond:
            self._requests += sent
            self._seconds += seconds
            if limit is not None:
                self.limit = limit
            if self.limit is None:
                return
            per_run = 60.0 * self._requests / self._seconds
            new = min(self.jobs, sustained_jobs(self.limit, per_run))
            if new == self._cap:
                return
            old, self._cap = self._cap, new
            change = {"from": old, "to": new, "requests_per_minute": self.limit,
                      "run_requests_per_minute": round(per_run, 1)}
            self.changes.append(change)
        if self.limiter is not None:
            self.limiter.cap_at(new)
        self.log(f"generate: runs at once {old} → {new}: the endpoint allows {self.limit:g} requests/min "
                 f"({REQUESTS_LIMIT_HEADER}) and a run sends about {per_run:.0f}/min")
