"""The public API: the entry points resolve, each package front declares its names once (its stub) and they
resolve, the old flat layout's aliases are gone, no public name is shadowed by a module, and the CLI lists every
subcommand."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import types
from pathlib import Path

import pytest

import skillbench
from skillbench.cli import build_parser, main


def _fronts() -> list[str]:
    """Every package with a front: ``skillbench`` and each sub-package that has an ``__init__.pyi``."""
    names = ["skillbench"] + [i.name for i in pkgutil.walk_packages(skillbench.__path__, "skillbench.") if i.ispkg]
    return [n for n in names if (Path(importlib.import_module(n).__file__).with_suffix(".pyi")).is_file()]


def _stub_names(package: str) -> set[str]:
    stub = Path(importlib.import_module(package).__file__).with_suffix(".pyi")
    tree = ast.parse(stub.read_text())
    imports = [node for node in tree.body if isinstance(node, ast.ImportFrom)]
    return {alias.asname or alias.name for node in imports for alias in node.names}


def test_every_entry_point_resolves():
    assert skillbench.__all__ and set(skillbench.__all__) <= set(dir(skillbench))
    for name in skillbench.__all__:
        value = getattr(skillbench, name)
        assert value is not None and not isinstance(value, types.ModuleType), name


@pytest.mark.parametrize("package", _fronts())
def test_a_front_declares_its_names_once_in_its_stub_and_each_resolves(package: str):
    """``__init__.py`` holds no list of names (lazy_loader reads them from ``__init__.pyi``, which type checkers
    read too), and every name the stub declares resolves to what its module defines."""
    module = importlib.import_module(package)
    init = Path(module.__file__).read_text()
    assert "lazy_loader.attach_stub(__name__, __file__)" in init and "_EXPORTS" not in init
    names = _stub_names(package)
    assert names == set(module.__all__), package
    for name in sorted(names):
        assert getattr(module, name) is not None, f"{package}.{name}"


@pytest.mark.parametrize("name", ["decide", "load_run", "RunLedgers", "JudgeClient", "price"])
def test_the_flat_layouts_aliases_are_gone(name: str):
    """Names importable from ``skillbench`` before the sub-packages were aliases; a name has one home now."""
    with pytest.raises(AttributeError):
        getattr(skillbench, name)


def test_no_public_name_is_shadowed_by_a_submodule():
    """Importing ``skillbench.x`` rebinds ``skillbench.x`` to the module: a function must not share its name."""
    import importlib.util

    clashes = [n for n in skillbench.__all__ if importlib.util.find_spec(f"skillbench.{n}") is not None]
    assert not clashes


def test_no_package_export_resolves_to_a_module_once_every_module_is_imported():
    """A sub-package's export that shares its name with one of its modules must still be the export."""
    for info in pkgutil.walk_packages(skillbench.__path__, "skillbench."):
        importlib.import_module(info.name)
    shadowed = []
    for info in pkgutil.iter_modules(skillbench.__path__, "skillbench."):
        package = importlib.import_module(info.name)
        for name in getattr(package, "__all__", ()):
            if isinstance(getattr(package, name), types.ModuleType):
                shadowed.append(f"{info.name}.{name}")
    assert not shadowed


def test_cli_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    registered = set(sub.choices)
    assert {"validate", "generate", "signals", "judge", "scorecard", "weekly"} <= registered
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    section = text.split("positional arguments:", 1)[1].split("options:", 1)[0]
    listed = set(re.findall(r"^ {4}(\S+)", section, flags=re.M))
    assert listed == registered, f"registered but not in --help: {registered - listed}; extra: {listed - registered}"


@pytest.mark.parametrize("package", _fronts())
def test_no_exported_name_is_defined_in_two_modules_of_its_package(package: str):
    """A name means one thing: when two modules behind one front define the same exported name, the stub picks one
    and the other's callers silently get the wrong function (as once happened to the rewriter's payload reader)."""
    folder = Path(importlib.import_module(package).__file__).parent
    homes: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            else:
                names = []
            for name in names:
                homes.setdefault(name, set()).add(path.stem)
    twice = {n: sorted(homes[n]) for n in _stub_names(package) if len(homes.get(n, ())) > 1}
    assert not twice, f"{package}: exported names defined in more than one module: {twice}"
