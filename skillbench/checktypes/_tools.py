"""Tool names as checks compare them: case-insensitive, with one alias table, denied attempts netted out.

Spec authors name tools the way their harness does (Vally's ``create``/``edit``/``bash``, the SDK's ``str_replace``,
Claude Code's ``Write``); a check compares canonical Claude Code tool names. :data:`TOOL_ALIASES` is the one
table (README, "Agentic tasks"); a name it does not know is compared as written, case-insensitively.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

# alias (lower case) -> Claude Code's tool name
TOOL_ALIASES: dict[str, str] = {
    "create": "Write", "create_file": "Write", "write_file": "Write",
    "edit": "Edit", "str_replace": "Edit", "str_replace_editor": "Edit", "str_replace_based_edit_tool": "Edit",
    "multiedit": "MultiEdit", "multi_edit": "MultiEdit",
    "view": "Read", "read_file": "Read", "cat": "Read",
    "bash": "Bash", "shell": "Bash", "powershell": "Bash", "run_command": "Bash", "terminal": "Bash",
    "grep": "Grep", "search": "Grep", "glob": "Glob", "find": "Glob", "ls": "Glob",
    "fetch": "WebFetch", "web_fetch": "WebFetch", "webfetch": "WebFetch",
    "web_search": "WebSearch", "websearch": "WebSearch",
    "skill": "Skill", "task": "Task", "todowrite": "TodoWrite", "notebookedit": "NotebookEdit",
}


class _Use(Protocol):
    @property
    def name(self) -> str: ...


class _ToolUses(Protocol):
    """A transcript (:class:`skillbench.signals._transcript.Transcript`): the tool calls that ran."""

    def allowed_tool_uses(self) -> Iterable[_Use]: ...


def canonical_tool(name: str) -> str:
    """The tool name a check compares (``create`` → ``write``): lower case, aliases resolved."""
    key = name.strip().lower()
    return TOOL_ALIASES.get(key, name.strip()).lower()


def tools_used(transcript: _ToolUses) -> list[str]:
    """Canonical names of the tool calls that ran, in order (a denied attempt is not a use)."""
    return [canonical_tool(t.name) for t in transcript.allowed_tool_uses()]


def matching_uses(wanted: Iterable[str], used: Iterable[str]) -> list[str]:
    """The canonical names of ``wanted`` that occur in ``used`` (each once, in ``wanted``'s order)."""
    have = set(used)
    out: list[str] = []
    for name in wanted:
        key = canonical_tool(name)
        if key in have and key not in out:
            out.append(key)
    return out
