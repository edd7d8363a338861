"""Token usage the simulated endpoint reports, so the CLI's own ``total_cost_usd`` is plausible.

The CLI prices usage itself, per requested model name; :mod:`skillbench.prices` holds the list prices the
pinned CLI applies (the judge's spend uses the same table).

Prompt caching (:class:`PromptCache`) follows the API's rules on the sim's own token estimate: each block that
carries ``cache_control: {"type": "ephemeral"}`` (a tool, a system block, a message's content block; or the
request's top-level ``cache_control``, which marks the last block) is a breakpoint; the prefix up to it, in the
API's order tools → system → messages, is an entry when it holds at least the model's minimum cacheable length
(:data:`MIN_CACHEABLE`). The longest live entry is read (``cache_read_input_tokens``, refreshing its TTL), the
rest up to the last eligible breakpoint is written (``cache_creation_input_tokens``, split by TTL in
``cache_creation``), and only the remainder is ``input_tokens``. An entry is keyed on the model and the exact
prefix content (``cache_control`` markers left out, so moving a breakpoint keeps what it covers), and lives
``ttl_s`` (``"ttl": "1h"``: ``ttl_1h_s``) from its last use. Entries live in memory, for the endpoint's lifetime.
A request without an eligible breakpoint reports exactly the usage it did before caching existed.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from skillbench import prices
from skillbench.sim._profiles import CacheSpec, pick_key

CHARS_PER_TOKEN = 4
_BUDGET = re.compile(r"USD budget: \$([0-9.eE+-]+)/\$([0-9.eE+-]+)")


def price(model: str) -> tuple[float, float]:
    """``(input, output)`` dollars per million tokens for a requested model name (skillbench's one price table)."""
    p = prices.price(model)
    return p.input, p.output


def tokens(n_chars: int) -> int:
    """Tokens for ``n_chars`` characters of text (at least 1)."""
    return max(1, math.ceil(n_chars / CHARS_PER_TOKEN))


def cost(model: str, input_tokens: int, output_tokens: int) -> float:
    """Dollars the CLI charges for one response."""
    pin, pout = price(model)
    return (input_tokens * pin + output_tokens * pout) / 1e6


def budget_left(texts: list[str]) -> float | None:
    """Dollars left of ``--max-budget-usd``, from the last ``USD budget: $used/$total`` line the CLI sent."""
    last = None
    for text in texts:
        for m in _BUDGET.finditer(text):
            last = m
    if last is None:
        return None
    try:
        return max(0.0, float(last.group(2)) - float(last.group(1)))
    except ValueError:
        return None


def crossing_input_tokens(model: str, remaining_usd: float | None, output_tokens: int) -> int:
    """Input tokens that make one response cost well over the remaining budget (a forced crossing)."""
    remaining = 2.0 if remaining_usd is None else remaining_usd
    pin, _ = price(model)
    target = remaining * 1.5 + 0.05  # clearly over, whatever rounding the CLI applies
    need = target - cost(model, 0, output_tokens)
    return max(1, math.ceil(need * 1e6 / pin))


# Minimum cacheable prompt length by model name (the prompt-caching guide's table, most specific first); a family
# name alone gets its family's figure from the same table (the ctx decision for names the table does not list).
MIN_CACHEABLE: tuple[tuple[str, int], ...] = (
    ("opus-4-6", 4096), ("opus-4-5", 4096), ("haiku-4-5", 4096),
    ("3-5-haiku", 2048), ("haiku-3-5", 2048), ("3-haiku", 2048), ("haiku-3", 2048),
    ("sonnet", 1024), ("opus", 1024), ("haiku", 2048),
)
DEFAULT_MIN_CACHEABLE = 1024
MAX_BREAKPOINTS = 4  # the API refuses a request with more cache_control blocks


class CacheRequestError(ValueError):
    """A request the API would refuse for its cache_control blocks (HTTP 400 invalid_request_error)."""


def min_cacheable(model: str, overrides: Mapping[str, int] | None = None) -> int:
    """The minimum cacheable prefix, in tokens, for a requested model name (a profile override wins)."""
    if overrides:
        key = pick_key(overrides, model)
        if key in overrides:
            return int(overrides[key])
    name = model.lower()
    return next((n for key, n in MIN_CACHEABLE if key in name), DEFAULT_MIN_CACHEABLE)


@dataclass(frozen=True)
class _Point:
    tokens: int  # the prefix up to and including the breakpoint's block
    key: str
    ttl_s: float
    one_hour: bool


def _blocks(body: Mapping[str, Any]) -> list[Any]:
    """The request's cacheable blocks in the API's prefix order: tools, system, then each message's content."""
    out: list[Any] = list(body.get("tools") or [])
    system = body.get("system")
    out.extend([{"type": "text", "text": system}] if isinstance(system, str) and system else system or [])
    for msg in body.get("messages") or []:
        content = msg.get("content") if isinstance(msg, Mapping) else None
        role = msg.get("role") if isinstance(msg, Mapping) else None
        if isinstance(content, str):
            out.append({"role": role, "type": "text", "text": content})
        elif isinstance(content, list):
            out.extend({"role": role, **b} if isinstance(b, Mapping) else b for b in content)
    return out


def _bare(block: Any) -> Any:
    return {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, Mapping) else block


def _marker(block: Any) -> Mapping[str, Any] | None:
    mark = block.get("cache_control") if isinstance(block, Mapping) else None
    return mark if isinstance(mark, Mapping) and mark.get("type") == "ephemeral" else None


class PromptCache:
    """The endpoint's prompt cache (thread-safe); ``clock`` is injectable so tests need not wait minutes."""

    def __init__(self, spec: CacheSpec, clock: Callable[[], float] = time.monotonic):
        self.spec = spec
        self.clock = clock
        self._expiry: dict[str, float] = {}
        self._lock = threading.Lock()

    def _points(self, body: Mapping[str, Any], model: str) -> list[_Point]:
        blocks = _blocks(body)
        marks = [_marker(b) for b in blocks]
        if sum(m is not None for m in marks) > MAX_BREAKPOINTS:
            raise CacheRequestError(f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                                    f"Found {sum(m is not None for m in marks)}.")
        top = body.get("cache_control")
        if isinstance(top, Mapping) and top.get("type") == "ephemeral" and blocks and marks[-1] is None:
            marks[-1] = top  # automatic caching: the breakpoint sits on the last block
        floor = min_cacheable(model, self.spec.min_tokens)
        points, bare = [], [_bare(b) for b in blocks]
        for i, mark in enumerate(marks):
            if mark is None:
                continue
            text = json.dumps([model, bare[: i + 1]], separators=(",", ":"), sort_keys=True)
            n = tokens(len(json.dumps(bare[: i + 1], separators=(",", ":"))))
            if n < floor:
                continue  # below the minimum: never written, never read
            one_hour = mark.get("ttl") == "1h"
            points.append(_Point(n, hashlib.sha256(text.encode()).hexdigest(),
                                 self.spec.ttl_1h_s if one_hour else self.spec.ttl_s, one_hour))
        return points

    def usage(self, body: Mapping[str, Any], model: str, input_tokens: int) -> dict[str, Any] | None:
        """The cache part of one request's usage, or None when it has no eligible breakpoint.

        Returns:
            ``input_tokens`` (what is left after the cached prefix), ``cache_creation_input_tokens``,
            ``cache_read_input_tokens`` and ``cache_creation`` (the written tokens by TTL).

        Raises:
            CacheRequestError: more than :data:`MAX_BREAKPOINTS` blocks carry ``cache_control``.
        """
        points = self._points(body, model)
        if not points:
            return None
        with self._lock:
            now = self.clock()
            hit = max((j for j, p in enumerate(points) if self._expiry.get(p.key, -math.inf) > now), default=-1)
            read = points[hit].tokens if hit >= 0 else 0
            split = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
            done = read
            for p in points[hit + 1:]:
                kind = "ephemeral_1h_input_tokens" if p.one_hour else "ephemeral_5m_input_tokens"
                split[kind] += max(0, p.tokens - done)
                done = max(done, p.tokens)
            for p in points:  # a read refreshes its entry; a write starts the new ones
                self._expiry[p.key] = max(self._expiry.get(p.key, -math.inf), now + p.ttl_s)  # a use refreshes
        written = done - read
        return {"input_tokens": max(0, input_tokens - done), "cache_creation_input_tokens": written,
                "cache_read_input_tokens": read, "cache_creation": split}
