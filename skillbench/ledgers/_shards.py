"""Shards of a week for a CI matrix: which runs a leg owns, and the summary each leg leaves beside its runs.

``generate --shard i/N`` and ``judge --shard i/N`` (``i`` from 1 to ``N``) take the runs whose id hashes to
``i`` (:meth:`Shard.holds`: SHA-256 of the run id, mod ``N``). The slice depends on the run id alone, so a shard's
runs never change when another leg fails, is rerun or is cancelled, and any machine computes the same slice from
``plan.csv``. Each leg writes ``shard-i-of-N.json`` (:data:`~skillbench.ledgers._files.SHARD_SUMMARY_FORMAT`) at the
end of its pass; ``skillbench consolidate`` reads every leg's summary and refuses to merge unless all of them
agree (:mod:`skillbench.consolidate`).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillbench.ledgers._atomic import atomic_write_json
from skillbench.ledgers._files import (
    CHECKS_FILE,
    CONSOLIDATION_FILE,
    JUDGE_BATCHES_FILE,
    JUDGE_SKIPS_FILE,
    MANIFEST_FILE,
    PASS_FILE,
    RECONCILIATION_FILE,
    RETRIES_FILE,
    SCORES_FILE,
    SHARD_SUMMARY_FORMAT,
    SHARD_SUMMARY_GLOB,
    TRUTH_FILE,
)

SHARD_RE = re.compile(r"^(\d+)/(\d+)$")
SUMMARY_RE = re.compile(r"^shard-(\d+)-of-(\d+)\.json$")
SUMMARY_SCHEMA = 1  # bump when a field below changes meaning
SHARD_KINDS = ("generate", "judge")
COMPLETE, INCOMPLETE = "COMPLETE", "INCOMPLETE"  # consolidation.json's status
# The week's ledgers a generate leg records in its summary (``files``), so consolidate can tell a file changed or
# cut after the leg finished from the one the leg wrote.
GENERATE_LEG_FILES = (TRUTH_FILE, CHECKS_FILE, MANIFEST_FILE, RETRIES_FILE, RECONCILIATION_FILE)
JUDGE_LEG_FILES = (SCORES_FILE, JUDGE_SKIPS_FILE, PASS_FILE, JUDGE_BATCHES_FILE)  # what a judge merge reads of a leg


class ShardError(ValueError):
    """A shard spec or summary that cannot be read; the message names it and how to fix it."""


@dataclass(frozen=True)
class Shard:
    """Leg ``index`` of ``count`` (1-based: ``--shard 1/3`` … ``--shard 3/3``)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 1 <= self.index <= self.count:
            raise ShardError(f"shard {self.index}/{self.count}: use i/N with 1 ≤ i ≤ N (e.g. --shard 1/3)")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def summary_name(self) -> str:
        """``shard-i-of-N.json``."""
        return SHARD_SUMMARY_FORMAT.format(index=self.index, count=self.count)

    def holds(self, run_id: str) -> bool:
        """Whether this leg owns ``run_id`` (a hash of the id alone: stable whatever the other legs do)."""
        return owner(run_id, self.count) == self.index

    def select(self, run_ids: Iterable[str]) -> list[str]:
        """The ids of ``run_ids`` this leg owns, in their order."""
        return [r for r in run_ids if self.holds(r)]


def owner(run_id: str, count: int) -> int:
    """The 1-based shard of ``count`` that owns ``run_id``."""
    digest = hashlib.sha256(str(run_id).encode("utf-8")).hexdigest()
    return int(digest, 16) % count + 1


def parse_shard(text: str) -> Shard:
    """``"2/3"`` → ``Shard(2, 3)``.

    Raises:
        ShardError: not ``i/N`` with ``1 ≤ i ≤ N`` (one line saying so).
    """
    match = SHARD_RE.match(str(text).strip())
    if not match:
        raise ShardError(f"{text!r}: a shard is i/N, e.g. 1/3 (i from 1 to N)")
    return Shard(int(match.group(1)), int(match.group(2)))


def write_summary(out_dir: str | Path, shard: Shard, kind: str, fields: Mapping[str, Any]) -> Path:
    """Write ``OUT_DIR/shard-i-of-N.json`` (atomically; a rerun of the leg replaces it).

    Args:
        out_dir: the leg's run directory.
        shard: the leg.
        kind: ``generate`` or ``judge``.
        fields: what the leg observed (expected, observed, written, retries, provenance …).
    """
    if kind not in SHARD_KINDS:
        raise ShardError(f"shard summary kind {kind!r}: use one of {', '.join(SHARD_KINDS)}")
    path = Path(out_dir) / shard.summary_name
    atomic_write_json(path, {"schema": SUMMARY_SCHEMA, "kind": kind, "shard": str(shard), "index": shard.index,
                             "count": shard.count, **dict(fields)})
    return path


def read_summary(path: str | Path) -> dict[str, Any]:
    """A shard summary, checked against its own file name.

    Raises:
        ShardError: unreadable, not a summary, or its shard differs from its file name (one line naming the file).
    """
    path = Path(path)
    match = SUMMARY_RE.match(path.name)
    if not match:
        raise ShardError(f"{path}: not a shard summary (its name must be shard-i-of-N.json)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ShardError(f"{path}: unreadable shard summary ({exc}) — rerun that leg") from exc
    if not isinstance(data, dict) or data.get("kind") not in SHARD_KINDS:
        raise ShardError(f"{path}: field 'kind' must be one of {', '.join(SHARD_KINDS)} — rerun that leg")
    if (data.get("index"), data.get("count")) != (int(match.group(1)), int(match.group(2))):
        raise ShardError(f"{path}: fields 'index'/'count' ({data.get('index')}/{data.get('count')}) disagree with "
                         "its file name — the file was renamed or edited; rerun that leg")
    return data


def summaries_in(folder: str | Path) -> list[Path]:
    """The shard summaries at the top of ``folder``, by name."""
    return sorted(Path(folder).glob(SHARD_SUMMARY_GLOB))


def consolidation_status(run_dir: str | Path) -> str | None:
    """The ``status`` of ``RUN_DIR/consolidation.json`` (written by ``skillbench consolidate``).

    Returns:
        None when the week is no consolidation (no file); else the file's status — ``COMPLETE``, ``INCOMPLETE``,
        or whatever else it says, ``unreadable`` when it cannot be read. Anything but ``COMPLETE`` is a damaged or
        partial merge (the scorecard keeps such a week INCOMPLETE, whatever its reconciliation says).
    """
    path = Path(run_dir) / CONSOLIDATION_FILE
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return "unreadable"
    status = data.get("status") if isinstance(data, dict) else None
    return str(status) if status else "unreadable"


def consolidation_incomplete(run_dir: str | Path | None) -> str:
    """Why a merge of shards is not a complete week ("" when ``run_dir`` is no consolidation, or a COMPLETE one).

    One rule, read by the scorecard: a ``consolidation.json`` whose status is anything but ``COMPLETE`` keeps the
    week INCOMPLETE even if its reconciliation was edited to read complete.
    """
    status = consolidation_status(run_dir) if run_dir is not None else None
    return "" if status in (None, COMPLETE) else f"{CONSOLIDATION_FILE} says the merge of the shards is {status}"


# -- what a leg ran with (shared by the generate and judge summaries) ---------------------------------------
def git_commit(folder: str | Path) -> str:
    """``HEAD`` of the repository holding ``folder``, ``+dirty`` when tracked files differ; "" outside git."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=60)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "HEAD")
    if commit and git("status", "--porcelain", "--untracked-files=no"):
        commit += "+dirty"
    return commit


def file_sha(path: str | Path) -> str:
    """SHA-256 of a file's bytes ("" when it is missing)."""
    path = Path(path)
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


# -- what a leg wrote ---------------------------------------------------------------------------------------
def leg_files(folder: str | Path, names: Iterable[str]) -> dict[str, dict[str, Any]]:
    """What a leg wrote, for its summary's ``files``: each present file's SHA-256 and, for a CSV, its row count.

    A file that is absent has no entry (a week without checks has no ``checks.csv``).
    """
    record: dict[str, dict[str, Any]] = {}
    for name in names:
        path = Path(folder) / name
        if path.is_file():
            entry: dict[str, Any] = {"sha256": file_sha(path)}
            if name.endswith(".csv"):
                entry["rows"] = csv_rows(path)
            record[name] = entry
    return record


def leg_file_problems(folder: str | Path, recorded: Any, names: Iterable[str]) -> dict[str, str]:
    """How the files of a leg differ from what its summary's ``files`` says it wrote (empty when they agree).

    Returns:
        File name → what is wrong with it: recorded but absent, present but not recorded, other bytes (with the
        row counts when they differ: a cut file). A summary without a ``files`` record at all is keyed by its own
        name, :data:`SUMMARY_FILES_KEY`.
    """
    if not isinstance(recorded, dict):
        return {SUMMARY_FILES_KEY: "records no 'files' (a leg of an older skillbench?)"}
    problems: dict[str, str] = {}
    now = leg_files(folder, names)
    for name in names:
        was, is_ = recorded.get(name), now.get(name)
        if was is None and is_ is None:
            continue
        if not isinstance(was, dict):
            problems[name] = "is there but the leg's summary records no such file (added after the leg finished)"
        elif is_ is None:
            problems[name] = "is missing, the leg's summary records it (removed after the leg finished)"
        elif is_["sha256"] != was.get("sha256"):
            rows = f" ({is_['rows']} rows, the summary says {was.get('rows')})" if "rows" in is_ and \
                is_["rows"] != was.get("rows") else ""
            problems[name] = f"is not the file the leg's summary recorded{rows}: changed or cut after the leg finished"
    return problems


SUMMARY_FILES_KEY = "shard summary"


def csv_rows(path: str | Path) -> int:
    """The number of CSV records after the header (quoted line breaks do not split a record); -1 when unreadable."""
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return max(sum(1 for _ in csv.reader(fh)) - 1, 0)
    except (OSError, UnicodeDecodeError, csv.Error):
        return -1
