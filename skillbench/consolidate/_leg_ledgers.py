"""The ledgers of generate legs: every file a leg wrote is the file it wrote, whole, holding exactly its own runs.

A leg's ledgers come from a CI job: an artifact can be cut in transit, edited, or replaced by a job that ran
content under evaluation. The merge takes nothing on trust. Each leg's files are held three ways, every problem
blocking (one line naming the leg, the file and what is wrong; nothing is written):

* against the leg's summary — ``shard-i-of-N.json`` records each ledger's SHA-256 and row count (``files``,
  :func:`skillbench.ledgers.leg_files`) and its counts agree with its own run lists;
* against the rows its runs owe — ``truth.csv`` one row per rubric item and check of the final attempt of each
  complete run the endpoint answered (:func:`skillbench.ledgers.owed_truth_rows`), ``checks.csv`` one per check
  each complete run recorded (:func:`skillbench.ledgers.expected_check_rows`), each row once, and no row of a run
  outside the leg's slice of the plan (in ``truth.csv``, ``checks.csv``, ``manifest.csv`` and ``retries.json``);
* against the reconciliation rule — ``reconciliation.json`` must say what :func:`skillbench.ledgers.reconcile_runs`
  says of the leg's folder now (a leg claiming every run accounted for while runs are missing is refused).

A file cut mid-row (its last line has no line end: every writer of these files ends each row with one) is
refused before it is parsed, so a cut that happens to parse is not read as a shorter, valid ledger.

A leg holds no symbolic link where the merge reads or copies (its ledgers, its run folders; in ``_placebo/`` and
``_versions/`` a link must stay inside its own entry): a link is followed by every reader of the merged week, so a
link to a host file would bring that file into the week's ledgers, the judge's prompt and the report
(:func:`link_problems`, for generate and judge legs alike).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillbench.consolidate._generation_checks import LegRuns, first_ids
from skillbench.consolidate._problems import Problem
from skillbench.ledgers import (
    CHECKS_FILE,
    GENERATE_LEG_FILES,
    MANIFEST_FILE,
    PLACEBO_DIR,
    PLAN_FILE,
    RECONCILIATION_FILE,
    RETRIES_FILE,
    RUN_FILE,
    SLUGS_FILE,
    SUMMARY_FILES_KEY,
    TRUTH_FILE,
    VERSIONS_DIR,
    LedgerError,
    PassAccount,
    answered_run_ids,
    expected_check_rows,
    is_cut,
    json_object_or_none,
    leg_file_problems,
    missing_check_rows,
    owed_truth_rows,
    read_checks,
    read_manifest,
    read_manifest_ids,
    read_reconciliation,
    read_truth,
    reconcile_runs,
    truth_findings,
)
from skillbench.vocab import SIMULATED

# What reconciliation.json must say of the leg's folder as it is (the fields the merge's own reconciliation reads).
RECONCILED_FIELDS = ("expected", "observed", "written", "missing", "unexpected", "duplicate", "unwritten",
                     "checks_missing", "accounted", "complete")
SHOWN_FIELDS = 3  # differing fields named in the line


Found = list[tuple[str, str]]  # (file, what is wrong with it)


def check_leg_ledgers(contributions: Sequence[LegRuns], plan_ids: Sequence[str]) -> list[Problem]:
    """Hold every generate leg's ledgers against its summary, the rows its runs owe and the reconciliation rule.

    One problem per leg and file: what the file holds, when that is wrong, else how it differs from the summary's
    record of it.
    """
    problems: list[Problem] = []
    for part in contributions:
        leg, own = part.leg, set(part.expected)
        linked = link_problems(leg.folder, part.folders, [*GENERATE_LEG_FILES, PLAN_FILE, RUN_FILE, SLUGS_FILE],
                               [PLACEBO_DIR, VERSIONS_DIR])
        if linked:  # nothing under the leg is read through a link
            problems += [Problem(leg.label, f"{what} — rerun the leg") for what in linked]
            continue
        found = (_summary_counts(leg.summary) + _truth(part, own) + _checks(part, own) + _manifest(leg.folder, own)
                 + _retries(leg.folder, own, leg.field("retries")))
        named = {name for name, _ in found}  # a file whose content is wrong: that line says more than its digest
        if not named & {CHECKS_FILE, MANIFEST_FILE}:  # the reconciliation is held to those: their line says why
            found += _reconciliation(part, plan_ids)
            named = {name for name, _ in found}
        recorded = leg_file_problems(leg.folder, leg.field("files"), GENERATE_LEG_FILES)
        found += [(name, what) for name, what in recorded.items() if name not in named]
        problems += [Problem(leg.label, f"{name}: {what} — rerun the leg") for name, what in found if what]
    return problems


def link_problems(folder: Path, run_ids: Sequence[str], top: Sequence[str],
                  trees: Sequence[str] = ()) -> list[str]:
    """The symbolic links of a leg where the merge reads or copies (one phrase; empty when there is none).

    Args:
        folder: the leg's folder.
        run_ids: its run folders the merge copies (every link inside them counts).
        top: the ledgers at its top the merge reads.
        trees: folders of entries (``_placebo``, ``_versions``) where a link may point inside its own entry only.
    """
    links = [name for name in top if (folder / name).is_symlink()]
    for run_id in run_ids:
        run = folder / run_id
        links += [str(p.relative_to(folder)) for p in ([run] if run.is_symlink() else sorted(run.rglob("*")))
                  if p.is_symlink()]
    for sub in trees:
        base = folder / sub
        if base.is_symlink():
            links.append(sub)
            continue
        for entry in sorted(base.iterdir()) if base.is_dir() else []:
            root = entry.resolve()
            links += [str(p.relative_to(folder)) for p in [entry, *sorted(entry.rglob("*"))]
                      if p.is_symlink() and (p == entry or not p.resolve().is_relative_to(root))]
    if not links:
        return []
    return [f"holds {len(links)} symbolic link(s) where the merge reads or copies ({first_ids(links)}): a leg's "
            "files are the files it wrote, never links (a link would bring what it points to into the week)"]


def _summary_counts(summary: Any) -> Found:
    found = []
    for count, listed in (("expected", "expected_runs"), ("observed", "observed_runs")):
        runs = summary.get(listed)
        if not isinstance(runs, list) or summary.get(count) != len(runs):
            found.append((SUMMARY_FILES_KEY, f"says {count} {summary.get(count)!r} but lists "
                          f"{len(runs) if isinstance(runs, list) else 'no'} {listed} (changed after the leg "
                          "finished)"))
    return found


def _cut(path: Path) -> Found:
    return [(path.name, "is cut mid-row (its last line has no line end)")] if is_cut(path) else []


def _truth(part: LegRuns, own: set[str]) -> Found:
    folder, leg = part.leg.folder, part.leg
    path = folder / TRUTH_FILE
    simulated = SIMULATED in (leg.field("endpoints") or [])
    if not path.is_file():
        return ([(TRUTH_FILE, f"is missing, yet the leg's {len(part.complete)} complete runs ran on the simulated "
                              "endpoint and owe its rows")] if simulated and part.complete else [])
    if cut := _cut(path):
        return cut
    try:
        truth = read_truth(path)
        # the complete runs the endpoint answered, as the leg's manifest (held to its record and folder) says
        answered = set(answered_run_ids(read_manifest(folder / MANIFEST_FILE)))
        owed = owed_truth_rows(folder, [r for r in part.complete if r in answered])
    except LedgerError as exc:
        return [(TRUTH_FILE, _unreadable(exc, path))]
    assert truth is not None  # the file is there
    return [(TRUTH_FILE, what) for what in truth_findings(truth, owed, allowed=own)]


def _checks(part: LegRuns, own: set[str]) -> Found:
    path = part.leg.folder / CHECKS_FILE
    if cut := _cut(path):
        return cut
    try:
        checks = read_checks(path)  # absent: no rows (then any owed row is missing)
        owed = expected_check_rows(part.leg.folder, part.complete)
    except LedgerError as exc:
        return [(CHECKS_FILE, _unreadable(exc, path))]
    found = []
    foreign = sorted(set(checks["run_id"].astype(str)) - own)
    if foreign:
        found.append((CHECKS_FILE, f"holds rows of {len(foreign)} run id(s) outside the leg's slice of the plan "
                                   f"({first_ids(foreign)})"))
    lacking = missing_check_rows(checks, owed)
    if lacking:
        runs = sorted({r for r, _ in lacking})
        found.append((CHECKS_FILE, f"lacks {len(lacking)} check row(s) of {len(runs)} complete run(s) "
                                   f"({first_ids(runs)})"))
    return found


def _manifest(folder: Path, own: set[str]) -> Found:
    path = folder / MANIFEST_FILE
    if cut := _cut(path):
        return cut
    try:
        ids = read_manifest_ids(path)
    except LedgerError as exc:
        return [(MANIFEST_FILE, _unreadable(exc, path))]
    found = []
    twice = sorted(r for r, n in Counter(ids).items() if n > 1)
    if twice:
        found.append((MANIFEST_FILE, f"lists {len(twice)} run(s) twice ({first_ids(twice)})"))
    foreign = sorted(set(ids) - own)
    if foreign:
        found.append((MANIFEST_FILE, f"lists {len(foreign)} run(s) outside the leg's slice of the plan "
                                     f"({first_ids(foreign)})"))
    return found


def _retries(folder: Path, own: set[str], recorded: Any) -> Found:
    data = json_object_or_none(folder / RETRIES_FILE)
    if data is None:  # absent (nothing to say), or damaged (check_side_files names it)
        return [(RETRIES_FILE, "")] if (folder / RETRIES_FILE).is_file() else []
    entries = data.get("retried_runs", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        return [(RETRIES_FILE, "field 'retried_runs' is not a list of objects")]
    ids = [str(e.get("run_id", "")) for e in entries]
    found = []
    foreign = sorted(set(ids) - own)
    if foreign:
        found.append((RETRIES_FILE, f"lists retried runs outside the leg's slice of the plan ({first_ids(foreign)})"))
    mine = sum(1 for r in ids if r in own)
    if mine != recorded:
        found.append((RETRIES_FILE, f"lists {mine} retried run(s), the leg's summary says {recorded!r}"))
    return found


def _reconciliation(part: LegRuns, plan_ids: Sequence[str]) -> Found:
    folder = part.leg.folder
    path = folder / RECONCILIATION_FILE
    if path.is_file() and json_object_or_none(path) is None:
        return [(RECONCILIATION_FILE, "")]  # check_side_files names it
    try:
        recon = read_reconciliation(path)
        if recon is None:
            return [(RECONCILIATION_FILE, "is missing (every generate pass writes one)")]
        checks = read_checks(folder / CHECKS_FILE)
        owed = expected_check_rows(folder, part.complete)
        written = read_manifest_ids(folder / MANIFEST_FILE)
    except LedgerError as exc:
        return [(RECONCILIATION_FILE, _unreadable(exc, path))]
    # The leg reconciled every complete run folder it holds; a foreign one is refused by check_generation_runs.
    rebuilt = reconcile_runs(plan_ids, observed=part.complete, written=written,
                             account=PassAccount(recon.capped, recon.limited, recon.not_started, recon.stopped_legs),
                             checks_expected=owed or None,
                             checks_written=zip(checks["run_id"], checks["check_id"], strict=True))
    differ = [name for name in RECONCILED_FIELDS if _norm(getattr(recon, name)) != _norm(getattr(rebuilt, name))]
    if not differ:
        return []
    said = ", ".join(_difference(name, getattr(recon, name), getattr(rebuilt, name)) for name in differ[:SHOWN_FIELDS])
    return [(RECONCILIATION_FILE, f"does not account for the leg's folder: {said}")]


def _unreadable(exc: LedgerError, path: Path) -> str:
    """The reader's line without the path it starts with (the problem names the file already)."""
    text = str(exc)
    for prefix in (f"{path}: ", f"{path.parent}/"):
        text = text.removeprefix(prefix)
    return text


def _norm(value: Any) -> Any:
    return sorted(value) if isinstance(value, list) else value


def _difference(name: str, said: Any, now: Any) -> str:
    """``missing`` omits r1, r2 / ``accounted`` is true, the folder gives false."""
    if isinstance(said, list) and isinstance(now, list):
        omits, extra = sorted(set(now) - set(said)), sorted(set(said) - set(now))
        parts = ([f"omits {first_ids(omits)}"] if omits else []) + ([f"adds {first_ids(extra)}"] if extra else [])
        return f"{name!r} {' and '.join(parts) or 'repeats runs'}"
    return f"{name!r} is {_text(said)}, the folder gives {_text(now)}"


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
