"""A check as a spec writes it: its ``type`` (a registered check type) and its options.

The options are one vocabulary shared by every type (each a field below, with its type and constraint); a
type's record (:mod:`skillbench.checktypes.registry`) says which of them it needs and accepts, and preflight
(:mod:`skillbench.suite.task_checks`) refuses anything else, one line per defect.

A check's identity is its ``id``: the one given, else ``<type>-<hash of type and options>``, never its position,
so editing one check of a spec never renumbers the others, and ``checks.csv`` rows keep meaning the same check
from week to week.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, field_validator
from pydantic_core import PydanticCustomError

from skillbench.checktypes.registry import CheckKind, check_kind, check_kinds, is_check_type

OPTION_NAMES = ("value", "pattern", "command", "expected_exit_code", "timeout", "path", "tools", "turns")
# A ``file_*`` path holding one of these is a glob over the workspace's files (``*`` also crosses ``/``).
GLOB_CHARS = frozenset("*?[")
DEFAULT_CHECK_TIMEOUT_S = 60.0


class Check(BaseModel):
    """One deterministic grader of a run (its type's record says which options it takes)."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(description="a registered check type")
    id: StrictStr | None = Field(default=None, description="stable identity; default: type + hash of the options")
    value: StrictStr | None = Field(default=None, description="text the answer (or the file) must / must not hold")
    pattern: StrictStr | None = Field(default=None, description="Python regular expression (re.search)")
    command: StrictStr | None = Field(default=None, description="shell command run in the workspace (sh -c)")
    expected_exit_code: StrictInt | None = Field(default=None, description="run_command's passing exit code (0)")
    timeout: float | None = Field(default=None, gt=0, description="run_command's own timeout in seconds (60)")
    path: StrictStr | None = Field(default=None, description="a path (or a glob) relative to the workspace")
    tools: list[StrictStr] | None = Field(default=None, description="tool names (case-insensitive, aliases ok)")
    turns: StrictInt | None = Field(default=None, ge=1, description="max_turns: the most turns a run may take")

    @field_validator("type", mode="before")
    @classmethod
    def _registered(cls, value: Any) -> str:
        # a ``literal_error``, as a Literal field gave: suite.defects words it "unknown check type" with the list
        if not is_check_type(value):
            names = ", ".join(repr(k.name) for k in check_kinds())
            raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": names})
        return str(value)

    @property
    def kind(self) -> CheckKind:
        """This check's type record."""
        return check_kind(self.type)

    def options(self) -> dict[str, object]:
        """The options this check set (``id`` and ``type`` not included)."""
        return {k: getattr(self, k) for k in OPTION_NAMES if getattr(self, k) is not None}

    @property
    def check_id(self) -> str:
        """The given ``id``, else ``<type>-<8 hex of sha256(type, options)>``."""
        if self.id:
            return self.id
        payload = json.dumps({"type": self.type, **self.options()}, sort_keys=True, ensure_ascii=False)
        return f"{self.type}-{hashlib.sha256(payload.encode()).hexdigest()[:8]}"

    @property
    def in_workspace(self) -> bool:
        """True when the check reads the workspace (it runs in the run's container)."""
        return self.kind.reads_workspace

    @property
    def is_glob(self) -> bool:
        """True when a ``file_*`` check names a glob (``*.cs``): it holds for the files the glob matches."""
        return self.path is not None and any(c in GLOB_CHARS for c in self.path)

    @property
    def exit_code_expected(self) -> int:
        return 0 if self.expected_exit_code is None else self.expected_exit_code

    @property
    def timeout_s(self) -> float:
        return DEFAULT_CHECK_TIMEOUT_S if self.timeout is None else float(self.timeout)
