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

from skillbench.signals._transcript import Transcript

SYNTHETIC = "<synthetic>"  # the CLI's own assistant events (an error it reports as a message), never an answer
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
    """Where the transcript disagrees with the relay's record (empty: it agrees); one line each, the first few."""
    if any(ex.get("unreadable") for ex in exchanges):
        return ["the relay's record is damaged (a line is not JSON)"]
    if any(ex.get("recorded") == "cut" for ex in exchanges):
        return []  # an answer too large to record whole: nothing to hold the transcript to
    results = sum(1 for event in transcript.events if event.get("type") == "result")
    if results > 1:  # the CLI writes one; any other was written into its output by another process
        return [f"the transcript holds {results} result events (the CLI writes one)"]
    messages = [ex["message"] for ex in exchanges if isinstance(ex.get("message"), dict)]
    by_id = {str(m.get("id")): m for m in messages if m.get("id")}
    problems: list[str] = []
    for event in transcript.events:
        if event.get("type") != "assistant":
            continue
        msg = event.get("message") or {}
        if msg.get("model") == SYNTHETIC:
            continue
        seen = by_id.get(str(msg.get("id")))
        if seen is None:
            problems.append(f"the transcript shows assistant message {str(msg.get('id'))[:60]!r}, which the "
                            "endpoint never sent")
            continue
        answered = {_block_key(b) for b in seen.get("content") or [] if isinstance(b, dict)}
        for block in msg.get("content") or []:
            key = _block_key(block) if isinstance(block, dict) else ("?", "")
            if key is not None and key not in answered:
                problems.append(f"message {seen.get('id')}: the transcript's {key[0]} block is not what the "
                                "endpoint answered")
                break
    result = transcript.result or {}
    claimed = result.get("result")
    if isinstance(claimed, str) and claimed.strip() and not result.get("is_error"):
        with_text = [m for m in messages if _text(m.get("content")).strip()]
        if not with_text:
            problems.append("the result event has an answer, but the endpoint never answered with text")
        elif claimed.strip() != _text(with_text[-1].get("content")).strip():
            problems.append("the result event's answer is not the endpoint's last answer")
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
    return problems[:5]
