"""Agentic task fields of a test prompt: workspace files, setup commands, deterministic checks, tool overrides.

All optional, so a qdrant prompt file stays valid unchanged. A prompt with ``workspace`` files or ``setup``
commands is a *task*: the agent starts in a working directory holding those files. ``checks`` grade its run
deterministically (no judge): the final answer against a text or a pattern (or only that there is one,
``output_nonempty``), a command run in the workspace after the agent finished, a file the agent was to write (or
must not leave: ``file_not_exists``; a ``path`` may be a glob such as ``*.cs``), the tools it used, the turns it took.

A check's identity is its ``id``: the one given, else ``<type>-<hash of type and options>``, never its position,
so editing one check of a spec never renumbers the others, and ``checks.csv`` rows keep meaning the same check
from week to week. :data:`CHECK_OPTIONS` says which options each type needs and accepts; preflight
(:mod:`skillbench.suite.validation`) refuses anything else, one line per defect.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, model_validator

CheckType = Literal[
    "output_contains", "output_not_contains", "output_matches", "output_not_matches", "run_command",
    "file_exists", "file_not_exists", "file_contains", "file_matches", "exit_success", "output_nonempty",
    "expect_tools", "reject_tools", "max_turns",
]
CHECK_TYPES: tuple[str, ...] = CheckType.__args__  # type: ignore[attr-defined]

# type -> (options it needs, options it also accepts). ``id`` is accepted by every type.
CHECK_OPTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "output_contains": (("value",), ()),
    "output_not_contains": (("value",), ()),
    "output_matches": (("pattern",), ()),
    "output_not_matches": (("pattern",), ()),
    "run_command": (("command",), ("expected_exit_code", "timeout")),
    "file_exists": (("path",), ()),
    "file_not_exists": (("path",), ()),
    "file_contains": (("path", "value"), ()),
    "file_matches": (("path", "pattern"), ()),
    "exit_success": ((), ()),
    "output_nonempty": ((), ()),
    "expect_tools": (("tools",), ()),
    "reject_tools": (("tools",), ()),
    "max_turns": (("turns",), ()),
}
OPTION_NAMES = ("value", "pattern", "command", "expected_exit_code", "timeout", "path", "tools", "turns")
# Checks that read the workspace after the agent finished: they run in the run's own container.
WORKSPACE_CHECKS = frozenset({"run_command", "file_exists", "file_not_exists", "file_contains", "file_matches"})
# A ``file_*`` path holding one of these is a glob over the workspace's files (``*`` also crosses ``/``).
GLOB_CHARS = frozenset("*?[")
# Checks on the final answer's text.
OUTPUT_CHECKS = frozenset({"output_contains", "output_not_contains", "output_matches", "output_not_matches"})
TOOL_CHECKS = frozenset({"expect_tools", "reject_tools"})
DEFAULT_CHECK_TIMEOUT_S = 60.0


class Check(BaseModel):
    """One deterministic grader of a run (see :data:`CHECK_OPTIONS` for the options of each type)."""

    model_config = ConfigDict(extra="forbid")

    type: CheckType
    id: StrictStr | None = Field(default=None, description="stable identity; default: type + hash of the options")
    value: StrictStr | None = Field(default=None, description="text the answer (or the file) must / must not hold")
    pattern: StrictStr | None = Field(default=None, description="Python regular expression (re.search)")
    command: StrictStr | None = Field(default=None, description="shell command run in the workspace (sh -c)")
    expected_exit_code: StrictInt | None = Field(default=None, description="run_command's passing exit code (0)")
    timeout: float | None = Field(default=None, gt=0, description="run_command's own timeout in seconds (60)")
    path: StrictStr | None = Field(default=None, description="a path (or a glob) relative to the workspace")
    tools: list[StrictStr] | None = Field(default=None, description="tool names (case-insensitive, aliases ok)")
    turns: StrictInt | None = Field(default=None, ge=1, description="max_turns: the most turns a run may take")

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
        return self.type in WORKSPACE_CHECKS

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


class WorkspaceFile(BaseModel):
    """A file (or folder) put in the run's working directory before the agent starts.

    ``src`` is relative to the prompt file's folder, else to the suite's ``fixtures/`` folder; ``content`` is
    the file's text inline. Exactly one of the two.
    """

    model_config = ConfigDict(extra="forbid")

    dest: StrictStr
    src: StrictStr | None = None
    content: StrictStr | None = None
    executable: bool = False

    @model_validator(mode="after")
    def _one_source(self) -> WorkspaceFile:
        if (self.src is None) == (self.content is None):
            raise ValueError("give exactly one of 'src' and 'content'")
        return self
