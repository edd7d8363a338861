"""Preflight of a prompt's agentic task fields: workspace files, setup commands, checks, tool overrides.

:func:`task_defects` returns one ``(severity, field, problem, fix)`` per defect; :mod:`skillbench.suite._validation`
turns them into lines naming the prompt file. Everything here is refused before any model call is paid for: a
check that could never run (no options, a regex that does not compile, a script the workspace does not hold), or
one whose result could be mistaken for another's (a duplicate id).
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from pathlib import PurePosixPath

from skillbench.checktypes import Check, absent_programs, pattern_problem
from skillbench.suite._containment import (
    CLAUDE_DIR,
    SourceEntry,
    SourceEscape,
    claude_files,
    contained_source,
    dest_problem,
    relative_path_problem,
)
from skillbench.suite._format import PromptSpec
from skillbench.suite._task import WorkspaceFile

TaskDefect = tuple[str, str, str, str]  # severity, field, problem, fix
# A setup command whose program the image lacks: valid (validate warns), but no run of the prompt can start here, so
# a week holds the prompt's family out as it holds out a family with an invalid spec (suite._families)
CANNOT_START = "which the sandbox image does not have: setup fails there (exit 127) and the run never starts"
CHECK_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")
# A command word that names a script file: it must be one of the workspace's files (or made by setup).
_SCRIPT = re.compile(r"^[^-/$~][^\s;|&<>]*\.(?:py|sh|bash|js|mjs|cjs|ts|ps1|rb|pl|R|r)$")
MISSING_FIXTURE = "missing fixture file"  # the start of a missing src's problem (the dotnet loader words its own)
# The CLI runs with user settings only (--setting-sources user): what a workspace's .claude/ holds is never loaded.
INERT_SETTINGS = ("inert: the CLI loads user settings only (--setting-sources user), so a workspace's .claude/ "
                  "settings, hooks and skills have no effect")


def source_entries(spec: PromptSpec, entry: WorkspaceFile) -> list[SourceEntry] | None:
    """What a ``src`` workspace entry copies (:func:`~skillbench.suite._containment.contained_source` inside the
    prompt's roots); None for inline ``content`` or a src that neither place holds.

    Raises:
        SourceEscape: the src, or something under it, resolves outside the roots or into the prompt's own files.
    """
    source = spec.workspace_source(entry)
    if source is None:
        return None
    if entry.src is not None and PurePosixPath(entry.src).is_absolute():
        raise SourceEscape(f"{entry.src!r} is absolute")
    return contained_source(source, spec.source_roots, spec.hidden_paths, shown=repr(entry.src))


def workspace_paths(spec: PromptSpec) -> set[str]:
    """Every workspace-relative file path the task's ``workspace`` puts in place (folders expanded; a src that
    leaves the roots counts as its dest alone: preflight refuses it)."""
    out: set[str] = set()
    for entry in spec.test.workspace:
        dest = PurePosixPath(entry.dest).as_posix()
        try:
            entries = source_entries(spec, entry)
        except SourceEscape:
            entries = None
        if entries and entries[0].real is None:
            out |= {f"{dest}/{e.rel}" for e in entries if e.real is not None}
        else:
            out.add(dest)
    return out


def _check_defects(i: int, check: Check, files: set[str], made_by_setup: bool) -> list[TaskDefect]:
    where = f"checks[{i}]"
    need, also = check.kind.needs, check.kind.accepts
    given = set(check.options())
    out: list[TaskDefect] = []
    lacking = [o for o in need if o not in given]
    if lacking:
        out.append(("error", where, f"{check.type} needs {', '.join(lacking)}",
                    f"add {', '.join(repr(o) for o in lacking)} (README, \"Agentic tasks\")"))
    for extra in sorted(given - set(need) - set(also)):
        allowed = ", ".join((*need, *also)) or "no options"
        out.append(("error", f"{where}.{extra}", f"does not apply to {check.type}", f"remove it ({check.type} takes "
                    f"{allowed})"))
    if check.id is not None and not CHECK_ID_RE.match(check.id):
        out.append(("error", f"{where}.id", f"{check.id!r} is not a plain identifier",
                    "use letters, digits, '.', '_', ':' or '-'"))
    if check.pattern is not None and (problem := pattern_problem(check.pattern)):
        out.append(("error", f"{where}.pattern", problem, "fix the pattern (Python re syntax; inline flags like (?i) "
                    "go first; no nested repeats that can match the same text, like (a+)+)"))
    if check.path is not None and (problem := relative_path_problem(check.path)):
        out.append(("error", f"{where}.path", problem, "name a file relative to the workspace"))
    if check.tools is not None and not [t for t in check.tools if t.strip()]:
        out.append(("error", f"{where}.tools", "is empty", "list at least one tool name"))
    if check.command is not None and (absent := absent_programs(check.command)):
        out.append(("warning", f"{where}.command", f"runs {absent[0]}, which the sandbox image does not have: it "
                    "will end 'could not run' (never a pass or a loss)", "grade it with a check the sandbox can "
                    "run, or keep it as a record that it could not run"))
    if check.command is not None:
        if not check.command.strip():
            out.append(("error", f"{where}.command", "is empty", "write the shell command to run"))
        else:
            try:
                words = shlex.split(check.command)
            except ValueError as exc:
                words = []
                out.append(("error", f"{where}.command", f"cannot be parsed as a shell command ({exc})",
                            "fix the quoting"))
            for word in words:
                path = word.removeprefix("./")
                if _SCRIPT.match(word) and path not in files and not made_by_setup:
                    out.append(("error", f"{where}.command", f"runs {word}, which is not in the workspace",
                                f"add {path!r} to 'workspace', or fix the command"))
    return out


def task_defects(spec: PromptSpec) -> list[TaskDefect]:
    """Every defect of ``spec``'s task fields (empty for a plain prompt)."""
    test = spec.test
    out: list[TaskDefect] = []
    dests: Counter[str] = Counter()
    for i, entry in enumerate(test.workspace):
        if problem := dest_problem(entry.dest):
            out.append(("error", f"workspace[{i}].dest", problem, "give a path relative to the workspace, outside "
                        ".claude/ (a file or folder in it, never the root)"))
        dests[PurePosixPath(entry.dest).as_posix()] += 1
        if entry.src is not None and spec.workspace_source(entry) is None:
            out.append(("error", f"workspace[{i}].src", f"{MISSING_FIXTURE} {entry.src!r} (looked beside the "
                        "prompt file and in the suite's fixtures/)", "add the file, or fix the path"))
            continue
        try:
            source_entries(spec, entry)
        except SourceEscape as exc:
            out.append(("error", f"workspace[{i}].src", str(exc), "copy the file into the suite (a workspace file "
                        "is read from the suite's own folders, never through a link or a path out of them)"))
    if spec.solution_dir.exists():  # read by the simulated agent on the host: the suite's own files only
        try:
            contained_source(spec.solution_dir, spec.source_roots, shown=f"solutions/{spec.name}")
        except SourceEscape as exc:
            out.append(("error", "solutions", str(exc), "copy the file into the suite's solutions/ folder"))
    for dest, n in sorted(dests.items()):
        if n > 1:
            out.append(("error", "workspace", f"{dest!r} is listed {n} times", "keep one entry per destination"))
    for i, command in enumerate(test.setup):
        if not command.strip():
            out.append(("error", f"setup[{i}]", "is empty", "write the command, or delete the entry"))
        elif absent := absent_programs(command):  # a warning: valid, but it cannot start in this sandbox
            out.append(("warning", f"setup[{i}]", f"runs {absent[0]}, {CANNOT_START}", "run it where the .NET SDK is "
                        "installed, or prepare the workspace without it (commit the artifact setup builds)"))
    if test.allowed_tools is not None and not [t for t in test.allowed_tools if t.strip()]:
        out.append(("error", "allowed_tools", "is empty", "list the tools the agent may use, or drop the field"))
    files = workspace_paths(spec)
    if carried := claude_files(files):
        more = f" and {len(carried) - 1} more" if len(carried) > 1 else ""
        out.append(("warning", "workspace", f"{carried[0]}{more}: {INERT_SETTINGS}",
                    "drop them, or ignore this (the agent still sees them as files)"))
    elif any(CLAUDE_DIR in command for command in test.setup):
        out.append(("warning", "setup", f"a command names {CLAUDE_DIR}/: {INERT_SETTINGS}",
                    "drop it, or ignore this (the agent still sees what it writes as files)"))
    ids: dict[str, int] = {}
    for i, check in enumerate(test.checks):
        out.extend(_check_defects(i, check, files, made_by_setup=bool(test.setup)))
        if check.check_id in ids:
            out.append(("error", f"checks[{i}].id", f"duplicate check id {check.check_id!r} (also checks"
                        f"[{ids[check.check_id]}])", "give each check its own 'id' (or make the checks differ)"))
        else:
            ids[check.check_id] = i
    return out


__all__ = ["CHECK_ID_RE", "MISSING_FIXTURE", "TaskDefect", "source_entries", "task_defects", "workspace_paths"]
