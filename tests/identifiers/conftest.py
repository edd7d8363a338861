"""The synthetic library's surface (built once per module, ~0.2 s) and the bundled suite's cached real surfaces."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillbench.identifiers import Surfaces, build_surface_from, load_surfaces
from skillbench.suite import ApiSettings, SuiteConfig
from tests.helpers.shared import DATA_DIR, IN_CI, ROOT

SYNTH = DATA_DIR / "identifiers" / "synthpkg"
SYNTH_SPEC = ApiSettings(package="synthpkg", version="1.0.0", stubs="synthpkg-stubs", stubs_version="1.0.0")


@pytest.fixture(scope="module")
def synth_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("surfaces")
    build_surface_from(SYNTH_SPEC, SYNTH / "src", SYNTH / "stubs", cache)
    return cache


@pytest.fixture(scope="module")
def synth_surfaces(synth_cache: Path) -> Surfaces:
    surfaces = load_surfaces(SuiteConfig(api=[SYNTH_SPEC]), cache=synth_cache)
    assert not surfaces.warnings
    return surfaces


_LOADED: dict[str, Surfaces] = {}  # a real surface is megabytes of JSON: read once per test session


def cached_surfaces(config: SuiteConfig | Path, what: str) -> Surfaces:
    """Real surfaces from the cache `make setup` fills; skip outside CI when absent, fail in CI."""
    if what not in _LOADED:
        _LOADED[what] = load_surfaces(config)
    surfaces = _LOADED[what]
    if surfaces.warnings:
        if IN_CI:
            pytest.fail(f"{what} surfaces are not cached: `make setup` runs `skillbench surfaces` — "
                        f"{surfaces.warnings[0]}")
        pytest.skip(f"{what} surfaces are not cached here (run `skillbench surfaces`): {surfaces.warnings[0]}")
    return surfaces


@pytest.fixture(scope="module")
def bundled_surfaces() -> Surfaces:
    return cached_surfaces(ROOT / "evals", "the bundled suite's")
