"""The public API: every re-exported name resolves, and the CLI lists every subcommand."""

from __future__ import annotations

import skillbench
from skillbench.cli import build_parser


def test_every_public_name_resolves():
    missing = [name for name in skillbench.__all__ if getattr(skillbench, name, None) is None]
    assert not missing


def test_cli_has_every_subcommand():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"validate", "generate", "signals", "image", "sim", "scorecard"} <= set(sub.choices)


def test_no_public_name_is_shadowed_by_a_submodule():
    """Importing ``skillbench.x`` rebinds ``skillbench.x`` to the module: a function must not share its name."""
    import importlib.util

    clashes = [n for n in skillbench.__all__ if importlib.util.find_spec(f"skillbench.{n}") is not None]
    assert not clashes
