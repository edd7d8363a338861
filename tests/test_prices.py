"""The one price table: most specific name first, then the family, then the default marked unknown."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from skillbench.prices import DEFAULT_PRICE, PRICES, price, usage_cost


@pytest.mark.parametrize(("model", "expected"), [
    ("claude-opus-5-5", (4.0, 20.0)),
    ("claude-sonnet-4-5-20250929", (3.0, 15.0)),  # a dated snapshot takes its generation's price
    ("claude-sonnet-4-20250514", (3.0, 15.0)),
    ("claude-3-5-haiku-20241022", (0.8, 4.0)),
    ("CLAUDE-HAIKU-4-5", (1.0, 5.0)),  # case-insensitive
    ("sonnet", (2.0, 10.0)),  # an alias is the family at its current generation
    ("claude-haiku-9", (0.5, 0.5)),
])
def test_price_of_a_model_name(model, expected):
    p = price(model)
    assert (p.input, p.output) == expected and p.known


def test_an_unknown_model_is_priced_like_the_default_and_marked():
    p = price("gpt-9")
    assert p is DEFAULT_PRICE and not p.known


def test_no_entry_is_shadowed_by_an_earlier_one():
    # The first key contained in the name wins, so an earlier key inside a later key would make it unreachable.
    names = [name for name, _ in PRICES]
    for i, name in enumerate(names):
        for earlier in names[:i]:
            assert earlier not in name, f"{earlier!r} comes first and shadows {name!r}"
        assert price(name) is dict(PRICES)[name]


def test_usage_cost_counts_every_token_kind_from_a_dict_or_an_sdk_object():
    usage = {"input_tokens": 1_000_000, "output_tokens": 100_000, "cache_read_input_tokens": 2_000_000,
             "cache_creation_input_tokens": 400_000}
    expected = 1 * 3.0 + 0.1 * 15.0 + 2 * 0.3 + 0.4 * 3.75
    assert usage_cost("claude-sonnet-4-5", usage) == pytest.approx(expected)
    sdk_like = SimpleNamespace(**usage)
    assert usage_cost("claude-sonnet-4-5", sdk_like) == pytest.approx(expected)
    assert usage_cost("claude-sonnet-4-5", {"input_tokens": 10}) == pytest.approx(10 * 3.0 / 1e6)
    assert usage_cost("claude-sonnet-4-5", SimpleNamespace(input_tokens=None)) == 0.0
