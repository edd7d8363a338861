"""checks.csv is rebuilt whole from the committed complete runs' checks.json, sorted, read back clean."""

from __future__ import annotations

import json
from pathlib import Path

from skillbench.checks import CheckResult, write_checks_ledger, write_run_checks
from skillbench.ledgers import CHECKS_COLUMNS
from skillbench.ledgers._checks import expected_check_rows, missing_check_rows, read_checks

RESULT = {"type": "result", "subtype": "success", "is_error": False, "result": "ok", "num_turns": 1}


def _run(week: Path, run_id: str, checks: list[tuple[str, str]], *, complete: bool = True, **meta_extra) -> Path:
    folder = week / run_id
    folder.mkdir(parents=True)
    meta = {"run_id": run_id, "prompt": "task-a", "model": "haiku", "condition": "with-skill", "rep": 1,
            "checks": [{"id": cid, "type": "run_command"} for cid, _ in checks], **meta_extra}
    (folder / "metadata.json").write_text(json.dumps(meta))
    events = [{"type": "system", "subtype": "init"}] + ([RESULT] if complete else [])
    (folder / "transcript.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n")
    write_run_checks(folder, {"ok": True}, [CheckResult(c, "run_command", s, "exit 0") for c, s in checks])
    return folder


def test_rebuilt_from_complete_committed_runs_only(tmp_path):
    assert write_checks_ledger(tmp_path) is None and not (tmp_path / "checks.csv").exists(), "no checks, no file"
    _run(tmp_path, "r2", [("b", "failed"), ("a", "passed")])
    _run(tmp_path, "r1", [("z", "error")])
    _run(tmp_path, "r3", [("a", "passed")], complete=False, timed_out=True)  # a timeout: rerun, no rows
    _run(tmp_path, "r4", [("a", "passed")], harness_invalid="false: exit 1")
    _run(tmp_path, ".tmp-r5", [("a", "passed")])  # not committed
    path = write_checks_ledger(tmp_path)
    frame = read_checks(path)
    assert list(frame.columns) == list(CHECKS_COLUMNS)
    assert list(zip(frame.run_id, frame.check_id, frame.status, strict=True)) == [
        ("r1", "z", "error"), ("r2", "a", "passed"), ("r2", "b", "failed")]
    assert frame.rep.tolist() == [1, 1, 1] and set(frame.prompt) == {"task-a"}
    before = path.read_bytes()
    write_checks_ledger(tmp_path)
    assert path.read_bytes() == before, "idempotent"
    owed = expected_check_rows(tmp_path, ["r1", "r2"])
    assert missing_check_rows(frame, owed) == []


def test_a_run_gone_from_the_week_leaves_the_ledger(tmp_path):
    _run(tmp_path, "r1", [("a", "passed")])
    write_checks_ledger(tmp_path)
    (tmp_path / "r1").rename(tmp_path / "_aside")
    assert read_checks(write_checks_ledger(tmp_path)).empty, "an existing ledger is rewritten, never stale"
