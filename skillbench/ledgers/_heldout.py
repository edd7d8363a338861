"""``SUITE_DIR/heldout-uses.csv``: the suite's record of every use of its held-out prompts.

Held-out prompts are validated and never run, unless a pass is asked to (``compare --generalization``,
``weekly --generalization``). Every such use is one group of rows appended here (one per prompt run), keyed by the
decision's run key, before the runs start: a prompt that has informed many decisions no longer measures
generalization — edits were judged against it — so the report counts the decisions per prompt. The file is
append-only (:class:`skillbench.ledgers.AppendLedger`): a rerun of the same decision (same run key) adds nothing, and
a damaged file is an error naming its line, never an empty record that would read as fresh prompts.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from skillbench.ledgers._append import AppendLedger, LedgerConflict
from skillbench.ledgers._atomic import atomic_write_json
from skillbench.ledgers._columns import HELDOUT_USE_COLUMNS
from skillbench.ledgers._files import HELDOUT_USE_FILE, HELDOUT_USES_FILE
from skillbench.ledgers._readers import LedgerError, read_json_object


def heldout_uses_path(suite_dir: str | Path) -> Path:
    """Where a suite keeps its held-out use record."""
    return Path(suite_dir) / HELDOUT_USES_FILE


def _ledger(path: Path) -> AppendLedger:
    return AppendLedger(path, HELDOUT_USE_COLUMNS, key="run_key")


def read_heldout_uses(path: str | Path) -> pd.DataFrame:
    """Every recorded use, :data:`HELDOUT_USE_COLUMNS` as text; empty when the file is absent (no use yet).

    Raises:
        LedgerError: one line naming the file (and line): other columns, a row with the wrong number of cells, or
            a row without its run key, family or prompt.
    """
    file = Path(path)
    try:
        rows = _ledger(file).read()
    except LedgerConflict as exc:
        raise LedgerError(f"{exc} (it is the suite's record of held-out prompt uses: repair it from version "
                          "control; moving it away would read every held-out prompt as fresh)") from exc
    except OSError as exc:
        raise LedgerError(f"{file}: cannot be read ({exc.strerror or exc})") from exc
    for line, row in enumerate(rows, start=2):
        empty = [c for c in ("run_key", "skill_family", "prompt") if not row[c].strip()]
        if empty:
            raise LedgerError(f"{file}: line {line}: empty {empty[0]} — the record is damaged; repair it from "
                              "version control")
    return pd.DataFrame(rows, columns=list(HELDOUT_USE_COLUMNS), dtype=str)


def record_heldout_use(path: str | Path, *, command: str, run_key: str, prompts: Sequence[tuple[str, str]],
                       base_commit: str = "", head_commit: str = "", now: datetime | None = None) -> int:
    """Append this decision's held-out prompts (``(family, prompt)`` pairs) unless the run key already has them.

    Returns:
        How many rows were appended (0: a rerun of a recorded decision, or nothing to record).

    Raises:
        LedgerError: the existing record is damaged (nothing appended).
    """
    file = Path(path)
    seen = read_heldout_uses(file)
    have = set(zip(seen["run_key"], seen["prompt"], strict=True))
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    rows = [{"used_at": stamp, "command": command, "run_key": run_key, "base_commit": base_commit,
             "head_commit": head_commit, "skill_family": family, "prompt": prompt}
            for family, prompt in dict.fromkeys(prompts) if (run_key, prompt) not in have]
    if rows:
        _ledger(file).append(rows)
    return len(rows)


def heldout_decisions(uses: pd.DataFrame) -> pd.Series:
    """Per held-out prompt, how many distinct decisions (run keys) it has informed."""
    if uses.empty:
        return pd.Series(dtype=int, name="decisions")
    return uses.groupby("prompt")["run_key"].nunique().rename("decisions")


def write_heldout_use(held_dir: str | Path, use: dict) -> None:
    """``RUN_DIR/_heldout/heldout-use.json``: what a pass ran held out and what the suite's record said of it
    (``families``, ``prompts``, ``record``, ``added``, ``wear_limit``, ``worn``: ``[prompt, decisions]`` pairs)."""
    atomic_write_json(Path(held_dir) / HELDOUT_USE_FILE, use)


def read_heldout_use(held_dir: str | Path) -> dict:
    """``heldout-use.json`` of a held-out week, ``{}`` when absent.

    Raises:
        LedgerError: not a JSON object (one line naming the file).
    """
    return read_json_object(Path(held_dir) / HELDOUT_USE_FILE, "the held-out pass writes it; rerun it with "
                            "--generalization") or {}
