"""``calibration.md``: self-agreement against the must bar, flipping items, agreement, confusion, evidence, and
the pairwise judge's bias (:mod:`skillbench.calibration.bias`, also written to ``pairwise-bias.csv``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from skillbench.calibration.agreement import AGREEMENT_COLUMNS, UNANIMOUS_MUSTS_BAR, _typed
from skillbench.calibration.bias import week_pairwise_bias
from skillbench.calibration.run import Calibration, CalibrationOptions
from skillbench.ledgers.atomic import atomic_write_text
from skillbench.ledgers.files import (
    CALIBRATION_FILE,
    CALIBRATION_GRADES_FILE,
    CALIBRATION_MD,
    PAIRS_FILE,
    PAIRWISE_BIAS_FILE,
)
from skillbench.markdown import cell_text as _fmt
from skillbench.markdown import frame_table as _table


def bias_section(bias: pd.DataFrame | None, *, has_pairs: bool = True) -> list[str]:
    """The "Pairwise judge bias" section's lines: the measures with intervals and readings, or why there are none.

    Args:
        bias: :func:`skillbench.calibration.bias.pairwise_bias` rows; None: not measured.
        has_pairs: whether the week has a ``pairs.csv`` (the reason given when there is no row).
    """
    out = ["## Pairwise judge bias", ""]
    if bias is None or bias.empty:
        why = ("the pairwise judge did not run on this week (no pairs.csv)" if not has_pairs or bias is None
               else "pairs.csv has no judged pair")
        return [*out, f"Not measured: {why}.", ""]
    shown = bias.assign(interval=[f"{_fmt(lo, 2)} – {_fmt(hi, 2)}" for lo, hi in zip(bias["ci_low"],
                                                                                       bias["ci_high"], strict=True)])
    return [*out,
            "Each pair is judged in both orders. Order flip rate: the share of pairs whose preferred answer changes "
            "when the order is swapped. Position bias: (#A − #B) / verdicts over both orders (0 for a position-"
            "blind judge; the share of verdicts that pick A whatever the content). Length bias: among pairs the "
            "rubric judge scored equal, (#longer − #shorter) / verdicts. Intervals: 95 % bootstrap over pairs.",
            "",
            _table(shown, ["judge_model", "measure", "n", "estimate", "interval", "reading", "note"],
                   ["judge", "measure", "pairs", "estimate", "interval", "reading", "note"]), ""]


def render_markdown(cal: Calibration, options: CalibrationOptions, judge_model: str,
                    bias: pd.DataFrame | None = None, *, has_pairs: bool = False) -> str:
    """``calibration.md``: self-agreement with the must bar, flipping items, agreement, confusion, evidence, bias.

    ``bias``: :func:`skillbench.calibration.bias.pairwise_bias` rows (None: not measured); ``has_pairs``: whether
    the week has a ``pairs.csv`` (what the section says when there is no row).
    """
    out = [f"# Judge calibration — {judge_model}", ""]
    if not cal.self_agreement.empty:
        verdict = {True: "**PASS**", False: "**FAIL**", None: "n/a"}[cal.musts_pass]
        must = cal.self_agreement[cal.self_agreement["item_type"] == "must"].iloc[0]
        out += ["## Self-agreement", "",
                f"The same answers graded {options.repeat} times. Bar: ≥ {UNANIMOUS_MUSTS_BAR:.0%} of must items "
                f"unanimous — {verdict} ({_fmt(must['unanimity'] * 100 if must['n_items'] else None, 1)} % of "
                f"{int(must['n_items'])} musts).", "",
                _table(cal.self_agreement, ["item_type", "n_items", "unanimous", "unanimity", "flipping"],
                       ["item type", "items", "unanimous", "unanimity", "flipping"]), ""]
        if cal.flipping.empty:
            out += ["No item flipped.", ""]
        else:
            out += ["### Flipping items", "",
                    "Items whose verdict changed between gradings: reword them or accept the noise.", "",
                    _table(cal.flipping, ["item_type", "prompt", "run_id", "item_index", "item_text", "verdicts"],
                           ["type", "prompt", "run", "item", "text", "verdicts"]), ""]
    if not cal.agreement.empty:
        out += ["## Agreement", "",
                "κ read on the Landis–Koch scale (≤ 0.20 slight, ≤ 0.40 fair, ≤ 0.60 moderate, ≤ 0.80 "
                "substantial, above almost perfect); α with Krippendorff's rule (≥ 0.800 reliable, ≥ 0.667 "
                "tentative conclusions only, below unreliable). PABAK = 2·p_o − 1 stays readable when base "
                "rates are extreme and κ collapses.", "",
                _table(cal.agreement, ["comparison", "rater_a", "rater_b", "item_type", "n_units", "raw_agreement",
                                       "cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "pabak", "base_rate_a",
                                       "base_rate_b", "landis_koch", "krippendorff_reading"],
                       ["comparison", "rater A", "rater B", "type", "n", "agree", "Cohen κ", "Fleiss κ", "α",
                        "PABAK", "base A", "base B", "κ reading", "α reading"]), ""]
        pairs = cal.agreement[cal.agreement["rater_b"].ne("")]
        if not pairs.empty:
            out += ["### Confusion against the reference (rater A)", "",
                    "A false positive is a \"met\" (or \"violated\") the reference does not give: for must and "
                    "bonus items it is the costly error, because it inflates coverage.", "",
                    _table(pairs, ["comparison", "rater_a", "rater_b", "item_type", "true_positive",
                                   "false_positive", "false_negative", "true_negative", "false_positive_rate",
                                   "false_negative_rate"],
                           ["comparison", "reference", "rater", "type", "both +", "false +", "false −", "both −",
                            "false + rate", "false − rate"]), ""]
    if not cal.evidence.empty:
        out += ["## Evidence", "",
                "Quotes of met/violated verdicts that are not in the answer (first asks), and those still "
                "unverified after the one re-ask (scored missing/clean and flagged).", "",
                _table(cal.evidence, ["judge_model", "positive_verdicts", "unverified", "hallucinated_evidence_rate",
                                      "still_unverified", "residual_rate"],
                       ["judge", "met/violated", "unverified", "rate", "still unverified", "residual rate"]), ""]
    out += bias_section(bias, has_pairs=has_pairs)
    out += ["## Provenance", "", f"- judge model: {judge_model}"]
    if options.other_judge:
        out.append(f"- other judge: {options.other_judge}")
    out += [f"- repeats: {options.repeat}; runs: {cal.grades['run_id'].nunique()}; seed: {options.seed}",
            f"- calibration spend: ${cal.cost_usd:.4f}", *[f"- {n}" for n in cal.notes], ""]
    return "\n".join(out)


def write_calibration(run_dir: Path, cal: Calibration, options: CalibrationOptions, judge_model: str) -> None:
    """Write ``calibration.csv``, ``calibration-grades.csv``, ``pairwise-bias.csv`` and ``calibration.md`` atomically.

    The pairwise judge's bias is measured on the week's ``pairs.csv``
    (:func:`skillbench.calibration.bias.week_pairwise_bias`; an empty table when there is none).
    """
    rows = [cal.agreement]
    if not cal.self_agreement.empty:
        rows.append(pd.DataFrame({"comparison": "self-agreement", "rater_a": judge_model, "rater_b": "",
                                  "item_type": cal.self_agreement["item_type"],
                                  "n_units": cal.self_agreement["n_items"], "n_raters": options.repeat,
                                  "unanimity": cal.self_agreement["unanimity"]}))
    present = [r for r in rows if not r.empty]
    table = _typed(pd.concat(present, ignore_index=True) if present else pd.DataFrame(columns=AGREEMENT_COLUMNS))
    atomic_write_text(run_dir / CALIBRATION_FILE, table.to_csv(index=False))
    atomic_write_text(run_dir / CALIBRATION_GRADES_FILE, cal.grades.to_csv(index=False))
    bias = week_pairwise_bias(run_dir)
    atomic_write_text(run_dir / PAIRWISE_BIAS_FILE, bias.to_csv(index=False))
    atomic_write_text(run_dir / CALIBRATION_MD, render_markdown(cal, options, judge_model, bias,
                                                                has_pairs=(run_dir / PAIRS_FILE).is_file()))
