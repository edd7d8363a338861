"""What the detector says of one identifier (the interface between extraction, resolution and the week's pass)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

RESOLVED = "resolved"  # the declared surface has it
UNRESOLVED = "unresolved"  # the declared surface is known and lacks it: a fabrication candidate
UNCHECKED = "unchecked"  # undeclared language or library, or a name no surface can decide
IDENTIFIER_STATUSES = (RESOLVED, UNRESOLVED, UNCHECKED)

# name: a module attribute, class member or method (`pd.merge_asof`, `df.groupby(...).transform`);
# keyword: a keyword argument of a resolved callable (`rolling(..., closed=)`);
# config_key: a key of a declared configuration model; rest_path: a method and path of a declared HTTP API.
IDENTIFIER_KINDS = ("name", "keyword", "config_key", "rest_path")


@dataclass(frozen=True)
class Identifier:
    """One identifier an answer uses, and what the declared surfaces say of it."""

    text: str  # as the answer wrote it, shortened to the identifier: "pd.merge_asof", "rolling(closed=...)"
    # the fully qualified name it was checked as ("pandas.DataFrame.rolling(closed)"); "" when unchecked
    target: str
    kind: str  # one of IDENTIFIER_KINDS
    language: str  # the code block's language ("python", "json", "http", "bash", … or "" for inline code)
    status: str  # one of IDENTIFIER_STATUSES
    surface: str  # "pandas==3.1.1"; "" when unchecked
    quote: str  # the answer's line it came from (≤ 200 characters), for the scorecard's quotes


class SurfaceError(ValueError):
    """A declared API surface that cannot be read; the message is one actionable line naming the file and field."""

    def __init__(self, path: Path | str, field: str, problem: str, fix: str):
        self.path, self.field, self.problem, self.fix = Path(path), field, problem, fix
        super().__init__(f"{path}: {field}: {problem} — {fix}")
