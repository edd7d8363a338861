"""Subcommands of the ``skillbench`` CLI: each module exposes ``register(subparsers)``."""
