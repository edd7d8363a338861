"""The one rule for a timeout in seconds: a real number (never a boolean), finite, above 0, at most a day.

A spec's ``timeout`` (a prompt's, a check's, a dotnet scenario's or Vally duration) and ``generate --timeout`` all
pass through :func:`timeout_problem`, so ``true`` is never read as 1 s and ``Infinity``, ``NaN`` or ``1e12`` never
reach the watchdog (whose timer dies with ``OverflowError`` on an unbounded wait). A day is far beyond any real run
and still a wait the host can keep.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError

MAX_TIMEOUT_S = 86_400.0  # a day


def timeout_problem(value: object) -> str:
    """Why ``value`` is not a timeout in seconds ('' when it is)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{value!r} is not a number of seconds"
    if not math.isfinite(value):
        return f"{value!r} is not a finite number of seconds"
    if value <= 0:
        return f"{value!r} is not above 0 seconds"
    if value > MAX_TIMEOUT_S:
        return f"{value!r} is more than {MAX_TIMEOUT_S:g} seconds (a day, the longest a run may wait)"
    return ""


def checked_timeout(value: object) -> float:
    """``value`` as seconds.

    Raises:
        ValueError: :func:`timeout_problem`'s line.
    """
    if problem := timeout_problem(value):
        raise ValueError(problem)
    return float(value)  # type: ignore[arg-type]


def _validated(value: Any) -> float:
    if problem := timeout_problem(value):
        raise PydanticCustomError("timeout", problem)
    return float(value)


# A pydantic field type: a spec's timeout, refused with timeout_problem's line (the bounds also in its JSON schema).
Timeout = Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False), BeforeValidator(_validated)]


__all__ = ["MAX_TIMEOUT_S", "Timeout", "checked_timeout", "timeout_problem"]
