"""Human labels for judge calibration: export a sheet of rubric items to label, and read it back.

``skillbench labels export RUN_DIR --n 60`` writes ``labels.csv`` with the columns ``run_id, item_index,
item_type, item_text, prompt, answer, verdict, labeler``: ``prompt`` is the question as asked, ``answer`` the
final answer the judge graded, and ``verdict`` and ``labeler`` are left blank for people to fill in (must:
met/missing, bonus: met/absent, avoid: violated/clean). Labelers are as blind as the judge: the judge's own
verdict is not in the sheet, and ``run_id`` is the judge's opaque id (a real run id names the model and the
arm); :func:`read_labels` maps it back. Items are stratified by arm (condition) and item type — an equal share per
stratum where there are enough items, the rest spread over the strata that have more — so the rare avoid
items are not crowded out; rows are shuffled with a recorded seed so the strata do not come in blocks.

``--disagreements GRADES_CSV …`` (any file with :data:`~skillbench.calibration._agreement.GRADE_COLUMNS`:
``calibration-grades.csv``, ``judge-study/study-grades.csv``) marks the items on which the raters of those files
are not unanimous: they are the informative ones to label. Each arm × item type stratum is split by
disagreement; the disagreement strata get up to ``disagreement_share`` of the sheet (default half; all of them
when there are fewer), the other strata the rest, each part allocated as above. ``--labeler NAME`` pre-fills the
labeler column; ``--same-as SHEET`` writes the same items in the same order for a second labeler. Every sheet gets a
companion ``<sheet>.json`` (``labels.json`` beside ``labels.csv``) recording how it was drawn — seed, files,
share, per-stratum counts, never a verdict — so the CSV stays plain for :func:`read_labels` and spreadsheets.

``skillbench calibrate RUN_DIR --human labels.csv`` reads the filled sheet back with :func:`read_labels`; a
sheet may repeat an item once per labeler (``skillbench labels merge``, below), and then
:func:`inter_human` measures the labelers against each other: the ceiling any judge can reach.

Several raters of one item: :func:`read_grades` reads any gradings file (``calibration-grades.csv``,
``judge-study/study-grades.csv``) and :func:`disagreement_items` lists the items its raters are not unanimous on.
``labels export RUN_DIR --same-as labels.csv --labeler B --out labels-b.csv`` writes the items of a first sheet, in
its order, for another person (:func:`same_items`). ``labels merge A.csv B.csv … --out merged.csv``
(:func:`merge_labels`) combines the filled sheets into one that :func:`read_labels` reads (an item once per
labeler), after checking that each file is a labels sheet of one labeler, that the labelers differ, and that an
item — identified by ``(run_id, item_index)`` — has the same type and text in every file. Each refusal is one line
naming the file (and the row).
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.ledgers import LABELS_FILE, SCORES_FILE, read_cells
from skillbench.vocab import ALLOWED_VERDICTS, UNGRADED_VERDICTS

LABEL_COLUMNS = ["run_id", "item_index", "item_type", "item_text", "prompt", "answer", "verdict", "labeler"]
INTER_HUMAN = "human vs human"
INTER_HUMAN_ALL = "human vs human (all)"
DEFAULT_DISAGREEMENT_SHARE = 0.5


class LabelsError(ValueError):
    """A labels file that cannot be read; the message names the file, the row and the value."""


def label_candidates(run_dir: str | Path, *, include_plugin: bool = False) -> pd.DataFrame:
    """Every item that can be labelled: graded items of ``scores.csv``, else every item of a gradeable run.

    Returns:
        ``run_id, item_index, item_type, item_text, prompt, answer, condition``.
    """
    from skillbench.judge import select_runs

    run_dir = Path(run_dir)
    graded: set[tuple[str, int]] | None = None
    scores = run_dir / SCORES_FILE
    if scores.is_file():
        s = read_cells(scores)
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


def _stratified(candidates: pd.DataFrame, n: int, rng: random.Random, keys: list[str]) -> pd.DataFrame:
    """``n`` items of ``candidates`` allocated over the ``keys`` strata, each stratum sampled by ``rng``."""
    strata = [g for _, g in candidates.groupby(keys, sort=True)]
    counts = allocate([len(g) for g in strata], n)
    picked = [g.iloc[sorted(rng.sample(range(len(g)), k))] for g, k in zip(strata, counts, strict=True) if k]
    return pd.concat(picked, ignore_index=True) if picked else candidates.iloc[0:0]


def _shuffled(frame: pd.DataFrame, rng: random.Random) -> pd.DataFrame:
    order = list(range(len(frame)))
    rng.shuffle(order)
    return frame.iloc[order].reset_index(drop=True)


def sample_labels(candidates: pd.DataFrame, n: int, *, seed: int = 0) -> pd.DataFrame:
    """``n`` items stratified by (condition, item type), shuffled; blank ``verdict`` and ``labeler``."""
    rng = random.Random(f"labels:{seed}")
    out = _shuffled(_stratified(candidates, n, rng, ["condition", "item_type"]), rng)
    return out.assign(verdict="", labeler="")[LABEL_COLUMNS]


def sample_informative(candidates: pd.DataFrame, n: int, disagreements: set[tuple[str, int]], *,
                       share: float = DEFAULT_DISAGREEMENT_SHARE, seed: int = 0) -> tuple[pd.DataFrame, list[dict]]:
    """``n`` items with the raters' disagreements over-sampled: up to ``share`` of the sheet, topped up when the
    other items run short; each part stratified by (condition, item type), the whole shuffled.

    Returns:
        ``(sheet, strata)``: the sheet (:data:`LABEL_COLUMNS`, blank verdict and labeler) and one record per
        (condition, item type, disagreement) stratum with its ``candidates`` and ``picked`` counts.
    """
    rng = random.Random(f"labels:{seed}:disagreements")
    keys = pd.Series(list(zip(candidates["run_id"], candidates["item_index"], strict=True)), index=candidates.index)
    cand = candidates.assign(disagreement=keys.isin(disagreements))
    dis, rest = cand[cand["disagreement"]], cand[~cand["disagreement"]]
    n = min(n, len(cand))
    n_rest = min(len(rest), n - min(len(dis), math.floor(share * n + 0.5)))
    n_dis = n - n_rest  # the top-up: disagreement items fill what the others cannot
    strata_keys = ["condition", "item_type"]
    picked = pd.concat([_stratified(dis, n_dis, rng, strata_keys), _stratified(rest, n_rest, rng, strata_keys)],
                       ignore_index=True)
    out = _shuffled(picked, rng)
    sizes = cand.groupby([*strata_keys, "disagreement"]).size()
    got = out.groupby([*strata_keys, "disagreement"]).size()
    strata = [{"condition": c, "item_type": t, "disagreement": bool(d), "candidates": int(k),
               "picked": int(got.get((c, t, d), 0))} for (c, t, d), k in sizes.items()]
    return out.assign(verdict="", labeler="")[LABEL_COLUMNS], strata


def companion_path(sheet: str | Path) -> Path:
    """Where a sheet's companion goes: ``labels.csv`` → ``labels.json``."""
    return Path(sheet).with_suffix(".json")


def _check_companion(sheet: Path) -> None:
    """Refuse to replace a ``.json`` beside the sheet that is not a sheet's companion (``--out run.csv``)."""
    companion = companion_path(sheet)
    if not companion.exists():
        return
    try:
        ours = json.loads(companion.read_text()).get("sheet") == sheet.name
    except (OSError, ValueError, AttributeError):
        ours = False
    if not ours:
        raise LabelsError(f"{companion} exists and is not the companion of {sheet.name} (it would be replaced); "
                          "choose another --out")


@dataclass(frozen=True)
class SheetOptions:
    """Which items a labelling sheet draws, and for whom."""

    n: int = 60  # items to draw (ignored with ``same_as``)
    seed: int = 0  # seed of the sample and its order
    include_plugin: bool = False  # label plugin-arm runs too
    labeler: str = ""  # pre-filled in every row
    disagreements: Sequence[str | Path] = ()  # gradings files whose raters' disagreements are over-sampled
    disagreement_share: float = DEFAULT_DISAGREEMENT_SHARE  # the most of the sheet they take (0 < share ≤ 1)
    same_as: str | Path | None = None  # a sheet of this week whose items (in its order) this one repeats


def export_labels(run_dir: str | Path, options: SheetOptions | None = None, *, out: str | Path | None = None,
                  overwrite: bool = False) -> tuple[Path, pd.DataFrame]:
    """Write the labelling sheet (default ``RUN_DIR/labels.csv``) and its companion ``<sheet>.json``.

    Args:
        run_dir: a judged week.
        options: the items to draw (None: 60 items, seed 0).
        out: where to write.
        overwrite: replace an existing sheet.

    Raises:
        LabelsError: the file exists (it may hold someone's labels) and ``overwrite`` is false, there is nothing
            to label, a gradings file is unreadable, or ``same_as`` is not a sheet of this week.
    """
    from skillbench.judge import opaque_run_id
    from skillbench.ledgers import atomic_write_text

    o = options or SheetOptions()
    n, seed, labeler, same_as, disagreements = o.n, o.seed, o.labeler, o.same_as, o.disagreements
    disagreement_share, include_plugin = o.disagreement_share, o.include_plugin
    path = Path(out) if out else Path(run_dir) / LABELS_FILE
    if path.exists() and not overwrite:
        raise LabelsError(f"{path} exists (it may hold labels); pass --out elsewhere or --force to replace it")
    _check_companion(path)
    if not 0 < disagreement_share <= 1:
        raise LabelsError(f"disagreement share {disagreement_share}: must be above 0 and at most 1")
    candidates = label_candidates(run_dir, include_plugin=include_plugin)
    if candidates.empty:
        raise LabelsError(f"{run_dir}: no graded item to label (run skillbench judge first)")
    record: dict[str, Any] = {"run_dir": str(run_dir), "seed": seed, "labeler": labeler}
    if same_as is not None:
        sheet, record["same_as"] = same_items(Path(same_as), candidates, labeler), str(same_as)
    elif disagreements:
        # Files may carry real or opaque run ids: both map to the week's real id.
        ids = {**{opaque_run_id(r): r for r in candidates["run_id"]}, **{r: r for r in candidates["run_id"]}}
        frames = []
        for f in disagreements:
            g = read_grades(f)
            g = g.assign(run_id=g["run_id"].map(ids)).dropna(subset=["run_id"])
            if g.empty:
                raise LabelsError(f"{f}: no grading of an item of {run_dir} — pass this week's gradings file")
            frames.append(g)
        grades = pd.concat(frames, ignore_index=True)
        informative = disagreement_items(grades) & set(zip(candidates["run_id"], candidates["item_index"],
                                                           strict=True))
        sheet, strata = sample_informative(candidates, n, informative, share=disagreement_share, seed=seed)
        record["disagreements"] = {
            "files": [str(f) for f in disagreements], "share": disagreement_share,
            "rule": "an item is a disagreement when the raters of these files are not unanimous",
            "items_rated": int(grades.groupby(["run_id", "item_index"]).ngroups),
            "disagreement_items": len(informative),
            "picked": sum(s["picked"] for s in strata if s["disagreement"]), "strata": strata}
    else:
        sheet = sample_labels(candidates, n, seed=seed)
    record["n"] = len(sheet)
    sheet["run_id"] = sheet["run_id"].map(opaque_run_id)
    sheet["labeler"] = labeler
    atomic_write_text(path, sheet.to_csv(index=False))
    atomic_write_text(companion_path(path), json.dumps({"sheet": path.name, **record}, indent=2) + "\n")
    return path, sheet


def check_label_row(path: Path, line: int, row: pd.Series) -> None:
    """Refuse a labelled row whose index, type or verdict is not valid (one line naming file and row)."""
    if not str(row["item_index"]).strip().isdigit():
        raise LabelsError(f"{path}: row {line}: item_index {row['item_index']!r} is not an integer")
    kind = row["item_type"].strip()
    if kind not in ALLOWED_VERDICTS:
        raise LabelsError(f"{path}: row {line}: item_type {kind!r} is not must/bonus/avoid")
    if row["verdict"] not in ALLOWED_VERDICTS[kind]:
        raise LabelsError(f"{path}: row {line}: verdict {row['verdict']!r} is not allowed for a {kind} item "
                          f"(one of {'/'.join(ALLOWED_VERDICTS[kind])})")


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
        check_label_row(path, pos + 2, row)  # the header is line 1
    from skillbench.judge import opaque_run_id

    real = {opaque_run_id(r): r for r in run_ids}
    out = rows.assign(item_index=rows["item_index"].astype(int), item_type=rows["item_type"].str.strip(),
                      run_id=rows["run_id"].map(lambda r: real.get(r, r)))
    return out[["run_id", "item_index", "item_type", "item_text", "prompt", "verdict", "labeler"]].reset_index(
        drop=True)


def human_grades(labels: pd.DataFrame) -> pd.DataFrame:
    """Filled label rows (:func:`read_labels`) as gradings, one rater per labeler."""
    from skillbench.calibration._agreement import GRADE_COLUMNS, positive

    out = labels.assign(rater="human:" + labels["labeler"], model="", condition="", flagged=False, reason="")
    out["positive"] = positive(out["verdict"])
    return out.reindex(columns=GRADE_COLUMNS)


def inter_human(labels: pd.DataFrame) -> pd.DataFrame:
    """Agreement between labelers, the ceiling any judge can reach on these items.

    Args:
        labels: :func:`read_labels` rows (an item once per labeler).

    Returns:
        :func:`~skillbench.calibration._agreement.agreement_rows` rows: comparison ``human vs human`` per item
        type for each labeler pair (raters are the labeler names, the first in name order the reference), and
        with three or more labelers ``human vs human (all)`` (Fleiss' κ, α). Empty with fewer than two.
    """
    from skillbench.calibration._agreement import AGREEMENT_COLUMNS, _typed, agreement_rows, multi_rows
    # Bare labeler names: the comparison already says both are people, and ``human:<labeler>`` stays the name
    # of the judge-vs-human rows (a table indexed by rater A keeps one row per labeler there).
    grades = human_grades(labels).assign(rater=labels["labeler"].to_numpy())
    raters = sorted(grades["rater"].unique())
    rows = [agreement_rows(grades, INTER_HUMAN, a, b) for a, b in itertools.combinations(raters, 2)]
    if len(raters) >= 3:
        rows.append(multi_rows(grades, INTER_HUMAN_ALL, raters))
    return _typed(pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=AGREEMENT_COLUMNS))


# -- several raters of one item: gradings, a second labeler's sheet, labels merge --------------------------------------
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
    from skillbench.calibration._agreement import positive

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
    from skillbench.judge import opaque_run_id

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
    from skillbench.calibration._agreement import positive
    from skillbench.ledgers import atomic_write_text

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
