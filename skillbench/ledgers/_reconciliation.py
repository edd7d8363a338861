"""Reconciliation: every planned run accounted for, or the week says what is missing — one rule.

``reconciliation.json`` (written by generation) compares three lists — planned (``plan.csv``), observed
(finished run folders) and written (``manifest.csv`` rows) — and lists every run that is missing, unexpected,
duplicated or unwritten, every run a ``--max-total-usd`` cap kept from starting, every run the pass kept out on
purpose (``limited``: outside ``--families``/``--prompts``, past ``--limit``, another shard's), and every leg
stopped as a systemic failure. A limited run is never also listed as missing: it is kept for a later pass of the
same run key, which is not something gone wrong. Shape::

    {"run_key": str, "expected": int, "observed": int, "written": int,
     "missing": [run_id], "unexpected": [run_id], "duplicate": [run_id], "unwritten": [run_id],
     "capped": [run_id], "limited": [run_id], "not_started": [run_id], "stopped_legs": ["model|condition"],
     "checks_expected": int, "checks_missing": ["run_id/check_id"],   # only for weeks with checks
     "families": {family: "complete" | "limited" | "incomplete"},   # when the plan names each run's family
     "invalid_families": {family: [validator line]},   # only when a family's spec failed validation
     "accounted": bool,   # nothing unexplained (missing runs are all capped/not started)
     "complete": bool}    # accounted, and every planned run was run and written exactly once

Completeness is also per skill family (``families``, :meth:`Reconciliation.family_complete`): a family whose
planned runs were all run and written once gets its verdict whatever else the week left for later, so a pass over
``--families A B`` decides A and B. A family whose eval or prompt failed validation was never planned; it is listed
in ``invalid_families`` with the validator's lines, and a week with one is never complete.

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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from skillbench.vocab import FAMILY_COMPLETE, FAMILY_INCOMPLETE, FAMILY_LIMITED


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
    families: dict[str, str] = {}  # family -> complete / limited / incomplete (empty: not known per family)
    invalid_families: dict[str, list[str]] = {}  # family -> the validator's lines: never planned, never complete
    accounted: bool | None = None
    complete: bool
    # What :func:`cross_check` found wrong with the files on disk; read-time only, never written to the file.
    findings: list[str] = Field(default_factory=list, exclude=True)

    LISTS: ClassVar[tuple[str, ...]] = ("missing", "unexpected", "duplicate", "capped", "unwritten", "limited",
                                        "not_started", "stopped_legs", "checks_missing")

    @property
    def is_complete(self) -> bool:
        """True only when the flag says so and nothing is listed (the two disagreeing fails closed)."""
        return (self.complete and not self.findings and not self.invalid_families
                and not any(getattr(self, name) for name in self.LISTS))

    @property
    def damaged(self) -> bool:
        """Something no family can be held apart from: a run outside the plan, a duplicate or unwritten run, a
        check row missing, or the files disagreeing with the reconciliation (:func:`cross_check`'s findings)."""
        return bool(self.findings or self.unexpected or self.duplicate or self.unwritten or self.checks_missing)

    def family_complete(self, family: str) -> bool:
        """Every planned run of ``family`` was run and written once, and nothing in the week is damaged.

        A reconciliation that does not say per family (an older week, one rebuilt from ``plan.csv``) decides for
        the whole week, as before: complete only when the week is.
        """
        if family in self.invalid_families or self.damaged:
            return False
        if not self.families:
            return self.is_complete
        return self.families.get(family) == FAMILY_COMPLETE

    @property
    def accounted_for(self) -> bool:
        """Nothing unexplained: every planned run was run, or kept out of the pass and listed why."""
        return bool(self.accounted) and not self.findings

    @property
    def is_subset(self) -> bool:
        """A pass over part of the suite (``--families``/``--prompts``), whose other runs are kept for later."""
        return bool((self.model_extra or {}).get("selection")) and bool(self.limited)

    def to_json(self) -> dict:
        """The file's content, in the documented key order (extra keys such as ``note`` last).

        The check keys appear only for a week with checks, so a week without them writes today's file.
        """
        data = self.model_dump(exclude_none=True)
        if self.checks_expected is None and not self.checks_missing:
            data.pop("checks_missing", None)
        for key in ("families", "invalid_families"):  # only when known, so older weeks' files read the same
            if not data.get(key):
                data.pop(key, None)
        return data


@dataclass(frozen=True)
class PassAccount:
    """What a generate pass says about the runs it did not finish: kept from starting (and why), or stopped."""

    capped: Iterable[str] = ()
    limited: Iterable[str] = ()
    not_started: Iterable[str] = ()
    stopped_legs: Iterable[str] = ()  # ``model|condition`` legs stopped as a systemic failure
    # Families the pass left out because their spec failed validation (never planned), with the validator's lines.
    invalid_families: Mapping[str, Iterable[str]] = field(default_factory=dict)


NOTHING_KEPT = PassAccount()


def reconcile_runs(
    planned: Iterable[str] | Mapping[str, str],
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
        planned: run ids of the plan; a mapping of run id to skill family also gives each family's state.
        observed: run ids whose run folder holds a finished run.
        written: run ids of the manifest's rows, one per row (a repeated id is a duplicate).
        run_key: the week's run key, recorded.
        account: the pass's own account: planned runs kept from starting (capped, limited, not started), the
            legs it stopped and the families it left out for an invalid spec.
        checks_expected: (run_id, check_id) rows the complete runs owe ``checks.csv``; None for a week without
            checks.
        checks_written: (run_id, check_id) rows ``checks.csv`` holds.
        note: recorded as an extra key (e.g. when the reconciliation was rebuilt from ``plan.csv``).
    """
    families = dict(planned) if isinstance(planned, Mapping) else {}
    expected, observed, written = list(planned), list(observed), list(written)
    capped, limited, not_started = list(account.capped), list(account.limited), list(account.not_started)
    stopped_legs = account.stopped_legs
    explained = set(capped) | set(limited) | set(not_started)
    # A limited run was kept out on purpose and is listed as such, never also as missing.
    missing = sorted(set(expected) - set(observed) - set(limited))
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
    broken = set(missing) | set(duplicate) | set(unwritten) | {row.split("/", 1)[0] for row in checks_missing}
    return Reconciliation(
        run_key=run_key, expected=len(expected), observed=len(observed), written=len(set(written)),
        missing=missing, unexpected=unexpected, duplicate=duplicate, unwritten=unwritten, capped=sorted(capped),
        limited=sorted(limited), not_started=sorted(not_started), stopped_legs=stopped,
        families=family_states(families, broken=broken, limited=set(limited)),
        invalid_families={f: list(lines) for f, lines in sorted(account.invalid_families.items())},
        accounted=accounted, complete=accounted and not missing and not limited, **extra)


def family_states(families: Mapping[str, str], *, broken: set[str], limited: set[str]) -> dict[str, str]:
    """Each family's state from its runs: ``incomplete`` when one is missing, capped, not started, duplicated,
    unwritten or owes a check row (``broken``); else ``limited`` when one was kept out of the pass; else
    ``complete``."""
    rank = {FAMILY_COMPLETE: 0, FAMILY_LIMITED: 1, FAMILY_INCOMPLETE: 2}  # a family is as far as its worst run
    states: dict[str, str] = {}
    for run, family in families.items():
        state = FAMILY_INCOMPLETE if run in broken else FAMILY_LIMITED if run in limited else FAMILY_COMPLETE
        if rank[state] >= rank[states.get(family, FAMILY_COMPLETE)]:
            states[family] = state
    return dict(sorted(states.items()))


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
