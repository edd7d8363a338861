"""Lazy re-exports (PEP 562) for skillbench's packages.

Every package ``__init__`` declares its public names and the sub-module that defines each; a name is imported
on first use, so ``skillbench validate`` does not pay for pandas, scipy and the SDKs, and no package import
can form a cycle. ``deprecated`` names still resolve, with a :class:`DeprecationWarning` naming their new home.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str], deprecated: Mapping[str, tuple[str, str]] | None = None,
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``.

    Args:
        package: the package's ``__name__``.
        exports: public name → defining module (relative to the package, e.g. ``"client"``, or absolute).
        deprecated: old name → ``(absolute module, new name)``; resolving one warns.
    """
    deprecated = deprecated or {}

    def _module(name: str) -> str:
        return name if name.startswith("skillbench") else f"{package}.{name}"

    def __getattr__(name: str) -> Any:
        namespace = importlib.import_module(package).__dict__
        if name in exports:
            value = getattr(importlib.import_module(_module(exports[name])), name)
            namespace[name] = value  # later look-ups skip __getattr__
            return value
        if name in deprecated:
            module, new = deprecated[name]
            home = f"{module}.{new}" if module != package else f"{package}.{new}"
            warnings.warn(f"{package}.{name} is deprecated; use {home}", DeprecationWarning, stacklevel=2)
            return getattr(importlib.import_module(module), new)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(importlib.import_module(package).__dict__) | set(exports))

    return __getattr__, __dir__
