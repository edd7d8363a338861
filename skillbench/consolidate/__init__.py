"""Consolidation of a CI matrix: the legs of ``generate --shard i/N`` or ``judge --shard i/N`` merged into one run
directory, failing closed (:mod:`skillbench.consolidate.run`; ``skillbench consolidate``)."""

from __future__ import annotations
