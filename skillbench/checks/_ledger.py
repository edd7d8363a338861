"""A run's ``checks.json`` and the week's ``checks.csv`` rebuilt from them.

Generation writes ``<run_id>/checks.json`` into the run's temporary folder before the rename that commits the
run, so a committed run carries its check results or none at all. ``checks.csv`` is then rebuilt whole, never
appended, from the committed *complete* runs (the run-state rule of :func:`skillbench.signals._manifest.run_state`,
the one resume and reconciliation use) and replaced atomically: a kill -9 anywhere leaves every
(run, check) row exactly once, and a run resume reruns contributes only its new folder's rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from skillbench.checks._grade import CheckResult
from skillbench.ledgers import (
    CHECKS_COLUMNS,
    CHECKS_FILE,
    RUN_CHECKS_FILE,
    atomic_write_json,
    atomic_write_text,
    csv_text,
    json_object_or_none,
    metadata_or_none,
    run_folder_ids,
)
from skillbench.signals import run_state
from skillbench.vocab import COMPLETE_STATES


def write_run_checks(run_folder: Path, setup: Mapping[str, Any], results: Iterable[CheckResult]) -> Path:
    """Write ``run_folder/checks.json``: ``{"setup": {"ok", "detail"}, "checks": [...]}``; returns its path."""
    path = run_folder / RUN_CHECKS_FILE
    atomic_write_json(path, {"setup": {"ok": bool(setup.get("ok", True)), "detail": str(setup.get("detail", ""))},
                             "checks": [r.to_json() for r in results]})
    return path


def read_run_checks(run_folder: Path) -> list[dict[str, str]]:
    """The check rows of a run's ``checks.json`` ([] when it has none or it cannot be read)."""
    data = json_object_or_none(run_folder / RUN_CHECKS_FILE) or {}
    rows = data.get("checks")
    return [r for r in rows or [] if isinstance(r, dict) and r.get("check_id")]


def checks_rows(run_dir: str | Path) -> list[list[str]]:
    """Every ``checks.csv`` row of the week's committed complete runs, sorted by (run_id, check_id)."""
    run_dir = Path(run_dir)
    rows: list[list[str]] = []
    for run_id in run_folder_ids(run_dir):
        folder = run_dir / run_id
        if not (folder / RUN_CHECKS_FILE).is_file() or run_state(folder) not in COMPLETE_STATES:
            continue
        meta = metadata_or_none(folder) or {}  # run_state read it already
        ident = {"prompt": meta.get("prompt", ""), "model": meta.get("model", ""),
                 "condition": meta.get("condition", ""), "rep": meta.get("rep", ""), "run_id": run_id}
        for check in read_run_checks(folder):
            values = {**ident, **{k: check.get(k, "") for k in ("check_id", "check_type", "status", "detail")}}
            rows.append([str(values[c]) for c in CHECKS_COLUMNS])
    key_at = CHECKS_COLUMNS.index("run_id"), CHECKS_COLUMNS.index("check_id")
    return sorted(rows, key=lambda r: (r[key_at[0]], r[key_at[1]]))


def write_checks_ledger(run_dir: str | Path) -> Path | None:
    """Rebuild ``RUN_DIR/checks.csv`` atomically from the committed complete runs' ``checks.json``.

    A week none of whose runs has checks gets no file (an existing one is rewritten, so it never goes stale).

    Returns:
        The ledger's path, or None when there was nothing to write.
    """
    run_dir = Path(run_dir)
    path = run_dir / CHECKS_FILE
    rows = checks_rows(run_dir)
    if not rows and not path.exists():
        return None
    atomic_write_text(path, csv_text([list(CHECKS_COLUMNS), *rows]))
    return path
