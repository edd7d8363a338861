"""Reading a Claude Code stream-json transcript (``claude -p --output-format stream-json --verbose``).

One JSON object per line: a ``system/init`` event first (tools, skills, model, CLI version), then one
``assistant`` event per content block, ``user`` events for tool results and skill bodies, ``system`` events
for retries and permission denials, and a final ``result`` event (cost, turns, subtype, denials).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ToolUse:
    """One tool call the model made."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass
class Transcript:
    """A parsed transcript; ``parse_errors`` counts lines that were not JSON objects."""

    events: list[dict[str, Any]] = field(default_factory=list)
    parse_errors: int = 0
    partial_tail: int = 0  # 1 when the last line is cut (a CLI killed mid-write), counted in parse_errors

    @property
    def init(self) -> dict[str, Any] | None:
        return next((e for e in self.events if e.get("type") == "system" and e.get("subtype") == "init"), None)

    @property
    def result(self) -> dict[str, Any] | None:
        return next((e for e in reversed(self.events) if e.get("type") == "result"), None)

    @property
    def complete(self) -> bool:
        """True when the transcript ends with a result event (the CLI finished, whatever the outcome)."""
        return bool(self.events) and self.events[-1].get("type") == "result"

    def tool_uses(self) -> list[ToolUse]:
        out = []
        for event in self.events:
            if event.get("type") != "assistant":
                continue
            for block in (event.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    out.append(ToolUse(str(block.get("id", "")), str(block.get("name", "")),
                                       block.get("input") if isinstance(block.get("input"), dict) else {}))
        return out

    def denied_ids(self) -> set[str]:
        """Tool-use ids the CLI refused: from the result's ``permission_denials`` and ``permission_denied`` events."""
        ids = {str(d.get("tool_use_id")) for d in (self.result or {}).get("permission_denials") or []}
        ids |= {str(e.get("tool_use_id")) for e in self.events
                if e.get("type") == "system" and e.get("subtype") == "permission_denied"}
        return ids - {"None"}

    def allowed_tool_uses(self) -> list[ToolUse]:
        """Tool calls that actually ran: a denied attempt never counts as activation or a fetch."""
        denied = self.denied_ids()
        return [t for t in self.tool_uses() if t.id not in denied]

    def skill_bodies(self) -> list[str]:
        """Skill directories whose body the Skill tool injected (``Base directory for this skill: …``)."""
        out = []
        for event in self.events:
            if event.get("type") != "user":
                continue
            content = (event.get("message") or {}).get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
            for block in blocks:
                text = block.get("text", "") if isinstance(block, dict) else ""
                if text.startswith("Base directory for this skill: "):
                    out.append(text.split("\n", 1)[0].removeprefix("Base directory for this skill: ").strip())
        return out

    def assistant_models(self) -> list[str]:
        return [m for e in self.events if e.get("type") == "assistant"
                for m in [(e.get("message") or {}).get("model")] if m and m != "<synthetic>"]

    def final_answer(self) -> str:
        """The deliverable: the result event's text, else the last assistant text ('' when there is none)."""
        result = self.result or {}
        if isinstance(result.get("result"), str) and result["result"].strip() and not result.get("is_error"):
            return result["result"]
        for event in reversed(self.events):
            if event.get("type") != "assistant" or (event.get("message") or {}).get("model") == "<synthetic>":
                continue
            texts = [b.get("text", "") for b in (event.get("message") or {}).get("content") or []
                     if isinstance(b, dict) and b.get("type") == "text"]
            if any(t.strip() for t in texts):
                return "\n".join(texts)
        return ""


def parse_transcript_text(text: str) -> Transcript:
    """Parse stream-json text; malformed lines are counted, never raised."""
    transcript = Transcript()
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            transcript.parse_errors += 1
            if n == len(lines) - 1 and not text.endswith("\n"):
                transcript.partial_tail = 1
            continue
        if isinstance(event, dict):
            transcript.events.append(event)
        else:
            transcript.parse_errors += 1
    return transcript


def read_transcript(path: str | Path) -> Transcript:
    """Parse a transcript file (a missing file reads as an empty transcript with one parse error)."""
    path = Path(path)
    if not path.is_file():
        return Transcript(parse_errors=1)
    return parse_transcript_text(path.read_text(encoding="utf-8", errors="replace"))
