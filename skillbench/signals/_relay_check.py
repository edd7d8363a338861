"""Does a run's transcript say what its relay saw? The verdict is taken from the relay's record, not the CLI's word.

Everything in a run's sandbox runs as content under evaluation, and any process there can write into the CLI's
output (``/proc/<cli>/fd/1``) — a forged ``result`` event, a forged answer, a forged cost. The host-side relay
(:mod:`skillbench.generation._relay`) recorded every message the endpoint actually answered, so a transcript is
held to it:

* every assistant event names a message the endpoint answered (its ``id``), and each of its text and tool-use blocks
  is a block of that message;
* the transcript holds at most one ``result`` event (the CLI writes one), and the final answer (its text) is the
  text of the last message the endpoint answered with text;
* the tokens the CLI reports (``modelUsage``, every call included) are the tokens the endpoint reported — exactly,
  unless an answer was cut mid-stream (then between the complete answers' and all answers' totals).

A disagreement makes the run ``tampered`` (:data:`skillbench.vocab.TAMPERED`): invalid, never graded, never a loss or
a win. A record the relay could not keep whole (an answer over its recording cap) is not held against the run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from skillbench.prices import usage_cost
from skillbench.signals._transcript import Transcript
from skillbench.wire import RELAY_FLOODED

SYNTHETIC = "<synthetic>"  # the CLI's own assistant events (an error it reports as a message), never an answer
SERVER_BLOCKS = frozenset({"server_tool_use", "web_search_tool_result"})  # a server tool's sub-request answer
WEB_SEARCH_USD = 0.01  # the CLI's price of one web search (reference: $0.01 per web_search_requests)
COST_TOLERANCE_USD = 1e-6  # float rounding of the CLI's own sums
_USAGE = (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"),
          ("cacheReadInputTokens", "cache_read_input_tokens"),
          ("cacheCreationInputTokens", "cache_creation_input_tokens"))


def read_relay(path: str | Path) -> list[dict[str, Any]] | None:
    """A run's relay record (``relay.jsonl``), or None when the run has none (a run before the relay, a test sandbox).

    A line that is not a JSON object is kept as ``{"unreadable": True}``: a damaged record never reads as a
    shorter clean one.
    """
    path = Path(path)
    if not path.is_file():
        return None
    out: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            obj = None
        out.append(obj if isinstance(obj, dict) else {"unreadable": True})
    return out


def _text(blocks: Any) -> str:
    return "".join(b.get("text", "") for b in blocks or [] if isinstance(b, dict) and b.get("type") == "text")


def _block_key(block: Mapping[str, Any]) -> tuple[str, str] | None:
    kind = block.get("type")
    if kind == "text":
        return ("text", str(block.get("text", "")))
    if kind == "tool_use":
        # the id is the endpoint's; the CLI may normalise an input, so the input is not compared
        return ("tool_use", f"{block.get('id')}:{block.get('name')}")
    return None  # thinking, server tool blocks: not compared


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def relay_disagreements(transcript: Transcript, exchanges: Sequence[Mapping[str, Any]]) -> list[str]:
    """Where the transcript disagrees with the relay's record (empty: it agrees); one line each, the first few.

    Fails closed: a record the relay could not keep whole, or a transcript with a line the CLI did not write whole,
    cannot be held to the record, and is a disagreement.
    """
    if any(ex.get("unreadable") for ex in exchanges):
        return ["the relay's record is damaged (a line is not JSON)"]
    if any(ex.get("recorded") == "cut" for ex in exchanges):
        return ["an answer was too large for the relay to record whole: the transcript cannot be held to it"]
    if any(ex.get("route") == RELAY_FLOODED for ex in exchanges):
        return ["the sandbox sent more requests than a run may (the relay's record is flooded)"]
    if transcript.parse_errors > transcript.partial_tail:
        return [f"{transcript.parse_errors} line(s) of the transcript are not whole JSON events (the CLI writes "
                "whole lines; another process wrote into its output)"]
    results = [event for event in transcript.events if event.get("type") == "result"]
    if len(results) > 1:  # the CLI writes one; any other was written into its output by another process
        return [f"the transcript holds {len(results)} result events (the CLI writes one)"]
    if results and transcript.events[-1] is not results[0]:
        return ["the transcript's result event is not its last event (the CLI writes it last)"]
    messages = [ex["message"] for ex in exchanges if isinstance(ex.get("message"), dict)]
    by_id = {str(m.get("id")): m for m in messages if m.get("id")}
    # the conversation's own answers: complete, and not a server tool's sub-request (WebSearch's), whose answer the
    # CLI folds into a tool result instead of printing it
    conversation = [m for m in messages if m.get("complete") and not any(
        isinstance(b, dict) and b.get("type") in SERVER_BLOCKS for b in m.get("content") or [])]
    problems: list[str] = []
    shown: set[str] = set()
    tool_ids: dict[str, str] = {}
    for m in messages:
        for b in m.get("content") or []:
            if isinstance(b, dict) and b.get("type") == "tool_use":
                tool_ids[str(b.get("id"))] = str(b.get("name"))
    previous: dict[str, Any] | None = None
    for event in transcript.events:
        kind = event.get("type")
        if kind == "user":
            problems += _user_event_problems(event, previous, tool_ids)
        if kind in ("user", "assistant"):
            previous = event
        if kind != "assistant":
            continue
        msg = event.get("message") or {}
        if msg.get("model") == SYNTHETIC:
            continue
        seen = by_id.get(str(msg.get("id")))
        if seen is None:
            problems.append(f"the transcript shows assistant message {str(msg.get('id'))[:60]!r}, which the "
                            "endpoint never sent")
            continue
        shown.add(str(seen.get("id")))
        answered = {_block_key(b) for b in seen.get("content") or [] if isinstance(b, dict)}
        for block in msg.get("content") or []:
            key = _block_key(block) if isinstance(block, dict) else ("?", "")
            if key is not None and key not in answered:
                problems.append(f"message {seen.get('id')}: the transcript's {key[0]} block is not what the "
                                "endpoint answered")
                break
    unshown = [str(m.get("id")) for m in conversation if str(m.get("id")) not in shown]
    if unshown:
        problems.append(f"the endpoint answered {len(unshown)} message(s) the transcript does not show (a request "
                        f"sent beside the CLI with the run's token: {unshown[0][:60]})")
    result = results[0] if results else {}
    claimed = result.get("result")
    if isinstance(claimed, str) and claimed.strip() and not result.get("is_error"):
        with_text = [m for m in conversation if _text(m.get("content")).strip()]
        if not with_text:
            problems.append("the result event has an answer, but the endpoint never answered with text")
        elif claimed.strip() != _text(with_text[-1].get("content")).strip():
            problems.append("the result event's answer is not the endpoint's last answer")
    if results and messages and not isinstance(result.get("modelUsage"), Mapping):
        problems.append("the result event has no modelUsage (the CLI always writes it)")
    model_usage = result.get("modelUsage")
    if isinstance(model_usage, Mapping):
        whole = [m for m in messages if m.get("complete")]
        cut = [m for m in messages if not m.get("complete")]
        for cli_key, api_key in _USAGE:
            told = sum(_int((u or {}).get(cli_key)) for u in model_usage.values() if isinstance(u, Mapping))
            low = sum(_int((m.get("usage") or {}).get(api_key)) for m in whole)
            high = low + sum(_int((m.get("usage") or {}).get(api_key)) for m in cut)
            if not low <= told <= high:
                seen_text = f"{low}" if low == high else f"{low}–{high}"
                problems.append(f"the CLI reports {told} {api_key} but the endpoint reported {seen_text}")
        # The CLI prices each model's tokens itself (its table is not ours); its total must be the sum of its
        # per-model costs, whose tokens were just held to the record.
        cost = result.get("total_cost_usd")
        parts = [u.get("costUSD") for u in model_usage.values() if isinstance(u, Mapping)]
        numbers = [c for c in [cost, *parts] if isinstance(c, int | float) and not isinstance(c, bool)]
        if cost is not None and len(numbers) != 1 + len(parts):
            problems.append("the result event's costs are not numbers")
        elif cost is not None and abs(float(cost) - sum(float(c) for c in parts)) > COST_TOLERANCE_USD:
            problems.append(f"the CLI's total cost ${float(cost):.6f} is not the sum of its models' costs")
    return problems[:5]


def _user_event_problems(event: Mapping[str, Any], previous: Mapping[str, Any] | None,
                         tool_ids: Mapping[str, str]) -> list[str]:
    """A user event the CLI could have written: tool results of tool calls the endpoint made, or a skill's body
    right after the result of a Skill call (the CLI's synthetic message)."""
    content = (event.get("message") or {}).get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    results = [b for b in blocks if b.get("type") == "tool_result"]
    for block in results:
        if str(block.get("tool_use_id")) not in tool_ids:
            return [f"the transcript shows a result of tool call {str(block.get('tool_use_id'))[:40]!r}, which the "
                    "endpoint never made"]
    if results or not blocks:
        return []
    # a text-only user event: the CLI writes one after a Skill call's result (the skill's body)
    before = (previous or {}).get("message") or {}
    before_blocks = before.get("content") if isinstance(before.get("content"), list) else []
    after_skill = (previous or {}).get("type") == "user" and any(
        isinstance(b, dict) and b.get("type") == "tool_result" and tool_ids.get(str(b.get("tool_use_id"))) == "Skill"
        for b in before_blocks)
    if not after_skill:
        return ["the transcript shows a user message the CLI writes only after a Skill call's result"]
    return []


def relay_cost(exchanges: Sequence[Mapping[str, Any]]) -> float:
    """The list price (:mod:`skillbench.prices`) of what the endpoint answered, by the model each request asked for,
    with $0.01 per web search: what a run spent whatever its transcript says (the spend cap counts it for a run
    whose transcript cannot be believed)."""
    total = 0.0
    for ex in exchanges:
        msg = ex.get("message")
        if not isinstance(msg, dict):
            continue
        model = str((ex.get("request") or {}).get("model") or msg.get("model") or "")
        usage = msg.get("usage") or {}
        total += usage_cost(model, usage)
        searches = (usage.get("server_tool_use") or {}).get("web_search_requests") if isinstance(
            usage.get("server_tool_use"), Mapping) else 0
        total += WEB_SEARCH_USD * _int(searches)
    return total
