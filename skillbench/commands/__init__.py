"""Subcommands of the ``skillbench`` CLI: each module exposes ``register(subparsers)``.

The argument shapes several commands share live here, declared once.
"""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An argparse type: a whole number of 1 or more."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def listed(values: list[str] | None) -> list[str] | None:
    """``--models sonnet haiku`` and ``--models sonnet,haiku`` both give ``["sonnet", "haiku"]``."""
    if not values:
        return None
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def add_backend_args(p: argparse.ArgumentParser, *, endpoint: bool = True) -> None:
    """``--backend`` (and ``--endpoint``) and ``--seed``, shared by every model-calling command."""
    p.add_argument("--backend", choices=["sim", "anthropic"],
                   help="sim = the simulated endpoint on 127.0.0.1; default anthropic when ANTHROPIC_API_KEY is set")
    if endpoint:
        p.add_argument("--endpoint", metavar="URL",
                       help="use an endpoint that is already running (e.g. `skillbench sim serve`)")
    p.add_argument("--seed", type=int, default=0, help="seed of the plan order and of the simulated endpoint")
