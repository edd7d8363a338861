"""Deterministic random draws keyed on what a decision is about, never on global state or timing.

Every draw is ``blake2b(seed, *key)`` → a number, so the same seed, run id and turn give the same
behaviour whatever the order or concurrency of requests.
"""

from __future__ import annotations

import hashlib
import math
import random


def _digest(seed: int, key: tuple[object, ...]) -> bytes:
    payload = "\x1f".join([str(seed), *(str(k) for k in key)])
    return hashlib.blake2b(payload.encode(), digest_size=16).digest()


def uniform(seed: int, *key: object) -> float:
    """A number in [0, 1) determined by ``seed`` and ``key``."""
    return int.from_bytes(_digest(seed, key)[:8], "big") / 2**64


def rng(seed: int, *key: object) -> random.Random:
    """A private ``random.Random`` determined by ``seed`` and ``key`` (for shuffles and choices)."""
    return random.Random(int.from_bytes(_digest(seed, key), "big"))


def normal(seed: int, *key: object) -> float:
    """A standard normal deviate determined by ``seed`` and ``key`` (Box–Muller on two uniforms)."""
    u1 = max(uniform(seed, *key, "n1"), 1e-12)
    u2 = uniform(seed, *key, "n2")
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def short_id(seed: int, *key: object, n: int = 24) -> str:
    """A stable hex id (tool-use and message ids)."""
    return _digest(seed, key).hex()[:n]


def adjust(p: float, offset: float) -> float:
    """``p`` moved by ``offset`` on the logit scale; 0 and 1 stay exactly 0 and 1 (forced behaviour)."""
    if p <= 0.0 or p >= 1.0:
        return min(max(p, 0.0), 1.0)
    z = math.log(p / (1.0 - p)) + offset
    return 1.0 / (1.0 + math.exp(-z))
