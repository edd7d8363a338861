"""The simulated agent's work on a task: reading the workspace, writing the solution, and each check's truth.

A prompt with ``workspace`` files or ``setup`` commands is a task: the agent starts in the run's working
directory (``Primary working directory:`` of the request). After the skill steps (:mod:`skillbench.sim._agent`)
come the task's steps, each one assistant message of parallel tool calls:

* ``read_workspace`` (profile ``read_workspace``): Read every text file of the workspace;
* ``solve_read``: Read the existing files the solution changes that were not read yet, because Claude Code's
  Write and Edit refuse a file not Read first in the session;
* ``solve_write``: write every file of ``spec.solution_dir`` that differs from the fixture (Write, else Edit),
  when the task's allow-list (``allowed_tools``, else the suite's) has Write or Edit, a solution folder exists
  and the run decides to solve (profile ``solve``, interpolated by the skill's share like rubric items);
* ``retry_read`` / ``retry_write``: once, for targets whose first write came back as an error that was not a
  permission denial (a file the setup made, which the fixtures do not list).

The steps are recomputed from the request on every turn, like the skill steps; the skill steps come first, so
the share that decides solving is final by the time a task step is due. Truth is what a correct grader will
find, by each check type's record (:mod:`skillbench.checktypes`: output checks on the final answer text whose
lines :mod:`skillbench.sim._check_text` wrote, file checks on the files the run leaves — solution files that were
written, else the fixtures —, ``run_command`` exactly when every solution write succeeded, tool and turn checks
from the calls that ran).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from skillbench.checktypes import Check, canonical_tool, check_kinds
from skillbench.sim import _draws as draws
from skillbench.sim._conversation import Conversation, ToolCall
from skillbench.sim._profiles import AgentProfile
from skillbench.suite import PromptSpec, SourceEscape, Suite, source_entries
from skillbench.vocab import CHECK_ERROR, CHECK_FAILED, CHECK_PASSED

READ_WORKSPACE, SOLVE_READ, SOLVE_WRITE, RETRY_READ, RETRY_WRITE = (
    "read_workspace", "solve_read", "solve_write", "retry_read", "retry_write")
TASK_STEPS = (READ_WORKSPACE, SOLVE_READ, SOLVE_WRITE, RETRY_READ, RETRY_WRITE)
MAX_READS = 12  # workspace files read in one step: a large fixture tree is skimmed, not read whole
_WRITERS = ("Write", "Edit")
# Output checks whose outcome the simulated agent draws, then writes the answer line that gives it.
OUTPUT_CHECKS = frozenset(k.name for k in check_kinds() if k.answer_line is not None)


def _rel(path: str) -> str:
    """A workspace path in one spelling (``./a//b`` → ``a/b``)."""
    return posixpath.normpath(path.strip().lstrip("/")).removeprefix("./")


def workspace_files(spec: PromptSpec) -> dict[str, bytes]:
    """The fixtures as the run's working directory holds them before the agent starts: relative path → bytes.

    A folder ``src`` contributes each file under ``dest``; a ``dest`` ending in ``/`` takes the file's name.
    Files made by ``setup`` commands are not known here.
    """
    out: dict[str, bytes] = {}
    for entry in spec.test.workspace:
        if entry.content is not None:
            out[_rel(entry.dest)] = entry.content.encode("utf-8")
            continue
        try:  # what generation installs: the same containment rule, read from the paths it resolved
            entries = source_entries(spec, entry)
        except SourceEscape:
            continue  # generation refuses the run: the simulated workspace holds nothing of it either
        for found in entries or []:
            if found.real is None:
                continue
            if found.rel:
                dest = posixpath.join(entry.dest, found.rel)
            else:
                named = spec.workspace_source(entry)
                dest = posixpath.join(entry.dest, named.name) if entry.dest.endswith("/") and named else entry.dest
            try:
                out[_rel(dest)] = found.real.read_bytes()
            except OSError:
                continue
    return out


def solution_files(spec: PromptSpec) -> dict[str, str] | None:
    """``spec.solution_dir``'s files (relative path → text), or None: no folder, empty, or a file not UTF-8."""
    root = spec.solution_dir
    if not root.is_dir():
        return None
    out: dict[str, str] = {}
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        try:
            out[f.relative_to(root).as_posix()] = f.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            return None  # Write carries text only: a binary solution file cannot be written by the agent
    return out or None


def allowed_tools(spec: PromptSpec, suite: Suite | None) -> set[str]:
    """Canonical names of the run's allow-list: the task's ``allowed_tools``, else the suite's ``[run]`` list."""
    names = spec.test.allowed_tools
    if names is None:
        names = suite.config.run.allowed_tools if suite is not None else []
    return {canonical_tool(n.split("(", 1)[0]) for n in names}


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


@dataclass
class TaskRun:
    """One run's work on one prompt's task, as far as this request shows it.

    Args:
        spec: the prompt.
        suite: the loaded suite (for its allow-list).
        conv: the request.
        prof: the model's profile.
        seed: the endpoint's seed.
        run_id: the run (draw key).
        share: the share of the skill's gain in context, as the skill steps left it: 0 … 1, times the listed
            version's gain (:mod:`skillbench.sim._versions`), so it may be negative or above 1 (``Pair.at`` clamps).
    """

    spec: PromptSpec
    suite: Suite | None
    conv: Conversation
    prof: AgentProfile
    seed: int
    run_id: str
    share: float

    def _u(self, *key: object) -> float:
        return draws.uniform(self.seed, "agent", self.run_id, "task", *key)

    @cached_property
    def fixtures(self) -> dict[str, bytes]:
        return workspace_files(self.spec)

    @cached_property
    def solution(self) -> dict[str, str] | None:
        return solution_files(self.spec)

    @cached_property
    def tools(self) -> set[str]:
        return allowed_tools(self.spec, self.suite)

    @property
    def active(self) -> bool:
        """True when the agent works in a workspace (a task, and the request names its working directory)."""
        return self.spec.test.is_task and bool(self.conv.cwd)

    @property
    def can_write(self) -> bool:
        return bool({"write", "edit"} & self.tools)

    def path(self, rel: str) -> str:
        return posixpath.join(str(self.conv.cwd).rstrip("/") or "/", rel)

    # -- what the run reads and writes -----------------------------------------------------------
    @cached_property
    def reads_workspace(self) -> list[str]:
        """Workspace files the ``read_workspace`` step reads (empty when the run does not take it)."""
        texts = [rel for rel, data in sorted(self.fixtures.items()) if _text(data) is not None]
        if not self.active or not texts or self._u("read_workspace") >= self.prof.read_workspace:
            return []
        return texts[:MAX_READS]

    @cached_property
    def targets(self) -> list[str]:
        """Solution files that differ from the fixtures, when the run decides to solve (else empty)."""
        if not self.solves:
            return []
        assert self.solution is not None
        return [rel for rel, text in self.solution.items() if _text(self.fixtures.get(rel, b"\0")) != text]

    @cached_property
    def solves(self) -> bool:
        """The one solve decision: allowed to write, a usable solution, and the ``solve`` draw."""
        if not self.active or not self.can_write or self.solution is None:
            return False
        if "write" not in self.tools and any(_text(self.fixtures[r]) is None
                                             for r in self.solution if r in self.fixtures):
            return False  # Edit needs the old text of every file it changes
        return self._u("solve") < self.prof.solve.at(self.share)

    def _writes(self, rel: str) -> list[ToolCall]:
        path = self.path(rel)
        return [c for c in self.conv.calls if c.name in _WRITERS and c.input.get("file_path") == path]

    @cached_property
    def retries(self) -> list[str]:
        """Targets whose first write came back as an error other than a denial (Read, then write again)."""
        out = []
        for rel in self.targets:
            calls = self._writes(rel)
            if calls and calls[0].result is not None and calls[0].is_error and not calls[0].denied:
                out.append(rel)
        return out

    def steps(self) -> list[str]:
        """The task's tool steps, after the skill steps."""
        if not self.active:
            return []
        steps = [READ_WORKSPACE] if self.reads_workspace else []
        if self.targets:
            if self._first_reads():
                steps.append(SOLVE_READ)
            steps.append(SOLVE_WRITE)
            if "write" in self.tools and self.retries:
                steps += [RETRY_READ, RETRY_WRITE]
        return steps

    def _first_reads(self) -> list[str]:
        done = set(self.reads_workspace)
        return [rel for rel in self.targets if rel in self.fixtures and rel not in done]

    # -- one step's message ----------------------------------------------------------------------
    def tool_step(self, step: str, turn: int) -> list[dict[str, Any]]:
        """The content of the assistant message for a task step."""

        def use(name: str, rel: str, inp: dict[str, Any]) -> dict[str, Any]:
            # One id per (turn, tool, file): parallel calls in one message need distinct ids.
            return {"type": "tool_use", "id": "toolu_" + draws.short_id(self.seed, self.run_id, turn, name, rel),
                    "name": name, "input": inp}

        def reads(rels: list[str]) -> list[dict[str, Any]]:
            return [use("Read", rel, {"file_path": self.path(rel)}) for rel in rels]

        if step == READ_WORKSPACE:
            return [{"type": "text", "text": "I'll look at the files in the workspace first."},
                    *reads(self.reads_workspace)]
        if step == SOLVE_READ:
            return [{"type": "text", "text": "Reading the files I am about to change."}, *reads(self._first_reads())]
        if step == RETRY_READ:
            return [{"type": "text", "text": "Those files must be read before they are overwritten; reading them."},
                    *reads(self.retries)]
        rels = self.targets if step == SOLVE_WRITE else self.retries
        blocks: list[dict[str, Any]] = [{"type": "text", "text": "Writing the fix."}]
        assert self.solution is not None
        for rel in rels:
            new = self.solution[rel]
            if "write" in self.tools:
                blocks.append(use("Write", rel, {"file_path": self.path(rel), "content": new}))
            else:  # Edit alone: the whole old text replaced (an empty old_string creates a new file)
                old = _text(self.fixtures.get(rel, b"")) or ""
                blocks.append(use("Edit", rel, {"file_path": self.path(rel), "old_string": old, "new_string": new}))
        return blocks

    # -- truth -------------------------------------------------------------------------------------
    @cached_property
    def solved(self) -> bool:
        """True when every changed solution file was written (its last write ran without an error)."""
        if not self.solves:
            return False
        for rel in self.targets:
            calls = self._writes(rel)
            if not calls or calls[-1].result is None or calls[-1].is_error:
                return False
        return True

    def final_files(self) -> dict[str, str]:
        """The workspace after the run as the checks read it (fixtures, overwritten by written solution files)."""
        files = {rel: data.decode("utf-8", errors="replace") for rel, data in self.fixtures.items()}
        if self.solved and self.solution is not None:
            files.update(self.solution)
        return files

    def used_tools(self) -> list[str]:
        """Canonical names of the calls that ran (a denied attempt is not a use), as the transcript shows them."""
        return [canonical_tool(c.name) for c in self.conv.calls if not c.denied]

    def num_turns(self) -> int:
        """The CLI's ``num_turns`` of this run: 1 + user events (each tool result, each loaded skill's body)."""
        return 1 + sum(c.result is not None for c in self.conv.calls) + len(self.conv.skill_bases)


def output_wanted(checks: list[Check], prof: AgentProfile, share: float, u: Callable[[str], float]) -> dict[str, bool]:
    """The decided outcome (True = passes) of each output check: ``check`` interpolated by the share."""
    p = prof.check.at(share)
    return {c.check_id: u(c.check_id) < p for c in checks if c.type in OUTPUT_CHECKS}


def check_status(check: Check, work: TaskRun, answer: str, crossed: bool) -> str:
    """``passed`` / ``failed`` / ``error`` (it could not run: its program is not in the container): what a correct
    grader finds for this check on this run (its type's record)."""
    outcome = check.kind.simulate(check, work, answer, crossed)
    if outcome is None:
        return CHECK_ERROR
    return CHECK_PASSED if outcome else CHECK_FAILED
