"""Measured triggering per skill family: precision, recall and F1 of activation over a week's real runs.

PluginEval *predicts* triggering accuracy from a description; a week's runs *measure* it. Each family is scored as a
detector of its own prompts, over the runs of the arms in which it was installed and the week reads activation —
the treatment arm and every plugin arm (:func:`skillbench.signals.trigger.false_trigger_arms`):

* **should trigger**: runs of the family's own scored prompts (trigger-only queries included) in those arms; an
  activation (any route, :func:`skillbench.signals.trigger.activated`) is a true positive, none a false negative;
* **should not trigger**: runs of the family's dormancy prompts in those arms (an activation is a false positive),
  and plugin-arm runs of *other* families' prompts (dormancy or not) in which this family was installed
  (``installed_families`` of the run's ``metadata.json``): whether this family activated there is read from the
  run's transcript with the manifest's own rule (:func:`skillbench.signals.manifest.activation_signals`), since the
  manifest records activation of the prompt's family only.

Runs whose transcript did not parse (``signals_ok = 0``) are left out, as in trigger health. A plugin run whose
folder, metadata or transcript cannot be read (older weeks keep their manifest only) is not counted and is
counted in ``unread_plugin_runs`` instead, so a missing folder never reads as a true negative.

``precision`` needs should-not runs (none → unknown, not 1) and at least one activation; ``recall`` needs
should-trigger runs; ``f1`` needs both (0 when both are 0). ``trigger-f1.csv`` (:data:`TRIGGER_F1_FILE`) is
this frame, written by :func:`write_trigger_f1`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from skillbench.arms import arm_kind
from skillbench.ledgers.atomic import atomic_write_text
from skillbench.ledgers.files import MANIFEST_FILE, TRANSCRIPT_FILE, TRIGGER_F1_FILE
from skillbench.ledgers.readers import read_manifest
from skillbench.ledgers.week import week_arms
from skillbench.signals.manifest import SignalsError, _site_bases, activation_signals, read_metadata
from skillbench.signals.transcript import read_transcript
from skillbench.signals.trigger import NONE, activated, false_trigger_arms, reliable
from skillbench.suite.format import SKILL_FILE
from skillbench.vocab import PLUGIN

TRIGGER_F1_COLUMNS = ["family", "should_n", "should_not_n", "tp", "fn", "fp", "tn", "precision", "recall", "f1",
                      "unread_plugin_runs"]


def _cross_family(run_dir: Path, plugin_runs: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """Per plugin run × installed family other than the prompt's: did that family activate.

    Returns:
        ``(family, activated)`` rows, and per prompt family the plugin runs that could not be read.
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
            signals = activation_signals(transcript, family, f"{family}/{SKILL_FILE}", _site_bases(meta))
            rows.append({"family": family, "activated": signals["skill_activation"] != NONE})
    return pd.DataFrame(rows, columns=["family", "activated"]), pd.Series(unread, dtype=int)


def _rates(out: pd.DataFrame) -> pd.DataFrame:
    tp, fp = out["tp"], out["fp"]
    out["recall"] = (tp / out["should_n"]).where(out["should_n"] > 0)
    out["precision"] = (tp / (tp + fp)).where((out["should_not_n"] > 0) & (tp + fp > 0))
    p, r = out["precision"], out["recall"]
    out["f1"] = (2 * p * r / (p + r)).where(p.notna() & r.notna() & (p + r > 0))
    # A family that never activated on either side: precision is unknown, recall 0 — F1 is 0 once negatives ran.
    out.loc[r.eq(0) & (out["should_not_n"] > 0) & (tp + fp == 0), "f1"] = 0.0
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
    out = _rates(out)
    return out.reset_index()[TRIGGER_F1_COLUMNS]


def write_trigger_f1(run_dir: str | Path) -> Path:
    """(Re)write ``RUN_DIR/trigger-f1.csv`` from :func:`measured_triggering` (atomic replace); returns its path."""
    run_dir = Path(run_dir)
    path = run_dir / TRIGGER_F1_FILE
    atomic_write_text(path, measured_triggering(run_dir).to_csv(index=False))
    return path


__all__ = ["TRIGGER_F1_COLUMNS", "measured_triggering", "write_trigger_f1"]
