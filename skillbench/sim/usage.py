"""Token usage the simulated endpoint reports, so the CLI's own ``total_cost_usd`` is plausible.

The CLI prices usage itself, per requested model name; :mod:`skillbench.prices` holds the list prices the
pinned CLI applies (the judge's spend uses the same table).
"""

from __future__ import annotations

import math
import re

from skillbench import prices

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
