"""The comparison's notebook: its tidy frames, and its execution by ``skillbench compare --report``.

``notebooks/compare_versions.ipynb`` (parameters: suite, base, head, run dir) shows the per-prompt lift of the
head over the base, the pairwise votes and the verdicts; every number comes from :func:`comparison_frames`, which
reads what the comparison wrote (``results.json``, the ledgers), so the notebook and ``compare.md`` never differ.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from skillbench.compare._comparison import NEW_DIR
from skillbench.compare._results import CompareResults
from skillbench.compare._run import RESULTS_FILE, CompareOutcome
from skillbench.paths import NOTEBOOKS_DIR

NOTEBOOK = "compare_versions.ipynb"
KERNEL_NAME = "skillbench"


def read_results(run_dir: str | Path) -> CompareResults:
    """``RUN_DIR/results.json``, validated against its schema.

    Raises:
        ValueError: no such file, or one that does not match the schema (the message names the file).
    """
    path = Path(run_dir) / RESULTS_FILE
    try:
        return CompareResults.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError as exc:
        raise ValueError(f"{path}: not found (run `skillbench compare` first)") from exc
    except (json.JSONDecodeError, ValueError) as exc:
        raise ValueError(f"{path}: not a skillbench compare result: {str(exc).splitlines()[0]}") from exc


def comparison_frames(run_dir: str | Path) -> dict[str, Any]:
    """The notebook's frames: ``verdicts``, ``prompt_lift`` (per model × prompt: base, head, ``d`` = head − base),
    ``votes`` (one per family × model × prompt), ``health`` and ``generalization`` (per family × model: the scored
    and held-out lifts and their gap; empty without ``--generalization``); ``results`` is the
    :class:`CompareResults`."""
    from skillbench.ledgers import RUN_FILE, load_week
    from skillbench.scorecard import collapse_votes
    from skillbench.weekly import scorecard_week

    results = read_results(run_dir)
    verdicts = pd.DataFrame([v.model_dump() for v in results.verdicts])
    g = results.generalization
    frames: dict[str, Any] = {"results": results, "verdicts": verdicts,
                              "health": pd.Series(results.health.model_dump(), name="value").to_frame(),
                              "generalization": pd.DataFrame([r.model_dump() for r in g.records] if g else [])}
    if not results.verdicts:
        frames |= {"prompt_lift": pd.DataFrame(columns=["model", "prompt", "base", "head", "d"]),
                   "votes": pd.DataFrame(columns=["skill_family", "model", "prompt", "vote"])}
        return frames
    lifts, votes = [], []
    # each week the comparison ran: head against base here, the new families' head against no-skill in new/
    for week in (d for d in (Path(run_dir), Path(run_dir) / NEW_DIR) if (d / RUN_FILE).is_file()):
        data = scorecard_week(week).data  # computed, never written: the comparison wrote its scorecard already
        lifts.append(data.paired.rename(columns={"no_skill": "base", "with_skill": "head"}))
        pairs = load_week(week).pairs
        ok = pairs[pairs["error"].astype(str).str.strip().eq("")] if pairs is not None else None
        if ok is not None and len(ok):
            votes.append(collapse_votes(ok))
    frames["prompt_lift"] = (pd.concat(lifts, ignore_index=True) if lifts
                             else pd.DataFrame(columns=["model", "prompt", "base", "head", "d"]))
    frames["votes"] = (pd.concat(votes, ignore_index=True) if votes
                       else pd.DataFrame(columns=["skill_family", "model", "prompt", "vote"]))
    return frames


def execute_compare_notebook(outcome: CompareOutcome, *, suite_dir: str | Path, base: str, head: str,
                             kernel_name: str = KERNEL_NAME) -> Path:
    """Execute the notebook with papermill into the run directory and export its HTML; the HTML's path.

    Raises:
        RuntimeError: a cell failed (the executed notebook is kept beside it, to read the error).
    """
    import papermill as pm

    from skillbench.report import execute_notebook, export_notebook_html, write_report_run_pages

    out = outcome.run_dir / NOTEBOOK
    params = {"suite_dir": str(Path(suite_dir).resolve()), "base": base, "head": head,
              "run_dir": str(outcome.run_dir.resolve())}
    try:
        execute_notebook(NOTEBOOKS_DIR / NOTEBOOK, out, parameters=params, kernel_name=kernel_name)
    except pm.PapermillExecutionError as exc:
        raise RuntimeError(f"{out}: {exc.ename}: {exc.evalue}") from exc
    page = export_notebook_html(out, out.with_suffix(".html"))
    write_report_run_pages(outcome.run_dir, outcome.run_dir)  # runs/: the head's runs behind every name on the page
    return page
