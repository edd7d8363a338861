"""Check types: what each deterministic check of a spec is, in one record per type that every stage reads.

:mod:`~skillbench.checktypes._registry` holds the record (:class:`CheckKind`) and the registry;
:class:`~skillbench.checktypes._registry.Check` (a check as a spec writes it); :mod:`~skillbench.checktypes.kinds` one
module per type or family of types (importing this package registers them all, so adding a type is adding a
module there); :mod:`~skillbench.checktypes._tools` the tool-name alias table the tool checks compare through.

This package sits below :mod:`skillbench.suite`: it imports only :mod:`skillbench.vocab`. Grading runs
(:mod:`skillbench.checks`), the sandbox's probes (:mod:`skillbench.generation._workspace`) and the simulated agent
(:mod:`skillbench.sim._tasks`) call the records' functions.
"""

from __future__ import annotations

import importlib
import pkgutil

from skillbench.checktypes import kinds
from skillbench.checktypes._patterns import SEARCH_TIMEOUT_S, PatternTimeout, pattern_problem, search
from skillbench.checktypes._programs import ABSENT_PROGRAMS, absent_programs
from skillbench.checktypes._registry import (
    FILE_MISSING,
    FILE_NOT_REGULAR,
    FILE_OK,
    AnswerLine,
    Check,
    CheckKind,
    ProbeRequest,
    ProbeResult,
    RunFacts,
    SimRun,
    ToolUseFact,
    check_kind,
    check_kinds,
    register,
)
from skillbench.checktypes._timeouts import MAX_TIMEOUT_S, Timeout, checked_timeout, timeout_problem
from skillbench.checktypes._tools import TOOL_ALIASES, canonical_tool, matching_uses, tools_used

for _module in sorted(m.name for m in pkgutil.iter_modules(kinds.__path__)):
    importlib.import_module(f"{kinds.__name__}.{_module}")

__all__ = ["ABSENT_PROGRAMS", "FILE_MISSING", "FILE_NOT_REGULAR", "FILE_OK", "MAX_TIMEOUT_S", "SEARCH_TIMEOUT_S",
           "TOOL_ALIASES", "AnswerLine", "Check", "CheckKind", "PatternTimeout", "ProbeRequest", "ProbeResult",
           "RunFacts", "SimRun", "Timeout", "ToolUseFact", "absent_programs", "canonical_tool", "check_kind",
           "check_kinds", "checked_timeout", "matching_uses", "pattern_problem", "register", "search",
           "timeout_problem", "tools_used"]
