"""Read a run directory's ledgers into typed pandas DataFrames.

A run directory (``RUN_DIR``, qdrant's ``evals/weekly/<run_key>/``) holds the ledgers at its top and one
sub-folder per run, named by run id. Every reader returns a tidy DataFrame with fixed columns and dtypes, and
raises :class:`LedgerError` with one line that names the file, the column and the bad value when the input is
malformed.

Files read:

``manifest.csv`` (required)
    One row per run: qdrant's 23 columns in their order (``prompt, skill_family, skill_leaf, model, condition,
    rep, run_id, exit_code, skills_sha, timestamp, skill_available, skill_activation, reached_leaf,
    fetched_site, fetched_count, model_snapshot, cli_version, total_cost_usd, num_turns, result_subtype,
    budget_hit, signals_ok, duration_ms``), then optionally ours: ``dormancy`` (default false), ``sandbox``
    (default empty), ``is_error`` (default false), ``terminal_reason`` (default empty), ``denials``
    (default 0), ``attempts`` (default 1) and ``endpoint``. qdrant's runner has no simulated endpoint, so a
    manifest *without* an ``endpoint`` column comes from the real API and reads ``real``; an empty cell in a
    present column reads ``unknown`` (never compared with real weeks).

``scores.csv`` (optional; absent means nothing graded yet)
    One row per graded rubric item: qdrant's 12 columns (``prompt, skill, model, condition, rep, item_type,
    item_text, verdict, credit, contribution, contested, evidence_quote``), then optionally ours: ``run_id,
    item_index, judge_model, samples, evidence_verified, rubric_sha, judge_prompt_sha``. A verdict of
    ``ungraded`` (ours), ``PARSE_ERROR`` (qdrant's) or empty carries no credit and is excluded from scoring.
    Any other verdict must be one of its item type's two, with the credit and contribution that verdict gives;
    a rubric item present twice is refused, never counted twice (:func:`read_scores`).

``judge-skips.csv`` (optional)
    ``run_id, reason``: runs the judge did not grade, and why.

``reconciliation.json`` (optional; written by generation)
    Every planned run accounted for::

        {
          "run_key": "20260808",           # optional
          "expected": 208,                 # runs in plan.csv
          "observed": 208,                 # run sub-folders found
          "written": 208,                  # manifest rows
          "missing": ["<run_id>", ...],    # planned, no run folder / no manifest row
          "unexpected": ["<run_id>", ...], # a run folder or row that is not in the plan
          "duplicate": ["<run_id>", ...],  # a run id seen more than once
          "capped": ["<run_id>", ...],     # planned, not started: --max-total-usd was reached
          "complete": true
        }

    Generation may add ``unwritten`` (run folder without a manifest row), ``limited`` (kept out of the pass by
    ``--limit``, ``--families``/``--prompts`` or a shard; never also ``missing``), ``not_started`` (run ids),
    ``stopped_legs`` (``"model|condition"`` stopped as a systemic failure), ``families`` (each family's state) and
    ``invalid_families`` (families left out for an invalid spec, with the validator's lines; the week is then never
    complete); other extra keys are kept and ignored. A week is complete only when ``complete`` is true *and*
    every one of these lists is empty (fail closed when the two disagree).

``pairs.csv`` (optional; the pairwise judge)
    ``run_key, skill_family, prompt, model, rep, winner_ab, winner_ba, outcome, judge_model, error``;
    ``outcome`` is ``W``, ``T`` or ``L`` for the with-skill arm, empty only when ``error`` says why.

``<run_id>/judge_cost.txt`` (optional, per run sub-folder)
    The judge's spend on that run in USD, a single number.

``<run_id>/metadata.json`` (optional)
    Only ``suite_site_base`` (else ``site_base``) is read here, to name the published site in the lift caveat.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import ValidationError

from skillbench.ledgers._columns import (
    JUDGE_SKIPS_COLUMNS,
    MANIFEST_DEFAULTS,
    PAIRS_COLUMNS,
    QDRANT_MANIFEST_COLUMNS,
    QDRANT_SCORES_COLUMNS,
    SCORES_COLUMNS,
)
from skillbench.ledgers._files import MANIFEST_FILE, SCORES_FILE
from skillbench.ledgers._reconciliation import Reconciliation
from skillbench.vocab import (
    ALLOWED_VERDICTS,
    ENDPOINT_UNKNOWN,
    ITEM_TYPES,
    OUTCOMES,
    UNGRADED_VERDICTS,
    VERDICTS,
)

_MANIFEST_INT = ("exit_code", "skill_available", "reached_leaf", "fetched_site", "fetched_count", "budget_hit",
                 "signals_ok", "denials", "attempts")
_MANIFEST_FLOAT = ("total_cost_usd", "num_turns", "duration_ms")
_MANIFEST_BOOL = ("dormancy", "is_error", "trigger_only", "rate_limited")
_TRUE = frozenset({"1", "true", "True", "TRUE", "yes"})
_FALSE = frozenset({"0", "false", "False", "FALSE", "no", ""})


class LedgerError(ValueError):
    """A ledger file that cannot be read; the message names the file, the column and the bad value."""


def _read_csv(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise LedgerError(f"{path}: not a readable CSV: {str(exc).splitlines()[0]}") from exc
    except pd.errors.EmptyDataError as exc:
        raise LedgerError(f"{path}: empty file (expected a header row)") from exc


def is_cut(path: str | Path) -> bool:
    """Whether a text ledger's last line has no line end: a write cut mid-row (a copy cut in transit, a kill).

    Every writer of the week's ledgers ends each row with a line end, so a file that does not is torn even when
    what is left happens to parse. An absent or empty file is not cut.
    """
    path = Path(path)
    if not path.is_file():
        return False
    with path.open("rb") as fh:
        if fh.seek(0, 2) == 0:
            return False
        fh.seek(-1, 2)
        return fh.read(1) != b"\n"


def read_cells(path: str | Path, required: tuple[str, ...] = ()) -> pd.DataFrame:
    """A ledger as written, every cell a string (empty cells ``""``), with the ``required`` columns.

    For the passes that copy, merge or re-key a ledger's rows rather than compute on its values (the typed readers
    above are for those).

    Raises:
        LedgerError: the file is absent, unreadable or empty, or lacks a required column.
    """
    path = Path(path)
    if not path.is_file():
        raise LedgerError(f"{path}: not found")
    frame = _read_csv(path)
    _require(frame, path, required)
    return frame


def read_numbers(path: str | Path) -> pd.DataFrame:
    """A statistics table (``calibration.csv``, the judge study's tables), its numbers parsed and empty cells NaN:
    the figures are computed on, not compared as text.

    Raises:
        LedgerError: the file is unreadable or empty.
    """
    path = Path(path)
    try:
        return pd.read_csv(path)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise LedgerError(f"{path}: not a readable CSV: {str(exc).splitlines()[0]}") from exc
    except pd.errors.EmptyDataError as exc:
        raise LedgerError(f"{path}: empty file (expected a header row)") from exc


def _require(df: pd.DataFrame, path: Path, columns: tuple[str, ...]) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise LedgerError(f"{path}: missing column(s) {', '.join(missing)} (have: {', '.join(df.columns)})")


def _bad(path: Path, df: pd.DataFrame, column: str, mask: pd.Series, expected: str) -> LedgerError:
    pos = int(np.flatnonzero(mask.to_numpy())[0])
    value = df[column].iloc[pos]
    # +2: the header is line 1 and rows count from 0.
    return LedgerError(f"{path}: column {column!r}, row {pos + 2}: {value!r} is not {expected}")


def _nonblank(raw: pd.Series, mask: pd.Series) -> pd.Series:
    """Within ``mask``, the cells that are not empty or whitespace (only those cells are stripped: fast)."""
    out = pd.Series(False, index=raw.index)
    if mask.any():  # only the masked cells are compared: a parsed column of a million rows masks none
        cells = raw[mask]
        out[mask] = (cells.ne("") & cells.str.strip().ne("")).to_numpy(dtype=bool)
    return out


def _parse_numbers(raw: pd.Series) -> pd.Series:
    """``pd.to_numeric`` (coerced, as floats) of each distinct cell once: a ledger column holds few distinct values
    (ranks, 0/1 flags, credits) in up to a million rows, and parsing strings is the slow part of reading it."""
    codes, distinct = pd.factorize(raw)
    parsed = pd.to_numeric(pd.Series(distinct, dtype=object), errors="coerce").astype(float).to_numpy()
    # code -1 marks a missing cell (a frame built in memory; read_csv leaves none): missing stays NaN
    values = np.where(codes >= 0, parsed[codes] if len(parsed) else np.nan, np.nan)
    return pd.Series(values, index=raw.index, name=raw.name, dtype=float)


def _to_float(df: pd.DataFrame, column: str, path: Path, *, allow_empty: bool = True) -> pd.Series:
    raw = df[column]
    num = _parse_numbers(raw)
    missing = num.isna()
    bad = _nonblank(raw, missing) if allow_empty else missing
    if bad.any():
        raise _bad(path, df, column, bad, "a number")
    return num


def _to_int(df: pd.DataFrame, column: str, path: Path, *, allow_empty: bool = True) -> pd.Series:
    num = _to_float(df, column, path, allow_empty=allow_empty)
    frac = num.notna() & (num != np.floor(num.fillna(0)))
    if frac.any():
        raise _bad(path, df, column, frac, "an integer")
    return num.astype("Int64") if allow_empty else num.astype("int64")


def _clean_flags(raw: pd.Series, known: frozenset[str] = _TRUE | _FALSE) -> pd.Series:
    """The column with stray whitespace removed from the cells that are not already a known value."""
    odd = ~raw.isin(known)
    if not odd.any():
        return raw
    out = raw.copy()
    out[odd] = raw[odd].str.strip()
    return out


def _to_bool(df: pd.DataFrame, column: str, path: Path) -> pd.Series:
    raw = _clean_flags(df[column])
    bad = ~raw.isin(_TRUE | _FALSE)
    if bad.any():
        raise _bad(path, df, column, bad, "a boolean (0/1/true/false)")
    return raw.isin(_TRUE)


def read_manifest(path: str | Path) -> pd.DataFrame:
    """Read ``manifest.csv``: one typed row per run.

    Integer signals (``exit_code``, ``budget_hit``, …) are nullable ``Int64`` (empty when the transcript was
    missing); costs, turns and durations are floats (``NaN`` when empty); ``dormancy`` and ``is_error`` are
    booleans; ``started_at`` is the parsed ``timestamp`` (UTC) added for timing.

    Raises:
        LedgerError: the file is absent or unreadable, a qdrant column is missing, or a value is ill-typed.
    """
    path = Path(path)
    if not path.is_file():
        raise LedgerError(f"{path}: not found (a run directory needs {MANIFEST_FILE}; run `skillbench signals`)")
    raw = _read_csv(path)
    _require(raw, path, QDRANT_MANIFEST_COLUMNS)
    df = raw.copy(deep=False)  # copy-on-write: typing a column never touches ``raw``, which messages quote
    has_endpoint = "endpoint" in raw.columns
    for column, default in MANIFEST_DEFAULTS.items():
        if column not in df.columns:
            df[column] = "1" if default is True else "0" if default is False else str(default)
    for column in _MANIFEST_INT:
        df[column] = _to_int(df, column, path)
    df["rep"] = _to_int(df, "rep", path, allow_empty=False)
    for column in _MANIFEST_FLOAT:
        df[column] = _to_float(df, column, path)
    for column in _MANIFEST_BOOL:
        df[column] = _to_bool(df, column, path)
    for column in ("prompt", "model", "condition", "run_id"):
        cells = df[column]
        empty = cells.eq("") | cells.str.isspace()  # blank: what strips to nothing (no stripped copy of the column)
        if empty.any():
            raise _bad(path, df, column, empty, "a non-empty value")
    if has_endpoint:
        df["endpoint"] = df["endpoint"].str.strip().replace("", ENDPOINT_UNKNOWN)
    df["started_at"] = parse_timestamps(df["timestamp"])
    bad_ts = _nonblank(df["timestamp"], df["started_at"].isna())
    if bad_ts.any():
        raise _bad(path, df, "timestamp", bad_ts, "a UTC timestamp (20260808T073023Z or ISO 8601)")
    return df


def read_manifest_ids(path: str | Path) -> list[str]:
    """The run ids ``manifest.csv`` lists, in its order (all that reconciliation needs of it); ``[]`` when absent.

    Raises:
        LedgerError: an unreadable file, or one without a ``run_id`` column.
    """
    path = Path(path)
    if not path.is_file():
        return []
    raw = _read_csv(path)
    _require(raw, path, ("run_id",))
    return list(raw["run_id"])


def parse_timestamps(values: pd.Series) -> pd.Series:
    """Parse qdrant's compact ``20260808T073023Z`` stamps, falling back to ISO 8601; ``NaT`` when empty."""
    compact = pd.to_datetime(values, format="%Y%m%dT%H%M%SZ", errors="coerce", utc=True)
    rest = _nonblank(values, compact.isna())
    if rest.any():
        compact = compact.where(~rest, pd.to_datetime(values.where(rest), format="ISO8601", errors="coerce",
                                                      utc=True))
    return compact


def format_timestamp(ts: pd.Timestamp) -> str:
    """Render a UTC timestamp in qdrant's compact form, ``20260808T081641Z``."""
    return ts.tz_convert("UTC").strftime("%Y%m%dT%H%M%SZ") if ts.tzinfo else ts.strftime("%Y%m%dT%H%M%SZ")


def empty_scores() -> pd.DataFrame:
    """A typed, empty scores ledger (a run directory that has not been judged yet)."""
    return read_scores_frame(pd.DataFrame({c: pd.Series(dtype=str) for c in QDRANT_SCORES_COLUMNS}), Path(SCORES_FILE))


def read_scores(path: str | Path) -> pd.DataFrame:
    """Read ``scores.csv``: one typed row per rubric item.

    ``credit`` and ``contribution`` are floats (``NaN`` for an ungraded item), ``contested`` and ``absence`` booleans,
    ``rep`` an int, ``graded`` is added (false for ``ungraded``/``PARSE_ERROR``/empty verdicts).

    Every row must agree with its item type (:func:`_check_verdicts`): a known verdict of that type, credit 1 for
    ``met``/``violated`` and 0 for ``missing``/``absent``/``clean``, contribution = credit (must, bonus) or
    −credit (avoid). No rubric item may appear twice: same ``run_id`` × ``item_index`` in our ledger, same
    ``prompt, model, condition, rep, item_type, item_text`` in qdrant's.

    Raises:
        LedgerError: one line naming the file, the row and the value: unreadable file, a missing qdrant column,
            an unknown item type or verdict, a verdict of another item type, a credit or contribution its
            verdict does not give, a graded verdict without credit, or a duplicated rubric item.
    """
    path = Path(path)
    if not path.is_file():
        raise LedgerError(f"{path}: not found")
    return read_scores_frame(_read_csv(path), path)


def read_scores_frame(raw: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Type a scores ledger already read as strings (see :func:`read_scores`)."""
    _require(raw, path, QDRANT_SCORES_COLUMNS)
    df = raw.copy(deep=False)  # copy-on-write: typing a column never touches ``raw``, which messages quote
    absent = [c for c in SCORES_COLUMNS if c not in df.columns]
    for column in absent:
        df[column] = ""
    df["rep"] = _to_int(df, "rep", path, allow_empty=False)
    bad_type = ~_on_distinct(df["item_type"], lambda cells: cells.isin(ITEM_TYPES))
    if bad_type.any():
        raise _bad(path, df, "item_type", bad_type, "one of must/bonus/avoid")
    df["verdict"] = _clean_flags(df["verdict"], VERDICTS)
    df["credit"] = _to_float(df, "credit", path)
    df["contribution"] = _to_float(df, "contribution", path)
    ungraded = _check_verdicts(df, raw, path)
    df["graded"] = ~ungraded & df["credit"].notna()
    df["contested"] = ~_on_distinct(df["contested"], lambda cells: _clean_flags(cells).isin(_FALSE))
    # Ours: a must graded by absence; an absent column (qdrant's ledger, older weeks) reads false.
    df["absence"] = ~_on_distinct(df["absence"], lambda cells: _clean_flags(cells).isin(_FALSE))
    for column in ("item_index", "samples"):
        # qdrant's ledger has neither column: skip parsing a million empty cells.
        df[column] = (pd.Series(pd.NA, index=df.index, dtype="Int64") if column in absent
                      else _to_int(df, column, path))
    ev = df["evidence_verified"]
    bad_ev = ~_on_distinct(ev, lambda cells: _clean_flags(cells).isin(_TRUE | _FALSE))
    if bad_ev.any():
        raise _bad(path, df, "evidence_verified", bad_ev, "a boolean (0/1/true/false) or empty")
    # Empty means "not checked" (qdrant's ledger); only an explicit false is a hallucinated-evidence flag.
    verified = pd.Series(pd.NA, index=df.index, dtype="boolean")
    verified[_on_distinct(ev, lambda cells: _clean_flags(cells).isin(_TRUE))] = True
    verified[_on_distinct(ev, lambda cells: _clean_flags(cells).isin(_FALSE - {""}))] = False
    df["evidence_verified"] = verified
    _check_duplicates(df, path)
    return df


def _on_distinct(raw: pd.Series, test: Callable[[pd.Series], pd.Series]) -> pd.Series:
    """``test`` (cells → booleans) run on the column's distinct cells only, spread back to every row: a ledger column
    of a million rows holds a handful of distinct flags, and each test of a string column hashes every row."""
    codes, distinct = pd.factorize(raw, use_na_sentinel=False)
    return pd.Series(test(pd.Series(distinct, dtype=object)).to_numpy(dtype=bool)[codes], index=raw.index)


def _check_verdicts(df: pd.DataFrame, raw: pd.DataFrame, path: Path) -> pd.Series:
    """Each row's verdict, credit and contribution agree with its item type (``judge.score_rows``' rule).

    A must or bonus item earns credit 1 (``met``) or 0 and contributes its credit; an avoid item's credit 1 means
    ``violated`` and contributes −1. An ungraded verdict (``ungraded``, ``PARSE_ERROR``, empty) carries no credit
    and is left out of every count. Messages quote ``raw`` (the cells as written).

    Returns:
        The ungraded rows (boolean).
    """
    verdict, kind = df["verdict"], df["item_type"]
    # Each rule is decided once per distinct verdict × item type (a million rows hold about a dozen) and spread
    # back by the two columns' codes.
    v_codes, verdicts = pd.factorize(verdict, use_na_sentinel=False)
    k_codes, kinds = pd.factorize(kind, use_na_sentinel=False)

    def rows(table: list[list[bool]]) -> pd.Series:
        return pd.Series(np.array(table, dtype=bool).reshape(len(verdicts), len(kinds))[v_codes, k_codes],
                         index=df.index)

    unknown = rows([[v not in VERDICTS] * len(kinds) for v in verdicts])
    if unknown.any():
        raise _bad(path, df, "verdict", unknown, "one of " + "/".join(sorted(VERDICTS - {""})) + " or empty")
    ungraded = rows([[v in UNGRADED_VERDICTS] * len(kinds) for v in verdicts])
    allowed = [ALLOWED_VERDICTS.get(k, (None, None)) for k in kinds]  # an unknown type allows no verdict
    is_positive = rows([[v == pos for pos, _ in allowed] for v in verdicts])
    foreign = ~ungraded & ~is_positive & ~rows([[v == neg for _, neg in allowed] for v in verdicts])
    if foreign.any():
        item = kind[foreign].iloc[0]
        raise _bad(path, df, "verdict", foreign, f"a verdict of a {item!r} item ({'/'.join(ALLOWED_VERDICTS[item])})")
    credit = df["credit"]
    out_of_range = credit.notna() & ~credit.isin([0.0, 1.0])
    if out_of_range.any():
        raise _bad(path, raw, "credit", out_of_range, "0 or 1")
    no_credit = ~ungraded & credit.isna()
    if no_credit.any():
        raise _bad(path, raw, "credit", no_credit, "a credit for a graded verdict")
    earned = is_positive.astype(float)
    wrong_credit = ~ungraded & credit.ne(earned)
    if wrong_credit.any():
        pos = int(np.flatnonzero(wrong_credit.to_numpy())[0])
        v = verdict.iloc[pos]
        why = "earns its item's credit" if earned.iloc[pos] else "earns no credit"
        raise _bad(path, raw, "credit", wrong_credit, f"{earned.iloc[pos]:g} (a {v!r} verdict {why})")
    sign = np.where(kind.eq("avoid"), -1.0, 1.0)
    expected = pd.Series(sign * credit.to_numpy() + 0.0, index=df.index)  # + 0.0: −0.0 reads 0
    wrong_contribution = ~ungraded & df["contribution"].ne(expected)
    if wrong_contribution.any():
        pos = int(np.flatnonzero(wrong_contribution.to_numpy())[0])
        item = kind.iloc[pos]
        rule = "an 'avoid' item counts against: −credit" if item == "avoid" else f"a {item!r} item adds its credit"
        raise _bad(path, raw, "contribution", wrong_contribution, f"{expected.iloc[pos]:g} ({rule})")
    return ungraded


# qdrant's ledger names an item by its run's key and its text; ours also by run id and rubric index.
_ITEM_KEY_QDRANT = ("prompt", "model", "condition", "rep", "item_type", "item_text")
_ITEM_KEY_OURS = ("run_id", "item_index")


def _check_duplicates(df: pd.DataFrame, path: Path) -> None:
    """Refuse a rubric item that appears twice: it would count twice (nothing is deduplicated silently)."""
    keys = [list(_ITEM_KEY_QDRANT)]
    if df["run_id"].ne("").all() and df["item_index"].notna().all():
        keys.insert(0, list(_ITEM_KEY_OURS))
    for key in keys:
        again = df.duplicated(key, keep="first")
        if not again.any():
            continue
        pos = int(np.flatnonzero(again.to_numpy())[0])
        same = np.ones(len(df), dtype=bool)
        for column in key:
            same &= (df[column] == df[column].iloc[pos]).to_numpy()
        first = int(np.flatnonzero(same)[0])
        cells = ", ".join(f"{c}={df[c].iloc[pos]}" for c in key)
        raise LedgerError(f"{path}: row {pos + 2}: duplicate of row {first + 2} ({cells}) — one rubric item is in "
                          "the ledger twice and would count twice; delete the repeated row, or grade again with "
                          "`skillbench judge RUN_DIR --fresh`")


def read_judge_skips(path: str | Path) -> pd.DataFrame:
    """Read ``judge-skips.csv`` (``run_id, reason``); an absent file is an empty frame."""
    path = Path(path)
    if not path.is_file():
        return pd.DataFrame({c: pd.Series(dtype=str) for c in JUDGE_SKIPS_COLUMNS})
    df = _read_csv(path)
    _require(df, path, JUDGE_SKIPS_COLUMNS)
    return df[list(JUDGE_SKIPS_COLUMNS)].copy()


def read_json_object(path: str | Path, fix: str) -> dict[str, Any] | None:
    """A run directory's JSON object file; ``None`` when it is absent.

    Raises:
        LedgerError: one line naming the file and ``fix`` when it is not readable JSON or not an object.
    """
    path = Path(path)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LedgerError(f"{path}: cannot be read as JSON ({str(exc).splitlines()[0]}) — {fix}") from exc
    if not isinstance(data, dict):
        raise LedgerError(f"{path}: not a JSON object — {fix}")
    return data


def json_object_or_none(path: str | Path) -> dict[str, Any] | None:
    """A JSON object file, or ``None`` when it is absent, unreadable or not an object.

    For the readers that tolerate a damaged record (provenance, a cached snapshot): the file is advisory there,
    and the strict reader (:func:`read_json_object`) is the one that refuses it.
    """
    try:
        return read_json_object(path, fix="")
    except LedgerError:
        return None


def read_reconciliation(path: str | Path) -> Reconciliation | None:
    """Read ``reconciliation.json``; ``None`` when the file is absent (qdrant's runner writes none).

    Raises:
        LedgerError: not JSON, or a field is missing or ill-typed.
    """
    path = Path(path)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise LedgerError(f"{path}: not JSON: {exc}") from exc
    try:
        return Reconciliation.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise LedgerError(f"{path}: field {where!r}: {err['msg']}") from exc


def read_pairs(path: str | Path) -> pd.DataFrame | None:
    """Read ``pairs.csv`` from the pairwise judge; ``None`` when absent.

    Raises:
        LedgerError: a missing column, a non-integer rep, or an outcome other than W/T/L without an error.
    """
    path = Path(path)
    if not path.is_file():
        return None
    raw = _read_csv(path)
    _require(raw, path, PAIRS_COLUMNS)
    df = raw.copy()
    df["rep"] = _to_int(df, "rep", path, allow_empty=False)
    df["outcome"] = df["outcome"].str.strip()
    df["error"] = df["error"].str.strip()
    bad = ~df["outcome"].isin(OUTCOMES) & ~((df["outcome"] == "") & (df["error"] != ""))
    if bad.any():
        raise _bad(path, df, "outcome", bad, "W, T or L (empty only with an error)")
    return df


