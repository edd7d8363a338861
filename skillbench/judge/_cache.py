"""Prompt caching of a judge request: where the ``cache_control`` breakpoint goes.

Kept beside :mod:`skillbench.judge._protocol` (whose text it never changes): the breakpoint only turns the user
message into one text block that carries ``cache_control``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CACHE_CONTROL = {"type": "ephemeral"}  # the 5-minute cache: a write costs 1.25× input, a read 0.1×


def with_cache_breakpoint(request: Mapping[str, Any]) -> dict[str, Any]:
    """The same request with a prompt-cache breakpoint after its user message (the whole request is the prefix).

    The message's text is unchanged byte for byte — it becomes one text block carrying ``cache_control`` — so the
    judge (and the simulated judge, which joins a message's text blocks) is asked exactly the same thing. Worth it
    only for a request that is sent again within the cache's lifetime (the judge pass's first sample, which
    calibration's first repeat resends): every call with a breakpoint pays a cache write once.
    """
    out = dict(request)
    messages = [dict(m) for m in request["messages"]]
    last = messages[-1]
    content = last["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else [dict(b) for b in content]
    blocks[-1] = {**blocks[-1], "cache_control": dict(CACHE_CONTROL)}
    messages[-1] = {**last, "content": blocks}
    out["messages"] = messages
    return out
