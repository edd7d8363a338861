"""Run keys: the name of a week, and the name of its folder under ``SUITE_DIR/weekly/``.

A run key becomes a folder name and part of every run id, so it is checked in one place for every command:
letters, digits, ``.``, ``_`` and ``-``, starting with a letter or digit, at most 64 characters (``..`` and
anything with a ``/`` are refused).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

RUN_KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class RunKeyError(ValueError):
    """A run key that cannot name a week folder; the message says what is allowed."""


def check_run_key(run_key: str) -> str:
    """Return ``run_key`` when it is a valid week name.

    Raises:
        RunKeyError: anything else, with one line saying what is allowed.
    """
    if not RUN_KEY_RE.match(run_key or "") or ".." in run_key:
        raise RunKeyError(f"run key {run_key!r}: use letters, digits, '.', '_' or '-' (e.g. 20261130)")
    return run_key


def utc_run_key(now: datetime | None = None) -> str:
    """Today's run key: the UTC date ``YYYYMMDD``."""
    return (now or datetime.now(UTC)).strftime("%Y%m%d")
