"""The judge study's files under ``RUN_DIR/judge-study/``, its page ``study.md``, and the notebook's frames.

:func:`write_study` replaces the study atomically file by file (``study-grades.csv``, ``study.csv``,
``study-judges.csv``, ``study.json``, ``study.md``, and ``study-pairs.csv`` / ``pairwise-bias.csv`` when the
pairwise judge was studied) and removes files of a previous study that this one did not write.
:func:`study_frames` reads them back for ``notebooks/judge_study.ipynb``; :func:`plot_kappas` is its figure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from skillbench.calibration._agreement import BAR_WORDS, MIN_CLUSTERS, UNANIMOUS_MUSTS_BAR, bar_state
from skillbench.ledgers import (
    PAIRWISE_BIAS_FILE,
    STUDY_DIR,
    STUDY_FILE,
    STUDY_GRADES_FILE,
    STUDY_HTML,
    STUDY_JSON,
    STUDY_JUDGES_FILE,
    STUDY_MD,
    STUDY_NOTEBOOK,
    STUDY_PAIRS_FILE,
    atomic_write_json,
    atomic_write_text,
    read_json_object,
    read_numbers,
)
from skillbench.markdown import cell_text, frame_table, is_missing, md_table

STUDY_FILES = (STUDY_GRADES_FILE, STUDY_FILE, STUDY_JUDGES_FILE, STUDY_JSON, STUDY_MD, STUDY_PAIRS_FILE,
               PAIRWISE_BIAS_FILE, STUDY_NOTEBOOK, STUDY_HTML)
FALLBACK_MARK = "†"  # an interval that is not BCa (the percentile fallback, or degenerate)
EXACT_MARK = "‡"  # a unanimity interval by the must bar's rule (the wider of the run bootstrap and Clopper–Pearson)


def interval_method(confidence: float = 0.95) -> str:
    """How every interval of the study was made, in words."""
    return (f"Intervals are {confidence:.0%} bootstrap intervals that resample runs, not items (the items of one "
            "answer are not independent): BCa via scipy.stats.bootstrap with the run indices as the data; "
            f"{FALLBACK_MARK} marks an interval that is not BCa — the percentile interval where BCa is degenerate "
            "(resamples where κ is undefined, a constant jackknife), or a single value when every resample gives "
            f"the same one; {EXACT_MARK} marks a self-agreement interval made by the must bar's rule (below): the "
            "wider of the run bootstrap and the exact Clopper–Pearson interval of unanimous / items.")


def study_dir(run_dir: str | Path) -> Path:
    """``RUN_DIR/judge-study/``."""
    return Path(run_dir) / STUDY_DIR


def _ci(row: Any, measure: str, digits: int = 3) -> str:
    est = row.get(measure) if hasattr(row, "get") else None
    if is_missing(est):
        return "–"
    low, high, method = row.get(f"{measure}_low"), row.get(f"{measure}_high"), row.get(f"{measure}_method", "")
    if is_missing(low) or is_missing(high):
        return f"{cell_text(est, digits)} [n/a]"
    exact = str(method).startswith(("exact", "run bootstrap"))
    mark = EXACT_MARK if exact else FALLBACK_MARK if method and method != "BCa" else ""
    return f"{cell_text(est, digits)} [{low:.{digits}f}, {high:.{digits}f}]{mark}"


def _count_ci(row: Any, measure: str) -> str:
    est = row.get(measure)
    if is_missing(est):
        return "–"
    low, high = row.get(f"{measure}_low"), row.get(f"{measure}_high")
    span = "" if is_missing(low) or is_missing(high) else f" [{low:.0f}, {high:.0f}]"
    return f"{est:.0f}{span}"


def _money(x: Any) -> str:
    return "–" if is_missing(x) else f"${float(x):.4f}"


def _recommendation_section(study: Any) -> list[str]:
    rec = study.recommendation
    conf = study.options.confidence
    if rec is None:
        return ["## Recommendation", "", "No reference labels (no `--human FILE`, and this is not a simulated week "
                "with truth.csv): the judges are compared with each other only, and **there is no "
                "recommendation**. Label a sample (`skillbench labels export`) and rerun with `--human`.", ""]
    out = ["## Recommendation", ""]
    if rec.recommended:
        row = rec.judges.set_index("judge_model").loc[rec.recommended]
        out.append(f"**Recommended judge: {rec.recommended}** ({_money(row['cost_per_run'])} per graded run; "
                   f"κ with the {study.plan.reference_kind} {cell_text(row['kappa'])}). Best judge: **{rec.best}**.")
    else:
        out.append("**No recommendation**: no judge has a defined κ with the reference.")
    out += ["", f"The rule (margin {rec.margin:.2f}): {rec.rule}", ""]
    shown = rec.judges.assign(
        kappa_ci=[_ci(r, "cohen_kappa") for r in _rows(study.table, rec.judges["judge_model"], "all")],
        diff_ci=[_diff(r) for _, r in rec.judges.iterrows()], cost=rec.judges["cost_per_run"].map(_money))
    out += [frame_table(shown, ["judge_model", "kappa_ci", "cost", "diff_ci", "non_inferior", "best",
                                "recommended"],
                        ["judge", "κ with the reference", "cost per graded run", "κ − κ(best), paired",
                         f"non-inferior (low ≥ −{rec.margin:.2f})", "best", "recommended"]), ""]
    if rec.recommended and not rec.by_type.empty:
        against = (f"{rec.recommended} against {rec.best}" if rec.recommended != rec.best
                   else f"{rec.recommended} is the best judge itself, so each difference is 0")
        out += [f"Per item type, {against} (paired κ difference, {conf:.0%} interval). "
                "Avoid items matter most: a judge lenient on them misses harm.", "",
                frame_table(rec.by_type.assign(diff_ci=[_diff(r) for _, r in rec.by_type.iterrows()]),
                            ["item_type", "diff_ci", "non_inferior"], ["item type", "κ − κ(best)", "non-inferior"]),
                ""]
    out += [f"**Warning:** {w}" for w in rec.warnings]
    return [*out, ""] if rec.warnings else out


def _diff(r: Any) -> str:
    if is_missing(r["diff"]):
        return "–"
    span = "" if is_missing(r["diff_low"]) else f" [{r['diff_low']:+.3f}, {r['diff_high']:+.3f}]"
    return f"{r['diff']:+.3f}{span}"


def _rows(table: pd.DataFrame, judges: Any, kind: str) -> list[pd.Series]:
    t = table[table["item_type"].eq(kind)].set_index("judge_model")
    return [t.loc[j] for j in judges]


def render_study(study: Any) -> str:
    """``study.md``: the recommendation, one table per judge, self-agreement, judge against judge, evidence, cost."""
    opts, plan, table = study.options, study.plan, study.table
    title = {"simulated truth": "simulated truth", "human labels": "human labels", "none": "no reference"}
    out = [f"# Judge study — {', '.join(opts.judges)}", "",
           f"{len(plan.runs)} of {plan.candidates} gradeable runs (seed {opts.seed}), each graded {opts.repeat} "
           f"time(s) by every judge, blind, with the same protocol and the same rubric order. Reference: "
           f"**{title[plan.reference_kind]}**.", "", interval_method(opts.confidence), ""]
    out += _recommendation_section(study)
    if plan.reference is not None:
        out += [f"## Agreement with the reference ({plan.reference_kind})", "",
                "Per item type: raw agreement, Cohen's κ, PABAK (2·p_o − 1); the false-met rate (the judge gives "
                "the credited verdict — met, or violated for an avoid — where the reference does not); the lenient "
                "rate (the judge gives the favourable verdict — met, or clean for an avoid — where the reference "
                "gives the unfavourable one: on avoid items, a missed violation); and the confusion counts "
                "(positive = met/violated; TP both, FP the judge only, FN the reference only, TN neither).", ""]
        for judge in opts.judges:
            part = table[table["judge_model"].eq(judge)]
            rows = [[r["item_type"], cell_text(r["n_units"]), _ci(r, "raw_agreement"), _ci(r, "cohen_kappa"),
                     _ci(r, "pabak"), _ci(r, "false_met_rate"), _ci(r, "lenient_rate"),
                     " / ".join(_count_ci(r, c) for c in ("true_positive", "false_positive", "false_negative",
                                                          "true_negative"))] for _, r in part.iterrows()]
            out += [f"### {judge}", "", md_table(["item type", "answers", "agreement", "Cohen κ", "PABAK",
                                                  "false-met rate", "lenient rate", "TP / FP / FN / TN"], rows), ""]
    if opts.repeat >= 2:
        out += ["## Self-agreement", "", f"Each answer graded {opts.repeat} times by each judge; the bar is ≥ "
                f"{UNANIMOUS_MUSTS_BAR:.0%} of must items unanimous. " + BAR_WORDS.format(min_clusters=MIN_CLUSTERS),
                ""]
        rows = []
        for judge in opts.judges:
            part = table[table["judge_model"].eq(judge)].set_index("item_type")
            must, low = part.loc["must", "unanimity"], part.loc["must", "unanimity_low"]
            verdict = "n/a" if is_missing(must) else bar_state(float(must), float(low))
            rows.append([judge, verdict, *[_ci(part.loc[k], "unanimity") for k in ("must", "bonus", "avoid", "all")]])
        out += [md_table(["judge", "must bar", "must", "bonus", "avoid", "all"], rows), ""]
    if not study.judges_table.empty:
        allj = study.judges_table[study.judges_table["item_type"].eq("all")]
        upper = allj[[list(opts.judges).index(a) < list(opts.judges).index(b)
                      for a, b in zip(allj["judge_a"], allj["judge_b"], strict=True)]]
        out += ["## Judges against each other", "", "Cohen's κ between two judges' gradings of the same answers "
                "(sample by sample), all items; per item type in study-judges.csv.", "",
                md_table(["judge A", "judge B", "answers", "agreement", "κ"],
                         [[r["judge_a"], r["judge_b"], cell_text(r["n_units"]), cell_text(r["raw_agreement"]),
                           _ci(r, "kappa")] for _, r in upper.iterrows()]), ""]
    allrows = table[table["item_type"].eq("all")]
    out += ["## Evidence and cost", "", "Hallucinated evidence: met/violated quotes not found in the answer (first "
            "asks). No claim: violated avoid items whose verbatim quote cannot show the harm (a bare number, or "
            "fewer than three content words and none of the item's), of all its violated avoid items. "
            "Cost per graded run: the judge's spend from the usage the endpoint reported, at the list price "
            f"(skillbench.prices), divided by runs × gradings ({len(plan.runs)} × {opts.repeat}).", "",
            md_table(["judge", "hallucinated evidence", "no claim", "spend", "cost per graded run"],
                     [[r["judge_model"], cell_text(r["hallucinated_evidence_rate"]), _no_claim(r),
                       _money(r["cost_usd"]), _money(r["cost_per_run"])] for _, r in allrows.iterrows()]), ""]
    if study.inter_human is not None and len(study.inter_human):
        out += ["## Inter-human agreement", "", "The labelers against each other: the ceiling any judge can reach.",
                "", frame_table(study.inter_human, ["rater_a", "rater_b", "item_type", "n_units", "raw_agreement",
                                                    "cohen_kappa", "pabak"],
                                ["labeler A", "labeler B", "item type", "n", "agreement", "κ", "PABAK"]), ""]
    if study.pairwise is not None:
        out += pairwise_section(study.pairwise)
    out += ["## Provenance", "", f"- judges: {', '.join(opts.judges)}; gradings per answer: {opts.repeat}; "
            f"margin: {opts.margin:.2f}; bootstrap: {opts.n_resamples} resamples, seed {opts.seed}",
            f"- runs: {', '.join(r.run_id for r in plan.runs)}",
            "- rerunning `skillbench judge-study` on this run directory replaces this study",
            *[f"- {n}" for n in study.notes], ""]
    return "\n".join(out)


def pairwise_section(bias: pd.DataFrame) -> list[str]:
    """The pairwise judge's bias per judge (``pairwise_bias``'s table)."""
    rows = [[r["judge_model"], r["measure"], cell_text(r["n"]), cell_text(r["estimate"]),
             "n/a" if is_missing(r["ci_low"]) else f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]", r.get("reading", "")]
            for _, r in bias.iterrows()]
    return ["## Pairwise-judge bias", "", "Each study judge as the pairwise judge on the week's pairs, both orders "
            "(study-pairs.csv; the week's pairs.csv is not touched).", "",
            md_table(["judge", "measure", "n", "estimate", "interval", "reading"], rows), ""]


def _clean(value: Any) -> Any:
    if isinstance(value, float | np.floating):
        return None if not np.isfinite(value) else float(value)
    if isinstance(value, np.integer | np.bool_):
        return value.item()
    return value


def _records(frame: pd.DataFrame | None) -> list[dict[str, Any]]:
    if frame is None:
        return []
    return [{k: _clean(v) for k, v in r.items()} for r in frame.astype(object).to_dict("records")]


def study_json(study: Any) -> dict[str, Any]:
    """``study.json``: the options, the sample, the reference, the recommendation and its rule."""
    o = study.options
    return {"options": {"judges": list(o.judges), "repeat": o.repeat, "sample": o.sample, "seed": o.seed,
                        "margin": o.margin, "human": str(o.human) if o.human else None,
                        "include_plugin": o.include_plugin, "n_resamples": o.n_resamples, "confidence": o.confidence},
            "runs": study.run_ids, "candidates": study.plan.candidates, "reference": study.plan.reference_kind,
            "recommendation": study.recommendation.to_dict() if study.recommendation else None,
            "inter_human": _records(study.inter_human), "notes": list(study.notes),
            "interval_method": interval_method(o.confidence)}


def write_study(run_dir: str | Path, study: Any, pairs: pd.DataFrame | None = None) -> Path:
    """Replace ``RUN_DIR/judge-study/`` with this study's files (atomically, one by one); the page's path."""
    folder = study_dir(run_dir)
    folder.mkdir(parents=True, exist_ok=True)
    written = {STUDY_GRADES_FILE: study.grades.to_csv(index=False), STUDY_FILE: study.table.to_csv(index=False),
               STUDY_JUDGES_FILE: study.judges_table.to_csv(index=False), STUDY_MD: render_study(study)}
    if pairs is not None:
        written[STUDY_PAIRS_FILE] = pairs.to_csv(index=False)
    if study.pairwise is not None:
        written[PAIRWISE_BIAS_FILE] = study.pairwise.to_csv(index=False)
    for name, text in written.items():
        atomic_write_text(folder / name, text)
    atomic_write_json(folder / STUDY_JSON, study_json(study))
    for name in set(STUDY_FILES) - set(written) - {STUDY_JSON}:
        (folder / name).unlink(missing_ok=True)  # a previous study's file this one does not replace
    return folder / STUDY_MD


def study_frames(run_dir: str | Path) -> dict[str, Any]:
    """What the notebook shows: ``table``, ``judges``, ``grades``, ``pairwise`` (or None), ``study`` (the JSON)
    and ``markdown``; ``found`` is False (and the frames empty) when the run directory has no study."""
    folder = study_dir(run_dir)
    if not (folder / STUDY_JSON).is_file():
        empty = pd.DataFrame()
        return {"found": False, "folder": folder, "table": empty, "judges": empty, "grades": empty,
                "pairwise": None, "study": {}, "markdown": ""}
    bias = folder / PAIRWISE_BIAS_FILE
    return {"found": True, "folder": folder, "table": read_numbers(folder / STUDY_FILE),
            "judges": read_numbers(folder / STUDY_JUDGES_FILE), "grades": read_numbers(folder / STUDY_GRADES_FILE),
            "pairwise": read_numbers(bias) if bias.is_file() else None,
            "study": read_json_object(folder / STUDY_JSON, "run the judge study again (`skillbench judge-study "
                                      "RUN_DIR`)"),
            "markdown": (folder / STUDY_MD).read_text(encoding="utf-8")}


def plot_kappas(table: pd.DataFrame, ax: Any = None) -> Any:
    """κ with the reference and its interval, per judge (rows) and item type (colours); the Axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.6 * max(table["judge_model"].nunique(), 1) + 1.5))
    judges = list(dict.fromkeys(table["judge_model"]))
    kinds = ["must", "bonus", "avoid", "all"]
    for k, kind in enumerate(kinds):
        part = table[table["item_type"].eq(kind)].set_index("judge_model").reindex(judges)
        y = np.arange(len(judges)) + (k - 1.5) * 0.18
        est = part["cohen_kappa"].to_numpy(dtype=float)
        err = np.vstack([est - part["cohen_kappa_low"].to_numpy(dtype=float),
                         part["cohen_kappa_high"].to_numpy(dtype=float) - est])
        ax.errorbar(est, y, xerr=np.nan_to_num(err), fmt="o", capsize=3, label=kind)
    ax.set_yticks(np.arange(len(judges)), judges)
    ax.invert_yaxis()
    ax.set_xlabel("Cohen's κ with the reference (95 % run-clustered bootstrap interval)")
    ax.legend(title="item type", loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    return ax


def execute_study_notebook(run_dir: str | Path, *, kernel_name: str = "skillbench") -> Path:
    """Execute ``notebooks/judge_study.ipynb`` with papermill into ``RUN_DIR/judge-study/`` and export
    ``study.html``; its path.

    Raises:
        RuntimeError: a cell failed (the executed notebook is kept beside the page, to read the error).
    """
    import papermill as pm

    from skillbench.paths import NOTEBOOKS_DIR
    from skillbench.report import execute_notebook, export_notebook_html

    out = study_dir(run_dir) / STUDY_NOTEBOOK
    try:
        execute_notebook(NOTEBOOKS_DIR / STUDY_NOTEBOOK, out, parameters={"run_dir": str(Path(run_dir).resolve())},
                         kernel_name=kernel_name)
    except pm.PapermillExecutionError as exc:
        raise RuntimeError(f"{out}: {exc.ename}: {exc.evalue}") from exc
    return export_notebook_html(out, out.with_name(STUDY_HTML))


def _no_claim(row: pd.Series) -> str:
    """``2 (4 %)``: the judge's no-claim avoid quotes and their share; ``–`` when not counted (an old study)."""
    count, rate = row.get("no_claim"), row.get("no_claim_rate")
    if is_missing(count) or pd.isna(count):
        return "–"
    return f"{int(count)}" + ("" if is_missing(rate) or pd.isna(rate) else f" ({rate:.0%})")
