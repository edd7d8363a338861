"""The check-type record and its registry: one :class:`CheckKind` per check type, every stage reads it.

A check type is declared once, in one module of :mod:`skillbench.checktypes.kinds`, by :func:`register`: its
name and options (which it needs, which it also accepts; each option's type is the :class:`~.spec.Check` field of
that name), the workspace probe it needs (:class:`ProbeRequest`: what the container must report after the run),
how it is graded (from the run's :class:`RunFacts`: the transcript's answer, tool uses, result event, exit code,
and its probe), what the simulated agent's outcome is (from a :class:`SimRun`), the answer text the simulated
agent writes for it (:class:`AnswerLine`), dotnet's names for it (skill-validator assertions, Vally graders) and
its row in the docs' field table. Suite parsing and preflight, the sandbox's probes, grading, the simulator and
the dotnet loaders all look the type up here instead of keeping their own list.

This package sits just above :mod:`skillbench.vocab` and below :mod:`skillbench.suite` (which parses checks with
it), so a record holds behaviour as plain functions of plain facts: it imports nothing from the stages that run it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, field_validator
from pydantic_core import PydanticCustomError

from skillbench.checktypes._timeouts import Timeout

FILE_MISSING = "missing"  # ProbeResult.file_state: no such path in the workspace
FILE_NOT_REGULAR = "not_regular"  # the path exists but is a folder (or another non-file)
FILE_OK = "ok"
# What the container runs for a check (generation.workspace turns it into argv): a shell command; read one file;
# list the files a glob matches; or list them with their content.
ProbeKind = Literal["command", "file", "glob_names", "glob_content"]


@dataclass(frozen=True)
class ProbeRequest:
    """The workspace probe a check needs: what the container must report after the agent finished.

    Attributes:
        kind: ``command`` (its exit code), ``file`` (the file's bytes, or that it is missing), ``glob_names``
            (the workspace files a glob matches), ``glob_content`` (those files with their bytes).
        arg: the shell command, or the workspace path / glob.
    """

    kind: ProbeKind
    arg: str


@dataclass(frozen=True)
class ProbeResult:
    """What the sandbox saw for one workspace check, in the run's container after the CLI exited.

    Attributes:
        check_id: the check it was taken for.
        exit_code: ``run_command``'s exit code (None when it did not finish).
        output: a file probe's content (a glob probe: NUL, path, NUL, content, …); a command's last output.
        file_state: ``ok`` / ``missing`` / ``not_regular`` for file probes, "" for commands.
        timed_out: the probe's own timeout fired.
        timeout_s: that timeout.
        error: why the probe could not be taken at all (sandbox gone, …); "" when it was taken.
    """

    check_id: str
    exit_code: int | None = None
    output: bytes = b""
    file_state: str = ""
    timed_out: bool = False
    timeout_s: float = 0.0
    error: str = ""


@dataclass(frozen=True)
class ToolUseFact:
    """One tool call that ran (a denied attempt is not one): its name as the transcript wrote it, its input."""

    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True)
class RunFacts:
    """What a run shows a grader, taken once from its transcript (:func:`skillbench.checks.grade_checks`).

    Attributes:
        answer: the final answer's text.
        exit_code: the CLI's exit code.
        result: the transcript's result event (None when there is none).
        tool_uses: the tool calls that ran, in order.
        probes: the sandbox's probe of each workspace check, by check id.
    """

    answer: str
    exit_code: int | None
    result: Mapping[str, Any] | None
    tool_uses: Sequence[ToolUseFact] = ()
    probes: Mapping[str, ProbeResult] = field(default_factory=dict)


class SimRun(Protocol):
    """What the simulated agent's run shows its truth (:class:`skillbench.sim._tasks.TaskRun`)."""

    @property
    def solved(self) -> bool: ...  # every changed solution file was written

    def used_tools(self) -> list[str]: ...  # canonical names of the calls that ran

    def num_turns(self) -> int: ...

    def final_files(self) -> dict[str, str]: ...  # the workspace after the run: relative path -> text


@dataclass(frozen=True)
class AnswerLine:
    """The text the simulated agent puts in its answer for an output check whose outcome it draws.

    Attributes:
        option: ``value`` (the text itself) or ``pattern`` (a string generated from the regex).
        when: the drawn outcome that needs the line: True for ``*_contains``/``*_matches`` (the line makes it
            pass), False for the negated types (the line makes it fail).
    """

    option: Literal["value", "pattern"]
    when: bool


Grade = Callable[["Check", RunFacts], tuple[str, str]]
# check, run, final answer, budget crossed -> passes; None: it could not run in the simulated container either
Simulate = Callable[["Check", SimRun, str, bool], "bool | None"]


@dataclass(frozen=True)
class CheckKind:
    """One check type: everything every stage needs to know about it.

    Attributes:
        name: the ``type`` a spec writes.
        needs: the options it requires.
        accepts: the options it also takes.
        passes: one line for the docs: when a check of this type passes.
        grade: ``(check, facts) -> (status, detail)``; status is a :mod:`skillbench.vocab` ``CHECK_*`` value.
        simulate: ``(check, run, answer, crossed) -> passes``: what a correct grader finds on the simulated run
            (None: the check could not run there, as the grader finds in a container that lacks its program).
        probe: ``check -> ProbeRequest`` for a check that reads the workspace (None: graded from the transcript).
        answer_line: for an output check the simulated agent decides by a draw, the text it writes for it.
        dotnet: skill-validator assertion ``type`` names read as this type.
        vally: Vally grader ``type`` names read as this type, with their config key → our option.
        dotnet_case: how skill-validator and Vally compare this type's ``value`` (True: case-sensitive), which
            the dotnet loaders write into each check's ``case_sensitive``; None for a type without that option.
            The two tools agree on every type that has one (``AssertionEvaluator``: ``string.Contains`` for
            files, ``OrdinalIgnoreCase`` for the answer; Vally's grader reference: the same defaults).
    """

    name: str
    needs: tuple[str, ...]
    passes: str
    grade: Grade
    simulate: Simulate
    accepts: tuple[str, ...] = ()
    probe: Callable[[Check], ProbeRequest] | None = None
    answer_line: AnswerLine | None = None
    dotnet: tuple[str, ...] = ()
    vally: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    dotnet_case: bool | None = None

    @property
    def reads_workspace(self) -> bool:
        """True when the check runs in the run's container after the agent finished (it has a probe)."""
        return self.probe is not None

    @property
    def options(self) -> tuple[str, ...]:
        return (*self.needs, *self.accepts)


_REGISTRY: dict[str, CheckKind] = {}


class RegistryError(ValueError):
    """Two modules declare the same check type (or dotnet name): a programming error, caught at import."""


def register(kind: CheckKind) -> CheckKind:
    """Add a check type to the registry (called once per type, at import of its module)."""
    if kind.name in _REGISTRY:
        raise RegistryError(f"check type {kind.name!r} is declared twice")
    taken = {alias: k.name for k in _REGISTRY.values() for alias in (*k.dotnet, *k.vally)}
    for alias in (*kind.dotnet, *kind.vally):
        if alias in taken:
            raise RegistryError(f"{kind.name}: dotnet name {alias!r} already reads as {taken[alias]!r}")
    _REGISTRY[kind.name] = kind
    return kind


def check_kind(name: str) -> CheckKind:
    """The record of a registered check type (KeyError for a name no module declares)."""
    return _REGISTRY[name]


def check_kinds() -> Iterator[CheckKind]:
    """Every registered check type, in registration order."""
    return iter(tuple(_REGISTRY.values()))


def is_check_type(name: object) -> bool:
    return isinstance(name, str) and name in _REGISTRY


# A check as a spec writes it: its ``type`` (a registered check type) and its options.
#
# The options are one vocabulary shared by every type (each a field below, with its type and constraint); a
# type's record (above) says which of them it needs and accepts, and preflight
# (:mod:`skillbench.suite._task_checks`) refuses anything else, one line per defect.
#
# A check's identity is its ``id``: the one given, else ``<type>-<hash of type and options>``, never its position,
# so editing one check of a spec never renumbers the others, and ``checks.csv`` rows keep meaning the same check
# from week to week.

OPTION_NAMES = ("value", "pattern", "command", "expected_exit_code", "timeout", "path", "tools", "turns", "calls",
                "case_sensitive")
# A ``file_*`` path holding one of these is a glob over the workspace's files (``*`` also crosses ``/``).
GLOB_CHARS = frozenset("*?[")
DEFAULT_CHECK_TIMEOUT_S = 60.0


class Check(BaseModel):
    """One deterministic grader of a run (its type's record says which options it takes)."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(description="a registered check type")
    id: StrictStr | None = Field(default=None, description="stable identity; default: type + hash of the options")
    value: StrictStr | None = Field(default=None, description="text the answer (or the file) must / must not hold")
    pattern: StrictStr | None = Field(default=None, description="Python regular expression (re.search, under a "
                                      "time limit)")
    command: StrictStr | None = Field(default=None, description="shell command run in the workspace (sh -c)")
    expected_exit_code: StrictInt | None = Field(default=None, description="run_command's passing exit code (0)")
    timeout: Timeout | None = Field(default=None, description="run_command's own timeout in seconds (60; at most a "
                                    "day)")
    path: StrictStr | None = Field(default=None, description="a path (or a glob) relative to the workspace")
    tools: list[StrictStr] | None = Field(default=None, description="tool names (case-insensitive, aliases ok)")
    turns: StrictInt | None = Field(default=None, ge=1, description="max_turns: the most turns a run may take")
    calls: StrictInt | None = Field(default=None, ge=0, description="max_tool_calls: the most tool calls a run may "
                                    "make")
    # None (not False) when unset: options() and so check_id leave it out, so a check written without it keeps
    # the id it had before the option existed
    case_sensitive: StrictBool | None = Field(default=None, description="compare `value` case-sensitively (default: "
                                              "case-insensitive)")

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
    def exact_case(self) -> bool:
        """True when ``value`` is compared case-sensitively (``case_sensitive: true``); unset means it is not."""
        return self.case_sensitive is True

    @property
    def exit_code_expected(self) -> int:
        return 0 if self.expected_exit_code is None else self.expected_exit_code

    @property
    def timeout_s(self) -> float:
        return DEFAULT_CHECK_TIMEOUT_S if self.timeout is None else float(self.timeout)
