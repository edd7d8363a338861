"""The layers hold for what the import graph cannot see: the lazy re-exports of every package front.

``lint-imports`` (``make lint``) checks the contracts of ``pyproject.toml``'s ``[tool.importlinter]`` on the static
import graph. A package front declares each public name and the module defining it once, in its ``__init__.pyi``
(resolved on first use by ``lazy_loader.attach_stub``), so ``from skillbench.generation import Endpoint`` is, to
the graph, an import of ``skillbench.generation`` only. These tests read the same layers from ``pyproject.toml``
and hold every such import to them as an import of the module that defines the name: it must point down (or stay
in its package without closing a cycle between sibling modules), and the module must exist and define the name.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import grimp

import skillbench

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "skillbench"


@cache
def _contracts() -> list[dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    assert config["root_package"] == PACKAGE
    return config["contracts"]


@cache
def _layers() -> list[frozenset[str]]:
    """The layers contract's layers, top first; each a set of independent siblings."""
    (contract,) = [c for c in _contracts() if c["type"] == "layers"]
    assert contract["containers"] == [PACKAGE]
    return [frozenset(part.strip() for part in layer.split("|")) for layer in contract["layers"]]


def _rank(module: str) -> tuple[int, str]:
    """(index of its layer, top first; the top-level child of ``skillbench`` it belongs to)."""
    child = module.split(".")[1]
    for index, layer in enumerate(_layers()):
        if child in layer:
            return index, child
    raise AssertionError(f"{child}: not in the layers of pyproject.toml's [tool.importlinter] (place it there)")


@cache
def _graph() -> grimp.ImportGraph:
    return grimp.build_graph(PACKAGE, cache_dir=None)


@cache
def _exports() -> dict[str, dict[str, tuple[str, str]]]:
    """Per package: public name → (defining module, its name there), from the front's ``__init__.pyi``."""
    out: dict[str, dict[str, tuple[str, str]]] = {}
    names = [PACKAGE] + [i.name for i in pkgutil.walk_packages(skillbench.__path__, f"{PACKAGE}.") if i.ispkg]
    for package in names:
        stub = Path(importlib.import_module(package).__file__).with_suffix(".pyi")
        if not stub.is_file():
            continue
        targets: dict[str, tuple[str, str]] = {}
        for node in ast.parse(stub.read_text()).body:
            if isinstance(node, ast.ImportFrom):
                assert node.level == 1 and node.module, f"{stub}: only `from .module import name` declares a name"
                targets |= {a.asname or a.name: (f"{package}.{node.module}", a.name) for a in node.names}
        out[package] = targets
    return out


@dataclass(frozen=True)
class FrontImport:
    """A module that takes a name from a package front: to the layers, an import of the name's defining module."""

    importer: str
    line: int
    front: str
    name: str
    target: str

    def __str__(self) -> str:
        return f"{self.importer} (l.{self.line}) imports {self.front}.{self.name}, defined in {self.target}"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _scan(module: str, source: str, filename: str = "<module>") -> list[FrontImport]:
    """``module``'s ``from <package> import <exported name>`` and ``<package alias>.<exported name>``."""
    exports = _exports()
    found: list[FrontImport] = []
    aliases: dict[str, str] = {}  # a local name bound to a package front → that package
    tree = ast.parse(source, filename=filename)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert not node.level, f"{filename}:{node.lineno}: a relative import (skillbench imports absolutely)"
            source_module = node.module or ""
            for alias in node.names:
                if source_module in exports and alias.name in exports[source_module] and source_module != module:
                    target = exports[source_module][alias.name][0]
                    found.append(FrontImport(module, node.lineno, source_module, alias.name, target))
                elif f"{source_module}.{alias.name}" in exports:
                    aliases[alias.asname or alias.name] = f"{source_module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in exports:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            front = aliases[node.value.id]
            if node.attr in exports[front] and front != module:
                found.append(FrontImport(module, node.lineno, front, node.attr, exports[front][node.attr][0]))
    return found


@cache
def _front_imports() -> list[FrontImport]:
    """Every import of a package front's exported name in skillbench (the container's own front aside)."""
    found: list[FrontImport] = []
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        module = _module_name(path)
        if module != PACKAGE:  # the container itself stands outside the layers (as in the contract)
            found += _scan(module, path.read_text(encoding="utf-8"), str(path))
    for front, targets in _exports().items():  # a front naming another package's module imports it on first use
        if front != PACKAGE:
            found += [FrontImport(front, 0, front, name, module) for name, (module, _) in targets.items()
                      if not module.startswith(f"{front}.")]
    return found


def test_the_layers_contract_is_exhaustive_and_ignores_nothing():
    """Every top-level module has its layer, and no contract lists an import as an exception."""
    for contract in _contracts():
        assert not contract.get("ignore_imports"), f"{contract['id']}: fix the import instead of ignoring it"
    (layers,) = [c for c in _contracts() if c["type"] == "layers"]
    assert layers.get("exhaustive") is True
    children = {m.name for m in pkgutil.iter_modules(skillbench.__path__)}
    placed = set().union(*_layers())
    assert children == placed, f"not placed: {sorted(children - placed)}; no such module: {sorted(placed - children)}"
    assert {c["type"] for c in _contracts()} >= {"layers", "acyclic_siblings"}


def test_every_export_target_exists_and_defines_its_name():
    missing = []
    for package, targets in _exports().items():
        for public, (module, name) in targets.items():
            if importlib.util.find_spec(module) is None:
                missing.append(f"{package}.{public}: no module {module}")
            elif not hasattr(importlib.import_module(module), name):
                missing.append(f"{package}.{public}: {module} does not define {name}")
    assert not missing, "\n".join(missing)


def test_the_scan_finds_front_imports_in_every_form():
    """The scan sees each form (a scan that found nothing would let the tests below pass whatever the code)."""
    source = ("from skillbench.generation import Endpoint\n"
              "def f():\n    from skillbench.judge import JudgeOptions\n"
              "from skillbench import report\nreport.write_week_index\n")
    found = {(i.front, i.name, i.target) for i in _scan("skillbench.suite.x", source)}
    assert found == {("skillbench.generation", "Endpoint", "skillbench.generation._backend"),
                     ("skillbench.judge", "JudgeOptions", _exports()["skillbench.judge"]["JudgeOptions"][0]),
                     ("skillbench.report", "write_week_index", "skillbench.report._indexes")}
    assert len(_upward(_scan("skillbench.suite.x", source))) == 3, "the example's imports point up"
    sibling = _scan("skillbench.generation.x", "from skillbench.judge import JudgeOptions\n")
    assert _upward(sibling) == [f"{sibling[0]}: judge is its independent sibling"]
    inside = _scan("skillbench.sim._agent", "from skillbench.sim import SimServer\n")  # the server imports the agent
    assert len(_closing(inside)) == 1 and not _upward(inside)


def _upward(imports: list[FrontImport]) -> list[str]:
    """The imports that break the layers, as an import of the name's defining module."""
    upward = []
    for imp in imports:
        (importer, importer_child), (target, target_child) = _rank(imp.importer), _rank(imp.target)
        if importer_child == target_child:
            continue  # within one package: the sibling modules' test below
        if importer >= target:
            siblings = "its independent sibling" if importer == target else "a layer above it"
            upward.append(f"{imp}: {target_child} is {siblings}")
    return upward


def test_every_front_import_points_down_the_layers():
    """Importing a package front's name imports the module behind it: the layers hold for that module too."""
    upward = _upward(_front_imports())
    assert not upward, "\n".join(upward)


def _closing(imports: list[FrontImport]) -> list[str]:
    """The imports that close a cycle between two sibling modules, as an import of the name's defining module."""
    graph = _graph()
    closing = []
    for imp in imports:
        common = 0  # the deepest package holding both modules; its children are the siblings
        for a, b in zip(imp.importer.split("."), imp.target.split("."), strict=False):
            if a != b:
                break
            common += 1
        depth = common + 1
        importer_child = ".".join(imp.importer.split(".")[:depth])
        target_child = ".".join(imp.target.split(".")[:depth])
        if importer_child == target_child or imp.importer == ".".join(imp.target.split(".")[:common]):
            continue  # the same sibling, or a package front naming its own module
        back = graph.find_shortest_chain(importer=target_child, imported=importer_child, as_packages=True)
        if back is not None:
            closing.append(f"{imp}; and back: {' -> '.join(back)}")
    return closing


def test_no_front_import_closes_a_cycle_between_sibling_modules():
    """A module taking a name through its own package's front still imports the sibling module that defines it:
    that import must not close a cycle between the two siblings (the acyclic_siblings contract, for hidden edges)."""
    closing = _closing(_front_imports())
    assert not closing, "\n".join(closing)
