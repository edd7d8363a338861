"""The declared surfaces: [[api]] in skillbench.toml, the griffe loader on a tiny library, the per-version cache."""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path

import pytest

from skillbench.identifiers import SurfaceError, cache_file, load_surfaces
from skillbench.identifiers._source import _unpack, check_requirement, fetch_wheel
from skillbench.identifiers._surface import FORMAT_VERSION
from skillbench.suite import ConfigError, SuiteConfig, load_config
from tests.helpers.shared import ROOT
from tests.identifiers.conftest import SYNTH_SPEC


def _write(tmp_path: Path, body: str) -> Path:
    (tmp_path / "skillbench.toml").write_text(body, encoding="utf-8")
    return tmp_path


def test_the_bundled_suite_declares_its_libraries_at_the_installed_versions() -> None:
    from importlib.metadata import version

    apis = {a.package: a for a in load_config(ROOT / "evals").api}
    assert set(apis) == {"pandas", "scipy", "statsmodels"}
    for name, api in apis.items():
        assert api.version == version(name) and api.import_name == name
    assert apis["pandas"].stubs == "pandas-stubs" and apis["scipy"].stubs == "scipy-stubs"


@pytest.mark.parametrize(("body", "field"), [
    ('[[api]]\npackage = "pandas; rm -rf /"\nversion = "3.1.1"\n', "api.0.package"),
    ('[[api]]\npackage = "../../etc"\nversion = "3.1.1"\n', "api.0.package"),
    ('[[api]]\npackage = "pandas"\nversion = ">=3"\n', "api.0.version"),
    ('[[api]]\npackage = "pandas"\nversion = "3.1.1 --index-url http://evil"\n', "api.0.version"),
    ('[[api]]\npackage = "pandas"\nversion = "3.1.1"\nstubs = "pandas-stubs"\n', "api.0"),
    ('[[api]]\npackage = "pandas"\nversion = "3.1.1"\nlanguage = "r"\n', "api.0.language"),
    ('[[api]]\npackage = "pandas"\nversion = "3.1.1"\nmodule = "os.path; x"\n', "api.0.module"),
    ('[[api]]\npackage = "pandas"\nversion = "3.1.1"\n[[api]]\npackage = "pandas"\nversion = "2.0.0"\n', "api"),
    ('[[api]]\npackage = "pandas"\nversion = 3\n', "api.0.version"),
])
def test_a_bad_api_entry_is_one_config_line(tmp_path: Path, body: str, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(_write(tmp_path, body))
    assert err.value.field == field and "\n" not in str(err.value)


def test_module_defaults_from_the_package_name(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, '[[api]]\npackage = "qdrant-client"\nversion = "1.19.0"\n'))
    assert config.api[0].import_name == "qdrant_client" and config.api[0].language == "python"


@pytest.mark.parametrize(("package", "version"), [("a;b", "1.0"), ("x", "1.0;id"), ("../x", "1"), ("x", "../1"),
                                                 ("pandas\n", "1.0"), ("x", "1.0\n")])
def test_nothing_runs_for_a_hostile_name_or_version(tmp_path: Path, package: str, version: str) -> None:
    with pytest.raises(SurfaceError):
        check_requirement(package, version, "[[api]]")
    with pytest.raises(SurfaceError):
        fetch_wheel(package, version, tmp_path, "[[api]]")  # refused before any pip process
    assert not any(tmp_path.iterdir())


def test_a_wheel_cannot_write_outside_its_folder(tmp_path: Path) -> None:
    wheel = tmp_path / "evil-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("../escaped.py", "x = 1")
        archive.writestr("/abs/escaped.py", "x = 1")
        archive.writestr("evil/../../escaped2.py", "x = 1")
        archive.writestr("evil/__init__.py", "def f(a): ...")
        archive.writestr("evil/tests/test_x.py", "def test(): ...")
        archive.writestr("evil/data.bin", "not source")
    dest = tmp_path / "dest"
    dest.mkdir()
    assert _unpack(wheel, dest, "[[api]] evil") == 1
    assert [p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()] == ["evil/__init__.py"]
    assert not (tmp_path / "escaped.py").exists() and not Path("/abs/escaped.py").exists()


def test_the_loader_follows_stubs_inheritance_reexports_and_kwargs(synth_cache: Path) -> None:
    payload = json.loads(cache_file(SYNTH_SPEC, synth_cache).read_text("utf-8"))
    objects = payload["objects"]
    assert payload["format"] and payload["module"] == "synthpkg" and payload["stubs"] == "synthpkg-stubs==1.0.0"
    root = objects["synthpkg"]
    assert root["m"]["Frame"] == "synthpkg.core.frame.Frame"  # a re-export, to its definition
    assert root["open"] and root["why"] == "wildcard"  # `from ._compiled_part import *`: names unknown
    frame = objects["synthpkg.core.frame.Frame"]
    assert "describe" in frame["m"] and frame["b"] == ["synthpkg.core.base.Base"]  # inherited
    assert frame["ga"] == ["synthpkg.core.series.Column"]  # the stubs' __getattr__: a column, not callable
    assert objects["synthpkg.core.frame.Frame.group_by"]["r"] == ["synthpkg.core.grouped.Grouped"]  # stubs' type
    assert objects["synthpkg.core.frame.Frame.plot"]["kw"] is True  # **style
    reshaped = objects["synthpkg.core.frame.Frame.reshaped"]
    assert reshaped["dec"] and reshaped["p"] == ["fill", "how"] and reshaped["kw"] is False  # stubs vouch
    assert objects["synthpkg.lazy"]["why"] == "getattr"


def test_the_second_load_takes_milliseconds(synth_cache: Path) -> None:
    started = time.perf_counter()
    surfaces = load_surfaces(SuiteConfig(api=[SYNTH_SPEC]), cache=synth_cache)
    assert time.perf_counter() - started < 0.5 and surfaces.by_module["synthpkg"].objects


@pytest.mark.parametrize("damage", ["truncate", "foreign", "format"])
def test_a_damaged_cache_file_is_unchecked_never_clean(synth_cache: Path, tmp_path: Path, damage: str) -> None:
    source = cache_file(SYNTH_SPEC, synth_cache)
    target = tmp_path / source.name
    text = source.read_text("utf-8")
    damaged = {"truncate": text[: len(text) // 2], "foreign": '["not", "a surface"]',
               "format": text.replace(f'"format":{FORMAT_VERSION}', '"format":999', 1)}[damage]
    target.write_text(damaged, encoding="utf-8")
    surfaces = load_surfaces(SuiteConfig(api=[SYNTH_SPEC]), cache=tmp_path)
    assert surfaces.by_module["synthpkg"].objects is None
    assert len(surfaces.warnings) == 1 and "damaged cache file" in surfaces.warnings[0]


def test_surfaces_command_lists_cached_surfaces_and_refuses_bad_input(synth_cache: Path, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from skillbench.cli import main

    config = tmp_path / "skillbench.toml"
    config.write_text('[[api]]\npackage = "synthpkg"\nversion = "1.0.0"\nstubs = "synthpkg-stubs"\n'
                      'stubs_version = "1.0.0"\n', encoding="utf-8")
    assert main(["surfaces", "--config", str(config), "--cache", str(synth_cache)]) == 0
    assert capsys.readouterr().out.startswith("synthpkg==1.0.0 + synthpkg-stubs==1.0.0: cached ")
    assert main(["surfaces", "--suite", str(tmp_path / "missing")]) == 2
    assert "not a folder" in capsys.readouterr().err
    config.write_text('[[api]]\npackage = "x;y"\nversion = "1"\n', encoding="utf-8")
    assert main(["surfaces", "--config", str(config), "--cache", str(synth_cache)]) == 2
    assert "api.0.package" in capsys.readouterr().err


def test_a_declared_package_never_sees_a_credential(monkeypatch: pytest.MonkeyPatch) -> None:
    from skillbench.identifiers._source import scrubbed_env

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_secret")
    monkeypatch.setenv("PIP_INDEX_URL", "https://pypi.example/simple")
    env = scrubbed_env()
    assert "ANTHROPIC_API_KEY" not in env and "GITHUB_TOKEN" not in env
    assert env["PIP_INDEX_URL"] == "https://pypi.example/simple"  # pip's own settings stay
