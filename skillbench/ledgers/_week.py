"""A whole week: every ledger of a run directory read at once, held against its reconciliation (:func:`load_week`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pandas as pd

from skillbench.arms import DEFAULT_PAIR, ArmPair, ConditionError
from skillbench.ledgers._checks import empty_checks, expected_check_rows, missing_check_rows, read_checks
from skillbench.ledgers._columns import CALIBRATION_KEY_COLUMNS, PLAN_COLUMNS, RUN_KEYS
from skillbench.ledgers._files import (
    CALIBRATION_FILE,
    CALIBRATION_GRADES_FILE,
    CALIBRATION_SAMPLE_FILE,
    CHECKS_FILE,
    CONSOLIDATION_FILE,
    DECISION_FILE,
    JUDGE_COST_FILE,
    JUDGE_SKIPS_FILE,
    MANIFEST_FILE,
    METADATA_FILE,
    PAIRS_FILE,
    PASS_FILE,
    PLAN_FILE,
    RECONCILIATION_FILE,
    RETRIES_FILE,
    RUN_FILE,
    SCORES_FILE,
    SENTINEL_FILE,
    SENTINEL_GRADES_FILE,
)
from skillbench.ledgers._readers import (
    LedgerError,
    _read_csv,
    _require,
    _to_int,
    empty_scores,
    json_object_or_none,
    read_json_object,
    read_judge_skips,
    read_manifest,
    read_numbers,
    read_pairs,
    read_reconciliation,
    read_scores,
)
from skillbench.ledgers._reconciliation import PassAccount, Reconciliation, cross_check, reconcile_runs
from skillbench.ledgers._run_folder import metadata_or_none, read_judge_cost
from skillbench.ledgers._truth import owed_truth_rows, read_truth, truth_findings
from skillbench.vocab import COMPLETE_STATES


def read_run_json(run_dir: str | Path) -> dict:
    """``RUN_DIR/run.json`` (written by generate), ``{}`` when the week has none (qdrant's layout).

    Raises:
        LedgerError: a ``run.json`` that is not a JSON object.
    """
    return read_json_object(Path(run_dir) / RUN_FILE, "generate writes it; restore it or generate the week "
                            "again") or {}


def week_run_key(run_dir: str | Path) -> str:
    """A week's run key: ``run.json``'s (written by generate), else the folder's name (qdrant's layout)."""
    run_dir = Path(run_dir).resolve()
    return str(read_run_json(run_dir).get("run_key") or run_dir.name)


def week_arms(run_dir: str | Path) -> ArmPair:
    """The (treatment, control) pair a week compares: ``run.json``'s ``arms``, else with-skill vs no-skill.

    Raises:
        LedgerError: an ``arms`` entry that does not name two different arms (the message says which).
    """
    data = read_run_json(run_dir).get("arms")
    if data is None:
        return DEFAULT_PAIR
    if not isinstance(data, dict):
        raise LedgerError(f"{Path(run_dir) / RUN_FILE}: field 'arms' must be an object with treatment and control")
    try:
        return ArmPair.from_json(data)
    except ConditionError as exc:
        raise LedgerError(f"{Path(run_dir) / RUN_FILE}: field 'arms': {exc}") from exc


@dataclass
class WeekLedgers:
    """Everything a scorecard reads from one run directory."""

    run_dir: Path
    manifest: pd.DataFrame
    scores: pd.DataFrame
    judge_skips: pd.DataFrame
    reconciliation: Reconciliation | None = None
    pairs: pd.DataFrame | None = None
    judge_costs: pd.Series = field(default_factory=lambda: pd.Series(dtype=float, name="judge_cost_usd"))
    site_base: str | None = None
    scores_present: bool | None = None  # scores.csv exists (None: unknown, e.g. a WeekLedgers built by hand)
    checks: pd.DataFrame = field(default_factory=empty_checks)  # checks.csv: one row per run x check
    # What --skip-missing dropped from each prompt's spec (from its runs' metadata.json): ``prompt, piece``.
    dropped_pieces: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["prompt", "piece"]))
    arms: ArmPair = DEFAULT_PAIR  # the (treatment, control) pair the week compares (run.json's ``arms``)

    @property
    def run_key(self) -> str:
        """The run key: the reconciliation's when it has one, else :func:`week_run_key`."""
        if self.reconciliation is not None and self.reconciliation.run_key:
            return self.reconciliation.run_key
        return week_run_key(self.run_dir)

    @property
    def site_host(self) -> str | None:
        """Host of the published skills site the runs could reach (``skills.qdrant.tech``), when known."""
        if not self.site_base:
            return None
        return urlsplit(self.site_base).netloc or self.site_base


def read_judge_costs(run_dir: str | Path) -> pd.Series:
    """Judge spend per run from ``RUN_DIR/<run_id>/judge_cost.txt``, indexed by run id (empty when none).

    Raises:
        LedgerError: a ``judge_cost.txt`` that is not a single number.
    """
    costs = {path.parent.name: read_judge_cost(path.parent)
             for path in sorted(Path(run_dir).glob(f"*/{JUDGE_COST_FILE}"))}
    return pd.Series(costs, dtype=float, name="judge_cost_usd")


def read_dropped_pieces(run_dir: str | Path) -> pd.DataFrame:
    """``prompt, piece``: what ``--skip-missing`` dropped from each prompt, once (from its runs' metadata)."""
    rows: set[tuple[str, str]] = set()
    for path in sorted(Path(run_dir).glob(f"*/{METADATA_FILE}")):
        meta = metadata_or_none(path.parent)
        if meta is not None and isinstance(meta.get("dropped"), list):
            rows |= {(str(meta.get("prompt", "")), str(piece)) for piece in meta["dropped"]}
    return pd.DataFrame(sorted(rows), columns=["prompt", "piece"])


def read_site_base(run_dir: str | Path) -> str | None:
    """The published site base recorded in the first run's ``metadata.json``, if any."""
    for path in sorted(Path(run_dir).glob(f"*/{METADATA_FILE}")):
        meta = metadata_or_none(path.parent)
        if meta is None:
            continue
        # The suite's published base names the site people know; a simulated week also records its local one.
        value = meta.get("suite_site_base") or meta.get("site_base")
        if value:
            return str(value)
    return None


def load_week(run_dir: str | Path) -> WeekLedgers:
    """Read every ledger of a run directory.

    The manifest is held against ``reconciliation.json`` and ``plan.csv`` where they exist
    (:func:`~skillbench.ledgers._reconciliation.cross_check`): a manifest with another number of runs than the
    reconciliation says were written, a row or run folder that is not in the plan, or a run folder the manifest
    does not list makes the week incomplete. A week with neither file (qdrant's published layout) has no
    reconciliation (``None``): it is scored as it is and labelled "not reconciled".

    Raises:
        LedgerError: a malformed ledger (the message names file and column), or no ``manifest.csv``.
    """
    run_dir = Path(run_dir).resolve()  # "." must still name the week
    scores_path = run_dir / SCORES_FILE
    manifest = read_manifest(run_dir / MANIFEST_FILE)
    reconciliation = read_reconciliation(run_dir / RECONCILIATION_FILE)
    checks = read_checks(run_dir / CHECKS_FILE)
    owed = missing_check_rows(checks, expected_check_rows(run_dir, complete_run_ids(manifest)))
    planned = read_plan_ids(run_dir)
    truth = _truth_findings(run_dir, manifest, planned)
    if reconciliation is None:
        reconciliation = reconcile_from_plan(run_dir, manifest)
        if reconciliation is not None and (owed or truth):
            reconciliation = cross_check(reconciliation, written=manifest["run_id"].astype(str),
                                         checks_missing=owed, truth=truth, source="plan.csv")
    else:
        reconciliation = cross_check(reconciliation, written=manifest["run_id"].astype(str),
                                     planned=planned, folders=run_folder_ids(run_dir),
                                     checks_missing=owed, truth=truth, source=RECONCILIATION_FILE)
    scores = read_scores(scores_path) if scores_path.is_file() else empty_scores()
    pairs = read_pairs(run_dir / PAIRS_FILE)
    arms = week_arms(run_dir)
    return WeekLedgers(
        run_dir=run_dir,
        manifest=manifest,
        scores=_runs_in_manifest(scores, manifest),
        judge_skips=read_judge_skips(run_dir / JUDGE_SKIPS_FILE),
        reconciliation=reconciliation,
        pairs=_pairs_in_manifest(pairs, manifest, arms) if pairs is not None else None,
        judge_costs=read_judge_costs(run_dir),
        site_base=read_site_base(run_dir),
        scores_present=scores_path.is_file(),
        checks=checks[checks["run_id"].isin(manifest["run_id"].astype(str))].reset_index(drop=True),
        dropped_pieces=read_dropped_pieces(run_dir),
        arms=arms,
    )


def _truth_findings(run_dir: Path, manifest: pd.DataFrame, planned: list[str] | None) -> list[str]:
    """What is wrong with a sim week's ``truth.csv`` (empty for a week without one: the real API's)."""
    truth = read_truth(run_dir)  # a cut row that does not parse is the reader's one line
    if truth is None:
        return []
    try:
        owed = owed_truth_rows(run_dir, answered_run_ids(manifest))
    except LedgerError as exc:
        return [f"cannot be checked: {exc}"]
    return truth_findings(truth, owed, allowed=set(planned) if planned is not None else None)


def complete_run_ids(manifest: pd.DataFrame) -> list[str]:
    """Run ids of the manifest's complete runs (``finished``/``budget_hit``; a manifest without states: all)."""
    states = manifest["run_state"].astype(str).str.strip() if "run_state" in manifest else None
    if states is None or states.eq("").all():
        return manifest["run_id"].astype(str).tolist()
    return manifest.loc[states.isin(COMPLETE_STATES), "run_id"].astype(str).tolist()


def answered_run_ids(manifest: pd.DataFrame) -> list[str]:
    """Run ids of the manifest's complete runs that ended in an answer (exit code 0, no API error): the runs the
    simulated endpoint answered, so the runs that owe ``truth.csv`` their rows (:func:`owed_truth_rows`).

    Args:
        manifest: :func:`skillbench.ledgers.read_manifest` output.
    """
    complete = set(complete_run_ids(manifest))
    answered = manifest["exit_code"].eq(0).fillna(False).astype(bool) & ~manifest["is_error"].astype(bool)
    return [r for r in manifest.loc[answered, "run_id"].astype(str) if r in complete]


def run_folder_ids(run_dir: str | Path) -> list[str]:
    """Names of the run folders of a week: sub-folders with a ``metadata.json``, not ``_aside/`` or ``.tmp-…``.

    These are the folders ``skillbench signals`` writes one manifest row for, so each must be in the manifest.
    """
    return sorted(p.parent.name for p in Path(run_dir).glob(f"*/{METADATA_FILE}")
                  if not p.parent.name.startswith(("_", ".")))


def read_plan_ids(run_dir: str | Path) -> list[str] | None:
    """Run ids of ``plan.csv``; ``None`` when the week has no plan (qdrant's layout).

    Raises:
        LedgerError: an unreadable plan, or one without a ``run_id`` column.
    """
    path = Path(run_dir) / PLAN_FILE
    if not path.is_file():
        return None
    plan = _read_csv(path)
    _require(plan, path, ("run_id",))
    return list(plan["run_id"].astype(str))


def read_plan(run_dir: str | Path) -> pd.DataFrame | None:
    """``plan.csv``: every planned run (:data:`~skillbench.ledgers._columns.PLAN_COLUMNS`, in that order), ``rep``,
    ``dormancy`` and ``order`` as integers, the rest as text; ``None`` when the week has no plan (qdrant's layout).

    Raises:
        LedgerError: an unreadable plan, a missing column or a non-integer ``rep``/``dormancy``/``order``.
    """
    path = Path(run_dir) / PLAN_FILE
    if not path.is_file():
        return None
    raw = _read_csv(path)
    _require(raw, path, PLAN_COLUMNS)
    plan = raw[list(PLAN_COLUMNS)].copy()
    for column in ("rep", "dormancy", "order"):
        plan[column] = _to_int(plan, column, path, allow_empty=False)
    return plan


def read_retries(run_dir: str | Path) -> dict[str, Any]:
    """``retries.json`` (retried runs, the legs' state, the limiter's ``concurrency``), ``{}`` when none.

    Raises:
        LedgerError: not a JSON object.
    """
    return read_json_object(Path(run_dir) / RETRIES_FILE, "move it aside; the next generate pass writes a new "
                            "one") or {}


def read_pass_record(run_dir: str | Path) -> dict[str, Any]:
    """The week's ``judge.json`` (each judge pass's provenance, ``pairs_passes``), ``{}`` when not judged.

    Raises:
        LedgerError: not a JSON object.
    """
    return read_json_object(Path(run_dir) / PASS_FILE, "grade the week again (`skillbench judge RUN_DIR "
                            "--fresh`)") or {}


def pass_record_or_empty(run_dir: str | Path) -> dict[str, Any]:
    """The week's ``judge.json``, ``{}`` when absent or damaged (for callers that only take advice from it)."""
    return json_object_or_none(Path(run_dir) / PASS_FILE) or {}


def read_sentinel(run_dir: str | Path) -> dict[str, Any] | None:
    """The week's ``sentinel.json`` (the judge on the frozen gold set), ``None`` when absent or unreadable: the
    scorecard then shows no sentinel section, as for a week the sentinel did not run on."""
    return json_object_or_none(Path(run_dir) / SENTINEL_FILE)


def read_decision(run_dir: str | Path) -> dict[str, Any] | None:
    """The week's ``decision.json`` (the scorecard's decision block), ``None`` when absent or unreadable: the week
    page then shows no block, and says the scorecard has not run (it never shows a block it cannot read)."""
    return json_object_or_none(Path(run_dir) / DECISION_FILE)


def read_sentinel_grades(run_dir: str | Path) -> pd.DataFrame:
    """``sentinel-grades.csv``: the week's judge on the frozen gold set (calibration's grade columns, then
    ``gold_verdict, gold_positive, agrees``); ``item_index`` an integer, ``positive``/``gold_positive``/``agrees``
    as written (an empty cell NaN), the rest text.

    Raises:
        LedgerError: the file is absent or unreadable, or an ``item_index`` is not an integer.
    """
    path = Path(run_dir) / SENTINEL_GRADES_FILE
    if not path.is_file():
        raise LedgerError(f"{path}: not found — run the calibration stage (or `skillbench sentinel check`)")
    try:
        grades = pd.read_csv(path, dtype={"run_id": str, "verdict": str}, keep_default_na=False,
                             na_values={"positive": [""], "gold_positive": [""], "agrees": [""]})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise LedgerError(f"{path}: not a readable CSV: {str(exc).splitlines()[0]}") from exc
    _require(grades, path, ("run_id", "item_index", "verdict"))
    grades["item_index"] = _to_int(grades.astype({"item_index": str}), "item_index", path, allow_empty=False)
    return grades


def read_consolidation(run_dir: str | Path) -> dict[str, Any] | None:
    """``consolidation.json`` (``None`` when absent or unreadable: no consolidation is on record)."""
    return json_object_or_none(Path(run_dir) / CONSOLIDATION_FILE)


def read_calibration(run_dir: str | Path) -> pd.DataFrame | None:
    """``calibration.csv``: one row per comparison × rater pair × item type, its statistics as numbers (empty
    cells NaN; ``rater_b`` empty for self-agreement); ``None`` when the week was not calibrated.

    Raises:
        LedgerError: an unreadable file or a missing key column (:data:`CALIBRATION_KEY_COLUMNS`).
    """
    path = Path(run_dir) / CALIBRATION_FILE
    if not path.is_file():
        return None
    table = read_numbers(path)
    _require(table, path, CALIBRATION_KEY_COLUMNS)
    table["rater_b"] = table["rater_b"].fillna("")
    return table


def read_calibration_sample(run_dir: str | Path) -> dict[str, Any] | None:
    """``calibration-sample.json``: how calibration drew the runs it graded again (sample key, run key, seed,
    nonce; after a calibration also the looks, runs and items n of N); ``None`` when the week has none (every
    calibration before the sample, or none yet).

    Raises:
        LedgerError: not a JSON object, or a ``nonce`` that is not a short hex string.
    """
    path = Path(run_dir) / CALIBRATION_SAMPLE_FILE
    if not path.is_file():
        return None
    fix = "delete it and calibrate again (a new sample is drawn)"
    data = read_json_object(path, fix=fix) or {}
    nonce = data.get("nonce")
    if not isinstance(nonce, str) or not nonce or len(nonce) > 64 or any(c not in "0123456789abcdef" for c in nonce):
        raise LedgerError(f"{path}: field 'nonce' must be a hex string — {fix}")
    return data


def read_calibration_grades(run_dir: str | Path) -> pd.DataFrame | None:
    """``calibration-grades.csv``: every grading of the calibration (calibration's grade columns), values typed
    as pandas infers them; ``None`` when the week was not calibrated.

    Raises:
        LedgerError: an unreadable file.
    """
    path = Path(run_dir) / CALIBRATION_GRADES_FILE
    return read_numbers(path) if path.is_file() else None


def _runs_in_manifest(scores: pd.DataFrame, manifest: pd.DataFrame) -> pd.DataFrame:
    """Grades of runs the manifest no longer lists (a deleted run folder) must not count."""
    if scores.empty:
        return scores
    (mask,) = keys_found(scores, manifest, keys=list(RUN_KEYS))
    return scores[mask].reset_index(drop=True)


def keys_found(frame: pd.DataFrame, other: pd.DataFrame, *, keys: list[str],
               among: tuple[np.ndarray, ...] = ()) -> list[np.ndarray]:
    """Whether each row of ``frame`` has a row with the same ``keys`` in ``other``, then in each subset of
    ``other``'s rows that a boolean mask of ``among`` selects.

    Each key column is coded once over both frames, so a row's key is one integer and each test one ``np.isin``: a
    MultiIndex of a million score rows is the slow way to ask the same. Keys compare as values (the typed ledgers
    agree on each column's type: a rep is an integer everywhere).
    """
    codes = [pd.factorize(pd.concat([frame[key], other[key]], ignore_index=True), use_na_sentinel=False)[0]
             for key in keys]
    joined = np.ravel_multi_index(codes, [int(c.max()) + 1 if len(c) else 1 for c in codes])
    own, theirs = joined[:len(frame)], joined[len(frame):]
    return [np.isin(own, theirs), *(np.isin(own, theirs[np.asarray(mask, dtype=bool)]) for mask in among)]


def _pairs_in_manifest(pairs: pd.DataFrame, manifest: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> pd.DataFrame:
    """Pairs whose control or treatment run is no longer in the manifest do not vote."""
    keys = ["prompt", "model", "rep"]
    arms = manifest[manifest["condition"].isin(pair.lift_arms)].astype({k: str for k in keys})
    both = arms.groupby(keys)["condition"].nunique().eq(2)
    listed = both[both].index
    mask = pd.MultiIndex.from_frame(pairs[keys].astype(str)).isin(listed)
    return pairs[mask].reset_index(drop=True)


def reconcile_from_plan(run_dir: Path, manifest: pd.DataFrame) -> Reconciliation | None:
    """Without ``reconciliation.json``, compare ``plan.csv`` (when there is one) with the manifest and run folders.

    qdrant's weeks have neither file: ``None`` ("not reconciled"). A skillbench week that lost its reconciliation
    must not read as a clean one: planned runs without a manifest row are missing, run folders the manifest
    does not list are unwritten, and the families ``run.json`` says the suite left out for a broken spec stay
    invalid.
    """
    planned = read_plan_ids(run_dir)
    if planned is None:
        return None
    written = list(manifest["run_id"].astype(str))
    invalid = read_run_json(run_dir).get("invalid_families")
    rebuilt = reconcile_runs(planned, observed=sorted(set(written)), written=written, note="no reconciliation.json",
                             account=PassAccount(invalid_families=invalid if isinstance(invalid, dict) else {}))
    return cross_check(rebuilt, written=written, planned=planned, folders=run_folder_ids(run_dir),
                       source=PLAN_FILE)
