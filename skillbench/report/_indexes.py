"""The two index pages: a week's ``index.html`` and ``reports/index.html``, each opening on the week's decision block.

They read what the chain wrote (``weekly.json``, which carries the scorecard's ``decision.json``, and the run pages'
``runs/links.json``) and compute nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillbench.ledgers import CALIBRATION_HTML, DECISION_FILE, INDEX_FILE, RUN_PAGES_DIR, SCORECARD_HTML
from skillbench.report._pages import _jinja, read_state
from skillbench.report._run_pages import read_run_links
from skillbench.scorecard import LEVEL_WORDS, RED, TrustFlag, WeekDecision, level_of, section_anchor


def week_block(state: Mapping[str, Any], report_dir: str | Path | None = None) -> dict[str, Any] | None:
    """The week's decision block as the pages show it: the scorecard's ``decision.json`` (copied into
    ``weekly.json`` by the chain) with the chain's own red flag when a stage failed; None before a scorecard.

    Each family × model links to its family on the run pages' index when the week has run pages
    (``report_dir``'s ``runs/``), else to the scorecard's preference gate.
    """
    if state.get("decision") is None:
        return None
    try:
        dec = WeekDecision.from_json(state["decision"]).to_json()
    except ValueError as exc:  # a damaged decision.json never reads as a clean week, nor stops the page
        dec = WeekDecision(run_key=str(state.get("run_key", "")), endpoint="", level=RED, flags=[TrustFlag(
            "decision_unreadable", RED, f"The week's {DECISION_FILE} is unreadable ({exc}): rerun its scorecard "
            "(`skillbench scorecard RUN_DIR`)", SCORECARD_HTML)]).to_json()
    flags = list(dec["flags"])
    if state.get("failed_stage"):
        flags.insert(0, {"key": "stage_failed", "level": RED, "link": f"{state['failed_stage']}.html",
                         "text": f"Stage {state['failed_stage']} failed: the numbers below are from an earlier "
                                 "pass of this run key, or missing"})
    links = read_run_links(report_dir) if report_dir is not None else None
    gate = f"{SCORECARD_HTML}#{section_anchor('Preference gate (paired, per skill family × model)')}"
    families = [{**f, "href": f"{RUN_PAGES_DIR}/{links.families[f['skill_family']]}"
                 if links is not None and f.get("skill_family") in links.families else gate}
                for f in dec["families"]]
    return {**dec, "flags": flags, "families": families, "level": level_of(flags)}


def _block_context() -> dict[str, Any]:
    return {"words": LEVEL_WORDS}


def write_week_index(report_dir: str | Path, state: Mapping[str, Any], *, notes: Sequence[str] = ()) -> Path:
    """``reports/<run_key>/index.html``: the decision block first, then notes, and links to every stage.

    Args:
        report_dir: the week's report folder.
        state: the chain's ``weekly.json`` content (its ``decision``: the scorecard's ``decision.json``).
        notes: sentences the reader must see first (local sandbox, a part of the suite, …).
    """
    report_dir = Path(report_dir)
    dec = week_block(state, report_dir)
    flagged = {f["key"] for f in dec["flags"]} if dec else set()
    page = _jinja().get_template("week_index.html.j2").render(
        s=state, dec=dec, notes=list(notes), base="", **_block_context(),
        calibration_flag="calibration_failed" in flagged or "calibration_not_shown" in flagged,
        has_scorecard=(report_dir / SCORECARD_HTML).is_file(),
        has_calibration=(report_dir / CALIBRATION_HTML).is_file(),
    )
    out = report_dir / INDEX_FILE
    out.write_text(page, encoding="utf-8")
    return out


TREND_WEEKS = 8  # the weeks a trend line on the reports index spans (the newest and the ones before it)


def _trends(weeks: list[dict[str, Any]]) -> None:
    """Give each week, per model, the points of a small trend line of its lift over up to :data:`TREND_WEEKS`
    weeks ending with it (oldest first; an SVG polyline on the index, numbers only)."""
    lifts: dict[str, list[float]] = {}
    for week in reversed(weeks):  # oldest first
        week["trends"] = {}
        for m in (week.get("block") or {}).get("models") or []:
            if m.get("lift") is None:
                continue
            series = lifts.setdefault(str(m["model"]), [])
            series.append(float(m["lift"]))
            week["trends"][str(m["model"])] = _polyline(series[-TREND_WEEKS:])


def _polyline(values: list[float], width: int = 80, height: int = 18) -> str:
    if len(values) < 2:
        return ""
    low, high = min(values + [0.0]), max(values + [0.0])  # zero on the scale: a lift's sign shows
    scale = (high - low) or 1.0
    step = width / (len(values) - 1)
    return " ".join(f"{i * step:.1f},{height - (v - low) / scale * height:.1f}" for i, v in enumerate(values))


def write_reports_index(reports_dir: str | Path) -> Path:
    """``reports/index.html``: every week that has a ``weekly.json``, newest run key first, with the newest week's
    decision block on top and each week's lifts, changes and calls."""
    reports_dir = Path(reports_dir)
    weeks = []
    for folder in sorted((p for p in reports_dir.iterdir() if p.is_dir()), key=lambda p: p.name, reverse=True):
        state = read_state(folder)
        if state is not None:
            weeks.append({"dir": folder.name, **state, "block": week_block(state, folder)})
    _trends(weeks)
    latest = next((w for w in weeks if w["block"] is not None), None)
    page = _jinja().get_template("reports_index.html.j2").render(
        weeks=weeks, latest=latest, **_block_context(),
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))
    out = reports_dir / INDEX_FILE
    out.write_text(page, encoding="utf-8")
    return out
