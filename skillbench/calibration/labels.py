"""Human labels for judge calibration: export a sheet of rubric items to label, and read it back.

``skillbench labels export RUN_DIR --n 60`` writes ``labels.csv`` with the columns ``run_id, item_index,
item_type, item_text, prompt, answer, verdict, labeler``: ``prompt`` is the question as asked, ``answer`` the
final answer the judge graded, and ``verdict`` and ``labeler`` are left blank for people to fill in (must:
met/missing, bonus: met/absent, avoid: violated/clean). Labelers are as blind as the judge: the judge's own
verdict is not in the sheet, and ``run_id`` is the judge's opaque id (a real run id names the model and the
arm); :func:`read_labels` maps it back. Items are stratified by arm (condition) and item type — an equal share per
stratum where there are enough items, the rest spread over the strata that have more — so the rare avoid
items are not crowded out; rows are shuffled with a recorded seed so the strata do not come in blocks.

``skillbench calibrate RUN_DIR --human labels.csv`` reads the filled sheet back with :func:`read_labels`; a
sheet may repeat an item once per labeler.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from skillbench.ledgers.files import LABELS_FILE, SCORES_FILE
from skillbench.vocab import ALLOWED_VERDICTS, UNGRADED_VERDICTS

LABEL_COLUMNS = ["run_id", "item_index", "item_type", "item_text", "prompt", "answer", "verdict", "labeler"]


class LabelsError(ValueError):
    """A labels file that cannot be read; the message names the file, the row and the value."""


def label_candidates(run_dir: str | Path, *, include_plugin: bool = False) -> pd.DataFrame:
    """Every item that can be labelled: graded items of ``scores.csv``, else every item of a gradeable run.

    Returns:
        ``run_id, item_index, item_type, item_text, prompt, answer, condition``.
    """
    from skillbench.judge.answers import select_runs

    run_dir = Path(run_dir)
    graded: set[tuple[str, int]] | None = None
    scores = run_dir / SCORES_FILE
    if scores.is_file():
        s = pd.read_csv(scores, dtype=str, keep_default_na=False)
        if {"run_id", "item_index"} <= set(s.columns):
            ok = s[~s["verdict"].isin(UNGRADED_VERDICTS)]
            graded = set(zip(ok["run_id"], ok["item_index"].astype(int), strict=True))
    # With a ledger, what was graded decides (plugin runs included when they were graded).
    runs, _ = select_runs(run_dir, include_plugin=include_plugin or graded is not None)
    by_id = {r.run_id: r for r in runs}
    rows = []
    for run in by_id.values():
        for index, kind, text in run.items:
            if graded is not None and (run.run_id, index) not in graded:
                continue
            rows.append({"run_id": run.run_id, "item_index": index, "item_type": kind, "item_text": text,
                         "prompt": run.prompt_text, "answer": run.answer, "condition": run.condition})
    columns = [*LABEL_COLUMNS[:6], "condition"]
    return pd.DataFrame(rows, columns=columns).sort_values(["run_id", "item_index"]).reset_index(drop=True)


def allocate(sizes: Sequence[int], n: int) -> list[int]:
    """Split ``n`` over strata of the given sizes: equal shares, capped by size, leftovers to larger strata."""
    take = [0] * len(sizes)
    left = min(n, sum(sizes))
    while left > 0:
        open_ = [i for i, size in enumerate(sizes) if take[i] < size]
        share = max(1, left // len(open_))
        for i in open_:
            add = min(share, sizes[i] - take[i], left)
            take[i] += add
            left -= add
            if left == 0:
                break
    return take


def sample_labels(candidates: pd.DataFrame, n: int, *, seed: int = 0) -> pd.DataFrame:
    """``n`` items stratified by (condition, item type), shuffled; blank ``verdict`` and ``labeler``."""
    rng = random.Random(f"labels:{seed}")
    strata = [g for _, g in candidates.groupby(["condition", "item_type"], sort=True)]
    counts = allocate([len(g) for g in strata], n)
    picked = [g.iloc[sorted(rng.sample(range(len(g)), k))] for g, k in zip(strata, counts, strict=True) if k]
    out = pd.concat(picked, ignore_index=True) if picked else candidates.iloc[0:0]
    order = list(range(len(out)))
    rng.shuffle(order)
    out = out.iloc[order].reset_index(drop=True)
    return out.assign(verdict="", labeler="")[LABEL_COLUMNS]


def export_labels(run_dir: str | Path, n: int = 60, *, seed: int = 0, out: str | Path | None = None,
                  include_plugin: bool = False, overwrite: bool = False) -> tuple[Path, pd.DataFrame]:
    """Write the labelling sheet (default ``RUN_DIR/labels.csv``).

    Raises:
        LabelsError: the file exists (it may hold someone's labels) and ``overwrite`` is false, or there is
            nothing to label.
    """
    from skillbench.ledgers.atomic import atomic_write_text

    path = Path(out) if out else Path(run_dir) / LABELS_FILE
    if path.exists() and not overwrite:
        raise LabelsError(f"{path} exists (it may hold labels); pass --out elsewhere or --force to replace it")
    candidates = label_candidates(run_dir, include_plugin=include_plugin)
    if candidates.empty:
        raise LabelsError(f"{run_dir}: no graded item to label (run skillbench judge first)")
    from skillbench.judge.client import opaque_run_id

    sheet = sample_labels(candidates, n, seed=seed)
    sheet["run_id"] = sheet["run_id"].map(opaque_run_id)
    atomic_write_text(path, sheet.to_csv(index=False))
    return path, sheet


def read_labels(path: str | Path, run_ids: Sequence[str] = ()) -> pd.DataFrame:
    """Read a filled labels file; rows with a blank verdict are left out.

    Args:
        path: the filled sheet.
        run_ids: the week's run ids, to map the sheet's opaque ids back (ids already real are kept).

    Returns:
        ``run_id, item_index, item_type, item_text, prompt, verdict, labeler`` (``labeler`` ``human`` when
        blank; verdicts lower-cased).

    Raises:
        LabelsError: a missing column, a non-integer item index, an unknown item type, or a verdict that is
            not allowed for the item's type.
    """
    path = Path(path)
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise LabelsError(f"{path}: cannot be read as CSV ({exc})") from exc
    missing = [c for c in ("run_id", "item_index", "item_type", "verdict") if c not in raw.columns]
    if missing:
        raise LabelsError(f"{path}: missing column(s) {', '.join(missing)}")
    for c in ("item_text", "prompt", "labeler"):
        if c not in raw.columns:
            raw[c] = ""
    raw["verdict"] = raw["verdict"].str.strip().str.lower()
    raw["labeler"] = raw["labeler"].str.strip().replace("", "human")
    rows = raw[raw["verdict"] != ""]
    for pos, row in rows.iterrows():
        line = pos + 2  # the header is line 1
        if not row["item_index"].strip().isdigit():
            raise LabelsError(f"{path}: row {line}: item_index {row['item_index']!r} is not an integer")
        kind = row["item_type"].strip()
        if kind not in ALLOWED_VERDICTS:
            raise LabelsError(f"{path}: row {line}: item_type {kind!r} is not must/bonus/avoid")
        if row["verdict"] not in ALLOWED_VERDICTS[kind]:
            raise LabelsError(f"{path}: row {line}: verdict {row['verdict']!r} is not allowed for a {kind} item "
                              f"(one of {'/'.join(ALLOWED_VERDICTS[kind])})")
    from skillbench.judge.client import opaque_run_id

    real = {opaque_run_id(r): r for r in run_ids}
    out = rows.assign(item_index=rows["item_index"].astype(int), item_type=rows["item_type"].str.strip(),
                      run_id=rows["run_id"].map(lambda r: real.get(r, r)))
    return out[["run_id", "item_index", "item_type", "item_text", "prompt", "verdict", "labeler"]].reset_index(
        drop=True)
