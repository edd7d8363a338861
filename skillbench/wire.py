"""The wire protocol between skillbench and a Messages endpoint, declared once for every side that speaks it.

Generation's CLI runs and the judges send the ``X-Skillbench-*`` headers (the CLI forwards them from
``ANTHROPIC_CUSTOM_HEADERS``); the simulated endpoint (:mod:`skillbench.sim`) keys its draws on them and answers
the routes below; a real endpoint ignores them. The Messages API's own format (a whole message, its SSE event
sequence, errors) is here too, as the simulation writes it. This module imports nothing of skillbench: every
layer may import it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

# -- request headers: a run's identity, forwarded on every request of the run --------------------------------------
RUN_ID_HEADER = "X-Skillbench-Run-Id"
ATTEMPT_HEADER = "X-Skillbench-Attempt"
ROLE_HEADER = "X-Skillbench-Role"  # "judge" for the rubric and pairwise judges
SAMPLE_HEADER = "X-Skillbench-Sample"  # the judge's sample k of K: independent draws per sample
FAULT_HEADER = "X-Skillbench-Fault"  # kind[=rate][, kind[=rate]…]: faults the simulation injects into this run
SESSION_HEADER = "X-Claude-Code-Session-Id"  # the CLI's own; a request without our run id is keyed on it

# -- the simulated endpoint's routes and key ------------------------------------------------------------------------
MESSAGES_ROUTE = "/v1/messages"
BATCHES_ROUTE = "/v1/messages/batches"
INFO_ROUTE = "/skillbench/info"  # GET: {"kind": "simulated", "site_base": …} — how a harness recognises a simulation
TRUTH_ROUTE = "/skillbench/truth"  # GET ?run_id=…&run_id=…: those runs' truth rows as CSV (read-only)
SITE_ROUTE = "/site/"  # GET /site/<family>/<path>: the suite's skills tree as published
SIM_API_KEY = "sk-skillbench-sim"  # a served simulation's default key (a pass's own simulation draws a fresh one)
SIM_KEY_ENV = "SKILLBENCH_SIM_KEY"  # a served simulation's key, when it is not the default
SKILLBENCH_HEADER_PREFIX = "x-skillbench-"  # the harness's own headers: the relay drops any a container sends
RELAY_FLOODED = "flooded"  # a run's relay record: the route of its marker when the sandbox sent too many requests

# -- the Messages API's format --------------------------------------------------------------------------------------

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
TEXT_CHUNK = 160  # characters per text_delta, so a client sees a real stream


def message(msg_id: str, model: str, content: list[dict[str, Any]], stop_reason: str,
            usage: dict[str, Any]) -> dict[str, Any]:
    """A complete ``message`` object."""
    return {"id": msg_id, "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": stop_reason, "stop_sequence": None, "usage": usage}


def error_body(status: int, text: str) -> dict[str, Any]:
    """The API's JSON error shape."""
    return {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": text}}


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def sse_events(msg: dict[str, Any]) -> Iterator[bytes]:
    """The event sequence of ``msg``: message_start, per block start/delta/stop, message_delta, stop."""
    usage = msg["usage"]
    start = {**msg, "content": [], "stop_reason": None,
             "usage": {"input_tokens": usage["input_tokens"], "output_tokens": 1}}
    yield sse("message_start", {"type": "message_start", "message": start})
    for i, block in enumerate(msg["content"]):
        kind = block.get("type")
        if kind == "text":
            yield sse("content_block_start", {"type": "content_block_start", "index": i,
                                              "content_block": {"type": "text", "text": ""}})
            text = block.get("text", "")
            for j in range(0, len(text), TEXT_CHUNK):
                yield sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                  "delta": {"type": "text_delta", "text": text[j:j + TEXT_CHUNK]}})
        elif kind in ("tool_use", "server_tool_use"):
            yield sse("content_block_start", {"type": "content_block_start", "index": i,
                                              "content_block": {**block, "input": {}}})
            yield sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "input_json_delta",
                                                        "partial_json": json.dumps(block.get("input", {}))}})
        else:  # result blocks arrive whole
            yield sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": block})
        yield sse("content_block_stop", {"type": "content_block_stop", "index": i})
    yield sse("message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                                "usage": usage})
    yield sse("message_stop", {"type": "message_stop"})


def message_from_sse(data: bytes) -> dict[str, Any] | None:
    """The message an SSE body carries, rebuilt the way a client reads it (None when it never started).

    ``message_start`` gives the message, each block starts whole and grows by its deltas, ``message_delta`` sets the
    stop reason and overrides the usage it names (the API sends the final ``output_tokens`` there). A body cut
    short gives the message as far as it went; ``complete`` says whether ``message_stop`` arrived and every event
    could be read.
    """
    msg: dict[str, Any] | None = None
    partial: dict[int, str] = {}
    complete = broken = False
    for event in data.decode("utf-8", "replace").split("\n\n"):
        payload = "".join(line[5:].strip() for line in event.splitlines() if line.startswith("data:"))
        if not payload:
            continue
        try:
            obj = json.loads(payload)
        except ValueError:
            broken = True  # a client that cannot read an event does not have the answer whole
            continue
        kind = obj.get("type") if isinstance(obj, dict) else None
        if kind == "message_start" and isinstance(obj.get("message"), dict):
            msg = {**obj["message"], "content": []}
        elif msg is None:
            continue
        elif kind == "content_block_start" and isinstance(obj.get("content_block"), dict):
            msg["content"].append(dict(obj["content_block"]))
        elif kind == "content_block_delta" and msg["content"]:
            block, delta = msg["content"][-1], obj.get("delta") or {}
            if delta.get("type") == "text_delta":
                block["text"] = block.get("text", "") + str(delta.get("text", ""))
            elif delta.get("type") == "input_json_delta":
                partial[len(msg["content"]) - 1] = partial.get(len(msg["content"]) - 1, "") + str(
                    delta.get("partial_json", ""))
            elif delta.get("type") == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + str(delta.get("thinking", ""))
        elif kind == "message_delta":
            msg.update({k: v for k, v in (obj.get("delta") or {}).items() if k in ("stop_reason", "stop_sequence")})
            msg["usage"] = {**(msg.get("usage") or {}), **(obj.get("usage") or {})}
        elif kind == "message_stop":
            complete = True
    if msg is None:
        return None
    for index, text in partial.items():
        try:
            msg["content"][index]["input"] = json.loads(text) if text else {}
        except ValueError:
            msg["content"][index]["input"] = {"_unparsed": text}
    msg["complete"] = complete and not broken
    return msg
