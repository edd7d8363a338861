"""A run's task preparation: the workspace files, the setup commands, and the probes its workspace checks need.

:func:`prepare_task` turns a task prompt (:attr:`TestPrompt.is_task`, or one with workspace checks) into a
:class:`TaskRun`: what goes into the run's working directory (each ``src`` resolved by
:meth:`PromptSpec.workspace_source`, a file or a whole folder; ``content`` inline; ``executable`` → 0755),
the setup commands, and one :class:`Probe` per workspace check: the argv of the
:class:`~skillbench.checktypes.ProbeRequest` its type's record asks for (a command; a file to read; a glob's
files), with the check's own timeout. Nothing of the suite but these workspace files reaches the sandbox — not
the checks, not ``solutions/``. The sandboxes run it (:mod:`skillbench.generation._sandbox`).
"""

from __future__ import annotations

import io
import os
import stat
import subprocess
import tarfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from skillbench.checktypes import FILE_MISSING, FILE_NOT_REGULAR, FILE_OK, Check, ProbeResult
from skillbench.suite import PromptSpec, SourceEscape, WorkspaceFile, dest_problem, source_entries

SETUP_TIMEOUT_S = 300.0  # one setup command (installing a package from a wheel in the fixtures, building, …)
FILE_PROBE_MAX_BYTES = 16 * 1024 * 1024  # a check reads a text file, never a whole disk image
# Exit codes of the file probe: the path is missing / not a regular file (a folder, a FIFO).
PROBE_MISSING, PROBE_NOT_REGULAR = 3, 4
FILE_PROBE = (f'[ -e "$1" ] || exit {PROBE_MISSING}; [ -f "$1" ] || exit {PROBE_NOT_REGULAR}; '
              f'exec head -c {FILE_PROBE_MAX_BYTES} -- "$1"')
# A glob path's probe: every regular file whose workspace-relative path the glob matches (an sh ``case`` pattern,
# so ``*`` also crosses ``/``: ``*.cs`` finds src/A.cs), as NUL, path, NUL, then (``content`` mode) its bytes;
# exit PROBE_MISSING when none matches. Parsed by :func:`skillbench.checktypes._grading.glob_files`.
GLOB_PROBE = ('find . -type f | sed "s|^\\./||" | LC_ALL=C sort | { m=0; while IFS= read -r f; do case "$f" in $1) '
              'm=1; printf "\\0%s\\0" "$f"; [ "$2" = content ] && head -c ' + str(FILE_PROBE_MAX_BYTES) + ' -- "$f";; '
              f'esac; done; [ $m = 1 ] || exit {PROBE_MISSING}; }}')
# The environment setup commands and probes see: the run's HOME, TMPDIR, PATH and locale, never the API key.
TOOL_ENV_KEYS = ("HOME", "TMPDIR", "PATH", "LANG")


class TaskError(ValueError):
    """A task's workspace cannot be prepared (a ``src`` that is gone, a ``dest`` outside the workspace)."""


@dataclass(frozen=True)
class WorkspaceItem:
    """One entry of the workspace: a file (``data``) or a folder (``data`` None), at ``dest`` (relative)."""

    dest: str
    data: bytes | None
    mode: int = 0o644


@dataclass(frozen=True)
class Probe:
    """What the sandbox runs in the workspace after the CLI exited, for one workspace check."""

    check_id: str
    argv: tuple[str, ...]
    timeout_s: float
    reads_file: bool

    def result(self, exit_code: int | None, stdout: bytes, stderr: bytes, *, timed_out: bool = False,
               error: str = "") -> ProbeResult:
        """The :class:`ProbeResult` of one execution of this probe."""
        if error or timed_out or exit_code is None:
            return ProbeResult(self.check_id, exit_code, b"", "", timed_out, self.timeout_s, error)
        if not self.reads_file:
            return ProbeResult(self.check_id, exit_code, (stdout + stderr)[-4000:], "", False, self.timeout_s)
        states = {0: FILE_OK, PROBE_MISSING: FILE_MISSING, PROBE_NOT_REGULAR: FILE_NOT_REGULAR}
        if exit_code not in states:
            why = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {exit_code}"]
            return ProbeResult(self.check_id, exit_code, b"", "", False, self.timeout_s,
                               f"{self.argv[4]}: cannot be read ({why[0]})")
        return ProbeResult(self.check_id, exit_code, stdout if exit_code == 0 else b"", states[exit_code],
                           False, self.timeout_s)


@dataclass(frozen=True)
class SetupOutcome:
    """How the setup commands went: ``ok``, else ``detail`` names the failing command and its exit."""

    ok: bool = True
    detail: str = ""

    def to_json(self) -> dict[str, object]:
        return {"ok": self.ok, "detail": self.detail}


@dataclass(frozen=True)
class TaskRun:
    """Everything a sandbox needs for a task run (and nothing more of the suite)."""

    items: tuple[WorkspaceItem, ...] = ()
    setup: tuple[str, ...] = ()
    probes: tuple[Probe, ...] = ()
    setup_timeout_s: float = SETUP_TIMEOUT_S
    dests: tuple[str, ...] = field(default=())  # the spec's ``dest`` entries, for the run's metadata

    def tar(self, uid: int) -> bytes:
        """The workspace as a tar to unpack into the workspace folder, every entry owned by ``uid``."""
        buf = io.BytesIO()
        seen: set[str] = set()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            def add(name: str, data: bytes | None, mode: int) -> None:
                info = tarfile.TarInfo(name)
                info.uid = info.gid = uid
                info.mtime = int(time.time())
                if data is None:
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                else:
                    info.size, info.mode = len(data), mode
                tar.addfile(info, io.BytesIO(data) if data is not None else None)

            for item in self.items:
                parents = PurePosixPath(item.dest).parents
                for parent in reversed(list(parents)[:-1]):  # each folder above the entry, once
                    if str(parent) not in seen:
                        seen.add(str(parent))
                        add(str(parent), None, 0o755)
                if item.data is None and item.dest in seen:
                    continue
                seen.add(item.dest)
                add(item.dest, item.data, item.mode)
        return buf.getvalue()

    def write_into(self, folder: Path) -> None:
        """Write the workspace into a local folder (the local sandbox's working directory)."""
        for item in self.items:
            path = folder / item.dest
            if item.data is None:
                path.mkdir(parents=True, exist_ok=True)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(item.data)
            path.chmod(item.mode)


def _dest(spec: PromptSpec, raw: str) -> str:
    """A workspace-relative POSIX path (preflight's rule, :func:`skillbench.suite.dest_problem`), or
    :class:`TaskError` naming the field."""
    if problem := dest_problem(raw):
        raise TaskError(f"{spec.path}: workspace dest {problem} — it must be a path inside the workspace (relative, no "
                        "'..', never the root or .claude/)")
    return str(PurePosixPath(raw))


def _read(path: Path) -> tuple[bytes, int]:
    """A checked file's bytes and mode, opened without following a link swapped in for it since the check."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):  # a FIFO or a device swapped in: never read it (it could block)
            raise OSError(f"{path} is no longer a regular file")
        return handle.read(), info.st_mode & 0o777


def _items_from(spec: PromptSpec, entry: WorkspaceFile, dest: str, mode: int | None) -> list[WorkspaceItem]:
    """The file, or every file and folder under a folder: exactly what preflight's containment check
    (:func:`skillbench.suite.source_entries`) returns now, read from the resolved paths it checked."""
    try:
        entries = source_entries(spec, entry)
    except SourceEscape as exc:
        raise TaskError(f"{spec.path}: workspace src {exc} — copy the file into the suite (a workspace file is read "
                        "from the suite's own folders, never through a link or a path out of them)") from None
    if entries is None:
        raise TaskError(f"{spec.path}: workspace src {entry.src!r} is neither beside the prompt file nor in "
                        "the suite's fixtures/ folder")
    items = []
    for found in entries:
        where = f"{dest}/{found.rel}" if found.rel else dest
        if found.real is None:
            items.append(WorkspaceItem(where, None))
            continue
        try:
            data, own = _read(found.real)
        except OSError as exc:
            raise TaskError(f"{spec.path}: workspace src {entry.src!r}: {where} cannot be read ({exc}) — restore "
                            "the file") from None
        items.append(WorkspaceItem(where, data, mode or own or 0o644))
    return items


def probe_for(check: Check) -> Probe | None:
    """The probe a workspace check needs (None for checks graded from the transcript)."""
    if check.kind.probe is None:
        return None
    request = check.kind.probe(check)
    if request.kind == "command":
        return Probe(check.check_id, ("sh", "-c", request.arg), check.timeout_s, reads_file=False)
    if request.kind == "file":
        return Probe(check.check_id, ("sh", "-c", FILE_PROBE, "probe", request.arg), check.timeout_s, reads_file=True)
    mode = "names" if request.kind == "glob_names" else "content"
    return Probe(check.check_id, ("sh", "-c", GLOB_PROBE, "probe", request.arg, mode), check.timeout_s,
                 reads_file=True)


def prepare_task(spec: PromptSpec) -> TaskRun | None:
    """The task run of a prompt; None for a plain prompt (no workspace, setup or workspace check).

    Raises:
        TaskError: a ``src`` neither beside the prompt nor in ``fixtures/``, or a ``dest`` outside the workspace.
    """
    test = spec.test
    if not (test.is_task or test.has_workspace_checks):
        return None
    items: list[WorkspaceItem] = []
    for entry in test.workspace:
        dest = _dest(spec, entry.dest)
        mode = 0o755 if entry.executable else None
        if entry.content is not None:
            items.append(WorkspaceItem(dest, entry.content.encode("utf-8"), mode or 0o644))
            continue
        items.extend(_items_from(spec, entry, dest, mode))
    probes = tuple(p for p in (probe_for(c) for c in test.checks) if p is not None)
    return TaskRun(tuple(items), tuple(test.setup), probes, dests=tuple(e.dest for e in test.workspace))


def tool_env(env: Mapping[str, str]) -> dict[str, str]:
    """The part of a run's environment setup commands and probes get (HOME, TMPDIR, PATH, LANG)."""
    return {k: env[k] for k in TOOL_ENV_KEYS if k in env}


def command_failure(command: str, exit_code: int | None, stderr: bytes, *, timed_out: bool, timeout_s: float) -> str:
    """``<command>: exit N: <last stderr line>`` (or ``timeout after Ns``): a setup failure's detail."""
    if timed_out:
        return f"{command}: timeout after {timeout_s:g}s"
    tail = stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
    return f"{command}: exit {exit_code}" + (f": {tail[0][:200]}" if tail else "")


def run_setup_locally(task: TaskRun, work: Path, env: Mapping[str, str]) -> SetupOutcome:
    """Run the setup commands in a local working directory (the local sandbox), stopping at the first failure."""
    for command in task.setup:
        try:
            proc = subprocess.run(["sh", "-c", command], cwd=work, env=dict(env), capture_output=True,
                                  stdin=subprocess.DEVNULL, timeout=task.setup_timeout_s)
        except subprocess.TimeoutExpired:
            return SetupOutcome(False, command_failure(command, None, b"", timed_out=True,
                                                       timeout_s=task.setup_timeout_s))
        if proc.returncode != 0:
            return SetupOutcome(False, command_failure(command, proc.returncode, proc.stderr or proc.stdout,
                                                       timed_out=False, timeout_s=task.setup_timeout_s))
    return SetupOutcome()
