"""Judge spend per run: ``<run_id>/judge_cost.txt`` is the sum of each judge's part in ``judge_cost.json``.

The rubric judge and the pairwise judge each own one part (``rubric``, ``pairs``), so rerunning one never
double-counts the other; the scorecard reads only ``judge_cost.txt``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from skillbench.ledgers import COST_PARTS_FILE, JUDGE_COST_FILE, atomic_write_json, atomic_write_text, read_cost_parts
from skillbench.prices import price

_COST_LOCK = threading.Lock()


def record_judge_cost(folder: Path, part: str, usd: float, *, add: bool = False) -> float:
    """Set (or add to) one judge's spend on a run and rewrite ``judge_cost.txt`` as the sum of the parts.

    Args:
        folder: the run folder.
        part: ``rubric`` or ``pairs``.
        usd: dollars.
        add: add to the part instead of replacing it.

    Returns:
        The run's total judge spend.
    """
    with _COST_LOCK:
        parts = _cost_parts(folder)
        parts[part] = (parts.get(part, 0.0) if add else 0.0) + usd
        return _write_cost_parts(folder, parts)


def clear_judge_cost(folder: Path, part: str) -> None:
    """Forget one judge's spend on a run (``--fresh``)."""
    with _COST_LOCK:
        parts = _cost_parts(folder)
        if part in parts:
            del parts[part]
            _write_cost_parts(folder, parts)


def _cost_parts(folder: Path) -> dict[str, float]:
    return read_cost_parts(folder)


def _write_cost_parts(folder: Path, parts: Mapping[str, float]) -> float:
    if not parts:
        (folder / COST_PARTS_FILE).unlink(missing_ok=True)
        (folder / JUDGE_COST_FILE).unlink(missing_ok=True)
        return 0.0
    atomic_write_json(folder / COST_PARTS_FILE, dict(parts))
    total = sum(parts.values())
    atomic_write_text(folder / JUDGE_COST_FILE, f"{total:.8f}\n")
    return total


def cache_summary(model: str, usages: Iterable[Mapping[str, Any]], *, batch: bool = False) -> dict[str, Any]:
    """Prompt-cache provenance of a pass, from the usage the endpoint reported on each reply.

    Args:
        model: the judge model (priced from :mod:`skillbench.prices`, the one table).
        usages: each reply's usage.
        batch: the replies came through Message Batches (the batch price).

    Returns:
        ``cache_read_tokens``, ``cache_write_tokens`` and ``saved_usd`` (what the cached tokens would have cost
        as plain input, minus what their reads and writes cost; negative when writes were not read back).
    """
    p = price(model)
    p = p.batch() if batch else p
    read = write = 0
    saved = 0.0
    for u in usages:
        read += int(u.get("cache_read_input_tokens", 0) or 0)
        write += int(u.get("cache_creation_input_tokens", 0) or 0)
        saved += p.cache_saving(u)
    return {"cache_read_tokens": read, "cache_write_tokens": write, "saved_usd": round(saved, 8)}
