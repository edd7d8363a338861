"""Several raters of one item: the gradings whose disagreements a sheet over-samples, the second labeler's copy
of a sheet, and ``skillbench labels merge``.

:func:`read_grades` reads any gradings file (``calibration-grades.csv``, ``judge-study/study-grades.csv``) and
:func:`disagreement_items` lists the items its raters are not unanimous on.

``labels export RUN_DIR --same-as labels.csv --labeler B --out labels-b.csv`` writes the items of a first sheet, in
its order, for another person (:func:`same_items`). ``labels merge A.csv B.csv … --out merged.csv``
(:func:`merge_labels`) combines the filled sheets into one that :func:`~skillbench.calibration.labels.read_labels`
reads (an item once per labeler), after checking that each file is a labels sheet of one labeler, that the
labelers differ, and that an item — identified by ``(run_id, item_index)`` — has the same type and text in every
file. Each refusal is one line naming the file (and the row).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from skillbench.calibration.labels import LABEL_COLUMNS, LabelsError, check_label_row
from skillbench.vocab import ALLOWED_VERDICTS

SHEET_NEEDS = ("run_id", "item_index", "item_type", "item_text", "verdict", "labeler")
GRADE_NEEDS = ("run_id", "item_index", "item_type", "rater", "verdict")


@dataclass
class MergedLabels:
    """What ``labels merge`` wrote and counted."""

    path: Path
    sheet: pd.DataFrame  # LABEL_COLUMNS, one row per item per labeler
    labelers: list[str]
    items: int
    by_all: int  # items every labeler labelled
    by_some: int  # items labelled by some labelers, not all
    disagreements: pd.DataFrame  # run_id, item_index, item_type, item_text, one verdict column per labeler


def read_grades(path: str | Path) -> pd.DataFrame:
    """A gradings file (``calibration-grades.csv``, ``study-grades.csv``): ``run_id, item_index, item_type,
    rater, verdict, positive`` (``positive`` recomputed from the verdict; ungraded rows left out).

    Raises:
        LabelsError: the file cannot be read or lacks a column of a gradings file.
    """
    from skillbench.calibration.agreement import positive

    path = Path(path)
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise LabelsError(f"{path}: cannot be read as CSV ({exc})") from exc
    missing = [c for c in GRADE_NEEDS if c not in raw.columns]
    if missing:
        raise LabelsError(f"{path}: not a gradings file (missing column(s) {', '.join(missing)}) — pass "
                          "calibration-grades.csv or judge-study/study-grades.csv")
    bad = raw.index[~raw["item_index"].str.strip().str.isdigit()]
    if len(bad):
        raise LabelsError(f"{path}: row {bad[0] + 2}: item_index {raw.at[bad[0], 'item_index']!r} is not an integer")
    out = raw.assign(item_index=raw["item_index"].astype(int), positive=positive(raw["verdict"]))
    return out[out["positive"].notna()][[*GRADE_NEEDS, "positive"]].reset_index(drop=True)


def disagreement_items(grades: pd.DataFrame) -> set[tuple[str, int]]:
    """Items (run_id, item_index) whose raters are not unanimous (an item graded once cannot disagree)."""
    spread = grades.groupby(["run_id", "item_index"])["positive"].nunique()
    return set(spread[spread > 1].index)


def read_sheet(path: str | Path) -> pd.DataFrame:
    """A labels sheet as text (verdicts lower-cased, blanks kept), every row's index and type checked.

    Raises:
        LabelsError: not a CSV, not a labels sheet (a column missing), or a row with a bad index, type or verdict.
    """
    path = Path(path)
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise LabelsError(f"{path}: not a labels sheet (cannot be read as CSV: {exc})") from exc
    missing = [c for c in SHEET_NEEDS if c not in raw.columns]
    if missing:
        raise LabelsError(f"{path}: not a labels sheet (missing column(s) {', '.join(missing)}) — pass a file "
                          "written by skillbench labels export")
    for c in ("prompt", "answer"):
        if c not in raw.columns:
            raw[c] = ""
    raw = raw.assign(verdict=raw["verdict"].str.strip().str.lower(), labeler=raw["labeler"].str.strip(),
                     item_type=raw["item_type"].str.strip(), item_index=raw["item_index"].str.strip())
    for pos, row in raw.iterrows():
        line = pos + 2  # the header is line 1
        if row["verdict"]:
            check_label_row(path, line, row)
        elif not row["item_index"].isdigit() or row["item_type"] not in ALLOWED_VERDICTS:
            raise LabelsError(f"{path}: row {line}: not a labels row (item_index {row['item_index']!r}, "
                              f"item_type {row['item_type']!r})")
    return raw[LABEL_COLUMNS]


def same_items(source: Path, candidates: pd.DataFrame, labeler: str) -> pd.DataFrame:
    """The items of ``source`` in its order, fresh from the week's candidates (blank verdicts: nothing of the
    first labeler's reaches the second).

    Raises:
        LabelsError: ``source`` is not a sheet, names an item the week does not have, or is already ``labeler``'s.
    """
    from skillbench.judge.client import opaque_run_id

    first = read_sheet(source)
    if labeler and set(first["labeler"]) - {""} == {labeler}:
        raise LabelsError(f"{source}: already labelled by {labeler!r}; the second sheet needs another --labeler")
    by_key = candidates.set_index([candidates["run_id"].map(opaque_run_id), "item_index"])
    rows = []
    for pos, row in first.iterrows():
        key = (row["run_id"], int(row["item_index"]))
        if key not in by_key.index:  # a sheet whose ids were mapped back to real ones
            key = (opaque_run_id(row["run_id"]), key[1])
        if key not in by_key.index or by_key.loc[key, "item_text"] != row["item_text"]:
            raise LabelsError(f"{source}: row {pos + 2}: item ({row['run_id']}, {row['item_index']}) is not a "
                              "graded item of this week — pass the week the sheet was exported from")
        rows.append({**by_key.loc[key].to_dict(), "item_index": key[1]})
    return pd.DataFrame(rows).assign(verdict="", labeler="")[LABEL_COLUMNS]


def _labeler(path: Path, sheet: pd.DataFrame) -> str:
    """The one labeler of a sheet; unlabelled rows without a name are that labeler's too."""
    names = sorted(set(sheet["labeler"]) - {""})
    if len(names) != 1:
        found = f"labelers {', '.join(map(repr, names))}" if names else "no labeler name"
        raise LabelsError(f"{path}: {found} — a sheet to merge is one person's: fill its labeler column with one "
                          "name (or export it with --labeler NAME)")
    nameless = sheet.index[sheet["labeler"].eq("") & sheet["verdict"].ne("")]
    if len(nameless):
        raise LabelsError(f"{path}: row {nameless[0] + 2}: a verdict without a labeler (the others are "
                          f"{names[0]!r}) — fill the labeler column")
    return names[0]


def merge_labels(paths: list[str | Path], out: str | Path, *, overwrite: bool = False) -> MergedLabels:
    """Combine one labels sheet per labeler into one sheet with an item once per labeler.

    Args:
        paths: two or more filled sheets (from ``labels export``, one labeler each).
        out: the merged sheet.
        overwrite: replace ``out`` when it exists.

    Raises:
        LabelsError: fewer than two files, ``out`` exists, a file is not a sheet or not one labeler's, two files
            have the same labeler, a file repeats an item, or an item's type or text differs between files.
    """
    from skillbench.calibration.agreement import positive
    from skillbench.ledgers.atomic import atomic_write_text

    out = Path(out)
    if len(paths) < 2:
        raise LabelsError("labels merge: give two or more sheets (one per labeler)")
    if out.exists() and not overwrite:
        raise LabelsError(f"{out} exists (it may hold labels); pass --out elsewhere or --force to replace it")
    given = [Path(p).resolve() for p in paths]
    twice = next((p for i, p in enumerate(paths) if given[i] in given[:i]), None)
    if twice is not None:
        raise LabelsError(f"{twice}: given twice — merge one sheet per labeler")
    sheets: list[pd.DataFrame] = []
    owner: dict[str, Path] = {}
    first_seen: dict[tuple[str, int], tuple[Path, int, str, str]] = {}
    for p in map(Path, paths):
        sheet = read_sheet(p)
        name = _labeler(p, sheet)
        if name in owner:
            raise LabelsError(f"{owner[name]} and {p}: both are labeler {name!r} — each file is one person's; "
                              "rename one in its labeler column")
        owner[name] = p
        for pos, row in sheet.iterrows():
            key = (row["run_id"], int(row["item_index"]))
            seen = first_seen.get(key)
            if seen is None:
                first_seen[key] = (p, pos + 2, row["item_type"], row["item_text"])
            elif seen[0] == p:
                raise LabelsError(f"{p}: row {pos + 2}: item ({key[0]}, {key[1]}) is also row {seen[1]} — one "
                                  "row per item in a labeler's sheet")
            elif (seen[2], seen[3]) != (row["item_type"], row["item_text"]):
                raise LabelsError(f"{p}: row {pos + 2}: item ({key[0]}, {key[1]}) is a {row['item_type']} "
                                  f"{row['item_text']!r} but {seen[0]} row {seen[1]} has a {seen[2]} {seen[3]!r} — "
                                  "merge sheets exported for the same items (labels export --same-as)")
        sheets.append(sheet.assign(labeler=name))
    order = {key: i for i, key in enumerate(first_seen)}
    merged = pd.concat(sheets, ignore_index=True)
    merged = merged.assign(_item=[order[(r, int(i))] for r, i in zip(merged["run_id"], merged["item_index"],
                                                                          strict=True)])
    merged = merged.sort_values("_item", kind="stable").drop(columns="_item").reset_index(drop=True)
    atomic_write_text(out, merged[LABEL_COLUMNS].to_csv(index=False))
    done = merged[merged["verdict"].ne("")].assign(positive=lambda f: positive(f["verdict"]))
    keys = ["run_id", "item_index", "item_type", "item_text"]
    wide = done.pivot_table(index=keys, columns="labeler", values="verdict", aggfunc="first").reindex(
        columns=list(owner))
    n_labelled = wide.notna().sum(axis=1)
    spread = done.groupby(keys)["positive"].nunique().reindex(wide.index)
    disagree = wide[(n_labelled >= 2) & (spread > 1)].reset_index()
    disagree.columns.name = None
    by_all = int((n_labelled == len(owner)).sum())
    by_some = int(((n_labelled > 0) & (n_labelled < len(owner))).sum())
    return MergedLabels(out, merged[LABEL_COLUMNS], list(owner), len(first_seen), by_all, by_some, disagree)
