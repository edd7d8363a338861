"""The files of one run folder (``RUN_DIR/<run_id>/``) that are records rather than the CLI's output.

``metadata.json`` (generate: the run's identity and settings), ``judge.json`` (the judge: every call of the run),
``judge_cost.txt`` and ``judge_cost.json`` (the judge: the run's spend, and each judge's part of it). The
transcript is read by :mod:`skillbench.signals._transcript`; ``test-prompt.json`` by
:class:`skillbench.suite._format.TestPrompt` (the suite's own schema).

Each file has a strict reader (a damaged file is one :class:`~skillbench.ledgers._readers.LedgerError` line naming
the file and the fix) and, where a caller only takes advice from the file, a tolerant one that reads a damaged
file as absent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillbench.ledgers._files import COST_PARTS_FILE, JUDGE_COST_FILE, METADATA_FILE, RUN_JUDGE_FILE
from skillbench.ledgers._readers import LedgerError, json_object_or_none, read_json_object

# What to do about a run folder whose metadata is damaged: the run cannot be trusted, so it runs again.
RERUN_FIX = "rerun the run (move its folder aside and run generate again)"
# A damaged judge record of one run: grade the run again.
REGRADE_FIX = "grade the week again (`skillbench judge RUN_DIR --fresh`)"


def read_metadata(folder: str | Path, required: tuple[str, ...] = (), fix: str = RERUN_FIX) -> dict[str, Any]:
    """A run's ``metadata.json``, with every field of ``required`` present.

    Raises:
        LedgerError: the file is absent, not JSON, not an object, or a required field is missing (one line
            naming the file, the field and ``fix``).
    """
    path = Path(folder) / METADATA_FILE
    meta = read_json_object(path, fix)
    if meta is None:
        raise LedgerError(f"{path}: not found — {fix}")
    missing = [k for k in required if k not in meta]
    if missing:
        raise LedgerError(f"{path}: {missing[0]}: missing field — {fix}")
    return meta


def metadata_or_none(folder: str | Path) -> dict[str, Any] | None:
    """A run's ``metadata.json``, or ``None`` when it is absent or damaged (the run state reads that as
    ``harness_invalid``; a scan of the week skips it)."""
    return json_object_or_none(Path(folder) / METADATA_FILE)


def read_run_judge(folder: str | Path) -> dict[str, Any] | None:
    """The run's ``judge.json`` (every call of its grading), ``None`` when it was not graded.

    Raises:
        LedgerError: a ``judge.json`` that is not a JSON object.
    """
    return read_json_object(Path(folder) / RUN_JUDGE_FILE, REGRADE_FIX)


def read_cost_parts(folder: str | Path) -> dict[str, float]:
    """The run's judge spend per judge (``judge_cost.json``: ``rubric``, ``pairs``), ``{}`` when none.

    Raises:
        LedgerError: not a JSON object of numbers.
    """
    path = Path(folder) / COST_PARTS_FILE
    data = read_json_object(path, REGRADE_FIX) or {}
    bad = [k for k, v in data.items() if isinstance(v, bool) or not isinstance(v, int | float)]
    if bad:
        raise LedgerError(f"{path}: {bad[0]}: {data[bad[0]]!r} is not a number of USD — {REGRADE_FIX}")
    return {str(k): float(v) for k, v in data.items()}


def read_judge_cost(folder: str | Path) -> float | None:
    """The run's judge spend in USD (``judge_cost.txt``), ``None`` when it has none.

    Raises:
        LedgerError: a ``judge_cost.txt`` that is not a single number.
    """
    path = Path(folder) / JUDGE_COST_FILE
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8").strip()
    try:
        return float(text)
    except ValueError as exc:
        raise LedgerError(f"{path}: {text[:40]!r} is not a number of USD — {REGRADE_FIX}") from exc
