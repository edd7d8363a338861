"""``scorecard-history.csv``: one row per run × model, and the week-over-week rule that reads it.

The file is qdrant's 8 columns (``run_key, window_end, model, must_lift, must_lift_se, composite_lift,
cost_delta, turns_delta``) then ours, ``endpoint`` (``real``/``simulated``/…). It is written the way qdrant's
``csv`` writer writes it (numbers with 6 decimals, empty for unknown, CRLF line ends), so upserting a week into
their file leaves their rows byte-identical; a qdrant file without ``endpoint`` reads as ``real`` (their runner
only ever called the real API). ``window_end`` is the latest run ``timestamp`` of the week.

Upsert is idempotent and keyed on (run key, model): a row is replaced in place, a new one appended.

Week over week, among weeks of the **same endpoint kind only** (a simulated week never enters real-week
statistics), ordered by ``window_end``:

* until four run keys exist up to this one: "Will be computed after four runs.";
* then ``Δ = now − previous``, ``t·SE_Δ`` with ``SE_Δ = √(SE_now² + SE_prev²)`` (t at this week's pairs − 1),
  the between-week σ (population SD of the *prior* weekly lifts, needs ≥ 2), ``threshold = max`` of the two,
  actionable when ``|Δ| > threshold``.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from skillbench.ledgers.atomic import atomic_write_text
from skillbench.ledgers.columns import HISTORY_COLUMNS, QDRANT_HISTORY_COLUMNS
from skillbench.scorecard import noise
from skillbench.scorecard.stats import DEFAULT_CONFIDENCE
from skillbench.vocab import REAL

NUMERIC_COLUMNS: tuple[str, ...] = QDRANT_HISTORY_COLUMNS[3:]
LEGACY_ENDPOINT = REAL
WOW_MIN_RUNS = 4
KEY = ["run_key", "model"]


class HistoryError(ValueError):
    """A history file that cannot be read; the message names the file and column."""


def empty_history() -> pd.DataFrame:
    """A history with no rows."""
    return pd.DataFrame({c: pd.Series(dtype=str) for c in HISTORY_COLUMNS})


def read_history(path: str | Path) -> pd.DataFrame:
    """Read ``scorecard-history.csv`` as strings (so rewriting never reformats a row); empty when absent.

    Raises:
        HistoryError: unreadable, or one of qdrant's 8 columns is missing.
    """
    path = Path(path)
    if not path.is_file():
        return empty_history()
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise HistoryError(f"{path}: not a readable CSV: {str(exc).splitlines()[0]}") from exc
    missing = [c for c in QDRANT_HISTORY_COLUMNS if c not in df.columns]
    if missing:
        raise HistoryError(f"{path}: missing column(s) {', '.join(missing)}")
    if "endpoint" not in df.columns:
        df["endpoint"] = LEGACY_ENDPOINT
    for column in NUMERIC_COLUMNS:
        bad = pd.to_numeric(df[column].where(df[column] != ""), errors="coerce").isna() & (df[column] != "")
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise HistoryError(f"{path}: column {column!r}, row {row + 2}: {df[column].iloc[row]!r} is not a number")
    return df[list(HISTORY_COLUMNS)].reset_index(drop=True)


def _num(value: float) -> str:
    return "" if value is None or pd.isna(value) else f"{value:.6f}"


def history_rows(run_key: str, window_end: str, lift: pd.DataFrame, endpoint: str) -> pd.DataFrame:
    """This week's history rows, formatted as qdrant formats them.

    Args:
        run_key: the week's run key.
        window_end: latest run timestamp, e.g. ``20260808T081641Z``.
        lift: :func:`skillbench.stats.lift_table` output (``model, must_lift, must_lift_se, composite_lift,
            cost_delta, turns_delta``), in the order the rows should be written.
        endpoint: ``real``, ``simulated``, …
    """
    rows = pd.DataFrame({"run_key": run_key, "window_end": window_end, "model": lift["model"].astype(str)})
    for column in NUMERIC_COLUMNS:
        rows[column] = [_num(v) for v in lift[column]]
    rows["endpoint"] = endpoint
    return rows[list(HISTORY_COLUMNS)].reset_index(drop=True)


def upsert(history: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Replace rows keyed on (run key, model) in place and append new keys; idempotent."""
    history = history.reset_index(drop=True).copy()
    position = {(k, m): i for i, (k, m) in enumerate(zip(history["run_key"], history["model"], strict=True))}
    extra = []
    for row in rows[list(HISTORY_COLUMNS)].itertuples(index=False):
        i = position.get((row.run_key, row.model))
        if i is None:
            extra.append(row._asdict())
        else:
            history.loc[i, list(HISTORY_COLUMNS)] = list(row)
    if extra:
        history = pd.concat([history, pd.DataFrame(extra, columns=list(HISTORY_COLUMNS))], ignore_index=True)
    return history


def write_history(path: str | Path, history: pd.DataFrame) -> None:
    """Write the history as qdrant's ``csv.DictWriter`` does (minimal quoting, CRLF)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(HISTORY_COLUMNS)
    writer.writerows(history[list(HISTORY_COLUMNS)].itertuples(index=False, name=None))
    atomic_write_text(path, buf.getvalue())


def update_history(path: str | Path, rows: pd.DataFrame) -> pd.DataFrame:
    """Read, upsert ``rows`` and write back; returns the whole history."""
    history = upsert(read_history(path), rows)
    write_history(path, history)
    return history


def numeric_history(history: pd.DataFrame) -> pd.DataFrame:
    """The history with numeric columns as floats and ``window_end`` kept as text (tidy, for notebooks)."""
    out = history.copy()
    for column in NUMERIC_COLUMNS:
        out[column] = pd.to_numeric(out[column].where(out[column] != ""), errors="coerce").astype(float)
    return out


@dataclass
class WeekOverWeek:
    """The week-over-week comparison for one run.

    Attributes:
        ready: four run keys of this endpoint kind exist up to this run.
        n_runs: run keys of this endpoint kind up to and including this run.
        previous: the previous run key of the same kind, if any.
        table: one row per model: ``model, prev_lift, now_lift, delta, within, between, threshold,
            actionable`` (empty until ``ready``).
    """

    ready: bool
    n_runs: int
    endpoint: str
    previous: str | None = None
    min_runs: int = WOW_MIN_RUNS
    table: pd.DataFrame = field(default_factory=pd.DataFrame)


def week_over_week(history: pd.DataFrame, run_key: str, lift: pd.DataFrame, endpoint: str, *,
                   confidence: float = DEFAULT_CONFIDENCE, min_runs: int = WOW_MIN_RUNS) -> WeekOverWeek:
    """Apply the week-over-week rule to this run against the history (which should already contain it).

    Args:
        history: :func:`read_history` output (strings).
        run_key: this run.
        lift: this run's :func:`skillbench.stats.lift_table` (``must_lift``, ``must_lift_se``, ``n_pairs``).
        endpoint: this run's endpoint kind; only history rows of the same kind are compared.
    """
    h = numeric_history(history)
    h = h[h["endpoint"] == endpoint]
    if run_key not in set(h["run_key"]):
        now_rows = history_rows(run_key, "", lift, endpoint)
        now_rows["window_end"] = h["window_end"].max() if not h.empty else ""
        h = pd.concat([h, numeric_history(now_rows)], ignore_index=True)
    order = (h.groupby("run_key")["window_end"].max().reset_index()
             .sort_values(["window_end", "run_key"], kind="stable")["run_key"].tolist())
    upto = order[: order.index(run_key) + 1]
    result = WeekOverWeek(ready=len(upto) >= min_runs, n_runs=len(upto), endpoint=endpoint, min_runs=min_runs)
    if not result.ready:
        return result
    prior = upto[:-1]
    result.previous = prior[-1]
    rows = []
    for rec in lift.itertuples(index=False):
        model = rec.model
        mine = h[h["model"] == model]
        prev = mine[mine["run_key"] == result.previous]
        prev_lift = float(prev["must_lift"].iloc[0]) if len(prev) else float("nan")
        prev_se = float(prev["must_lift_se"].iloc[0]) if len(prev) else float("nan")
        now, se_now = float(rec.must_lift), float(rec.must_lift_se)
        delta = now - prev_lift
        within = noise.within_noise(se_now, prev_se, int(rec.n_pairs) - 1, confidence)
        between = noise.between_noise(mine[mine["run_key"].isin(prior)]["must_lift"].to_numpy())
        limit = noise.threshold(within, between)
        actionable = noise.moved(delta, limit)
        rows.append({"model": model, "prev_lift": prev_lift, "now_lift": now, "delta": delta, "within": within,
                     "between": between, "threshold": limit, "actionable": actionable})
    result.table = pd.DataFrame(rows, columns=["model", "prev_lift", "now_lift", "delta", "within", "between",
                                               "threshold", "actionable"])
    return result
