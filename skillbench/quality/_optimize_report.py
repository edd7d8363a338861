"""optimize-description's files: the candidate SKILL.md, its diff, candidates.csv, trigger-set.json, optimize.md.

Contract of :func:`write_outputs`: every file is created new in the result folder (``open(…, "x")``: an existing
file is never overwritten — the folder is new per call, named ``<family>-<UTC stamp>``). ``SKILL.md`` is the
original hub file with only its description replaced by the winner's (the whole file); ``SKILL.md.diff`` the
unified diff against the original; ``candidates.csv`` one row per candidate (its description, train and test
rates and F1 — test only for the original and the winner, the only ones measured on test — and, counted apart,
how many of the split's generated near-misses were measured and fired (``<split>_generated_n``/``_fp``), cost,
notes);
``optimize.md`` the table (precision, recall and F1 with their intervals), the selection, its test F1 against the
original's, whether a winner is called (McNemar's exact test, :mod:`skillbench.quality._trigger_stats`), the
split's counts, the seed, k, the model and the cap. candidates.csv's interval columns (:data:`INTERVAL_KEYS` per
split) follow the older ones.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pandas as pd

from skillbench.ledgers import OPTIMIZE_CANDIDATES_FILE, OPTIMIZE_REPORT_MD, OPTIMIZE_TRIGGER_SET, SKILL_FILE
from skillbench.markdown import md_text, with_span
from skillbench.quality._optimizer import Candidate, OptimizeResult, score_text
from skillbench.quality._trigger_runs import RATE_THRESHOLD, with_description
from skillbench.quality._trigger_set import write_trigger_set
from skillbench.quality._trigger_stats import F1_WORDS, MIN_TEST_QUERIES
from skillbench.suite import Suite

DIFF_FILE = f"{SKILL_FILE}.diff"
INTERVAL_KEYS = ("precision_low", "precision_high", "recall_low", "recall_high", "f1_low", "f1_high", "f1_method")


def _new(path: Path, text: str) -> None:
    with path.open("x", encoding="utf-8") as fh:
        fh.write(text)


def candidates_frame(result: OptimizeResult) -> pd.DataFrame:
    rows = []
    for c in result.candidates:
        row = {"candidate": c.index, "winner": int(c is result.winner), "chars": len(c.description),
               "description": c.description}
        for split, scores in (("train", c.train), ("test", c.test)):
            for key in ("tp", "fn", "fp", "tn", "precision", "recall", "f1", "generated_n", "generated_fp"):
                row[f"{split}_{key}"] = scores.get(key)
        row.update({"cost_usd": round(c.cost_usd, 6), "capped": int(c.capped), "note": c.note})
        for split, scores in (("train", c.train), ("test", c.test)):  # added with the intervals: after the old ones
            for key in INTERVAL_KEYS:
                row[f"{split}_{key}"] = scores.get(key)
        rows.append(row)
    return pd.DataFrame(rows)


def _fired(fp: object, n: object) -> str:
    return "—" if n is None or pd.isna(n) or not n else f"{int(fp)}/{int(n)}"


def _near_misses(result: OptimizeResult) -> str:
    asked = result.trigger_set.near_misses_requested
    return ("none asked for" if not asked else
            f"{asked} asked for with {result.rewriter_model or 'the rewriter model'}, ${result.near_miss_usd:.4f}")


def _ci(value: object, low: object, high: object) -> str:
    """``0.800 [0.41, 1.00]``; the score alone when it has no interval."""
    text = score_text(value)
    return text if text == "—" else with_span(text, low, high)


def _test_f1(c: Candidate) -> str:
    return _ci(c.test.get("f1"), c.test.get("f1_low"), c.test.get("f1_high"))


def _page(result: OptimizeResult, frame: pd.DataFrame, diff: str) -> str:
    first, win = result.candidates[0], result.winner
    counts = result.trigger_set.counts()
    cap = ("none" if result.max_total_usd is None else
           f"${result.max_total_usd:g} — **hit: runs were not started**" if result.capped else
           f"${result.max_total_usd:g} (not hit)")
    lines = [
        f"# optimize-description: {md_text(result.family)}", "",
        f"Trigger set: {counts['train_should']} + {counts['train_should_not']} train, {counts['test_should']} + "
        f"{counts['test_should_not']} test (should + should-not), of the should-not {counts['train_generated']} "
        f"train and {counts['test_generated']} test generated near-misses ({_near_misses(result)}); seed "
        f"{result.trigger_set.seed}, the test side of each stratum rounded up (ceil 0.4 n); "
        f"k = {result.spec.k} runs per query with {result.spec.model} ({result.spec.backend or 'default'} backend); "
        f"a query triggered when its rate is ≥ {RATE_THRESHOLD}. Iterations: {result.iterations}. "
        f"Spent ${result.spent_usd:.4f}; cap: {cap}.", "",
        "| # | chars | train P | train R | train F1 | test F1 | generated fired (train / test) | cost $ | note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in frame.itertuples(index=False):
        mark = " **(selected)**" if r.winner else ""
        fired = (f"{_fired(r.train_generated_fp, r.train_generated_n)} / "
                 f"{_fired(r.test_generated_fp, r.test_generated_n)}")
        scores = " | ".join((_ci(r.train_precision, r.train_precision_low, r.train_precision_high),
                             _ci(r.train_recall, r.train_recall_low, r.train_recall_high),
                             _ci(r.train_f1, r.train_f1_low, r.train_f1_high),
                             _ci(r.test_f1, r.test_f1_low, r.test_f1_high)))
        lines.append(f"| {r.candidate}{mark} | {r.chars} | {scores} | {fired} | {r.cost_usd:.4f} | {md_text(r.note)} |")
    # the diff quotes the description, model output: a fence longer than any backtick run in it stays closed
    fence = "`" * max([3, *(len(run) + 1 for run in re.findall(r"`{3,}", diff))])
    selected = ("the original kept the best train F1: no change proposed" if win is first else
                f"candidate {win.index}: test F1 {_test_f1(win)} against the original's {_test_f1(first)}")
    lines += ["", f"**Selected on train**: {selected}.", "",
              f"**Original against the selection on test**: {result.call}.", "",
              "Selection read train only; test was measured for the original and the selection alone. Precision and "
              "recall carry 95 % intervals (Wilson from 20 queries, exact Clopper–Pearson below: conservative). "
              f"{F1_WORDS} The test comparison is McNemar's exact test on the test queries both descriptions were "
              f"measured on (only queries one got right and the other wrong count); a winner is called only at "
              f"p ≤ 0.05, which needs at least {MIN_TEST_QUERIES} test queries (2 · 0.5^5 = 0.0625 > 0.05).", "",
              "## Selected description", "", f"> {md_text(win.description)}", "",
              "## Diff", "", f"{fence}diff", diff.rstrip() or "(no change)", fence, ""]
    return "\n".join(lines)


def write_outputs(result: OptimizeResult, suite: Suite, folder: Path) -> dict[str, Path]:
    """Write the five files into ``folder`` (module docstring); returns them by name."""
    hub = suite.family_dir(result.family) / SKILL_FILE
    original = hub.read_text(encoding="utf-8")
    new = with_description(original, result.winner.description)
    diff = "".join(difflib.unified_diff(original.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{result.family}/{SKILL_FILE}",
                                        tofile=f"b/{result.family}/{SKILL_FILE}"))
    frame = candidates_frame(result)
    paths = {name: folder / name for name in (SKILL_FILE, DIFF_FILE, OPTIMIZE_CANDIDATES_FILE, OPTIMIZE_TRIGGER_SET,
                                              OPTIMIZE_REPORT_MD)}
    _new(paths[SKILL_FILE], new)
    _new(paths[DIFF_FILE], diff)
    _new(paths[OPTIMIZE_CANDIDATES_FILE], frame.to_csv(index=False))
    write_trigger_set(result.trigger_set, paths[OPTIMIZE_TRIGGER_SET])
    _new(paths[OPTIMIZE_REPORT_MD], _page(result, frame, diff))
    return paths


__all__ = ["DIFF_FILE", "candidates_frame", "write_outputs"]
