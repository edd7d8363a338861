"""Reading a Messages request the way the simulated model needs it: prompt, skills listing, history.

The endpoint keeps no per-conversation state: everything it needs is in the request the CLI sends, in
either of the CLI's two layouts (a ``role: "system"`` message for new models, ``<system-reminder>``
blocks in the first user message for legacy ones). Content may be a string or a list of blocks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

LISTING_HEADER = "The following skills are available for use with the Skill tool:"
SKILL_BASE_PREFIX = "Base directory for this skill: "
_MEMORY_DIR = re.compile(r"memory[^`\n]*?at `([^`]+?)/projects/[^/`]+/memory/?`")
_CWD = re.compile(r"Primary working directory: (\S+)")


def blocks(content: Any) -> list[dict[str, Any]]:
    """A message's content as a list of blocks (a string becomes one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, Mapping)]  # type: ignore[misc]
    return []


def block_text(block: Mapping[str, Any]) -> str:
    """The text a block carries (text blocks, and tool_result content as string or blocks)."""
    if block.get("type") == "text":
        return str(block.get("text", ""))
    if block.get("type") == "tool_result":
        inner = block.get("content")
        if isinstance(inner, str):
            return inner
        return "\n".join(str(b.get("text", "")) for b in blocks(inner) if b.get("type") == "text")
    return ""


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model made earlier in the conversation, and what came back."""

    id: str
    name: str
    input: dict[str, Any]
    result: str | None = None  # None: no tool_result yet
    is_error: bool = False

    @property
    def denied(self) -> bool:
        return self.is_error and self.result is not None and "Permission to use" in self.result


@dataclass
class Conversation:
    """The parts of a request the simulated agent decides on."""

    model: str
    prompt: str
    turn: int  # assistant messages already in the request
    listing: dict[str, str] = field(default_factory=dict)  # skill name -> description
    config_dir: str | None = None  # where the CLI reads user skills from: <config_dir>/skills
    cwd: str | None = None
    calls: list[ToolCall] = field(default_factory=list)
    skill_bases: list[str] = field(default_factory=list)  # "Base directory for this skill:" paths seen
    texts: list[str] = field(default_factory=list)  # every text seen (system, messages), for budget lines
    web_search_subrequest: bool = False
    search_query: str = ""

    def call_results(self, name: str) -> list[ToolCall]:
        return [c for c in self.calls if c.name == name]


def _is_reminder(text: str) -> bool:
    return text.lstrip().startswith("<system-reminder>")


def _parse_listing(text: str, into: dict[str, str]) -> None:
    i = text.find(LISTING_HEADER)
    if i < 0:
        return
    for line in text[i + len(LISTING_HEADER):].splitlines():
        line = line.strip()
        if line.startswith("</system-reminder>") or line.startswith("USD budget:"):
            break
        # Lines that do not start with "- " continue a bundled skill's multi-line description.
        if line.startswith("- ") and ": " in line:
            name, _, desc = line[2:].partition(": ")
            into.setdefault(name.strip(), desc.strip())


def parse_request(body: Mapping[str, Any]) -> Conversation:
    """Read a ``POST /v1/messages`` body into a :class:`Conversation`.

    The prompt is the last text block of the first user message that is not a ``<system-reminder>``;
    the listing, config dir and working directory are found wherever the layout put them.
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    system = body.get("system")
    texts: list[str] = [block_text(b) for b in blocks(system)]
    conv = Conversation(model=str(body.get("model") or ""), prompt="", turn=0)
    tools = body.get("tools") or []
    if any(isinstance(t, Mapping) and str(t.get("type", "")).startswith("web_search") for t in tools):
        conv.web_search_subrequest = True
    pending: dict[str, ToolCall] = {}
    first_user = True
    for msg in messages:
        role = msg.get("role")
        content = blocks(msg.get("content"))
        if role == "assistant":
            conv.turn += 1
            for b in content:
                if b.get("type") == "tool_use":
                    call = ToolCall(str(b.get("id", "")), str(b.get("name", "")), dict(b.get("input") or {}))
                    pending[call.id] = call
                    conv.calls.append(call)
            continue
        for b in content:
            text = block_text(b)
            texts.append(text)
            if b.get("type") == "tool_result":
                call_id = str(b.get("tool_use_id", ""))
                if call_id in pending:
                    done = ToolCall(pending[call_id].id, pending[call_id].name, pending[call_id].input,
                                    text, bool(b.get("is_error")))
                    conv.calls[conv.calls.index(pending[call_id])] = done
                    pending[call_id] = done
            elif text.startswith(SKILL_BASE_PREFIX):
                conv.skill_bases.append(text[len(SKILL_BASE_PREFIX):].split("\n", 1)[0].strip())
        if role == "user" and first_user:
            first_user = False
            plain = [block_text(b) for b in content if b.get("type") == "text" and not _is_reminder(block_text(b))]
            plain = [t for t in plain if t.strip() and not t.startswith(SKILL_BASE_PREFIX)]
            if plain:
                conv.prompt = plain[-1].strip()
    for text in texts:
        _parse_listing(text, conv.listing)
        if conv.config_dir is None and (m := _MEMORY_DIR.search(text)):
            conv.config_dir = m.group(1)
        if conv.cwd is None and (m := _CWD.search(text)):
            conv.cwd = m.group(1)
    if conv.web_search_subrequest:
        m = re.search(r"Perform a web search for the query: (.+)", conv.prompt)
        conv.search_query = (m.group(1) if m else conv.prompt).strip()
    conv.texts = texts
    return conv
