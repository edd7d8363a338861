"""How skill quality's model calls carry their input: one JSON payload between a tag pair in the user message, and a
forced tool for the reply (the rewriter and the near-miss generator; :mod:`skillbench.quality._payload` names the
tools).

Contract: :func:`payload_request` writes ``intro``, the start tag, the payload as indented JSON and the end tag;
:func:`read_payload` finds the first start tag and the last end tag of the last user message (text or text blocks)
and returns the JSON between them — what the simulated responders read, and all they read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def payload_request(intro: str, payload: Mapping[str, Any], tags: tuple[str, str], *, tool: Mapping[str, Any],
                    system: str, max_tokens: int) -> dict[str, Any]:
    """The Messages request body, less ``model`` (the client adds its own), forcing ``tool``."""
    start, end = tags
    text = f"{intro}\n{start}\n{json.dumps(payload, indent=2, ensure_ascii=False)}\n{end}"
    return {"max_tokens": max_tokens, "system": system, "tools": [dict(tool)],
            "tool_choice": {"type": "tool", "name": tool["name"]},
            "messages": [{"role": "user", "content": text}]}


def read_payload(body: Mapping[str, Any], tags: tuple[str, str], what: str) -> dict[str, Any]:
    """The payload of a request built by :func:`payload_request`.

    Raises:
        ValueError: no ``what`` payload block in the last user message (json.JSONDecodeError is one).
    """
    start_tag, end_tag = tags
    messages = body.get("messages") or []
    content = messages[-1].get("content") if messages else ""
    if isinstance(content, list):
        content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
    start, end = str(content).find(start_tag), str(content).rfind(end_tag)
    if start < 0 or end < start:
        raise ValueError(f"no {what} payload in the request")
    return json.loads(str(content)[start + len(start_tag):end])


# -- the forced tools ------------------------------------------------------------------------------------
# The forced tools of the model calls skill quality makes, declared once: the client forces them and the simulated
# endpoint recognises its role by them (:mod:`skillbench.sim._roles`).


SKILL_QUALITY_TOOL = "record_skill_quality"  # lint-skills --judge: one skill's anchored scores with quoted evidence
DESCRIPTION_TOOL = "propose_description"  # optimize-description: a rewritten description from the train failures
NEAR_MISS_TOOL = "propose_near_misses"  # optimize-description: should-not queries sharing the family's vocabulary
