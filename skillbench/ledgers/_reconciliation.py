"""Reconciliation: every planned run accounted for, or the week says what is missing — one rule.

``reconciliation.json`` (written by generation) compares three lists — planned (``plan.csv``), observed
(finished run folders) and written (``manifest.csv`` rows) — and lists every run that is missing, unexpected,
duplicated or unwritten, every run a ``--max-total-usd`` cap or ``--limit`` kept from starting, and every leg
stopped as a systemic failure. Shape::

    {"run_key": str, "expected": int, "observed": int, "written": int,
     "missing": [run_id], "unexpected": [run_id], "duplicate": [run_id], "unwritten": [run_id],
     "capped": [run_id], "limited": [run_id], "not_started": [run_id], "stopped_legs": ["model|condition"],
     "checks_expected": int, "checks_missing": ["run_id/check_id"],   # only for weeks with checks
     "accounted": bool,   # nothing unexplained (missing runs are all capped/limited/not started)
     "complete": bool}    # accounted, and every planned run was run and written exactly once

:func:`reconcile_runs` is the only place the rule is written: generation calls it on the run folders, and the
scorecard calls it on ``plan.csv`` and the manifest when a week lost its ``reconciliation.json``. Other keys in
the file are kept and ignored; a week is complete only when ``complete`` is true *and* every list is empty
(fail closed when the two disagree). For a week with deterministic checks, every complete run owes
``checks.csv`` one row per check its metadata recorded; a row that is missing makes the week incomplete.

:func:`cross_check` holds a reconciliation against the ledgers as they are *now*: a ``manifest.csv`` cut after
generation wrote ``reconciliation.json``, a manifest row whose run is not in ``plan.csv``, or a run folder the
manifest does not list makes the week incomplete, with a line saying why (``findings``, never written to the
file: they describe the files on disk, not what generation saw).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field


class Reconciliation(BaseModel):
    """``reconciliation.json``: every planned run accounted for (see the module docstring for the shape)."""

    model_config = ConfigDict(extra="allow")

    run_key: str | None = None
    expected: int
    observed: int
    written: int
    missing: list[str] = []
    unexpected: list[str] = []
    duplicate: list[str] = []
    unwritten: list[str] = []
    capped: list[str] = []
    limited: list[str] = []
    not_started: list[str] = []
    stopped_legs: list[str] = []
    checks_expected: int | None = None  # check rows the complete runs owe checks.csv (None: no checks)
    checks_missing: list[str] = []  # "run_id/check_id" rows checks.csv lacks
    accounted: bool | None = None
    complete: bool
    # What :func:`cross_check` found wrong with the files on disk; read-time only, never written to the file.
    findings: list[str] = Field(default_factory=list, exclude=True)

    LISTS: ClassVar[tuple[str, ...]] = ("missing", "unexpected", "duplicate", "capped", "unwritten", "limited",
                                        "not_started", "stopped_legs", "checks_missing")

    @property
    def is_complete(self) -> bool:
        """True only when the flag says so and nothing is listed (the two disagreeing fails closed)."""
        return self.complete and not self.findings and not any(getattr(self, name) for name in self.LISTS)

    def to_json(self) -> dict:
        """The file's content, in the documented key order (extra keys such as ``note`` last).

        The check keys appear only for a week with checks, so a week without them writes today's file.
        """
        data = self.model_dump(exclude_none=True)
        if self.checks_expected is None and not self.checks_missing:
            data.pop("checks_missing", None)
        return data


@dataclass(frozen=True)
class PassAccount:
    """What a generate pass says about the runs it did not finish: kept from starting (and why), or stopped."""

    capped: Iterable[str] = ()
    limited: Iterable[str] = ()
    not_started: Iterable[str] = ()
    stopped_legs: Iterable[str] = ()  # ``model|condition`` legs stopped as a systemic failure


NOTHING_KEPT = PassAccount()


def reconcile_runs(
    planned: Iterable[str],
    *,
    observed: Iterable[str],
    written: Iterable[str],
    run_key: str | None = None,
    account: PassAccount = NOTHING_KEPT,
    checks_expected: Iterable[tuple[str, str]] | None = None,
    checks_written: Iterable[tuple[str, str]] = (),
    note: str | None = None,
) -> Reconciliation:
    """Account for every planned run.

    Args:
        planned: run ids of the plan.
        observed: run ids whose run folder holds a finished run.
        written: run ids of the manifest's rows, one per row (a repeated id is a duplicate).
        run_key: the week's run key, recorded.
        account: the pass's own account: planned runs kept from starting (capped, limited, not started) and the
            legs it stopped.
        checks_expected: (run_id, check_id) rows the complete runs owe ``checks.csv``; None for a week without
            checks.
        checks_written: (run_id, check_id) rows ``checks.csv`` holds.
        note: recorded as an extra key (e.g. when the reconciliation was rebuilt from ``plan.csv``).
    """
    expected, observed, written = list(planned), list(observed), list(written)
    capped, limited, not_started = list(account.capped), list(account.limited), list(account.not_started)
    stopped_legs = account.stopped_legs
    explained = set(capped) | set(limited) | set(not_started)
    missing = sorted(set(expected) - set(observed))
    unexpected = sorted(set(observed) - set(expected))
    duplicate = sorted(r for r, n in Counter(written).items() if n > 1)
    unwritten = sorted(set(observed) - set(written))
    stopped = sorted(stopped_legs)
    expected_checks = set(checks_expected) if checks_expected is not None else None
    checks_missing = sorted(f"{r}/{c}" for r, c in (expected_checks or set()) - set(checks_written))
    accounted = (set(missing) <= explained and not unexpected and not duplicate and not unwritten and not stopped
                 and not checks_missing)
    extra: dict = {"note": note} if note else {}
    if expected_checks is not None:
        extra |= {"checks_expected": len(expected_checks), "checks_missing": checks_missing}
    return Reconciliation(
        run_key=run_key, expected=len(expected), observed=len(observed), written=len(set(written)),
        missing=missing, unexpected=unexpected, duplicate=duplicate, unwritten=unwritten, capped=sorted(capped),
        limited=sorted(limited), not_started=sorted(not_started), stopped_legs=stopped, accounted=accounted,
        complete=accounted and not missing, **extra)


def cross_check(
    recon: Reconciliation,
    *,
    written: Iterable[str],
    planned: Iterable[str] | None = None,
    folders: Iterable[str] = (),
    checks_missing: Iterable[tuple[str, str]] = (),
    truth: Iterable[str] = (),
    source: str = "reconciliation.json",
) -> Reconciliation:
    """Hold a reconciliation against the week's files as they are now (fail closed on any disagreement).

    Args:
        recon: what generation recorded (or what :func:`reconcile_runs` rebuilt from the plan).
        written: run ids of the manifest's rows now, one per row.
        planned: run ids of ``plan.csv``, when there is one.
        folders: run ids of the run folders now in the run directory.
        checks_missing: (run_id, check_id) rows the complete runs owe ``checks.csv`` and it lacks now.
        truth: what is wrong with ``truth.csv`` now (:func:`skillbench.ledgers._truth.truth_findings`): a sim
            week whose answer key is cut or padded must not be scored against it as a complete week.
        source: how the reconciliation's own numbers are named in a finding.

    Returns:
        A copy whose lists also hold the manifest's duplicate rows, the rows and folders that are not in the plan
        (``unexpected``) and the folders the manifest does not list (``unwritten``); ``findings`` says when the
        manifest holds another number of runs than the reconciliation says were written.
    """
    written = list(written)
    rows = set(written)
    findings = list(recon.findings)
    if len(rows) != recon.written:
        findings.append(f"manifest.csv lists {len(rows)} runs, {source} says {recon.written} were written")
    duplicate = set(recon.duplicate) | {r for r, n in Counter(written).items() if n > 1}
    folders = set(folders)
    unwritten = set(recon.unwritten) | (folders - rows)
    unexpected = set(recon.unexpected)
    if planned is not None:
        unexpected |= (rows | folders) - set(planned)
    # checks.csv now decides: it is rebuilt only from the runs' committed checks.json, so rows present now are
    # the runs' own results, and rows absent now are missing whatever generation saw.
    lacking = sorted(f"{r}/{c}" for r, c in checks_missing)
    if lacking:
        findings.append(f"checks.csv lacks {len(lacking)} check row(s) of complete runs (first: {lacking[0]}) — "
                        "run `skillbench signals` to rebuild it from the run folders")
    findings += [f"truth.csv {what} — generate the week again" for what in truth]
    return recon.model_copy(update={
        "duplicate": sorted(duplicate), "unwritten": sorted(unwritten), "unexpected": sorted(unexpected),
        "checks_missing": lacking, "findings": findings,
    })
