"""A description's measured trigger rate: each query run k times with the real CLI, only the description changed.

Contract of :func:`measure_description`:

* **Only the description changes.** A *trigger suite* is written to a folder of its own (never the suite): every
  family folder of the suite copied byte for byte, except the measured family's hub ``SKILL.md``, whose
  ``description:`` entry of the frontmatter is replaced (:func:`with_description`) — the frontmatter's other lines
  and the body stay byte-identical, and :func:`assert_only_description_changed` checks it before anything runs
  (sub-skills and every other file compared by SHA-256). The other families are copied so that the simulated
  endpoint reads the suite's vocabulary as in a weekly run (:mod:`skillbench.sim._triggering`'s common words); the
  with-skill arm installs the measured family only.
* **One trigger-only prompt per query** (``test-prompts/<query id>.json``, ``trigger_only: true``, its ``skill_url``
  the measured family's hub, one placeholder must item the judge never reads): generation plans it in the
  with-skill arm only (:mod:`skillbench.generation._plan`).
* **The runs are a generate pass**, made by the caller's :class:`TriggerRuns` (the weekly chain hands in
  :func:`skillbench.weekly._optimize_stage.trigger_runs`, a :func:`~skillbench.weekly._stages.run_generation`,
  unchanged; the endpoint it may start is above this package): fresh sandbox per run, the suite's CLI call, the adaptive
  limiter (``jobs``), retries, ``--max-total-usd`` (the pass stops starting runs once finished runs cost it),
  ``manifest.csv``. Whether the family triggered is the manifest's
  ``skill_activation`` (:func:`skillbench.signals._trigger.activated`); runs with unreliable signals are left out of
  the rate.
* **Scores**: a query's trigger rate is activations / reliable runs; it *triggered* when the rate is ≥
  :data:`RATE_THRESHOLD` (0.5). Precision, recall and F1 are over the queries of a split (:func:`split_scores`).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd

from skillbench.ledgers import MANIFEST_FILE, SKILL_FILE, read_manifest
from skillbench.quality._trigger_set import GENERATED, Query
from skillbench.quality._trigger_stats import f1_interval
from skillbench.scorecard import rate_interval
from skillbench.signals import activated, reliable
from skillbench.suite import FRONTMATTER, Suite, read_skill

RATE_THRESHOLD = 0.5
TRIGGER_SUITE_SKILLS = "skills"
_DESCRIPTION_KEY = re.compile(r"^description:", re.MULTILINE)


class DescriptionEditError(ValueError):
    """A SKILL.md whose description cannot be replaced alone (the message names the file)."""


def with_description(text: str, description: str) -> str:
    """``text`` (a whole SKILL.md) with its frontmatter's ``description:`` entry replaced by ``description``.

    The entry is its ``description:`` line and the indented continuation lines after it (a folded or quoted
    multi-line value); the new value is written as one JSON string (a valid YAML double-quoted scalar).

    Raises:
        DescriptionEditError: no frontmatter, or no top-level ``description:`` key in it.
    """
    match = FRONTMATTER.match(text)
    if not match:
        raise DescriptionEditError("no YAML frontmatter (a leading '---' block)")
    front, body = text[: match.end()], text[match.end():]
    lines = front.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if _DESCRIPTION_KEY.match(line)), None)
    if start is None:
        raise DescriptionEditError("no 'description:' key in the frontmatter")
    end = start + 1
    while end < len(lines) - 1 and lines[end][:1] in (" ", "\t"):
        end += 1
    newline = "\r\n" if lines[start].endswith("\r\n") else "\n"
    lines[start:end] = [f"description: {json.dumps(description, ensure_ascii=False)}{newline}"]
    return "".join(lines) + body


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_only_description_changed(original: Path, copy: Path, description: str) -> None:
    """The copied family folder differs from the original in the hub's description only.

    Raises:
        AssertionError: another file differs, or the hub's frontmatter/body changed elsewhere.
    """
    a, b = _digests(original), _digests(copy)
    assert a.keys() == b.keys(), f"{copy}: the files differ from {original}"
    changed = [k for k in a if a[k] != b[k]]
    assert changed in ([], [SKILL_FILE]), f"{copy}: files other than {SKILL_FILE} changed: {changed}"
    old = (original / SKILL_FILE).read_text(encoding="utf-8")
    new = (copy / SKILL_FILE).read_text(encoding="utf-8")
    assert new == with_description(old, description), f"{copy / SKILL_FILE}: more than the description changed"
    skill = read_skill(copy / SKILL_FILE, f"{copy.name}/{SKILL_FILE}")
    assert skill.description == description, f"{copy / SKILL_FILE}: the description does not read back"


def _toml(suite: Suite) -> str:
    run = suite.config.run
    site = suite.site_base or "https://skills.invalid"
    return "\n".join([
        "# a trigger suite written by skillbench optimize-description (one trigger-only prompt per query)",
        "[suite]", f"skills_root = {json.dumps(TRIGGER_SUITE_SKILLS)}", f"site_base = {json.dumps(site)}",
        "[run]", f"allowed_tools = {json.dumps(list(run.allowed_tools))}",
        f"permission_mode = {json.dumps(run.permission_mode)}", f"max_turns = {run.max_turns}",
        f"max_budget_usd = {run.max_budget_usd}", "",
    ])


def write_trigger_suite(suite: Suite, family: str, description: str, queries: Sequence[Query], folder: Path) -> Path:
    """The trigger suite of one description (module docstring) in ``folder`` (which must not exist)."""
    folder.mkdir(parents=True)
    skills = folder / TRIGGER_SUITE_SKILLS
    for name in suite.families:
        shutil.copytree(suite.family_dir(name), skills / name, symlinks=False)
    hub = skills / family / SKILL_FILE
    hub.write_text(with_description(hub.read_text(encoding="utf-8"), description), encoding="utf-8")
    assert_only_description_changed(suite.family_dir(family), skills / family, description)
    (folder / "skillbench.toml").write_text(_toml(suite), encoding="utf-8")
    prompts = folder / "test-prompts"
    prompts.mkdir()
    site = (suite.site_base or "https://skills.invalid").rstrip("/")
    for q in queries:
        spec = {"name": q.id, "product_area": "trigger", "skill_url": f"{site}/{family}/{SKILL_FILE}",
                "prompt": q.text, "rubric": [{"type": "must", "text": "(trigger-only query: never judged)"}],
                "trigger_only": True}
        (prompts / f"{q.id}.json").write_text(json.dumps(spec, indent=2, ensure_ascii=False) + "\n",
                                              encoding="utf-8")
    return folder


@dataclass
class Measurement:
    """One description's runs: per query the reliable runs and activations, what they cost, whether capped."""

    rates: pd.DataFrame  # query_id, runs, activations, rate, triggered
    cost_usd: float
    planned: int
    ran: int
    capped: bool = False
    run_dir: Path = field(default_factory=Path)


@dataclass(frozen=True)
class RunSpec:
    """How the trigger runs are made: the endpoint, the model, k, the pool, the seed, the sandbox."""

    backend: str | None = "sim"
    endpoint: str = ""
    model: str = "sonnet"
    k: int = 1
    jobs: int = 2
    seed: int = 0
    sandbox: str = ""
    timeout_s: float = 900.0


class TriggerRuns(Protocol):
    """Makes the trigger suite's runs: every prompt ``spec.k`` times in the with-skill arm, into ``out_dir``.

    A generate pass ending with ``out_dir/manifest.csv``, its endpoint opened from ``spec`` (a simulation started
    for the pass answers the trigger suite as loaded); it stops starting runs once they cost ``max_total_usd``.
    Its progress goes where its maker's log goes.
    """

    def __call__(self, suite: Suite, out_dir: Path, *, spec: RunSpec, max_total_usd: float | None) -> None: ...


def measure_description(suite: Suite, family: str, description: str, queries: Sequence[Query], work: Path, *,
                        spec: RunSpec, runs: TriggerRuns, max_total_usd: float | None = None) -> Measurement:
    """Run every query ``spec.k`` times with ``description`` installed; per query its trigger rate.

    ``work`` (must not exist) receives the trigger suite (``work/suite``) and the runs (``work/runs``), which
    ``runs`` makes.
    """
    from skillbench.suite import load_suite

    tsuite = load_suite(write_trigger_suite(suite, family, description, queries, work / "suite"))
    run_dir = work / "runs"
    runs(tsuite, run_dir, spec=spec, max_total_usd=max_total_usd)
    manifest = read_manifest(run_dir / MANIFEST_FILE)
    ok = manifest[reliable(manifest)]
    act = activated(ok)
    g = ok.assign(_a=act).groupby("prompt")
    rates = pd.DataFrame({"runs": g.size(), "activations": g["_a"].sum()}).reindex([q.id for q in queries])
    rates = rates.fillna(0).astype(int)
    rates["rate"] = (rates["activations"] / rates["runs"]).where(rates["runs"] > 0)
    rates["triggered"] = rates["rate"].ge(RATE_THRESHOLD)
    rates = rates.rename_axis("query_id").reset_index()
    planned = len(queries) * spec.k
    cost = float(manifest["total_cost_usd"].fillna(0).sum())
    return Measurement(rates, cost, planned, len(manifest), capped=len(manifest) < planned, run_dir=run_dir)


def split_scores(rates: pd.DataFrame, queries: Sequence[Query], split: str) -> dict[str, object]:
    """Precision, recall, F1 and the confusion counts of the split's queries (a query triggered at rate ≥ 0.5).

    Queries with no reliable run are left out (counted in ``unmeasured``). The generated near-misses are counted
    apart as well: ``generated_n`` measured, ``generated_fp`` of them triggered (both already in ``fp``/``tn``).
    Precision and recall carry their Wilson/exact interval (``_low``/``_high``: :func:`skillbench.scorecard.
    rate_interval`), F1 its query-resampled interval (``f1_low``, ``f1_high``, ``f1_method``:
    :func:`skillbench.quality._trigger_stats.f1_interval`); ``correct`` maps each measured query to whether it was
    classified right.
    """
    side = {q.id: q.should_trigger for q in queries if q.split == split}
    made = {q.id for q in queries if q.split == split and q.source == GENERATED}
    r = rates[rates["query_id"].isin(list(side))]
    measured = r[r["runs"] > 0]
    should = measured["query_id"].map(side).astype(bool)
    hit = measured["triggered"].astype(bool)
    tp, fn = int((should & hit).sum()), int((should & ~hit).sum())
    fp, tn = int((~should & hit).sum()), int((~should & ~hit).sum())
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = (2 * precision * recall / (precision + recall) if precision and recall else
          0.0 if recall is not None and (tp + fp + fn) else None)
    generated = measured["query_id"].isin(list(made))
    scores: dict[str, object] = {"tp": tp, "fn": fn, "fp": fp, "tn": tn, "precision": precision, "recall": recall,
                                 "f1": f1, "unmeasured": len(side) - len(measured),
                                 "generated_n": int(generated.sum()), "generated_fp": int((generated & hit).sum())}
    for name, k, n in (("precision", tp, tp + fp), ("recall", tp, tp + fn)):
        iv = rate_interval(k, n)
        scores |= {f"{name}_low": iv.low if n else None, f"{name}_high": iv.high if n else None}
    interval = f1_interval(np.column_stack([hit[should].astype(int), np.ones(int(should.sum()))]),
                           np.column_stack([hit[~should].astype(int), np.ones(int((~should).sum()))]))
    known = f1 is not None
    scores |= {"f1_low": interval.low if known else None, "f1_high": interval.high if known else None,
               "f1_method": interval.method if known else None,
               # per query: did the classification come out right (McNemar's paired test reads these)
               "correct": dict(zip(measured["query_id"].astype(str), (should == hit).tolist(), strict=True))}
    return scores


__all__ = ["RATE_THRESHOLD", "Measurement", "RunSpec", "assert_only_description_changed", "measure_description",
           "split_scores", "with_description", "write_trigger_suite"]
