"""Benchmark: the wall time to write a week's run pages (``reports/<run_key>/runs/``) for the bundled suite's size.

The week is a real one (``--week RUN_DIR``: its ledgers and run folders, copied; replicated under new prompt names
until it has ``--runs`` runs) or, without it, a synthetic one in the bundled suite's shapes: 34 prompts and 5
dormancy prompts, 2 models, no-skill / with-skill / plugin (dormancy prompts: with-skill / plugin), 2 reps — 448
runs — each with a transcript of a skill load, two tool calls and a 1.5 kB answer, five rubric items and a pairwise
row per rep. The time covers reading the ledgers and every transcript, writing every page and the index, and
linking the names of a scorecard page. Target: ≤ 10 s on 2 cores.

    .venv/bin/python benchmarks/run_pages.py [--week RUN_DIR] [--runs 448]
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillbench.ledgers import (  # noqa: E402
    CHECKS_FILE,
    MANIFEST_COLUMNS,
    MANIFEST_FILE,
    PAIRS_COLUMNS,
    PAIRS_FILE,
    RUN_FILE,
    SCORES_COLUMNS,
    SCORES_FILE,
    TEST_PROMPT_FILE,
    TRANSCRIPT_FILE,
)
from skillbench.report import write_report_run_pages  # noqa: E402

TARGET_SECONDS = 10.0
LEDGERS = (MANIFEST_FILE, SCORES_FILE, PAIRS_FILE, CHECKS_FILE, RUN_FILE)


def _rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def _write(path: Path, columns: list[str] | tuple[str, ...], rows: list[dict[str, object]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def replicate_week(source: Path, out: Path, runs: int) -> Path:
    """A copy of ``source``'s ledgers and run folders, repeated under new prompt names (``-copyN``) up to ``runs``."""
    out.mkdir(parents=True)
    columns, manifest = _rows(source / MANIFEST_FILE)
    copies = max(1, -(-runs // len(manifest)))
    tables = {name: _rows(source / name) for name in (SCORES_FILE, PAIRS_FILE, CHECKS_FILE)
              if (source / name).is_file()}
    out_rows: dict[str, list[dict[str, str]]] = {MANIFEST_FILE: [], **{n: [] for n in tables}}
    for k in range(copies):
        suffix = "" if k == 0 else f"-copy{k}"
        for row in manifest:
            if len(out_rows[MANIFEST_FILE]) >= runs:
                break
            run_id = row["run_id"] + suffix
            shutil.copytree(source / row["run_id"], out / run_id)
            out_rows[MANIFEST_FILE].append({**row, "prompt": row["prompt"] + suffix, "run_id": run_id})
        kept = {r["run_id"] for r in out_rows[MANIFEST_FILE]}
        for name, (_, rows) in tables.items():
            for row in rows:
                new = {**row, "prompt": row["prompt"] + suffix}
                if "run_id" in row:
                    new["run_id"] = row["run_id"] + suffix
                    if new["run_id"] not in kept:
                        continue
                out_rows[name].append(new)
    _write(out / MANIFEST_FILE, columns, out_rows[MANIFEST_FILE])  # type: ignore[arg-type]
    for name, (cols, _) in tables.items():
        _write(out / name, cols, out_rows[name])  # type: ignore[arg-type]
    if (source / RUN_FILE).is_file():
        shutil.copy(source / RUN_FILE, out / RUN_FILE)
    return out


def synthetic_week(out: Path) -> Path:
    """448 runs in the bundled suite's shapes (see the module docstring)."""
    out.mkdir(parents=True)
    answer = ("Here is a practical plan.\n\n" + "".join(f"- Step {i}: check the column types, keep the raw file, and "
                                                           f"re-run the pipeline before trusting the numbers.\n"
                                                           for i in range(14)) + "Start with the first point.")
    tool_output = "\n".join(f"line {i}: " + "x" * 60 for i in range(50))
    manifest, scores, pairs = [], [], []
    prompts = [(f"prompt-{i:02d}", f"family-{i // 4}", False) for i in range(34)]
    prompts += [(f"dormancy-{i}", f"family-{i}", True) for i in range(5)]
    for prompt, family, dormancy in prompts:
        for model in ("haiku", "sonnet"):
            conditions = ("with-skill", "plugin") if dormancy else ("no-skill", "with-skill", "plugin")
            for condition in conditions:
                for rep in (1, 2):
                    run_id = f"{prompt}-{model}-{condition}-r{rep}-k"
                    folder = out / run_id
                    folder.mkdir()
                    events = [
                        {"type": "system", "subtype": "init", "model": model, "tools": ["Bash", "Read"],
                         "skills": [family]},
                        {"type": "assistant", "message": {"model": model, "content": [
                            {"type": "text", "text": "Loading the skill."},
                            {"type": "tool_use", "id": "a", "name": "Skill", "input": {"skill": family}}]}},
                        {"type": "user", "message": {"content": [{"type": "text", "text":
                                                                  f"Base directory for this skill: /s/{family}\n"
                                                                  + tool_output}]}},
                        {"type": "assistant", "message": {"model": model, "content": [
                            {"type": "tool_use", "id": "b", "name": "Bash", "input": {"command": "ls -la"}}]}},
                        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "b",
                                                                  "content": tool_output * 3}]}},
                        {"type": "assistant", "message": {"model": model, "content": [{"type": "text",
                                                                                       "text": answer}]}},
                        {"type": "result", "subtype": "success", "result": answer, "num_turns": 4,
                         "total_cost_usd": 0.004},
                    ]
                    (folder / TRANSCRIPT_FILE).write_text("".join(json.dumps(e) + "\n" for e in events))
                    (folder / TEST_PROMPT_FILE).write_text(json.dumps({
                        "name": prompt, "product_area": "x", "skill_url": "https://x.test/s",
                        "prompt": "How do I read this file correctly? " * 4,
                        "rubric": [{"type": "must", "text": "Checks the column types"}]}))
                    manifest.append({
                        "prompt": prompt, "skill_family": family, "skill_leaf": "", "model": model,
                        "condition": condition, "rep": rep, "run_id": run_id, "exit_code": 0,
                        "timestamp": "20261130T080000Z", "skill_available": 1, "skill_activation": "skill_tool",
                        "reached_leaf": 1, "fetched_site": 0, "fetched_count": 0, "total_cost_usd": 0.004,
                        "num_turns": 4, "result_subtype": "success", "budget_hit": 0, "signals_ok": 1,
                        "duration_ms": 900, "dormancy": int(dormancy), "is_error": 0, "run_state": "finished",
                        "trigger_only": 0})
                    if dormancy or condition == "plugin":
                        continue
                    for index, (kind, verdict, quote) in enumerate(
                            [("must", "met", "check the column types"), ("must", "met", "keep the raw file"),
                             ("must", "missing", ""), ("bonus", "met", "Start with the first point."),
                             ("avoid", "clean", "")]):
                        credit = 1.0 if verdict == "met" else 0.0
                        scores.append({
                            "prompt": prompt, "skill": family, "model": model, "condition": condition, "rep": rep,
                            "item_type": kind, "item_text": f"Item {index} of the rubric", "verdict": verdict,
                            "credit": credit, "contribution": credit, "contested": "", "evidence_quote": quote,
                            "run_id": run_id, "item_index": index, "evidence_verified": 1 if quote else ""})
                if not dormancy:
                    pairs += [{"run_key": "k", "skill_family": family, "prompt": prompt, "model": model, "rep": rep,
                               "winner_ab": "A", "winner_ba": "B", "outcome": "W", "judge_model": "opus"}
                              for rep in (1, 2)]
    _write(out / MANIFEST_FILE, MANIFEST_COLUMNS, manifest)
    _write(out / SCORES_FILE, SCORES_COLUMNS, scores)
    _write(out / PAIRS_FILE, PAIRS_COLUMNS, pairs)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--week", type=Path, help="a real week's run directory (copied; replicated up to --runs)")
    parser.add_argument("--runs", type=int, default=448, help="runs of the week with --week (default 448)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="run-pages-") as tmp:
        base = Path(tmp)
        week = replicate_week(args.week, base / "week", args.runs) if args.week else synthetic_week(base / "week")
        report = base / "report"
        report.mkdir()
        # a scorecard page naming every prompt and model in a table, as the report's pages do
        with (week / MANIFEST_FILE).open(newline="", encoding="utf-8") as f:
            keys = sorted({(r["prompt"], r["model"]) for r in csv.DictReader(f)})
        (report / "scorecard.html").write_text("<table>" + "".join(f"<tr><td>{p}</td><td>{m}</td></tr>"
                                                                  for p, m in keys) + "</table>")
        n_runs = sum(1 for _ in (week / MANIFEST_FILE).open()) - 1
        start = time.perf_counter()
        error = write_report_run_pages(week, report)
        seconds = time.perf_counter() - start
        if error:
            print(f"run pages: {error}", file=sys.stderr)
            return 2
        pages = len(list((report / "runs").glob("*.html")))
        size = sum(p.stat().st_size for p in (report / "runs").iterdir()) / 1e6
        print(f"{n_runs} runs → {pages} pages ({size:.1f} MB) in {seconds:.2f} s "
              f"(target ≤ {TARGET_SECONDS:.0f} s: {'ok' if seconds <= TARGET_SECONDS else 'OVER'})")
    return 0 if seconds <= TARGET_SECONDS else 1


if __name__ == "__main__":
    raise SystemExit(main())
