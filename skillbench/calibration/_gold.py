"""The drift sentinel's frozen gold set: answers with agreed labels, one JSON object per line.

``SUITE_DIR/judge-gold/gold.jsonl`` holds one object per answer::

    {"gold_id": "gold-3f2a…", "prompt": "the question as asked",
     "items": [{"index": 0, "type": "must", "text": "…"}, …],
     "answer": "the final answer text",
     "labels": {"0": "met", "1": "clean"},
     "source": "where it came from (week, run, item indexes, who labelled it)"}

``items`` are exactly what the judge protocol sends (``index`` is the item's position in this entry, ``type``
must/bonus/avoid, ``text`` as sent); ``labels`` give every item its agreed verdict (must: met/missing, bonus:
met/absent, avoid: violated/clean). :func:`build_gold` samples the items, stratified by item type, from a week's
graded runs, with labels from people (a filled ``labels export`` sheet; with two or more labelers only the items
they all agree on) or, on a simulated week, from the simulation's truth (``truth.csv``, each run's last attempt).
Must items graded by absence are left out: their sent line and recorded type differ, and a gold item must be
graded as written. The set is frozen: :func:`write_gold` refuses to replace it without ``force``, and the sentinel
compares only weeks graded against the same file (:func:`gold_sha`).
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.ledgers import GOLD_DIR, GOLD_FILE, MANIFEST_FILE, SCORES_FILE, read_cells
from skillbench.vocab import ALLOWED_VERDICTS, ITEM_TYPES, UNGRADED_VERDICTS

GOLD_KEYS = ("gold_id", "prompt", "items", "answer", "labels", "source")
TRUTH_SOURCE = "the simulation's truth (truth.csv, final attempt)"


class GoldError(ValueError):
    """A gold set that cannot be read or built; the message names the file, line and field, and the fix."""


@dataclass(frozen=True)
class GoldAnswer:
    """One answer of the gold set with its items and their agreed labels."""

    gold_id: str
    prompt: str
    items: tuple[tuple[int, str, str], ...]  # (index, type, text) as the judge is sent them
    answer: str
    labels: dict[int, str]  # item index → agreed verdict
    source: str

    def run_answer(self, folder: Path) -> Any:
        """The answer as a :class:`skillbench.judge.RunAnswer` (what the judge protocol grades)."""
        from skillbench.judge import RunAnswer

        rubric_sha = hashlib.sha256(json.dumps(self.items).encode()).hexdigest()[:16]
        return RunAnswer(run_id=self.gold_id, prompt=self.gold_id, skill="", model="", condition="gold", rep=0,
                         dormancy=False, prompt_text=self.prompt, items=self.items, answer=self.answer,
                         rubric_sha=rubric_sha, folder=folder)

    def to_json(self) -> dict[str, Any]:
        return {"gold_id": self.gold_id, "prompt": self.prompt,
                "items": [{"index": i, "type": k, "text": t} for i, k, t in self.items], "answer": self.answer,
                "labels": {str(i): v for i, v in sorted(self.labels.items())}, "source": self.source}


def suite_gold_path(suite_dir: str | Path) -> Path:
    """``SUITE_DIR/judge-gold/gold.jsonl``."""
    return Path(suite_dir) / GOLD_DIR / GOLD_FILE


def gold_sha(path: str | Path) -> str:
    """The gold file's identity (SHA-256 of its bytes, 16 hex): weeks compare only on the same file."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def _entry(path: Path, line: int, raw: Any) -> GoldAnswer:
    where = f"{path}: line {line}"
    if not isinstance(raw, dict):
        raise GoldError(f"{where}: not a JSON object — one answer per line")
    missing = [k for k in GOLD_KEYS if k not in raw]
    if missing:
        raise GoldError(f"{where}: missing field(s) {', '.join(missing)} (a gold line has {', '.join(GOLD_KEYS)})")
    for key in ("gold_id", "prompt", "answer"):
        if not isinstance(raw[key], str) or not raw[key].strip():
            raise GoldError(f"{where}: field {key!r} must be non-empty text")
    if not isinstance(raw["items"], list) or not raw["items"]:
        raise GoldError(f"{where}: field 'items' must be a non-empty list of {{index, type, text}}")
    items = []
    for pos, item in enumerate(raw["items"]):
        if not (isinstance(item, dict) and isinstance(item.get("index"), int) and item.get("type") in ITEM_TYPES
                and isinstance(item.get("text"), str) and item["text"].strip()):
            raise GoldError(f"{where}: items[{pos}]: needs an integer index, a type (must/bonus/avoid) and text")
        items.append((item["index"], item["type"], item["text"]))
    if len({i for i, _, _ in items}) != len(items):
        raise GoldError(f"{where}: field 'items': an index appears twice — number the items 0, 1, 2, …")
    labels = raw["labels"]
    if not isinstance(labels, dict):
        raise GoldError(f"{where}: field 'labels' must map item index → verdict")
    types = {str(i): k for i, k, _ in items}
    if set(labels) != set(types):
        raise GoldError(f"{where}: field 'labels' must label exactly the items {', '.join(sorted(types))} "
                        f"(has {', '.join(sorted(map(str, labels))) or 'none'})")
    for key, verdict in labels.items():
        if verdict not in ALLOWED_VERDICTS[types[key]]:
            raise GoldError(f"{where}: labels[{key!r}]: {verdict!r} is not a {types[key]} verdict (one of "
                            f"{'/'.join(ALLOWED_VERDICTS[types[key]])})")
    return GoldAnswer(raw["gold_id"], raw["prompt"], tuple(items), raw["answer"],
                      {int(k): v for k, v in labels.items()}, str(raw["source"]))


def read_gold(path: str | Path) -> list[GoldAnswer]:
    """Read and check a gold set.

    Raises:
        GoldError: the file is missing or empty, a line is not JSON, a field is missing or ill-typed, a label is
            not a verdict of its item's type, or a ``gold_id`` repeats (one line naming the file, line and field).
    """
    path = Path(path)
    if not path.is_file():
        raise GoldError(f"{path}: no gold set — build one with skillbench sentinel build RUN_DIR")
    out: list[GoldAnswer] = []
    seen: dict[str, int] = {}
    for line, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not text.strip():
            continue
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise GoldError(f"{path}: line {line}: not JSON ({exc.msg}) — one JSON object per line") from exc
        entry = _entry(path, line, raw)
        if entry.gold_id in seen:
            raise GoldError(f"{path}: line {line}: gold_id {entry.gold_id!r} again (first on line "
                            f"{seen[entry.gold_id]}) — every answer needs its own id")
        seen[entry.gold_id] = line
        out.append(entry)
    if not out:
        raise GoldError(f"{path}: empty gold set — build one with skillbench sentinel build RUN_DIR")
    return out


def _truth_labels(run_dir: Path) -> pd.DataFrame:
    """``run_id, item_index, verdict`` from the simulation's truth (each run's last attempt)."""
    from skillbench.ledgers import final_truth, read_manifest, read_truth

    truth = read_truth(run_dir)
    if truth is None:
        raise GoldError(f"{run_dir}: not a simulated week (no truth.csv) — pass --human LABELS.csv, a filled "
                        "sheet of skillbench labels export")
    rows = final_truth(truth, read_manifest(run_dir / MANIFEST_FILE))
    rows = rows[rows["item_type"].isin(ITEM_TYPES)]
    earned = rows["decided"].isin(["covered", "violated"])
    verdict = [ALLOWED_VERDICTS[k][0 if e else 1] for k, e in zip(rows["item_type"], earned, strict=True)]
    return pd.DataFrame({"run_id": rows["run_id"].astype(str), "item_index": rows["item_index"].astype(int),
                         "verdict": verdict, "labeler": TRUTH_SOURCE})


def _human_labels(path: Path, run_ids: list[str]) -> pd.DataFrame:
    """Agreed human labels: with two or more labelers, only items every one of them labelled alike."""
    from skillbench.calibration._labels import read_labels

    labels = read_labels(path, run_ids=run_ids)
    if labels.empty:
        raise GoldError(f"{path}: no filled verdict — fill the verdict (and labeler) columns first")
    labelers = labels["labeler"].nunique()
    per = labels.groupby(["run_id", "item_index"]).agg(n=("labeler", "nunique"), kinds=("verdict", "nunique"),
                                                       verdict=("verdict", "first"))
    agreed = per[(per["n"] == labelers) & (per["kinds"] == 1)].reset_index()
    if agreed.empty:
        raise GoldError(f"{path}: the {labelers} labelers agree on no item — reconcile the sheet first")
    source = f"human labels ({path.name}, {labelers} labeler{'s' if labelers > 1 else ''}" + \
        (", agreed items only)" if labelers > 1 else ")")
    return agreed.assign(labeler=source)[["run_id", "item_index", "verdict", "labeler"]]


def build_gold(run_dir: str | Path, *, n: int = 60, human: str | Path | None = None, seed: int = 0,
               ) -> list[GoldAnswer]:
    """Sample ``n`` items, stratified by item type, from a week's graded runs, with their agreed labels.

    Args:
        run_dir: a judged week.
        n: items in all (equal shares per item type where there are enough, the rest to the larger types).
        human: a filled ``labels export`` sheet (default: the simulation's truth, on a simulated week).
        seed: seed of the sample.

    Raises:
        GoldError: no labels (not a simulated week and no ``human``), or no labelled item of a graded run.
    """
    from skillbench.calibration._labels import allocate
    from skillbench.judge import select_runs
    from skillbench.ledgers import week_run_key

    run_dir = Path(run_dir)
    runs = {r.run_id: r for r in select_runs(run_dir, include_plugin=True)[0]}
    labels = _human_labels(Path(human), list(runs)) if human else _truth_labels(run_dir)
    scores = run_dir / SCORES_FILE
    if scores.is_file():  # a week's graded runs: only items its judge graded
        s = read_cells(scores)
        ok = s[~s["verdict"].isin(UNGRADED_VERDICTS)]
        graded = set(zip(ok["run_id"], ok["item_index"].astype(int), strict=True))
    else:
        graded = None
    rows = []
    for rec in labels.itertuples(index=False):
        run = runs.get(rec.run_id)
        if run is None or rec.item_index in run.absence or rec.item_index >= len(run.items):
            continue
        if graded is not None and (rec.run_id, rec.item_index) not in graded:
            continue
        _, kind, text = run.items[rec.item_index]
        if rec.verdict in ALLOWED_VERDICTS[kind]:
            rows.append({"run_id": rec.run_id, "item_index": rec.item_index, "item_type": kind, "text": text,
                         "verdict": rec.verdict, "labeler": rec.labeler})
    if not rows:
        raise GoldError(f"{run_dir}: no labelled item of a graded run — judge the week first (skillbench judge)")
    frame = pd.DataFrame(rows).sort_values(["run_id", "item_index"]).reset_index(drop=True)
    rng = random.Random(f"gold:{seed}")
    strata = [g for _, g in frame.groupby("item_type", sort=True)]
    picked = pd.concat([g.iloc[sorted(rng.sample(range(len(g)), k))]
                        for g, k in zip(strata, allocate([len(g) for g in strata], n), strict=True) if k])
    key = week_run_key(run_dir)
    out = []
    for run_id, group in picked.sort_values(["run_id", "item_index"]).groupby("run_id", sort=True):
        run = runs[run_id]
        items = tuple((pos, r.item_type, r.text) for pos, r in enumerate(group.itertuples(index=False)))
        labels_ = {pos: r.verdict for pos, r in enumerate(group.itertuples(index=False))}
        source = (f"week {key}, run {run_id}, rubric items {', '.join(map(str, group['item_index']))}; labels: "
                  f"{group['labeler'].iloc[0]}")
        gold_id = "gold-" + hashlib.sha256(f"{key}/{run_id}".encode()).hexdigest()[:12]
        out.append(GoldAnswer(gold_id, run.prompt_text, items, run.answer, labels_, source))
    return out


def write_gold(gold: list[GoldAnswer], path: str | Path, *, force: bool = False) -> Path:
    """Write the gold set (one JSON object per line).

    Raises:
        GoldError: the file exists and not ``force`` (the set is frozen: replacing it starts a new baseline).
    """
    from skillbench.ledgers import atomic_write_text

    path = Path(path)
    if path.exists() and not force:
        raise GoldError(f"{path} exists (a frozen gold set: replacing it starts every week's sentinel over from a "
                        "baseline) — pass --force to replace it, or --out elsewhere")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, "".join(json.dumps(g.to_json(), ensure_ascii=False) + "\n" for g in gold))
    return path
