"""Measured triggering per skill family: precision, recall and F1 of activation over a week's real runs.

PluginEval *predicts* triggering accuracy from a description; a week's runs *measure* it. Each family is scored as a
detector of its own prompts, over the runs of the arms in which it was installed and the week reads activation —
the treatment arm and every plugin arm (:func:`skillbench.signals._trigger.false_trigger_arms`):

* **should trigger**: runs of the family's own scored prompts (trigger-only queries included) in those arms; an
  activation (any route, :func:`skillbench.signals._trigger.activated`) is a true positive, none a false negative;
* **should not trigger**: runs of the family's dormancy prompts in those arms (an activation is a false positive),
  and plugin-arm runs of *other* families' prompts (dormancy or not) in which this family was installed
  (``installed_families`` of the run's ``metadata.json``): whether this family activated there is read from the
  run's transcript with the manifest's own rule (:func:`skillbench.signals._manifest.activation_signals`), since the
  manifest records activation of the prompt's family only.

Runs whose transcript did not parse (``signals_ok = 0``) are left out, as in trigger health. A plugin run whose
folder, metadata or transcript cannot be read (older weeks keep their manifest only) is not counted and is
counted in ``unread_plugin_runs`` instead, so a missing folder never reads as a true negative.

``precision`` needs should-not runs (none → unknown, not 1) and at least one activation; ``recall`` needs
should-trigger runs; ``f1`` needs both (0 when both are 0). ``trigger-f1.csv`` (:data:`TRIGGER_F1_FILE`) is
this frame, written by :func:`write_trigger_f1`.

**Measured next to predicted** (:func:`measured_vs_predicted`, the "Measured triggering" section of
``02_signals``): the frame joined by family (outer: a family either side lacks keeps its row) to the anchored
judge's *predicted* triggering — ``skill-quality.csv``'s (``RUN_DIR/skill-quality.csv``, written there by
``00_preflight`` or ``lint-skills --week``) composite row of ``triggering_accuracy`` (sample ``mean``: the mean
anchor over the judge samples, 0–1) — with ``gap = f1 − predicted``. :func:`disagreement_reading` reads it in one
sentence: a family disagrees when ``|gap| ≥`` :data:`DISAGREEMENT` (one anchor band of the rubric, 0.25).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from skillbench.arms import arm_kind
from skillbench.ledgers import (
    MANIFEST_FILE,
    SKILL_FILE,
    SKILL_QUALITY_FILE,
    TRANSCRIPT_FILE,
    TRIGGER_F1_COLUMNS,
    TRIGGER_F1_FILE,
    atomic_write_text,
    read_cells,
    read_manifest,
    week_arms,
)
from skillbench.quality._trigger_stats import NOT_AVAILABLE, f1_interval
from skillbench.scorecard import rate_interval, rate_intervals
from skillbench.signals import (
    NONE,
    SignalsError,
    activated,
    activation_signals,
    false_trigger_arms,
    read_metadata,
    read_transcript,
    reliable,
    site_bases,
)
from skillbench.vocab import PLUGIN

TRIGGERING_DIMENSION = "triggering_accuracy"  # quality.anchored's id of PluginEval's triggering dimension
DISAGREEMENT = 0.25  # |measured F1 − predicted| at which the two disagree: one anchor band
EXACT_WORD = rate_interval(0, 0, exact=True).method  # how a Clopper–Pearson interval's method reads


def _cross_family(run_dir: Path, plugin_runs: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """Per plugin run × installed family other than the prompt's: did that family activate.

    Returns:
        ``(family, prompt, activated)`` rows, and per prompt family the plugin runs that could not be read.
    """
    rows: list[dict[str, object]] = []
    unread: dict[str, int] = {}
    for run in plugin_runs.itertuples(index=False):
        folder = run_dir / str(run.run_id)
        transcript = read_transcript(folder / TRANSCRIPT_FILE)
        try:
            meta = read_metadata(folder)
        except SignalsError:
            meta = None
        if meta is None or transcript.result is None:
            unread[str(run.skill_family)] = unread.get(str(run.skill_family), 0) + 1
            continue
        for family in meta.get("installed_families") or []:
            if family == run.skill_family:
                continue
            signals = activation_signals(transcript, family, f"{family}/{SKILL_FILE}", site_bases(meta))
            rows.append({"family": family, "prompt": str(run.prompt),
                         "activated": signals["skill_activation"] != NONE})
    return pd.DataFrame(rows, columns=["family", "prompt", "activated"]), pd.Series(unread, dtype=int)


def _rates(out: pd.DataFrame) -> pd.DataFrame:
    tp, fp = out["tp"], out["fp"]
    out["recall"] = (tp / out["should_n"]).where(out["should_n"] > 0)
    out["precision"] = (tp / (tp + fp)).where((out["should_not_n"] > 0) & (tp + fp > 0))
    p, r = out["precision"], out["recall"]
    out["f1"] = (2 * p * r / (p + r)).where(p.notna() & r.notna() & (p + r > 0))
    # A family that never activated on either side: precision is unknown, recall 0 — F1 is 0 once negatives ran.
    out.loc[r.eq(0) & (out["should_not_n"] > 0) & (tp + fp == 0), "f1"] = 0.0
    return out


def _intervals(out: pd.DataFrame, units: pd.DataFrame) -> pd.DataFrame:
    """The rates' Wilson/exact intervals and F1's prompt-clustered interval (:func:`f1_interval`), per family.

    ``units``: one row per family × prompt × side (``should``: True/False) with ``hits`` and ``runs``.
    """
    recall = rate_intervals(out["tp"], out["should_n"])
    precision = rate_intervals(out["tp"], out["tp"] + out["fp"])
    known = out["precision"].notna()
    out["recall_low"], out["recall_high"] = recall["low"], recall["high"]
    out["precision_low"] = precision["low"].where(known)
    out["precision_high"] = precision["high"].where(known)
    # one method word for the row: exact as soon as either rate is exact (its n is under 20)
    either = recall["method"].eq(EXACT_WORD) | (known & precision["method"].eq(EXACT_WORD))
    out["rate_method"] = recall["method"].where(~either, EXACT_WORD)
    f1 = []
    for family in out.index:
        mine = units[units["family"].eq(family)]
        side = {s: mine[mine["should"].eq(s)][["hits", "runs"]].to_numpy() for s in (True, False)}
        iv = f1_interval(side[True], side[False])
        f1.append((iv.low, iv.high, iv.method) if out.at[family, "f1"] == out.at[family, "f1"] else
                  (float("nan"), float("nan"), NOT_AVAILABLE))
    out["f1_low"], out["f1_high"], out["f1_method"] = ([v[i] for v in f1] for i in range(3))
    return out


def measured_triggering(run_dir: str | Path) -> pd.DataFrame:
    """Per skill family of the week: should/should-not run counts, the confusion counts, precision, recall, F1.

    Args:
        run_dir: a week's run directory (``manifest.csv``; run folders for the plugin arm's cross-family reads).

    Returns:
        :data:`TRIGGER_F1_COLUMNS`, one row per family that has a counted run, sorted by family.

    Raises:
        LedgerError: the manifest is absent or ill-typed, or ``run.json``'s arms are malformed.
    """
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir / MANIFEST_FILE)
    ok = manifest[reliable(manifest) & false_trigger_arms(manifest["condition"], week_arms(run_dir))]
    ok = ok.assign(_a=activated(ok), family=ok["skill_family"].astype(str))
    own = ok.groupby("family")
    pos, neg = ok[~ok["dormancy"]], ok[ok["dormancy"]]
    out = pd.DataFrame({
        "tp": pos.groupby("family")["_a"].sum(), "should_n": pos.groupby("family").size(),
        "fp": neg.groupby("family")["_a"].sum(), "should_not_n": neg.groupby("family").size(),
    }, index=pd.Index(sorted(own.groups), name="family"))
    cross, unread = _cross_family(run_dir, ok[ok["condition"].astype(str).map(arm_kind).eq(PLUGIN)])
    if not cross.empty:
        c = cross.groupby("family")["activated"].agg(["sum", "size"])
        out = out.reindex(out.index.union(c.index))
        out["fp"] = out["fp"].fillna(0) + c["sum"].reindex(out.index).fillna(0)
        out["should_not_n"] = out["should_not_n"].fillna(0) + c["size"].reindex(out.index).fillna(0)
    out = out.fillna(0).astype(int)
    out["fn"] = out["should_n"] - out["tp"]
    out["tn"] = out["should_not_n"] - out["fp"]
    out["unread_plugin_runs"] = unread.reindex(out.index).fillna(0).astype(int)
    units = pd.concat([ok.assign(should=~ok["dormancy"], hits=ok["_a"].astype(int))[["family", "prompt", "should",
                                                                                      "hits"]],
                       cross.assign(should=False, hits=cross["activated"].astype(int))[["family", "prompt", "should",
                                                                                         "hits"]]])
    units = units.groupby(["family", "prompt", "should"], as_index=False).agg(hits=("hits", "sum"),
                                                                            runs=("hits", "size"))
    out = _intervals(_rates(out), units)
    return out.reset_index()[list(TRIGGER_F1_COLUMNS)]


def write_trigger_f1(run_dir: str | Path) -> Path:
    """(Re)write ``RUN_DIR/trigger-f1.csv`` from :func:`measured_triggering` (atomic replace); returns its path."""
    run_dir = Path(run_dir)
    path = run_dir / TRIGGER_F1_FILE
    atomic_write_text(path, measured_triggering(run_dir).to_csv(index=False))
    return path


def predicted_triggering(path: str | Path) -> pd.Series | None:
    """The anchored judge's predicted triggering per family from ``skill-quality.csv``, or None without the file.

    The composite rows of :data:`TRIGGERING_DIMENSION` (sample ``mean``); a family the judge did not grade reads
    NaN.
    """
    path = Path(path)
    if not path.is_file():
        return None
    frame = read_cells(path, ("source", "measure", "sample", "family", "value"))
    rows = frame[frame["source"].eq("composite") & frame["measure"].eq(TRIGGERING_DIMENSION)
                 & frame["sample"].eq("mean")]
    values = pd.to_numeric(rows["value"].replace("", None), errors="coerce")
    return pd.Series(values.to_numpy(), index=pd.Index(rows["family"], name="family"), name="predicted")


def measured_vs_predicted(run_dir: str | Path, quality_csv: str | Path | None = None) -> pd.DataFrame:
    """:func:`measured_triggering` with ``predicted`` and ``gap`` (module docstring), one row per family.

    ``quality_csv`` defaults to ``RUN_DIR/skill-quality.csv``; absent, ``predicted`` and ``gap`` are NaN.
    """
    run_dir = Path(run_dir)
    measured = measured_triggering(run_dir).set_index("family")
    predicted = predicted_triggering(quality_csv or run_dir / SKILL_QUALITY_FILE)
    if predicted is None:
        predicted = pd.Series(dtype=float, name="predicted")
    out = measured.join(predicted.rename("predicted"), how="outer")
    out["gap"] = out["f1"] - out["predicted"]
    return out.rename_axis("family").reset_index()


def disagreement_reading(frame: pd.DataFrame) -> str:
    """One sentence on where measured F1 and predicted triggering disagree (``|gap| ≥`` :data:`DISAGREEMENT`)."""
    both = frame.dropna(subset=["f1", "predicted"])
    if both.empty:
        missing = "no predicted triggering (no skill-quality.csv with judge scores)" if frame["predicted"].isna(
        ).all() else "no family has both a measured F1 and a predicted score"
        return f"Nothing to compare: {missing} — the measured F1 stands alone."
    off = both[both["gap"].abs() >= DISAGREEMENT].sort_values("gap", key=abs, ascending=False)
    if off.empty:
        return (f"Measured F1 and the judge's predicted triggering agree within {DISAGREEMENT:g} for all "
                f"{len(both)} families with both (largest gap {both['gap'].abs().max():.2f}).")
    parts = [f"{r.family} (predicted {r.predicted:.2f}, measured {r.f1:.2f}: "
             f"{'fires worse than it reads' if r.gap < 0 else 'fires better than it reads'})"
             for r in off.itertuples(index=False)]
    return (f"They disagree by {DISAGREEMENT:g} or more for {len(off)} of {len(both)} families: "
            f"{'; '.join(parts)}.")


__all__ = ["DISAGREEMENT", "TRIGGERING_DIMENSION", "disagreement_reading",
           "measured_triggering", "measured_vs_predicted", "predicted_triggering", "write_trigger_f1"]
