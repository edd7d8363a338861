"""The rewriter's request and reply: an improved description asked for from the train-set failures alone.

Contract: :func:`rewrite_request` builds a Messages request that forces :data:`DESCRIPTION_TOOL`. Its user message
holds one JSON block (between :data:`PAYLOAD_START` and :data:`PAYLOAD_END`) with exactly
``{"skill", "current_description", "missed", "false_triggers", "max_chars"}``: the skill's name, the description
being improved, the **train** should-trigger queries it missed and the **train** should-not queries it fired on —
never a test query, never a query it got right (the optimizer passes only train failures; a test checks the
request). The reply's tool input is ``{"description": str}``, a non-empty string of at most ``max_chars``
characters (:func:`parse_description`); anything else is an invalid reply, re-asked once
(:func:`skillbench.judge._client.ask_validated`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from skillbench.judge import ProtocolError, tool_input
from skillbench.quality._payload import DESCRIPTION_TOOL, payload_request, read_payload as read_tagged
from skillbench.suite import MAX_DESCRIPTION_CHARS

PAYLOAD_START, PAYLOAD_END = "<rewrite-request>", "</rewrite-request>"
INTRO = ("These train queries show where the current description fails. 'missed' should have loaded the skill "
         "and did not; 'false_triggers' should not have and did.")
MAX_TOKENS = 1024

SYSTEM = (
    "You improve the description of an agent skill. The description is all a model sees when it decides whether "
    "to load the skill, so it must say what the skill covers and when to use it (a 'Use when …' sentence with "
    "the situations and phrasings users write) and, where it fired wrongly, when not to ('Do not use for …'). "
    "Keep what is right in the current description. Generalise from the failures: do not copy the queries. "
    f"Stay under max_chars characters. Answer only with the {DESCRIPTION_TOOL} tool."
)

TOOL = {
    "name": DESCRIPTION_TOOL,
    "description": "Propose the improved skill description.",
    "input_schema": {"type": "object", "properties": {"description": {"type": "string"}},
                     "required": ["description"]},
}


def rewrite_payload(skill: str, description: str, missed: Sequence[str], false_triggers: Sequence[str],
                    max_chars: int = MAX_DESCRIPTION_CHARS) -> dict[str, Any]:
    return {"skill": skill, "current_description": description, "missed": list(missed),
            "false_triggers": list(false_triggers), "max_chars": max_chars}


def rewrite_request(payload: dict[str, Any]) -> dict[str, Any]:
    """The Messages request body, less ``model`` (the client adds its own; module docstring)."""
    return payload_request(INTRO, payload, (PAYLOAD_START, PAYLOAD_END), tool=TOOL, system=SYSTEM,
                           max_tokens=MAX_TOKENS)


def read_rewrite_payload(body: dict[str, Any]) -> dict[str, Any]:
    """The payload of a rewrite request (what the simulated rewriter reads).

    Raises:
        ValueError: no payload block in the last user message.
    """
    return read_tagged(body, (PAYLOAD_START, PAYLOAD_END), "rewrite")


def parse_description(message: Any, max_chars: int = MAX_DESCRIPTION_CHARS) -> str:
    """The proposed description of a reply.

    Raises:
        ProtocolError: no forced tool call, or its description empty or longer than ``max_chars``.
    """
    value = tool_input(message, DESCRIPTION_TOOL).get("description")
    if not isinstance(value, str) or not value.strip():
        raise ProtocolError("description: missing or empty")
    if len(value) > max_chars:
        raise ProtocolError(f"description: {len(value)} characters, more than {max_chars}")
    if "\n" in value.strip():
        raise ProtocolError("description: more than one line")
    return value.strip()


__all__ = ["MAX_DESCRIPTION_CHARS", "parse_description", "read_rewrite_payload", "rewrite_payload", "rewrite_request"]
