"""Consolidation: the legs of a CI matrix (``generate``/``judge --shard i/N``) merged into one run directory,
failing closed unless every declared leg reported, each planned run came from exactly one leg and all legs ran the
same thing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("consolidate", "ConsolidationResult"), "run"),
    **dict.fromkeys(("ConsolidationRefused", "OutputRefused", "Problem"), "problems"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.consolidate.problems import (
        ConsolidationRefused,
        OutputRefused,
        Problem,
    )
    from skillbench.consolidate.run import (
        ConsolidationResult,
        consolidate,
    )
