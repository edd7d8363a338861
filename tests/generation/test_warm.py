"""Containers made ahead of their runs (generation._warm): each used once, none outliving the pass.

The pool is tested on stand-in containers (its rules are about which container goes where and when); that
generate's real Docker runs use it and leave nothing behind is checked where a week is generated
(``tests/generation/test_generate.py::test_resume_after_kill_left_no_duplicates``, ``test_task_runs.py``).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from skillbench.generation._warm import Warm, WarmPool

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
