"""``scorecard-history.csv``: one row per run × model, and the week-over-week rule that reads it.

**The file keeps qdrant's 8 columns** (``run_key, window_end, model, must_lift, must_lift_se, composite_lift,
cost_delta, turns_delta``), so qdrant's own tools (their ``summarize-eval.py`` rewrites it with
``csv.DictWriter(fieldnames=<those 8>)``) read and rewrite it unchanged. The endpoint kind of each row
(``real``/``simulated``/…) lives in a **sidecar** beside it, ``<stem>.endpoints.csv``
(``scorecard-history.endpoints.csv``; columns ``run_key, model, endpoint``), keyed by (run key, model). A row
with no record in the sidecar reads ``real`` (qdrant's runner only ever called the real API), so the sidecar is
written *before* the history whenever any row is not real or the sidecar already exists: a simulated week is
never in a history file without its sidecar record, even after a crash between the two writes.

The sidecar also carries each week's **judge drift sentinel** (:mod:`skillbench.calibration._sentinel`) next to
the lift, on every model's row of the week: ``judge_model, judge_snapshot, sentinel_agreement,
sentinel_must_credit, sentinel_flag`` (:data:`SENTINEL_HISTORY_COLUMNS`). A sidecar written before them (three
columns) still reads, its rows' sentinel values empty; the next write adds the columns. A week with sentinel
values writes the sidecar even when every row is real.

Files of ours that carry a 9th ``endpoint`` column still read (the column is the row's endpoint; a sidecar
record that disagrees with it is refused); the next write migrates them to 8 columns + sidecar.

Both files are written the way qdrant's ``csv`` writer writes (numbers with 6 decimals, empty for unknown, CRLF
line ends), so upserting a week into their file leaves their rows byte-identical. ``window_end`` is the latest run
``timestamp`` of the week. A torn or hand-damaged row (wrong number of cells, a lift that is not a number, an
empty key, a (run key, model) twice) is refused with one line naming the file and line, never rewritten.

Upsert is idempotent and keyed on (run key, model): a row is replaced in place, a new one appended.

Week over week, among weeks of the **same endpoint kind only** (a simulated week never enters real-week
statistics), ordered by their run window (``window_end``; a week not in the history, e.g. a partial one, is
placed by its own window end, never by its run key):

* until four run keys exist up to this one: "Will be computed after four runs.";
* then, per model, the noise band of :mod:`skillbench.scorecard._noise` against the previous week: **paired**
  (``Δ`` the mean per-prompt difference over the prompts both weeks share, ``SE = SD(Δᵢ)/√n``, t at n − 1) when
  both weeks' per-prompt lifts are in the prompts sidecar for at least three shared prompts; otherwise
  **unpaired** (``Δ = now − previous``, ``SE = √(SE_now² + SE_prev²)``, t at this week's pairs − 1). Either way
  the between-week half-width is ``t·σ·√2`` (σ: the ddof = 1 SD of the *prior* weekly lifts, needs ≥ 2),
  ``threshold = max`` of the two, actionable when ``|Δ| > threshold``; the table's ``rule`` column says which.

**Tidy sidecars** (:mod:`skillbench.ledgers._history_sidecars`, read and written with the history by
:func:`read_week_history` / :func:`write_week_history`): ``<stem>.prompts.csv`` keeps each recorded week's
per-prompt lifts (what a later week's paired Δ differences), ``<stem>.controls.csv`` each recorded week's control
verdicts (the accumulated A/A false-pass rate, :func:`skillbench.scorecard._controls.accumulated_controls`). A
history without them (qdrant's, or ours before they existed) reads with none, its weeks judged by the unpaired
rule, and the next write adds the new week's rows without touching the history's own rows.

**A comparison never writes the weekly history** (:func:`keeps_history`): the history is the series of weekly
with-skill − no-skill lifts, and a ``skillbench compare`` week (``with-skill@HEAD − with-skill@BASE``) is another
quantity, so it neither reads nor writes ``scorecard-history.csv`` or its endpoints file.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.arms import ArmPair
from skillbench.ledgers import (
    HISTORY_COLUMNS,
    HISTORY_CONTROL_COLUMNS,
    HISTORY_CONTROLS_SUFFIX,
    HISTORY_ENDPOINT_COLUMNS,
    HISTORY_ENDPOINTS_SUFFIX,
    HISTORY_PROMPT_COLUMNS,
    HISTORY_PROMPTS_SUFFIX,
    QDRANT_HISTORY_COLUMNS,
    LedgerError,
    atomic_write_text,
    csv_records,
    history_sidecar,
    parse_timestamps,
    read_history_controls,
    read_history_prompts,
    replace_week,
    write_history_controls,
    write_history_prompts,
)
from skillbench.scorecard import _noise as noise
from skillbench.scorecard._stats import DEFAULT_CONFIDENCE
from skillbench.vocab import ENDPOINT_UNKNOWN, REAL

NUMERIC_COLUMNS: tuple[str, ...] = QDRANT_HISTORY_COLUMNS[3:]
# The week's judge drift sentinel, kept in the sidecar beside the row's endpoint (qdrant's 8 columns stay as they are).
SENTINEL_HISTORY_COLUMNS: tuple[str, ...] = ("judge_model", "judge_snapshot", "sentinel_agreement",
                                             "sentinel_must_credit", "sentinel_flag")
SIDECAR_COLUMNS: tuple[str, ...] = (*HISTORY_ENDPOINT_COLUMNS, *SENTINEL_HISTORY_COLUMNS)
FRAME_COLUMNS: tuple[str, ...] = (*HISTORY_COLUMNS, *SENTINEL_HISTORY_COLUMNS)  # what read_history returns
LEGACY_ENDPOINT = REAL
WOW_MIN_RUNS = 4
KEY = ["run_key", "model"]
_REQUIRED = ("run_key", "model", "must_lift")  # a row without these carries no week-over-week information
_RESTORE = "restore the file from a good copy or delete that line"


class HistoryError(ValueError):
    """A history file that cannot be read or written; the message names the file and line."""


def keeps_history(pair: ArmPair) -> bool:
    """True when a week of this pair is read against and written into the week-over-week history.

    The one rule: a comparison never writes the weekly history — only the weekly pair (with-skill vs no-skill)
    is a point of the series; any other pair neither reads nor writes ``scorecard-history.csv`` and its sidecar.
    """
    return pair.is_default


def empty_history() -> pd.DataFrame:
    """A history with no rows."""
    return pd.DataFrame({c: pd.Series(dtype=str) for c in FRAME_COLUMNS})


def endpoints_path(path: str | Path) -> Path:
    """The sidecar of a history file: ``scorecard-history.csv`` → ``scorecard-history.endpoints.csv``."""
    path = Path(path)
    return path.with_name(path.stem + HISTORY_ENDPOINTS_SUFFIX)


def _not_a_folder(path: Path) -> None:
    if path.exists() and not path.is_file():
        raise HistoryError(f"{path}: is a folder, not a history file — pass the CSV's path (e.g. "
                           "SUITE_DIR/weekly/scorecard-history.csv)")


def _records(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and every record with its line number; every record has the header's number of cells."""
    try:
        records = csv_records(path, _RESTORE)
    except LedgerError as exc:
        raise HistoryError(str(exc)) from exc
    if not records:
        raise HistoryError(f"{path}: empty file (expected a header row) — delete it to start a new history")
    (_, header), rows = records[0], records[1:]
    for line, cells in rows:
        if len(cells) != len(header):
            raise HistoryError(f"{path}: line {line}: {len(cells)} cells, expected {len(header)} ({', '.join(header)})"
                               f" — a torn or hand-edited row; {_RESTORE}")
    return header, rows


def _read_endpoints(path: Path) -> dict[tuple[str, str], tuple[int, str, dict[str, str]]]:
    """The sidecar's records: (run key, model) → (line, endpoint, sentinel values); empty without a sidecar.

    A sidecar without (some of) the sentinel columns reads them empty.
    """
    _not_a_folder(path)
    if not path.is_file():
        return {}
    header, rows = _records(path)
    extra = header[len(HISTORY_ENDPOINT_COLUMNS):]
    if header[: len(HISTORY_ENDPOINT_COLUMNS)] != list(HISTORY_ENDPOINT_COLUMNS) or \
            any(c not in SENTINEL_HISTORY_COLUMNS for c in extra) or len(set(extra)) != len(extra):
        raise HistoryError(f"{path}: columns are {', '.join(header)}, expected {', '.join(HISTORY_ENDPOINT_COLUMNS)}"
                           f" (then any of {', '.join(SENTINEL_HISTORY_COLUMNS)}) — {_RESTORE}")
    out: dict[tuple[str, str], tuple[int, str, dict[str, str]]] = {}
    for line, cells in rows:
        run_key, model, endpoint = cells[:3]
        if not (run_key.strip() and model.strip() and endpoint.strip()):
            raise HistoryError(f"{path}: line {line}: an empty run_key, model or endpoint — {_RESTORE}")
        if (run_key, model) in out:
            raise HistoryError(f"{path}: line {line}: ({run_key}, {model}) again (first on line "
                               f"{out[(run_key, model)][0]}) — {_RESTORE}")
        values = dict.fromkeys(SENTINEL_HISTORY_COLUMNS, "") | dict(zip(extra, cells[3:], strict=True))
        out[(run_key, model)] = (line, endpoint.strip(), values)
    return out


def read_history(path: str | Path) -> pd.DataFrame:
    """Read ``scorecard-history.csv`` and its endpoint sidecar as strings (so rewriting never reformats a row).

    Returns:
        One row per run key × model with :data:`FRAME_COLUMNS` (qdrant's 8, ``endpoint``, then the sentinel's
        :data:`SENTINEL_HISTORY_COLUMNS` from the sidecar, empty where it has none); empty when the file is absent.

    Raises:
        HistoryError: one line naming the file and line: the path is a folder, the file is unreadable, one of
            qdrant's 8 columns is missing or an unknown one is present, a row has another number of cells than
            the header, an empty key or lift, a value that is not a number or a timestamp, a (run key, model)
            twice, or a sidecar record that contradicts the file's own ``endpoint`` column.
    """
    path = Path(path)
    _not_a_folder(path)
    if not path.is_file():
        return empty_history()
    header, rows = _records(path)
    missing = [c for c in QDRANT_HISTORY_COLUMNS if c not in header]
    if missing:
        raise HistoryError(f"{path}: missing column(s) {', '.join(missing)}")
    unknown = [c for c in header if c not in HISTORY_COLUMNS]
    if unknown:
        raise HistoryError(f"{path}: unknown column(s) {', '.join(unknown)} (a history has "
                           f"{', '.join(QDRANT_HISTORY_COLUMNS)}) — a rewrite would lose them; move them elsewhere")
    sidecar = endpoints_path(path)
    recorded = _read_endpoints(sidecar)
    index = {c: header.index(c) for c in header}
    out, seen = [], {}
    for line, cells in rows:
        row = {c: cells[i] for c, i in index.items()}
        for column in _REQUIRED:
            if not row[column].strip():
                raise HistoryError(f"{path}: line {line}: column {column!r} is empty — {_RESTORE}")
        for column in NUMERIC_COLUMNS:
            value = row[column]
            if value.strip() and pd.isna(pd.to_numeric(value, errors="coerce")):
                raise HistoryError(f"{path}: line {line}: column {column!r}: {value!r} is not a number — {_RESTORE}")
        stamp = row["window_end"]
        if stamp.strip() and pd.isna(parse_timestamps(pd.Series([stamp])).iloc[0]):
            raise HistoryError(f"{path}: line {line}: column 'window_end': {stamp!r} is not a UTC timestamp "
                               f"(20260808T081641Z) — {_RESTORE}")
        key = (row["run_key"], row["model"])
        if key in seen:
            raise HistoryError(f"{path}: line {line}: run {key[0]} × {key[1]} again (first on line {seen[key]}) — "
                               f"{_RESTORE}")
        seen[key] = line
        note = recorded.get(key)
        if "endpoint" in row:  # a 9-column file of ours: the column is the row's endpoint
            row["endpoint"] = row["endpoint"].strip() or ENDPOINT_UNKNOWN
            if note is not None and note[1] != row["endpoint"]:
                raise HistoryError(f"{sidecar}: line {note[0]}: {key[0]} × {key[1]} is {note[1]!r}, but {path} line "
                                   f"{line} says {row['endpoint']!r} — correct one of them")
        else:
            row["endpoint"] = note[1] if note is not None else LEGACY_ENDPOINT
        row.update(note[2] if note is not None else dict.fromkeys(SENTINEL_HISTORY_COLUMNS, ""))
        out.append(row)
    return pd.DataFrame(out, columns=list(FRAME_COLUMNS)) if out else empty_history()


def _num(value: float) -> str:
    return "" if value is None or pd.isna(value) else f"{value:.6f}"


def history_rows(run_key: str, window_end: str, lift: pd.DataFrame, endpoint: str,
                 sentinel: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """This week's history rows, formatted as qdrant formats them.

    Args:
        run_key: the week's run key.
        window_end: latest run timestamp, e.g. ``20260808T081641Z``.
        lift: :func:`skillbench.scorecard.lift_table` output (``model, must_lift, must_lift_se, composite_lift,
            cost_delta, turns_delta``), in the order the rows should be written.
        endpoint: ``real``, ``simulated``, …
        sentinel: the week's ``sentinel.json`` (None: the week ran no sentinel; its columns stay empty).
    """
    rows = pd.DataFrame({"run_key": run_key, "window_end": window_end, "model": lift["model"].astype(str)})
    for column in NUMERIC_COLUMNS:
        rows[column] = [_num(v) for v in lift[column]]
    rows["endpoint"] = endpoint
    for column, value in sentinel_cells(sentinel).items():
        rows[column] = value
    return rows[list(FRAME_COLUMNS)].reset_index(drop=True)


def sentinel_cells(sentinel: Mapping[str, Any] | None) -> dict[str, str]:
    """The sidecar's sentinel cells of a week from its ``sentinel.json`` (all empty without one)."""
    if not sentinel:
        return dict.fromkeys(SENTINEL_HISTORY_COLUMNS, "")
    return {"judge_model": str(sentinel.get("judge_model") or ""),
            "judge_snapshot": str(sentinel.get("judge_snapshot") or ""),
            "sentinel_agreement": _num(sentinel.get("agreement")),
            "sentinel_must_credit": _num(sentinel.get("must_credit")),
            "sentinel_flag": str(sentinel.get("flag") or "")}


def upsert(history: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Replace rows keyed on (run key, model) in place and append new keys; idempotent."""
    history = _framed(history).reset_index(drop=True).copy()
    position = {(k, m): i for i, (k, m) in enumerate(zip(history["run_key"], history["model"], strict=True))}
    extra = []
    for row in _framed(rows).itertuples(index=False):
        i = position.get((row.run_key, row.model))
        if i is None:
            extra.append(row._asdict())
        else:
            history.loc[i, list(FRAME_COLUMNS)] = list(row)
    if extra:
        history = pd.concat([history, pd.DataFrame(extra, columns=list(FRAME_COLUMNS))], ignore_index=True)
    return history


def _framed(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with :data:`FRAME_COLUMNS`: a frame of the 9 columns gets empty sentinel cells."""
    return frame.reindex(columns=list(FRAME_COLUMNS), fill_value="")


def _csv(columns: tuple[str, ...], rows: pd.DataFrame) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf)  # qdrant's csv.DictWriter: minimal quoting, CRLF
    writer.writerow(columns)
    writer.writerows(rows[list(columns)].itertuples(index=False, name=None))
    return buf.getvalue()


def write_history(path: str | Path, history: pd.DataFrame) -> None:
    """Write the history with qdrant's 8 columns, and the endpoint of every row into the sidecar first.

    The sidecar is written when a row is not ``real``, a row has sentinel values, or the sidecar already exists
    (a real-only history without a sentinel needs none: an absent record reads ``real``); it always lists every
    row, with the sentinel's columns. A 9-column file of ours becomes 8
    columns + sidecar here.

    Raises:
        HistoryError: the history path or its sidecar's is a folder (nothing is written).
    """
    path = Path(path)
    sidecar = endpoints_path(path)
    _not_a_folder(path)
    _not_a_folder(sidecar)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = _framed(history).fillna("")
    sentinel = frame[list(SENTINEL_HISTORY_COLUMNS)].astype(str).ne("").any(axis=None)
    if sidecar.exists() or frame["endpoint"].ne(REAL).any() or sentinel:
        # First: a crash between the two writes must never leave a simulated row without its record.
        atomic_write_text(sidecar, _csv(SIDECAR_COLUMNS, frame))
    atomic_write_text(path, _csv(QDRANT_HISTORY_COLUMNS, frame))


def update_history(path: str | Path, rows: pd.DataFrame) -> pd.DataFrame:
    """Read, upsert ``rows`` and write back; returns the whole history."""
    history = upsert(read_history(path), rows)
    write_history(path, history)
    return history


def numeric_history(history: pd.DataFrame) -> pd.DataFrame:
    """The history with numeric columns as floats and ``window_end`` kept as text (tidy, for notebooks)."""
    out = _framed(history).copy()
    for column in (*NUMERIC_COLUMNS, "sentinel_agreement", "sentinel_must_credit"):
        out[column] = pd.to_numeric(out[column].where(out[column] != ""), errors="coerce").astype(float)
    return out


@dataclass(frozen=True)
class WeekHistory:
    """The history file with its tidy sidecars (:mod:`skillbench.ledgers._history_sidecars`).

    Attributes:
        rows: :func:`read_history` (one row per week × model).
        prompts: each week's per-prompt lifts (``run_key, model, prompt, d``; empty for a history without them).
        controls: each week's control verdicts (``HISTORY_CONTROL_COLUMNS``; empty without them).
    """

    rows: pd.DataFrame
    prompts: pd.DataFrame
    controls: pd.DataFrame

    def with_week(self, run_key: str, rows: pd.DataFrame, prompts: pd.DataFrame,
                  controls: pd.DataFrame) -> WeekHistory:
        """This history with one week upserted: its rows by (run key, model), its sidecar rows as a set."""
        return WeekHistory(upsert(self.rows, rows), replace_week(self.prompts, run_key, prompts),
                           replace_week(self.controls, run_key, controls))


def _empty(columns: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=float if c == "d" else str) for c in columns})


def as_week_history(history: pd.DataFrame | WeekHistory | None) -> WeekHistory:
    """A :class:`WeekHistory` from what a caller holds: a bare :func:`read_history` frame has no sidecar rows."""
    if isinstance(history, WeekHistory):
        return history
    rows = history if history is not None else empty_history()
    return WeekHistory(rows, _empty(HISTORY_PROMPT_COLUMNS), _empty(HISTORY_CONTROL_COLUMNS))


def read_week_history(path: str | Path) -> WeekHistory:
    """:func:`read_history` and its two tidy sidecars (absent ones read empty: an old history still reads).

    Raises:
        HistoryError: one line naming the file and line of the history or of a sidecar.
    """
    rows = read_history(path)
    try:
        prompts = read_history_prompts(history_sidecar(path, HISTORY_PROMPTS_SUFFIX))
        controls = read_history_controls(history_sidecar(path, HISTORY_CONTROLS_SUFFIX))
    except LedgerError as exc:
        raise HistoryError(str(exc)) from exc
    return WeekHistory(rows, prompts, controls)


def write_week_history(path: str | Path, history: WeekHistory) -> None:
    """Write the tidy sidecars (when they have rows or exist), then the history (:func:`write_history`).

    Sidecars first, as with the endpoints file: a crash between the writes leaves at most sidecar rows of a week the
    history does not list yet, which nothing reads (a week is found through the history), and the week's next
    write replaces them.

    Raises:
        HistoryError: a path is a folder (nothing is written).
    """
    files = ((history_sidecar(path, HISTORY_PROMPTS_SUFFIX), history.prompts, write_history_prompts),
             (history_sidecar(path, HISTORY_CONTROLS_SUFFIX), history.controls, write_history_controls))
    for sidecar, _, _ in files:
        _not_a_folder(sidecar)
    _not_a_folder(Path(path))
    for sidecar, frame, write in files:
        if not frame.empty or sidecar.exists():
            sidecar.parent.mkdir(parents=True, exist_ok=True)
            write(sidecar, frame)
    write_history(path, history.rows)


def prompt_rows(paired: pd.DataFrame) -> pd.DataFrame:
    """A week's per-prompt lift rows for the prompts sidecar (``model, prompt, d``) from its
    :func:`skillbench.scorecard.paired_differences`."""
    if paired.empty:
        return _empty(HISTORY_PROMPT_COLUMNS).drop(columns="run_key")
    return paired[["model", "prompt", "d"]].astype({"model": str, "prompt": str, "d": float}).reset_index(drop=True)


WOW_COLUMNS = ["model", "prev_lift", "now_lift", "delta", "se", "n", "within", "between", "threshold", "actionable",
               "rule"]


@dataclass
class WeekOverWeek:
    """The week-over-week comparison for one run.

    Attributes:
        ready: four run keys of this endpoint kind exist up to this run.
        n_runs: run keys of this endpoint kind up to and including this run.
        previous: the previous run key of the same kind, if any.
        table: one row per model: :data:`WOW_COLUMNS` — ``prev_lift``/``now_lift`` the two weeks' must lifts,
            ``delta`` (paired: the mean per-prompt difference over the ``n`` prompts both weeks share; unpaired:
            ``now − prev``) with its ``se``, the two half-widths, the threshold, the verdict and the ``rule``
            (:data:`~skillbench.scorecard._noise.PAIRED` or ``UNPAIRED``); empty until ``ready``.
    """

    ready: bool
    n_runs: int
    endpoint: str
    previous: str | None = None
    min_runs: int = WOW_MIN_RUNS
    table: pd.DataFrame = field(default_factory=pd.DataFrame)


def week_over_week(history: pd.DataFrame, run_key: str, lift: pd.DataFrame, endpoint: str, *,
                   window_end: str = "", confidence: float = DEFAULT_CONFIDENCE,
                   min_runs: int = WOW_MIN_RUNS, prompts: pd.DataFrame | None = None) -> WeekOverWeek:
    """Apply the week-over-week rule (:mod:`skillbench.scorecard._noise`) to this run against the history.

    Args:
        history: :func:`read_history` output (strings), which should already contain this run.
        run_key: this run.
        lift: this run's :func:`skillbench.scorecard.lift_table` (``must_lift``, ``must_lift_se``, ``n_pairs``).
        endpoint: this run's endpoint kind; only history rows of the same kind are compared.
        window_end: this run's own window end (its latest run timestamp). A run that is not in the history (a
            partial week) is placed by it among the other weeks; without it, after the latest one.
        confidence: of the t multiplier.
        min_runs: run keys of this kind needed before the rule applies.
        prompts: per-prompt lifts (``run_key, model, prompt, d``) of this run and earlier ones (the prompts
            sidecar). A model whose two weeks share :data:`~skillbench.scorecard._noise.PAIRED_MIN_PROMPTS` or
            more prompts there gets the paired rule; otherwise (None, an old week without per-prompt lifts, too few
            shared prompts) the unpaired one.
    """
    h = numeric_history(history)
    h = h[h["endpoint"] == endpoint]
    if run_key not in set(h["run_key"]):
        now_rows = history_rows(run_key, "", lift, endpoint)
        now_rows["window_end"] = window_end or (h["window_end"].max() if not h.empty else "")
        h = pd.concat([h, numeric_history(now_rows)], ignore_index=True)
    # Weeks in the order they ran: by the end of their run window (parsed, so any timestamp form sorts right),
    # the run key only breaking ties. Run keys need not sort by date.
    windows = h.assign(_end=parse_timestamps(h["window_end"].astype(str))).groupby("run_key")["_end"].max()
    order = (windows.reset_index().sort_values(["_end", "run_key"], kind="stable", na_position="first")
             ["run_key"].tolist())
    upto = order[: order.index(run_key) + 1]
    result = WeekOverWeek(ready=len(upto) >= min_runs, n_runs=len(upto), endpoint=endpoint, min_runs=min_runs)
    if not result.ready:
        return result
    prior = upto[:-1]
    result.previous = prior[-1]
    per_prompt = prompts if prompts is not None else _empty(HISTORY_PROMPT_COLUMNS)
    rows = []
    for rec in lift.itertuples(index=False):
        model = rec.model
        mine = h[h["model"] == model]
        prev = mine[mine["run_key"] == result.previous]
        prev_lift = float(prev["must_lift"].iloc[0]) if len(prev) else float("nan")
        prev_se = float(prev["must_lift_se"].iloc[0]) if len(prev) else float("nan")
        now = float(rec.must_lift)
        earlier = mine[mine["run_key"].isin(prior)]["must_lift"].to_numpy()
        d_now, d_prev = (_prompt_lifts(per_prompt, key, model) for key in (run_key, result.previous))
        if d_now.index.intersection(d_prev.index).size >= noise.PAIRED_MIN_PROMPTS:
            move = noise.paired_week_delta(d_now, d_prev, confidence, prior_lifts=earlier)
        else:
            move = noise.unpaired_week_delta((now, float(rec.must_lift_se)), (prev_lift, prev_se), int(rec.n_pairs),
                                             confidence, prior_lifts=earlier)
        rows.append({"model": model, "prev_lift": prev_lift, "now_lift": now, "delta": move.delta, "se": move.se,
                     "n": move.n, "within": move.within, "between": move.between, "threshold": move.threshold,
                     "actionable": move.verdict, "rule": move.rule})
    result.table = pd.DataFrame(rows, columns=WOW_COLUMNS)
    return result


def _prompt_lifts(prompts: pd.DataFrame, run_key: str, model: str) -> pd.Series:
    """One week × model's per-prompt lifts, indexed by prompt (known values only)."""
    rows = prompts[(prompts["run_key"].astype(str) == run_key) & (prompts["model"].astype(str) == model)]
    return pd.Series(pd.to_numeric(rows["d"], errors="coerce").to_numpy(dtype=float),
                     index=rows["prompt"].astype(str)).dropna()
