"""The week's report pages after the chain: scorecard and calibration pages, the headline, the notes on how it ran."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skillbench.ledgers import (
    CALIBRATION_HTML,
    CALIBRATION_MD,
    MANIFEST_FILE,
    SCORECARD_FILE,
    SCORECARD_HTML,
    read_cells,
    read_decision,
)
from skillbench.report import notebook_figures, write_markdown_page, write_report_run_pages


def finish_pages(state: dict[str, Any], run_dir: Path, report_dir: Path) -> None:
    """Scorecard and calibration pages for stages that succeeded now; sandboxes the runs actually used."""
    done = {s["id"] for s in state["stages"] if s["status"] == "ok"} if state["stages"] else set()
    if "05_scorecard" in done and (run_dir / SCORECARD_FILE).is_file():
        title = (run_dir / SCORECARD_FILE).read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
        state["scorecard_title"] = title
        state["week_incomplete"] = "INCOMPLETE" in title
        state["week_subset"] = next((part for part in title.split(" — ") if part.startswith("subset: ")), "")
        write_markdown_page(run_dir / SCORECARD_FILE, report_dir / SCORECARD_HTML, title=title,
                            figures=notebook_figures(report_dir / "05_scorecard.ipynb"))  # its plots beside tables
        state["decision"] = read_decision(run_dir)  # the pages' decision block (None: unreadable, none shown)
    if "04_calibration" in done and (run_dir / CALIBRATION_MD).is_file():
        write_markdown_page(run_dir / CALIBRATION_MD, report_dir / CALIBRATION_HTML,
                                title=f"Judge calibration — {state['run_key']}")
    manifest = run_dir / MANIFEST_FILE
    if manifest.is_file():
        if error := write_report_run_pages(run_dir, report_dir):  # runs/, and every page's names linked to it
            state["run_pages_error"] = error
        with contextlib.suppress(Exception):
            sandboxes = read_cells(manifest, ("sandbox",))["sandbox"]
            state["sandboxes_used"] = sorted(str(s) for s in sandboxes[sandboxes.ne("")].unique())


def report_notes(state: Mapping[str, Any]) -> list[str]:
    """How the week ran, in sentences; what the decision block already flags (an incomplete or partial week, a
    simulated endpoint) is said only when there is no block."""
    notes = [] if state.get("decision") else _state_notes(state)
    used = state.get("sandboxes_used") or [state.get("sandbox")]
    if "local" in used:
        why = ("as requested (--sandbox local)" if state.get("sandbox_requested") == "local" else
               "because no Docker engine answered; run `make setup` as root to start one")
        notes.append("No container isolation: runs used the local sandbox (a fresh HOME, config folder, TMPDIR and "
                     f"working folder per run) {why}. It guarantees no isolation: runs shared this machine's "
                     "network, user and files, so nothing kept the content under evaluation from them (only "
                     "--sandbox docker seals a run behind its relay).")
    if len(used) > 1:
        notes.append(f"Runs of this week used several sandboxes ({', '.join(used)}); it was resumed on another "
                     "machine set-up.")
    return notes


def _state_notes(state: Mapping[str, Any]) -> list[str]:
    """The week's state in sentences, for a week without a decision block (its flags say the same)."""
    notes = []
    if state.get("week_incomplete"):
        notes.append("INCOMPLETE week: read no number as a clean week (the scorecard's first lines say why; see its "
                     "Coverage section).")
    if state.get("week_subset"):
        notes.append(f"Part of the suite ({state['week_subset']}): the other families' runs are kept for a later "
                     "pass of this run key; rerun it without --families/--prompts to complete the week.")
    if state.get("endpoint_kind") == "simulated":
        notes.append("Simulated endpoint: every answer and grade came from skillbench's simulated Messages endpoint "
                     "on 127.0.0.1. These numbers test the harness, not a model.")
    return notes
