"""List prices per model, for what the judge spends (``judge_cost.txt``).

Prices are US dollars per million tokens, the list prices the pinned Claude Code CLI applies to the model
name it sends (measured against a local server; see the CLI reference notes, section 5.2). A judge that
calls the Messages API with the same model name pays the same list price. The most specific name wins;
then the family (``opus``, ``sonnet``, ``haiku``) at its current generation's price; an unknown name is
priced like the default opus model and marked as not known, as the CLI does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

# The Message Batches API charges half the list price for every token kind, and prompt caching's multipliers
# stack with it (a batched cache read costs half a synchronous one).
BATCH_DISCOUNT = 0.5


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens of each kind."""

    input: float
    output: float
    cache_read: float
    cache_write: float  # 5-minute cache writes
    known: bool = True  # False: an unknown model name, priced like the default

    def cost(self, usage: Mapping[str, Any] | Any) -> float:
        """Dollars for one response's ``usage`` (an SDK ``Usage`` or a dict; absent counts are 0)."""

        def get(key: str) -> int:
            value = usage.get(key) if isinstance(usage, Mapping) else getattr(usage, key, None)
            return int(value or 0)

        return (get("input_tokens") * self.input + get("output_tokens") * self.output
                + get("cache_read_input_tokens") * self.cache_read
                + get("cache_creation_input_tokens") * self.cache_write) / 1e6

    def batch(self) -> Price:
        """The price of the same model through the Message Batches API (:data:`BATCH_DISCOUNT` of each rate)."""
        return replace(self, input=self.input * BATCH_DISCOUNT, output=self.output * BATCH_DISCOUNT,
                       cache_read=self.cache_read * BATCH_DISCOUNT, cache_write=self.cache_write * BATCH_DISCOUNT)

    def cache_saving(self, usage: Mapping[str, Any] | Any) -> float:
        """Dollars prompt caching saved on one response: its cached tokens priced as plain input, minus their cost.

        Negative when the cache writes cost more than the reads saved (a write is dearer than plain input).
        """

        def get(key: str) -> int:
            value = usage.get(key) if isinstance(usage, Mapping) else getattr(usage, key, None)
            return int(value or 0)

        read, write = get("cache_read_input_tokens"), get("cache_creation_input_tokens")
        return (read * (self.input - self.cache_read) - write * (self.cache_write - self.input)) / 1e6


# Most specific first. Where only "1 M input + 1 M output" was measured, the split is the public list price
# that gives that total (noted per line).
PRICES: tuple[tuple[str, Price], ...] = (
    ("claude-opus-5-5", Price(4.0, 20.0, 0.2, 5.0)),
    ("claude-sonnet-5-5", Price(2.0, 10.0, 0.1, 2.5)),
    ("claude-haiku-5-5", Price(0.5, 0.5, 0.05, 0.625)),
    ("claude-opus-4-5", Price(5.0, 25.0, 0.5, 6.25)),  # measured total $30
    ("claude-sonnet-4-6", Price(3.0, 15.0, 0.3, 3.75)),  # measured total $18
    ("claude-sonnet-4-5", Price(3.0, 15.0, 0.3, 3.75)),
    ("claude-sonnet-4-2", Price(3.0, 15.0, 0.3, 3.75)),  # claude-sonnet-4-20250514, measured total $18
    ("claude-haiku-4-5", Price(1.0, 5.0, 0.1, 1.25)),
    ("claude-3-5-haiku", Price(0.8, 4.0, 0.08, 1.0)),  # measured total $4.8
    # Families, at the current generation (the CLI remaps older opus names to claude-opus-5-5).
    ("opus", Price(4.0, 20.0, 0.2, 5.0)),
    ("sonnet", Price(2.0, 10.0, 0.1, 2.5)),
    ("haiku", Price(0.5, 0.5, 0.05, 0.625)),
)
DEFAULT_PRICE = Price(4.0, 20.0, 0.2, 5.0, known=False)


def price(model: str) -> Price:
    """The price of a model name (case-insensitive); unknown names get :data:`DEFAULT_PRICE`."""
    name = model.lower()
    for key, value in PRICES:
        if key in name:
            return value
    return DEFAULT_PRICE


def usage_cost(model: str, usage: Mapping[str, Any] | Any, *, batch: bool = False) -> float:
    """Dollars for one response of ``model`` with ``usage`` (``batch``: answered through a Message Batch)."""
    p = price(model)
    return (p.batch() if batch else p).cost(usage)
