"""The near-miss generator's request and reply: should-not queries that share a family's vocabulary.

Contract: :func:`near_miss_request` builds a Messages request that forces :data:`NEAR_MISS_TOOL`. Its user message
holds one JSON block (between :data:`PAYLOAD_START` and :data:`PAYLOAD_END`) with exactly
``{"skill", "description", "other_skills", "count", "max_chars"}``: the family's name and hub description, the
other families' ``{"name", "description"}`` (suite order), how many queries to propose and their length limit —
never a query of the trigger set (the set is split after the near-misses are added, so no request can hold a test
query; a test checks the request). The reply's tool input is ``{"queries": [str, …]}``: one to ``count``
distinct, non-empty, one-line strings of at most ``max_chars`` characters (:func:`parse_near_misses`); anything
else is an invalid reply, re-asked once (:func:`skillbench.judge._client.ask_validated`).
"""

from __future__ import annotations

from typing import Any

from skillbench.judge import ProtocolError, tool_input
from skillbench.ledgers import SKILL_FILE
from skillbench.quality._payload import NEAR_MISS_TOOL, payload_request, read_payload as read_tagged
from skillbench.suite import Suite

MAX_QUERY_CHARS = 400
PAYLOAD_START, PAYLOAD_END = "<near-miss-request>", "</near-miss-request>"
INTRO = ("Propose near-miss queries for this skill: they share its vocabulary, and it should not load for "
         "them.")
MAX_TOKENS = 2048

SYSTEM = (
    "You write test queries for an agent skill's triggering. A near-miss is a request a user could plausibly "
    "send that shares the skill's vocabulary (its tools, data, domain words) but asks for something the skill "
    "should NOT handle — typically what one of the other skills covers, or a neighbouring task none of them "
    "covers. Each query is one realistic user message, one line, specific and self-contained; do not mention "
    "skills. Propose 'count' distinct queries, each at most 'max_chars' characters. "
    f"Answer only with the {NEAR_MISS_TOOL} tool."
)

TOOL = {
    "name": NEAR_MISS_TOOL,
    "description": "Propose near-miss should-not-trigger queries for the skill.",
    "input_schema": {"type": "object",
                     "properties": {"queries": {"type": "array", "items": {"type": "string"}}},
                     "required": ["queries"]},
}


def near_miss_payload(suite: Suite, family: str, count: int) -> dict[str, Any]:
    """The request's payload: the family's hub description and every other family's (module docstring)."""
    def description(name: str) -> str:
        return suite.skills[f"{name}/{SKILL_FILE}"].description

    others = [{"name": name, "description": description(name)} for name in suite.families if name != family]
    return {"skill": family, "description": description(family), "other_skills": others, "count": count,
            "max_chars": MAX_QUERY_CHARS}


def near_miss_request(payload: dict[str, Any]) -> dict[str, Any]:
    """The Messages request body, less ``model`` (the client adds its own; module docstring)."""
    return payload_request(INTRO, payload, (PAYLOAD_START, PAYLOAD_END), tool=TOOL, system=SYSTEM,
                           max_tokens=MAX_TOKENS)


def read_near_miss_payload(body: dict[str, Any]) -> dict[str, Any]:
    """The payload of a near-miss request (what the simulated generator reads).

    Raises:
        ValueError: no payload block in the last user message (json.JSONDecodeError is one).
    """
    return read_tagged(body, (PAYLOAD_START, PAYLOAD_END), "near-miss")


def parse_near_misses(message: Any, count: int, max_chars: int = MAX_QUERY_CHARS) -> list[str]:
    """The proposed queries of a reply, stripped, in the reply's order.

    Raises:
        ProtocolError: no forced tool call, none or more than ``count`` queries, or one empty, multi-line, too
            long or repeated.
    """
    value = tool_input(message, NEAR_MISS_TOOL).get("queries")
    if not isinstance(value, list) or not 1 <= len(value) <= count:
        raise ProtocolError(f"queries: expected a list of 1 to {count} strings")
    out: list[str] = []
    for i, query in enumerate(value):
        if not isinstance(query, str) or not query.strip():
            raise ProtocolError(f"queries[{i}]: missing or empty")
        text = query.strip()
        if "\n" in text or len(text) > max_chars:
            raise ProtocolError(f"queries[{i}]: more than one line or longer than {max_chars} characters")
        if " ".join(text.lower().split()) in {" ".join(q.lower().split()) for q in out}:
            raise ProtocolError(f"queries[{i}]: the same as an earlier query")
        out.append(text)
    return out


__all__ = ["MAX_QUERY_CHARS", "near_miss_payload", "near_miss_request", "parse_near_misses", "read_near_miss_payload"]
