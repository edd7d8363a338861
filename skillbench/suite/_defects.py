"""What a preflight defect is, and the limits every suite layout checks (qdrant, dotnet, skill-creator).

Every defect is one line, ``path: field: what is wrong — how to fix it``; the layouts' loaders
(:mod:`skillbench.suite._validation`, :mod:`skillbench.suite.dotnet`, :mod:`skillbench.suite.skill_creator`) all
report through :class:`Defect` and the same limits, so a suite reads the same whatever format it came in.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from skillbench.checktypes import Check, check_kinds
from skillbench.suite._format import ITEM_TYPES, RubricItem, TestPrompt
from skillbench.suite._task import WorkspaceFile

RUBRIC_RANGES = {"must": (3, 5), "bonus": (1, 3), "avoid": (1, 3)}
# The CLI receives the prompt as one command-line argument, and Linux refuses an exec with an argument longer than
# MAX_ARG_STRLEN (32 pages = 131072 bytes) counting its terminating NUL: "argument list too long", on every run.
MAX_ARG_STRLEN = 131072
MAX_PROMPT_BYTES = MAX_ARG_STRLEN - 1
_FIELDS = tuple(TestPrompt.model_fields)
_NESTED_FIELDS = {"checks": ", ".join(Check.model_fields), "workspace": ", ".join(WorkspaceFile.model_fields),
                  "rubric": ", ".join(RubricItem.model_fields)}


@dataclass(frozen=True)
class Defect:
    """One thing wrong with the suite."""

    severity: Literal["error", "warning"]
    path: str
    field: str
    problem: str
    fix: str

    def __str__(self) -> str:
        return f"{self.path}: {self.field}: {self.problem} — {self.fix}"


def display_path(path: Path) -> str:
    """A path as the defect line shows it: relative to the working folder when it can be."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def field_name(loc: tuple) -> str:
    """A pydantic error location as a field path: ``checks[0].pattern``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def pydantic_defects(path: str, exc: ValidationError) -> list[Defect]:
    """One defect line per pydantic error of a prompt file, naming the field and how to fix it."""
    defects = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        name = field_name(loc)
        kind = err["type"]
        if kind == "missing":
            problem, fix = "missing required field", f"add '{loc[-1]}' (qdrant's prompt format)"
        elif kind == "extra_forbidden":
            allowed = ", ".join(_FIELDS) if len(loc) == 1 else _NESTED_FIELDS[str(loc[0])]
            what = "unknown check option" if loc[0] == "checks" else "unknown field"
            problem, fix = what, f"remove it or rename it to one of: {allowed}"
        elif kind == "literal_error" and loc[0] == "checks":
            problem = f"unknown check type {err.get('input')!r}"
            fix = "use one of: " + ", ".join(k.name for k in check_kinds())
        elif kind == "literal_error":
            problem = f"unknown rubric type {err.get('input')!r}"
            fix = "use one of: " + ", ".join(ITEM_TYPES)
        elif kind in ("list_type", "model_type", "dict_type"):
            problem, fix = f"wrong type ({err['msg'].lower()})", "see the prompt format in the README"
        else:
            problem, fix = err["msg"], "see the prompt format in the README"
        defects.append(Defect("error", path, name, problem, fix))
    return defects
