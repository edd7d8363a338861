"""The declared API surfaces of a suite: built once per version with griffe, cached as compact JSON, loaded in ms.

A surface is one ``[[api]]`` entry of ``skillbench.toml`` (package, exact version, optional typed stubs) flattened by
:mod:`._flatten`. Building it reads files only (``_source``: the installed distribution when its version matches,
else a fetched wheel); nothing of a declared package is imported or run. Loading never touches the network: a surface
missing from the cache leaves its identifiers unchecked, with one warning naming the command that fetches it.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillbench.identifiers._model import SurfaceError
from skillbench.identifiers._source import check_requirement, materialize, normalized
from skillbench.suite import ApiSettings, SuiteConfig, load_config

FORMAT_VERSION = 2  # bump when the flattened shape or what it means changes: every cached surface is rebuilt
CACHE_ENV = "SKILLBENCH_CACHE"
MAX_SURFACE_BYTES = 64 * 1024 * 1024  # a cached file larger than this is not one we wrote


def cache_dir(override: str | Path | None = None) -> Path:
    """Where surfaces are cached: ``override``, else ``$SKILLBENCH_CACHE/surfaces``, else ``~/.cache/skillbench``."""
    if override is not None:
        return Path(override)
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]) / "surfaces"
    return Path.home() / ".cache" / "skillbench" / "surfaces"


@dataclass(frozen=True)
class Surface:
    """One declared library at one version: its flattened objects (``None`` when not cached: all unchecked)."""

    spec: ApiSettings
    objects: dict[str, dict[str, Any]] | None
    rest: list[tuple[str, str, str]] = field(default_factory=list)  # (METHOD, /path/{param}, body model path)

    @property
    def label(self) -> str:
        return f"{self.spec.package}=={self.spec.version}"

    @property
    def module(self) -> str:
        return self.spec.import_name

    def get(self, path: str) -> dict[str, Any] | None:
        return None if self.objects is None else self.objects.get(path)

    @functools.cached_property
    def _descendants(self) -> dict[str, list[str]]:
        index: dict[str, list[str]] = {}
        for path, entry in (self.objects or {}).items():
            if entry.get("k") == "c":
                for ancestor in entry.get("b", []):
                    if ancestor != path:
                        index.setdefault(ancestor, []).append(path)
        return index

    def subclass_has(self, path: str, name: str) -> bool:
        """Whether a subclass of ``path`` in the surface defines ``name``: an annotation names a base (``Index``,
        ``lti``) and the running object is often a subclass (``DatetimeIndex``, ``TransferFunction``)."""
        return any(name in (self.get(sub) or {}).get("m", {}) for sub in self._descendants.get(path, ()))


@dataclass(frozen=True)
class Surfaces:
    """A suite's declared surfaces, by import name, and the warnings loading them gave (one line each)."""

    by_module: dict[str, Surface] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def languages(self) -> frozenset[str]:
        return frozenset(s.spec.language for s in self.by_module.values())

    def for_path(self, dotted: str) -> Surface | None:
        """The surface a dotted path belongs to (``statsmodels.formula.api`` → statsmodels), or None."""
        head = dotted.split(".", 1)[0]
        return self.by_module.get(head)

    def config_surfaces(self) -> list[Surface]:
        return [s for s in self.by_module.values() if s.spec.config_models or s.spec.rest_modules]


def cache_file(spec: ApiSettings, directory: Path) -> Path:
    """The cache file of one surface; its name is built from validated parts only, and stays inside ``directory``."""
    check_requirement(spec.package, spec.version, "[[api]]")
    name = f"{normalized(spec.package)}-{spec.version}"
    if spec.stubs and spec.stubs_version:
        check_requirement(spec.stubs, spec.stubs_version, "[[api]] stubs")
        name += f"+{normalized(spec.stubs)}-{spec.stubs_version}"
    path = directory / f"{name}.f{FORMAT_VERSION}.json"
    if path.resolve().parent != directory.resolve():
        raise SurfaceError(directory, "[[api]]", f"{name!r} would leave the cache folder", "declare a plain name")
    return path


def _rest_paths(module_files: list[Path], models_modules: list[str]) -> list[tuple[str, str, str]]:
    """(method, url template, body model) from the HTTP API modules' ``method="…", url="…"`` string literals, read with
    ``ast`` (never imported). The body model is the enclosing function's parameter annotated ``m.Model``."""
    found: list[tuple[str, str, str]] = []
    for path in module_files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            body_model = ""
            for arg in func.args.args + func.args.kwonlyargs:
                ann = arg.annotation
                if isinstance(ann, ast.Attribute) and isinstance(ann.value, ast.Name) and models_modules:
                    body_model = f"{models_modules[0]}.{ann.attr}"
            for call in ast.walk(func):
                if not isinstance(call, ast.Call):
                    continue
                kw = {k.arg: k.value for k in call.keywords if k.arg}
                method, url = kw.get("method"), kw.get("url")
                if isinstance(method, ast.Constant) and isinstance(url, ast.Constant) and \
                        isinstance(method.value, str) and isinstance(url.value, str):
                    found.append((method.value.upper(), url.value, body_model))
    return sorted(set(found))


def _module_files(root: Path, modules: list[str]) -> list[Path]:
    files: list[Path] = []
    for dotted in modules:
        base = root.joinpath(*dotted.split("."))
        if base.is_dir():
            files.extend(sorted(base.glob("*.py")))
        elif base.with_suffix(".py").is_file():
            files.append(base.with_suffix(".py"))
    return files


def build_surface(spec: ApiSettings, directory: Path) -> tuple[Path, str]:
    """Read one declared surface statically and cache it; (the cache file, where the source came from).

    Raises:
        SurfaceError: the package (or its stubs) cannot be obtained or read.
    """
    where = f"[[api]] {spec.package}"
    with tempfile.TemporaryDirectory(prefix="skillbench-surface-") as tmp:
        src_dir, stub_dir = Path(tmp, "src"), Path(tmp, "stubs")
        src_dir.mkdir()
        origin = materialize(spec.package, spec.version, src_dir, where)
        if spec.stubs and spec.stubs_version:
            stub_dir.mkdir()
            materialize(spec.stubs, spec.stubs_version, stub_dir, f"[[api]] {spec.stubs}")
        return build_surface_from(spec, src_dir, stub_dir if spec.stubs else None, directory, origin=origin), origin


def build_surface_from(spec: ApiSettings, src_dir: Path, stub_dir: Path | None, directory: Path, *,
                       origin: str = "folder") -> Path:
    """Flatten the package (and stubs) whose files are already under ``src_dir`` (``stub_dir``) and cache it; the
    cache file. ``origin="installed"`` allows introspection of the running package for what griffe leaves open.

    Raises:
        SurfaceError: the module (or its stubs) cannot be read from those folders.
    """
    from skillbench.identifiers._flatten import (  # griffe only when building
        flatten,
        introspect_modules,
        load_package,
        merge,
    )

    target = cache_file(spec, directory)
    where = f"[[api]] {spec.package}"
    try:
        loader, _ = load_package(spec.import_name, src_dir, stubs=False)
    except Exception as exc:  # griffe: ModuleNotFoundError, LoadingError … the module is not in the wheel
        raise SurfaceError(where, "module", f"{spec.import_name!r} cannot be read from {spec.package}=="
                           f"{spec.version} ({type(exc).__name__})", "set `module` to its import name") from None
    objects = flatten(loader, spec.import_name)
    if origin == "installed":
        introspect_modules(objects)
    if stub_dir is not None:
        try:
            stub_loader, _ = load_package(spec.import_name, stub_dir, stubs=True)
        except Exception as exc:  # as above, for the stubs package
            raise SurfaceError(where, "stubs", f"{spec.stubs}=={spec.stubs_version} has no stubs for "
                               f"{spec.import_name!r} ({type(exc).__name__})",
                               "declare the matching stubs") from None
        objects = merge(objects, flatten(stub_loader, spec.import_name, stubs=True))
    rest = _rest_paths(_module_files(src_dir, spec.rest_modules), spec.config_models)
    payload = {"format": FORMAT_VERSION, "package": spec.package, "version": spec.version,
               "stubs": f"{spec.stubs}=={spec.stubs_version}" if spec.stubs else "", "module": spec.import_name,
               "origin": origin, "objects": objects, "rest": rest}
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=directory, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(payload, out, separators=(",", ":"))
    os.chmod(tmp_name, 0o644)  # a shared cache (CI's, a team's) is read by other users
    os.replace(tmp_name, target)  # whole or absent: a reader never sees half a surface
    return target


def _read_cached(spec: ApiSettings, path: Path) -> Surface:
    if path.stat().st_size > MAX_SURFACE_BYTES:
        raise ValueError("too large")
    payload = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(payload, dict) or payload.get("format") != FORMAT_VERSION or \
            payload.get("module") != spec.import_name or not isinstance(payload.get("objects"), dict):
        raise ValueError("not a surface of this format")
    rest = [(str(m), str(u), str(b)) for m, u, b in payload.get("rest", [])]
    return Surface(spec=spec, objects=payload["objects"], rest=rest)


def _config_of(config_or_suite_dir: SuiteConfig | str | Path) -> tuple[SuiteConfig, str]:
    if isinstance(config_or_suite_dir, SuiteConfig):
        return config_or_suite_dir, "`skillbench surfaces --suite SUITE_DIR` (or `--config FILE`)"
    return load_config(config_or_suite_dir), f"`skillbench surfaces --suite {config_or_suite_dir}`"


def load_surfaces(config_or_suite_dir: SuiteConfig | str | Path, *, cache: str | Path | None = None,
                  fetch: bool = False) -> Surfaces:
    """A suite's declared API surfaces, from the cache (``fetch=True`` builds a missing one: network, seconds).

    A surface that is not cached (or whose cache file is damaged) is kept with no objects, so its identifiers are
    unchecked, never fabricated; ``warnings`` names it and the command that fetches it.

    Raises:
        ConfigError: the suite's config cannot be read. SurfaceError: only with ``fetch=True``, a surface that cannot
            be built.
    """
    config, command = _config_of(config_or_suite_dir)
    directory = cache_dir(cache)
    by_module: dict[str, Surface] = {}
    warnings: list[str] = []
    for spec in config.api:
        path = cache_file(spec, directory)
        if fetch and not path.is_file():
            build_surface(spec, directory)
        try:
            by_module[spec.import_name] = _read_cached(spec, path)
            continue
        except FileNotFoundError:
            problem = "is not cached"
        except (OSError, ValueError, TypeError) as exc:  # damaged, truncated or foreign: never read as a clean surface
            problem = f"has a damaged cache file ({type(exc).__name__})"
        warnings.append(f"surface {spec.package}=={spec.version} {problem} in {directory}: its identifiers are "
                        f"unchecked — run {command}")
        by_module[spec.import_name] = Surface(spec=spec, objects=None)
    return Surfaces(by_module=by_module, warnings=tuple(warnings))
