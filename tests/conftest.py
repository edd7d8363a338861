"""Fixtures several test packages share: a copy of the run's generated sim week (judge, pairwise judge,
calibration) and the session's weekly chain on the tiny suite (weekly notebooks, report screenshots); and how
``make test`` spreads the tests over pytest-xdist workers (``--dist loadgroup``)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.judge import RUN_KEY, generate_week
from tests.helpers.once import build_once
from tests.helpers.weekly import run_tiny_chain

# A fixture whose value tests change in place: every test using it runs on one worker, in one group.
# (test_chain_resumes_the_same_run_key runs the chain again in the chain's own folders.)
MUTATED_SESSION_FIXTURES = ("tiny_chain",)
# broadest first: a package-scoped fixture groups its whole package, a module-scoped one its module
SHARED_SCOPES = ("package", "module", "class")
# The longest work units (measured with --durations), queued first so that neither worker is left running one
# alone at the end (`make test` passes --no-loadscope-reorder: xdist then hands out work in this order).
LONGEST_FIRST = (
    "tests/weekly/test_demo_history.py",  # four weekly chains
    "tests/weekly/test_skill_creator_chain.py",  # a weekly chain
    "tests/weekly/test_dotnet_chain.py",  # a weekly chain
    "tiny_chain",  # a weekly chain, and its resume
    "tests/weekly/test_notebooks.py::test_nbval_lax_over_the_notebooks",  # every notebook, standalone
)


@pytest.fixture(scope="session")
def generated_sim_week(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's generated run directory, built by one xdist worker for all (read-only — use ``sim_week``)."""
    return build_once(tmp_path_factory, "judge-week", lambda directory: generate_week(directory / RUN_KEY))


@pytest.fixture
def sim_week(generated_sim_week: Path, tmp_path: Path) -> Path:
    """A private copy of the run's generated sim week (24 gradeable runs of the tiny suite)."""
    return Path(shutil.copytree(generated_sim_week, tmp_path / "week"))


@pytest.fixture(scope="session")
def tiny_chain(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The weekly chain, run once per session on a copy of the tiny suite (skips without the CLI or the kernel).

    Its users share one xdist group (``MUTATED_SESSION_FIXTURES``), so one worker runs it."""
    return run_tiny_chain(tmp_path_factory.mktemp("weekly-chain"))


def _shared_group(item: pytest.Item) -> str | None:
    """The xdist group of a test that shares a fixture with other tests (``None``: it can run anywhere).

    A module- or package-scoped fixture is built once per worker that runs one of its tests, so its tests go
    to one worker; without this, both workers would generate the same expensive week.
    """
    fixturenames = set(item.fixturenames)
    for name in MUTATED_SESSION_FIXTURES:
        if name in fixturenames:
            return name
    defs = getattr(item, "_fixtureinfo", None)
    scopes: dict[str, str] = {}
    for name in fixturenames:
        for fixturedef in (defs.name2fixturedefs.get(name, ()) if defs else ()):
            if fixturedef.scope in SHARED_SCOPES:
                scopes.setdefault(fixturedef.scope, fixturedef.baseid)
    if "package" in scopes:
        return scopes["package"] or "."
    if "module" in scopes:
        return item.nodeid.split("::")[0]
    if "class" in scopes:
        return item.nodeid.rsplit("::", 1)[0]
    return None


def _queue_position(item: pytest.Item) -> int:
    marker = item.get_closest_marker("xdist_group")
    group = marker.args[0] if marker and marker.args else None
    for position, unit in enumerate(LONGEST_FIRST):
        if group == unit or item.nodeid.startswith(unit):
            return position
    return len(LONGEST_FIRST)


# tryfirst: an xdist worker's own hook turns the xdist_group markers into node ids, and it is registered after
# this conftest, so it would otherwise run first and miss these groups
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give each test that shares a fixture its xdist group (``--dist loadgroup`` keeps a group on one worker),
    and queue the longest work units first (a stable sort: the rest keep their order)."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            group = _shared_group(item)
            if group is not None:
                item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=_queue_position)


def _group_in_node_id(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup``, the ``@group`` suffix xdist's scheduler reads from each node id.

    pytest-xdist 3.8 writes it to ``item._nodeid``, which pytest 9.2 no longer reads (node ids became structured),
    so every group would silently be spread over both workers. Only when xdist's own suffix is missing."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        marker = item.get_closest_marker("xdist_group")
        if marker is not None and marker.args and "@" not in item.nodeid.rsplit("]", 1)[-1]:
            from _pytest.nodeid import coerce_node_id  # pytest >= 9.2 only: older ones took xdist's suffix

            item._id = coerce_node_id(f"{item.nodeid}@{marker.args[0]}")


@pytest.hookimpl(tryfirst=True)  # before the xdist worker sends its node ids to the scheduler
def pytest_collection_finish(session: pytest.Session) -> None:
    """After every collection hook (xdist's included): make sure the groups reach xdist's scheduler."""
    _group_in_node_id(session.config, session.items)
