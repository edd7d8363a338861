"""A declared package's files at its declared version, on disk, never imported and never executed.

The installed distribution is used when its version is the declared one (its RECORD names its files); otherwise the
wheel is fetched once with ``pip download --no-deps --only-binary=:all:`` (a wheel never runs code at install time,
and we never install it: only its ``.py``/``.pyi`` files are unpacked, inside a folder we own). A declared package
comes from a pull request, so its name and version are validated before they reach a command line (``_config``'s
patterns; again here, since the surface cache can be driven directly) and every unpacked path must stay inside the
destination.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from skillbench.identifiers._model import SurfaceError
from skillbench.suite import PACKAGE_PATTERN, VERSION_PATTERN

# PEP 508 project names and PEP 440 exact public versions (no specifiers, no local part, no URL): the config's rule
PACKAGE_RE = re.compile(PACKAGE_PATTERN)
VERSION_RE = re.compile(VERSION_PATTERN)
# test trees are most of a scientific package's files and none of its API (pandas: 4× the load time)
_SKIPPED_DIRS = frozenset({"tests", "testing", "_testing", "test", "__pycache__"})
_SOURCE_SUFFIXES = (".py", ".pyi")
PIP_TIMEOUT_S = 180
MAX_WHEEL_FILES = 20_000  # a wheel with more source files than scipy's (≈ 5k) is not a library we can read quickly


_SECRET_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "ANTHROPIC")


def scrubbed_env() -> dict[str, str]:
    """The environment for a child process that handles a declared package: pip's own settings and the proxies stay,
    anything that looks like a credential (the model API key above all) does not."""
    return {k: v for k, v in os.environ.items() if not any(part in k.upper() for part in _SECRET_PARTS)}


def check_requirement(package: str, version: str, where: str) -> None:
    """Refuse a name or version that is not a plain PEP 508 name / PEP 440 exact version (one line, no command run)."""
    if not PACKAGE_RE.fullmatch(package):  # fullmatch: `$` alone lets a trailing newline through
        raise SurfaceError(where, "package", f"{package[:80]!r} is not a PyPI project name",
                           "declare the package as PyPI spells it (letters, digits, '.', '_', '-')")
    if not VERSION_RE.fullmatch(version):
        raise SurfaceError(where, "version", f"{version[:80]!r} is not an exact version",
                           "declare one released version, such as 3.1.1 (no specifier, no URL)")


def normalized(package: str) -> str:
    return re.sub(r"[-_.]+", "-", package).lower()


def installed_version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _wanted(rel: PurePosixPath) -> bool:
    return rel.suffix in _SOURCE_SUFFIXES and not (_SKIPPED_DIRS & set(rel.parts[:-1]))


def _safe_relative(name: str) -> PurePosixPath | None:
    rel = PurePosixPath(name)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts or "\\" in name or ":" in rel.parts[0]:
        return None
    return rel


def link_installed(package: str, dest: Path) -> int:
    """Symlink the installed distribution's source files (tests excluded) under ``dest``; the number linked."""
    dist = importlib.metadata.distribution(package)
    count = 0
    for entry in dist.files or ():
        rel = _safe_relative(str(entry))
        if rel is None or not _wanted(rel) or rel.parts[0].endswith((".dist-info", ".data")):
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            os.symlink(Path(dist.locate_file(entry)).resolve(), target)
            count += 1
    return count


def fetch_wheel(package: str, version: str, dest: Path, where: str) -> int:
    """Download ``package==version``'s wheel and unpack its source files under ``dest``; the number unpacked.

    Raises:
        SurfaceError: pip cannot download it (offline, no such version, no wheel), or the wheel is unreadable.
    """
    check_requirement(package, version, where)
    with tempfile.TemporaryDirectory(prefix="skillbench-wheel-") as tmp:
        # an argument list, never a shell; --no-deps and --only-binary: nothing is built, nothing else comes along
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-input", "--disable-pip-version-check",
               "--no-deps", "--only-binary=:all:", "--dest", tmp, f"{package}=={version}"]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False,
                                  env=scrubbed_env(), cwd=tmp)
        except subprocess.TimeoutExpired:
            raise SurfaceError(where, f"{package}=={version}", f"pip download took over {PIP_TIMEOUT_S} s",
                               "check the network, then run `skillbench surfaces` again") from None
        wheels = sorted(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            last = (done.stderr.strip().splitlines() or ["no wheel"])[-1][:160]
            raise SurfaceError(where, f"{package}=={version}", f"cannot download its wheel ({last})",
                               "check the name, the version and the network, then run `skillbench surfaces`")
        return _unpack(wheels[0], dest, where)


def _unpack(wheel: Path, dest: Path, where: str) -> int:
    count = 0
    try:
        with zipfile.ZipFile(wheel) as archive:
            for info in archive.infolist():
                rel = _safe_relative(info.filename)
                if rel is None or info.is_dir() or not _wanted(rel):
                    continue
                count += 1
                if count > MAX_WHEEL_FILES:
                    raise SurfaceError(where, wheel.name, f"has over {MAX_WHEEL_FILES} source files",
                                       "declare a smaller package")
                target = dest / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as src, open(target, "wb") as out:
                    out.write(src.read(16 * 1024 * 1024))  # a source file over 16 MB is cut, never a memory bomb
    except (zipfile.BadZipFile, OSError) as exc:
        raise SurfaceError(where, wheel.name, f"cannot be unpacked ({exc})", "run `skillbench surfaces` again") from exc
    return count


def _mark_namespace_subpackages(dest: Path) -> None:
    """Python imports a folder of modules without ``__init__.py`` inside a package (``qdrant_client/embed``); griffe
    skips it. An empty ``__init__.py`` in our copy makes griffe read it, and changes nothing else we read."""
    for folder in sorted(p for p in dest.rglob("*") if p.is_dir()):
        has_init = any((folder / f"__init__{ext}").exists() for ext in _SOURCE_SUFFIXES)
        parent_is_package = any((folder.parent / f"__init__{ext}").exists() for ext in _SOURCE_SUFFIXES)
        if not has_init and parent_is_package and any(folder.glob("*.py*")) and folder.name.isidentifier():
            (folder / "__init__.py").touch()


def materialize(package: str, version: str, dest: Path, where: str) -> str:
    """Put ``package==version``'s source files under ``dest``; ``"installed"`` or ``"wheel"`` (where they came from)."""
    check_requirement(package, version, where)
    origin = "installed"
    if not (installed_version(package) == version and link_installed(package, dest)):
        fetch_wheel(package, version, dest, where)
        origin = "wheel"
    _mark_namespace_subpackages(dest)
    return origin
