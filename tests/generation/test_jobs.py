"""Runs at once by default (generation._jobs): the cores the runs get, and what the endpoint's request limit sustains.

The rule is pinned on machine and endpoint facts written as data (``tests/data/jobs/cases.json``); reading the facts
is pinned on small cgroup trees; the cap's waiting on threads.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from skillbench.generation import MachineFacts, RunsCap, default_jobs, machine_facts, sustained_jobs
from skillbench.generation._jobs import cgroup_quota
from skillbench.limiter import AdaptiveLimiter

CASES = json.loads((Path(__file__).parents[1] / "data" / "jobs" / "cases.json").read_text())


@pytest.mark.parametrize("case", CASES["machines"], ids=[c["name"] for c in CASES["machines"]])
def test_default_jobs_follow_the_cores_the_runs_get(case):
    choice = default_jobs(MachineFacts.from_json(case["facts"]))
    assert choice.jobs == case["jobs"]
    assert choice.ceiling == case.get("ceiling", 0)
    assert case["why"] in choice.why  # the log line says which cores, and from where


class _Machine:
    """The machine's busy CPU-seconds and clock, advanced one window at a time by a case."""

    def __init__(self) -> None:
        self.busy, self.now = 100.0, 1000.0

    def __call__(self) -> tuple[float, float]:
        return self.busy, self.now


@pytest.mark.parametrize("case", CASES["growth"], ids=[c["name"] for c in CASES["growth"]])
def test_runs_at_once_grow_while_the_machine_idles_and_shrink_back(case):
    machine, said = _Machine(), []
    limiter = AdaptiveLimiter(case["ceiling"])
    cap = RunsCap(case["ceiling"], limiter, log=said.append, start=case["start"], machine=machine, cpus=case["cpus"])
    assert limiter.cap == case["start"]
    caps = []
    for window in case["windows"]:
        machine.busy += window["busy"]
        machine.now += window["seconds"]
        cap.observe([], 1.0, window["in_flight"])
        caps.append(cap.cap)
    assert caps == case["caps"]
    assert limiter.cap == caps[-1]
    changes = limiter.summary()["cap_changes"]
    assert len(said) == len(cap.changes) == sum(a != b for a, b in zip([case["start"], *caps], caps, strict=False))
    assert all(c["reason"] for c in changes)  # retries.json says why each change happened


def _exchanges(requests: int, limit: str | None) -> list[dict]:
    headers = {"anthropic-ratelimit-requests-limit": limit} if limit is not None else {}
    return [{"route": "messages", "status": 200, "response_headers": headers} for _ in range(requests)]


@pytest.mark.parametrize("case", CASES["endpoints"], ids=[c["name"] for c in CASES["endpoints"]])
def test_runs_at_once_never_exceed_what_the_advertised_limit_sustains(case):
    said: list[str] = []
    cap = RunsCap(case["jobs"], log=said.append)
    for run in case["runs"]:
        cap.observe(_exchanges(run["requests"], run["limit"]), run["seconds"])
    assert cap.cap == case["cap"]
    assert bool(said) == (case["cap"] != case["jobs"])  # a change is said, once
    assert all("requests/min" in line for line in said)


def test_sustained_jobs_is_littles_law_and_at_least_one():
    assert sustained_jobs(600, 60) == 10
    assert sustained_jobs(40, 120) == 1
    assert sustained_jobs(40, 0) > 1000  # a run that sends nothing asks nothing of the limit


def test_the_cap_holds_new_runs_until_one_ends():
    """The cap is applied to the pass's one limiter: its slots hold both the cut after a 429 and this cap."""
    limiter = AdaptiveLimiter(2)
    cap = RunsCap(2, limiter)
    cap.observe(_exchanges(2, "60"), 1.0)  # 120/min per run against 60/min: one at a time
    assert limiter.cap == 1 and limiter.limit == 2 and limiter.summary()["cap"] == 1
    entered = threading.Event()
    with limiter.slot():
        waiter = threading.Thread(target=lambda: (limiter.slot().__enter__(), entered.set()))
        waiter.start()
        time.sleep(0.05)
        assert not entered.is_set()
    waiter.join(timeout=5)
    assert entered.is_set()


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.mark.parametrize(("membership", "files", "quota"), [
    ("0::/job\n", {"cgroup.controllers": "cpu", "job/cpu.max": "150000 100000\n"}, 1.5),
    ("0::/job\n", {"cgroup.controllers": "cpu", "job/cpu.max": "max 100000\n"}, None),
    # a pod's quota holds for the cgroup below it
    ("0::/pod/job\n", {"cgroup.controllers": "cpu", "pod/cpu.max": "50000 100000\n", "pod/job/cpu.max": "max 100000\n"},
     0.5),
    ("4:memory:/x\n2:cpu,cpuacct:/job\n", {"cpu,cpuacct/job/cpu.cfs_quota_us": "200000\n",
                                           "cpu,cpuacct/job/cpu.cfs_period_us": "100000\n"}, 2.0),
    ("2:cpu,cpuacct:/job\n", {"cpu,cpuacct/job/cpu.cfs_quota_us": "-1\n",
                              "cpu,cpuacct/job/cpu.cfs_period_us": "100000\n"}, None),
    ("garbage\n", {}, None),
], ids=["v2", "v2 no quota", "v2 parent's quota", "v1", "v1 no quota", "unreadable"])
def test_cgroup_quota_is_read_from_v1_and_v2_trees(tmp_path, membership, files, quota):
    _tree(tmp_path / "fs", files)
    (tmp_path / "fs").mkdir(exist_ok=True)
    (tmp_path / "cgroup").write_text(membership)
    assert cgroup_quota(tmp_path / "fs", tmp_path / "cgroup") == quota


def test_this_machines_facts_are_read():
    facts = machine_facts("local")
    assert facts.affinity and facts.affinity >= 1 and facts.engine_cpus is None
    assert default_jobs(facts).jobs >= 1


def test_generate_takes_jobs_given_else_the_machines_and_says_which():
    from types import SimpleNamespace

    from skillbench.generation import LocalExecutor
    from skillbench.generation._run import pass_jobs

    local = SimpleNamespace(name="local")
    assert pass_jobs(3, LocalExecutor(print), local).why == "--jobs 3"
    choice = pass_jobs(0, LocalExecutor(print), local)
    assert choice.jobs == default_jobs(machine_facts("local")).jobs and "CPUs" in choice.why
    cluster = SimpleNamespace(kind="dask", width=lambda jobs: jobs or 6)
    assert pass_jobs(0, cluster, local).jobs == 6 and pass_jobs(0, cluster, local).most == 6  # never grows


def test_a_docker_pass_grows_only_as_far_as_its_containers_limits_fit_in_memory():
    """Every run in flight may fill its container's memory limit (a hostile one may, on purpose): the ceiling keeps
    them all within the memory available."""
    from types import SimpleNamespace

    from skillbench.generation import ContainerLimits, LocalExecutor, memory_available
    from skillbench.generation._run import pass_jobs

    limits = ContainerLimits(memory_mb=4096)
    choice = pass_jobs(0, LocalExecutor(print), SimpleNamespace(name="docker", limits=limits, client=None))
    available = memory_available()
    assert available is not None and choice.jobs >= 1
    assert choice.most <= max(choice.jobs, available // (4096 << 20))
    assert pass_jobs(3, LocalExecutor(print), SimpleNamespace(name="docker", limits=limits)).most == 3
