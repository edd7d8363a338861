"""The week's identifiers pass: every graded answer checked against the suite's declared API surfaces.

The pass reads the same answers the rubric judge grades (:func:`skillbench.judge.select_runs`), runs the detector
on each (:func:`check_answer`) and appends one group per answer to ``identifiers.csv``: a ``run`` row, then an
``identifier`` row per identifier. ``identifiers.json`` records what the answers were checked against (the
declared surfaces, whether each was cached, the detector's measured precision, whether ``[gate] fabrication`` is
asked). It is deterministic evidence, so the weekly chain runs it first in the judging stage, before the judge.

Resumable and idempotent like the judge's ledger: an answer with a ``run`` row is not checked again, a torn last
group (a kill mid-write) is dropped and checked again, and a change of what the answers are checked against (another
version of a surface, a surface cached since, another detector format) starts the ledger afresh, since the old rows
were checked against something else. A suite
that declares no surface gets a record that says so and an empty ledger: one note, never an error.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillbench.identifiers._model import UNCHECKED, UNRESOLVED, Identifier
from skillbench.judge import RunAnswer, RunSelection, select_runs
from skillbench.ledgers import (
    CONFIG_FILE,
    IDENTIFIER_ROW,
    IDENTIFIER_RUN_ROW,
    IDENTIFIERS_COLUMNS,
    IDENTIFIERS_FILE,
    IDENTIFIERS_PASS_FILE,
    AppendLedger,
    LedgerConflict,
    atomic_write_json,
    is_cut,
    json_object_or_none,
    read_run_json,
)
from skillbench.runtime import PassContext

RECORD_VERSION = 1
NO_SURFACES = ("the suite declares no API surface ([[api]] in skillbench.toml): no answer was checked for "
               "fabricated identifiers")


@dataclass(frozen=True)
class IdentifierOptions:
    """What the identifiers pass checks.

    Attributes:
        suite_dir: the suite whose ``skillbench.toml`` declares the surfaces (None: ``run.json``'s ``suite_dir``).
        config: a ``skillbench.toml`` elsewhere (``--config``: a repository that commits none, such as qdrant's).
        selection: check only these prompts' and families' answers (empty: all).
        include_plugin: check the plugin arm's answers too (as the judge grades them on request).
        fresh: drop the ledger and check every answer again.
    """

    suite_dir: Path | None = None
    config: Path | None = None
    selection: RunSelection = RunSelection()
    include_plugin: bool = False
    fresh: bool = False


@dataclass(frozen=True)
class IdentifierReport:
    """What one pass did."""

    declared: bool  # the suite declared a surface
    checked: int = 0  # answers checked by this pass
    kept: int = 0  # answers checked by an earlier pass, kept
    identifiers: int = 0  # identifiers this pass found
    unresolved: int = 0
    unchecked: int = 0
    note: str = ""

    def line(self) -> str:
        """The pass in one line, for the log and the command."""
        if not self.declared:
            return self.note
        return (f"identifiers: {self.checked} answer(s) checked, {self.kept} kept from an earlier pass; "
                f"{self.identifiers} identifier(s), {self.unresolved} unresolved, {self.unchecked} unchecked"
                + (f" — {self.note}" if self.note else ""))


class IdentifierPassError(ValueError):
    """The pass cannot start (a config that cannot be read, a ledger that cannot be resumed); one line."""


def _config(run_dir: Path, options: IdentifierOptions) -> tuple[Any, Path | None, str, bool]:
    """The suite's config, the suite folder, a note when the week names no suite to read it from, and whether the
    config is the suite folder's own file (else a ``--config`` file, given or recorded in run.json)."""
    from skillbench.suite import ConfigError, load_config, read_config, week_config

    try:
        if options.config is not None:
            return read_config(options.config), options.suite_dir or Path(options.config).parent, "", False
        if options.suite_dir is not None and Path(options.suite_dir).is_dir():
            return load_config(options.suite_dir), Path(options.suite_dir), "", True
        found = week_config(read_run_json(run_dir))  # the --config file the week was generated with, if any
        if found is None:
            why = (f"the week names no suite folder (run.json's suite_dir): pass --suite SUITE_DIR, the folder whose "
                   f"{CONFIG_FILE} declares [[api]], or --config FILE, to check its answers")
            return None, None, why, False
        return found[0], found[1], "", not read_run_json(run_dir).get("config_file")
    except ConfigError as exc:
        raise IdentifierPassError(str(exc)) from exc


def surface_rows(surfaces: Any) -> list[dict[str, Any]]:
    """Each declared surface as the record keeps it: ``surface`` (``name==version``), ``cached`` (its API was read,
    so its identifiers can resolve; else they read unchecked), and the detector's measured precision on it with
    its 95 % lower bound and the flags it was measured on (None where no benchmark measured it)."""
    from skillbench.identifiers import measured_precision

    rows = []
    for surface in surfaces.by_module.values():
        measured = measured_precision(surface.label)
        rows.append({"surface": surface.label, "language": surface.spec.language,
                     "cached": surface.objects is not None,
                     "precision": None if measured is None else measured.precision,
                     "precision_low": None if measured is None else measured.precision_low,
                     "precision_flags": None if measured is None else measured.true_flags + measured.false_flags})
    return rows


def _fingerprint(rows: Sequence[dict[str, Any]]) -> str:
    """What a ledger's rows were checked against: the detector's format, the surfaces and whether each was cached
    (not the precision, which a new benchmark run changes without changing a verdict of the detector)."""
    from skillbench.identifiers import DETECTOR_FORMAT

    key = [DETECTOR_FORMAT, sorted((r["surface"], r["cached"]) for r in rows)]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]


def _identity(run: RunAnswer) -> dict[str, str]:
    return {"run_id": run.run_id, "prompt": run.prompt, "skill_family": run.skill, "model": run.model,
            "condition": run.condition, "rep": str(run.rep)}


def answer_rows(run: RunAnswer, found: Sequence[Identifier]) -> list[dict[str, str]]:
    """One answer's group: its ``run`` row, then a row per identifier."""
    ident = _identity(run)
    rows = [ident | {"row": IDENTIFIER_RUN_ROW}]
    for i in found:
        rows.append(ident | {"row": IDENTIFIER_ROW, "text": i.text, "target": i.target, "kind": i.kind,
                             "language": i.language, "status": i.status, "surface": i.surface,
                             "quote": i.quote[:200]})
    return rows


def _open_ledger(path: Path, fresh: bool) -> tuple[AppendLedger, set[str]]:
    """The ledger, repaired (a torn last group dropped, to be checked again), and the answers it holds."""
    ledger = AppendLedger(path, IDENTIFIERS_COLUMNS, key="run_id")
    if fresh:
        ledger.rewrite([])
        return ledger, set()
    try:
        rows = ledger.read()
    except LedgerConflict as exc:
        raise IdentifierPassError(f"{exc} (skillbench identifiers RUN_DIR --fresh)") from exc
    done = {r["run_id"] for r in rows if r["row"] == IDENTIFIER_RUN_ROW}
    if is_cut(path) or any(r["row"] != IDENTIFIER_RUN_ROW and r["run_id"] not in done for r in rows):
        ledger.rewrite([r for r in rows if r["run_id"] in done])
    return ledger, done


def _write_record(run_dir: Path, record: dict[str, Any]) -> None:
    atomic_write_json(run_dir / IDENTIFIERS_PASS_FILE, record)


def check_week(run_dir: str | Path, options: IdentifierOptions, ctx: PassContext) -> IdentifierReport:
    """Check every graded answer of the week for fabricated identifiers (resumes); what ``skillbench identifiers``
    and the judging stage run. The caller holds the week's lock and says :meth:`IdentifierReport.line`; ``ctx.log``
    gets the surfaces' warnings (one not cached: its identifiers read unchecked).

    Raises:
        IdentifierPassError: the suite's config cannot be read, or the ledger is damaged before its last line.
        skillbench.identifiers.SurfaceError: a declared surface that cannot be read (one line naming the field).
        skillbench.ledgers.LedgerError: the week's manifest is missing or older than its run folders.
    """
    from skillbench.identifiers import check_answer, load_surfaces

    run_dir = Path(run_dir)
    config, suite_dir, why_not, own = _config(run_dir, options)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    gate = bool(config is not None and config.gate.fabrication)
    # the suite folder when there is one: a surface's "not cached" warning then names the command that caches it
    source = suite_dir if own and suite_dir is not None else config
    surfaces = load_surfaces(source) if config is not None else None
    for warning in surfaces.warnings if surfaces is not None else ():
        ctx.log(f"identifiers: {warning}")
    rows = surface_rows(surfaces) if surfaces is not None else []
    record: dict[str, Any] = {"version": RECORD_VERSION, "checked_at": stamp, "surfaces": rows,
                              "fingerprint": _fingerprint(rows), "gate_fabrication": gate,
                              "suite_dir": str(suite_dir or ""), "note": why_not or ("" if rows else NO_SURFACES)}
    path = run_dir / IDENTIFIERS_FILE
    if not rows:  # nothing to check against: the record says why, and no answer reads as checked
        if path.exists():
            path.unlink()
        _write_record(run_dir, record)
        return IdentifierReport(declared=False, note=f"identifiers: {record['note']}")
    earlier = json_object_or_none(run_dir / IDENTIFIERS_PASS_FILE) or {}
    stale = bool(earlier) and earlier.get("fingerprint") != record["fingerprint"]
    ledger, done = _open_ledger(path, options.fresh or stale)
    _write_record(run_dir, record | {"complete": False})  # a pass killed from here on reads as unfinished
    runs, _skips = select_runs(run_dir, include_plugin=options.include_plugin, selection=options.selection)
    todo = [r for r in runs if r.run_id not in done]
    counts = {"identifiers": 0, UNRESOLVED: 0, UNCHECKED: 0}
    for run in todo:
        found = check_answer(run.answer, surfaces)
        ledger.append(answer_rows(run, found))  # one write per answer: a kill tears at most the last one
        counts["identifiers"] += len(found)
        counts[UNRESOLVED] += sum(i.status == UNRESOLVED for i in found)
        counts[UNCHECKED] += sum(i.status == UNCHECKED for i in found)
    uncached = [r["surface"] for r in rows if not r["cached"]]
    note = "; ".join(
        ([f"not cached, so their identifiers read unchecked: {', '.join(uncached)}"] if uncached else [])
        + ([] if runs else ["the week has no graded answer in its run folders (a week of ledgers only, like "
                            "qdrant's published ones, has none to check)"]))
    _write_record(run_dir, record | {"complete": True, "answers": len(done & {r.run_id for r in runs}) + len(todo),
                                     "note": note})
    report = IdentifierReport(declared=True, checked=len(todo), kept=len(runs) - len(todo),
                              identifiers=counts["identifiers"], unresolved=counts[UNRESOLVED],
                              unchecked=counts[UNCHECKED], note=note + (" (started afresh: the declared surfaces "
                                                                         "changed)" if stale else ""))
    return report

