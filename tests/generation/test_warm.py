"""Containers made ahead of their runs (generation._warm): each used once, none outliving the pass.

The pool's rules (which container goes where and when) are tested on stand-in containers; the last test runs the
real Docker sandbox as generate does, with a stand-in for the CLI, and looks from inside each run's container: a
fresh container every run, none of a previous run's files, and no key in any container. That generate's runs leave
nothing behind is also checked where a week is generated (``test_generate.py``, ``test_task_runs.py``).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from skillbench.generation import RelayPlan, choose_sandbox
from skillbench.generation._sandbox import LABEL
from skillbench.generation._warm import Warm, WarmPool
from tests.generation.test_generate import require_docker

KEY = (("127.0.0.1", 8080), (("HOME", "/home/runner"),))


class Box:
    """A stand-in container: counts how often it was removed."""

    def __init__(self, n: int):
        self.n, self.removed, self.alive = n, 0, True

    def remove(self, force: bool = False) -> None:
        self.removed += 1


class Maker:
    def __init__(self, tmp: Path, fail_from: int | None = None):
        self.tmp, self.made, self.fail_from = tmp, [], fail_from
        self.lock = threading.Lock()

    def __call__(self, key) -> Warm:
        with self.lock:
            n = len(self.made)
            if self.fail_from is not None and n >= self.fail_from:
                raise RuntimeError("the engine refused")
            box = Box(n)
            self.made.append(box)
        folder = self.tmp / f"relay-{n}"
        folder.mkdir()
        return Warm(box, folder, key)


def _settle(pool: WarmPool) -> None:
    deadline = time.time() + 10
    while pool._pending and time.time() < deadline:  # noqa: SLF001 - wait for the background threads in a test
        time.sleep(0.01)


def test_each_run_gets_a_container_nobody_used_and_the_next_is_made_ahead(tmp_path):
    make = Maker(tmp_path)
    pool = WarmPool(make, lambda box: box.alive)
    first = pool.take(KEY)  # nothing ready: made on the run's path
    _settle(pool)
    assert len(make.made) == 2  # …and one made ahead for the next run
    second = pool.take(KEY)
    assert second.container is make.made[1] and second.container is not first.container
    pool.discard(first)
    pool.discard(second)
    _settle(pool)
    assert first.container.removed == 1 and not first.folder.exists()
    pool.close()
    assert all(box.removed == 1 for box in make.made)  # the one made for a run that never came too
    assert not any(tmp_path.iterdir())


def test_a_container_that_died_while_waiting_is_never_handed_out(tmp_path):
    make = Maker(tmp_path)
    pool = WarmPool(make, lambda box: box.alive)
    pool.discard(pool.take(KEY))
    _settle(pool)
    make.made[1].alive = False  # the warm one's keeper died
    got = pool.take(KEY)
    assert got.container is not make.made[1] and got.container.alive
    pool.discard(got)
    pool.close()
    assert make.made[1].removed == 1


def test_a_container_made_for_other_settings_is_not_used(tmp_path):
    make = Maker(tmp_path)
    pool = WarmPool(make, lambda box: box.alive)
    pool.discard(pool.take(KEY))
    _settle(pool)
    other = pool.take((("127.0.0.1", 9090), ()))
    assert other.key != KEY and other.container is not make.made[1]
    pool.discard(other)
    pool.close()


def test_a_failure_ahead_is_reported_by_the_run_that_needs_the_container(tmp_path):
    make = Maker(tmp_path, fail_from=1)  # the first is made; every later one fails
    pool = WarmPool(make, lambda box: box.alive)
    pool.discard(pool.take(KEY))
    _settle(pool)  # the refill failed quietly in the background
    with pytest.raises(RuntimeError, match="the engine refused"):
        pool.take(KEY)  # made again on the run's path: the error is the run's
    pool.close()


def test_after_close_nothing_is_made_and_a_discard_is_removed_at_once(tmp_path):
    make = Maker(tmp_path)
    pool = WarmPool(make, lambda box: box.alive)
    warm = pool.take(KEY)
    pool.close()
    made = len(make.made)
    pool.discard(warm)
    assert warm.container.removed == 1 and not warm.folder.exists()
    assert len(make.made) == made


# The stand-in for the CLI, run exactly where the CLI runs (as the runner, after the skills were unpacked): it says
# which container it is in and what it finds, then leaves files everywhere it may write.
LOOK_AND_LEAVE = """
echo "container=$(hostname)"
echo "found=$(ls -A "$HOME" . /tmp | tr '\\n' ,)"
echo "environment=$(env | tr '\\n' ,)"
for d in "$HOME" . /tmp; do echo left > "$d/left-by-$RUN"; done
( printf 'FORGED\\n' > "/proc/$$/fd/1" ) 2>/dev/null && echo "reopened=yes" || echo "reopened=no"
"""


def test_every_docker_run_gets_a_fresh_container_without_a_previous_runs_files_or_a_key(tmp_path):
    """Three runs through the warm pool, as generate makes them: three containers, each clean, and none holding the
    endpoint's key (the run's own token only in the CLI's environment, never in a container's); the CLI's output
    cannot be reopened by the runner's processes."""
    require_docker()
    import docker

    key = "sk-endpoint-key-never-in-a-container"
    endpoint = SimpleNamespace(base_url="http://127.0.0.1:9", api_key=key, simulated=True, kind="simulated")
    sandbox = choose_sandbox("docker", endpoint, tmp_path, log=lambda m: None)  # warm, as generate runs
    sandbox.prefix = ["sh", "-c", LOOK_AND_LEAVE, "stand-in"]
    seen, tokens = [], []
    try:
        for n in range(3):
            relay = RelayPlan.for_run(endpoint, f"run-{n}", 1)
            tokens.append(relay.token)
            result = sandbox.run(["claude"], {"HOME": "/home/runner", "RUN": str(n)}, [], 60, f"run-{n}", relay=relay)
            assert result.exit_code == 0, result.stderr
            out = result.stdout.decode()
            seen.append({**dict(line.split("=", 1) for line in out.splitlines() if "=" in line.split(" ")[0]),
                         "stdout": out})
        spares = docker.from_env().containers.list(filters={"label": f"{LABEL}={tmp_path.resolve()}"})
        for spare in spares:  # made ahead for a run that never comes: nothing of any run is in it
            assert not any(key in e or "sk-skillbench-run-" in e for e in spare.attrs["Config"]["Env"])
    finally:
        sandbox.close()
    assert len({s["container"] for s in seen}) == 3  # never reused
    for n, s in enumerate(seen):
        assert "left-by-" not in s["found"], (n, s["found"])  # nothing of a previous run
        assert key not in s["environment"]  # the endpoint's key is the relay's alone
        assert tokens[n] in s["environment"] and not any(t in s["environment"] for t in tokens[:n])
        # the CLI's stdout is root's pipe: a process of the runner cannot reopen it to forge the transcript
        assert s["reopened"] == "no" and "FORGED" not in s["stdout"]
    assert not docker.from_env().containers.list(all=True, filters={"label": f"{LABEL}={tmp_path.resolve()}"})
