"""The consolidation's checks on small hand-made legs (no Docker, no CLI): which problems refuse, and how each is
named; the output folder's rules and the one-step commit; the scorecard's consolidation rule."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from skillbench.consolidate import OutputRefused, Problem
from skillbench.consolidate._inputs import (
    GENERATE_IDENTITY,
    GENERATE_OBSERVED_IDENTITY,
    check_declared,
    identity_problems,
    read_legs,
)
from skillbench.consolidate._output import check_generation_out, commit, staging_dir
from skillbench.consolidate._report import consolidation, merge_record
from skillbench.ledgers import Shard, consolidation_incomplete, run_dir_lock, write_summary
from skillbench.ledgers._files import CONSOLIDATION_FILE, LOCK_FILE
from skillbench.scorecard import incomplete_reasons
from tests.helpers.shared import ROOT

CLI = [sys.executable, "-c", "import sys; from skillbench.cli import main; sys.exit(main())"]
IDENTITY = {"run_key": "t1", "skillbench_commit": "a" * 40, "suite_commit": "b" * 40,
            "image_tag": "skillbench-runner:2.1-abc", "cli_version": "2.1.328", "config_sha": "c" * 64,
            "plan_sha": "d" * 64, "sandboxes": ["docker"], "endpoints": ["simulated"]}


def leg(root: Path, name: str, index: int, count: int = 3, kind: str = "generate", **fields) -> Path:
    """A folder holding one hand-made summary."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    write_summary(folder, Shard(index, count), kind, {**IDENTITY, **fields})
    return folder


def problems_of(folders: list[Path], expect: int | None = None) -> list[str]:
    legs, problems = read_legs(folders)
    _, declared = check_declared(legs, expect=expect)
    found = problems + declared + identity_problems(legs, GENERATE_IDENTITY, observed=GENERATE_OBSERVED_IDENTITY)
    return [p.line() for p in found]


def test_one_summary_per_shard_is_clean(tmp_path):
    folders = [leg(tmp_path, f"s{i}", i) for i in (1, 2, 3)]
    assert problems_of(folders) == []
    assert problems_of(folders, expect=3) == []


def test_a_missing_shard_is_named(tmp_path):
    lines = problems_of([leg(tmp_path, "s1", 1), leg(tmp_path, "s3", 3)])
    assert len(lines) == 1 and lines[0].startswith("shard 2/3: missing") and "shard-2-of-3.json" in lines[0]


def test_a_duplicated_shard_names_both_folders(tmp_path):
    folders = [leg(tmp_path, "s1", 1), leg(tmp_path, "s2", 2), leg(tmp_path, "again", 2), leg(tmp_path, "s3", 3)]
    (line,) = problems_of(folders)
    assert line.startswith("shard 2/3: duplicated") and str(tmp_path / "s2") in line and str(tmp_path / "again") in line


def test_summaries_that_disagree_on_n_or_kind(tmp_path):
    lines = problems_of([leg(tmp_path, "s1", 1), leg(tmp_path, "s2", 2), leg(tmp_path, "four", 3, count=4)])
    assert any("disagree on N" in line and str(tmp_path / "four") in line for line in lines), lines
    lines = problems_of([leg(tmp_path, "k1", 1, count=2), leg(tmp_path, "k2", 2, count=2, kind="judge")])
    assert any("disagree on kind" in line and "judge in shard 2/2" in line for line in lines), lines


def test_expect_names_the_legs_that_declare_another_n(tmp_path):
    lines = problems_of([leg(tmp_path, "s1", 1, count=2), leg(tmp_path, "s2", 2, count=2)], expect=3)
    assert any("declares N=2, but --expect 3" in line for line in lines)
    assert any(line.startswith("shard 3/3: missing") for line in lines)


@pytest.mark.parametrize("field", ["skillbench_commit", "suite_commit", "image_tag", "cli_version", "config_sha",
                                   "plan_sha"])
def test_an_identity_mismatch_names_the_field_and_both_sides(tmp_path, field):
    odd = {field: "x" * 40}
    folders = [leg(tmp_path, "s1", 1), leg(tmp_path, "s2", 2), leg(tmp_path, "s3", 3, **odd)]
    (line,) = problems_of(folders)
    assert f"field {field!r} differs" in line
    assert f"shards 1/3 ({tmp_path / 's1'}), 2/3 ({tmp_path / 's2'})" in line and f"3/3 ({tmp_path / 's3'})" in line


def test_image_ids_may_differ_but_a_leg_in_another_sandbox_may_not(tmp_path):
    folders = [leg(tmp_path, "s1", 1, image_ids=["sha256:1"]), leg(tmp_path, "s2", 2, image_ids=["sha256:2"]),
               leg(tmp_path, "s3", 3, sandboxes=[])]  # a leg with no complete run observed no sandbox
    assert problems_of(folders) == []
    (line,) = problems_of([*folders[:2], leg(tmp_path, "local", 3, sandboxes=["local"])])
    assert "field 'sandboxes' differs" in line and "local" in line


def test_folders_without_one_readable_summary(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    two = leg(tmp_path, "two", 1)
    write_summary(two, Shard(2, 3), "generate", IDENTITY)
    renamed = leg(tmp_path, "renamed", 3)
    (renamed / "shard-3-of-3.json").rename(renamed / "shard-2-of-3.json")
    legs, problems = read_legs([empty, two, renamed, tmp_path / "absent"])
    assert not legs
    text = "\n".join(p.line() for p in problems)
    assert f"{empty}: holds no shard-i-of-N.json" in text
    assert f"{two}: holds 2 shard summaries" in text
    assert "disagree with its file name" in text
    assert f"{tmp_path / 'absent'}: not a folder" in text


def test_the_cli_refuses_a_missing_shard_and_writes_nothing(tmp_path):
    out = tmp_path / "merged"
    done = subprocess.run([*CLI, "consolidate", str(leg(tmp_path, "s1", 1)), str(leg(tmp_path, "s2", 2)),
                           "--out", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "refused: shard 3/3: missing" in done.stderr and "nothing written" in done.stderr
    assert not out.exists()


def test_the_output_may_be_empty_or_an_earlier_consolidation_of_the_same_plan(tmp_path):
    run_dir = tmp_path / "week"
    run_dir.mkdir()
    assert check_generation_out(run_dir, plan_sha="p", run_ids=["r1"]) is None
    (run_dir / "r1").mkdir()
    with pytest.raises(OutputRefused, match="not a consolidation of this plan"):
        check_generation_out(run_dir, plan_sha="p", run_ids=["r1"])
    (run_dir / CONSOLIDATION_FILE).write_text(json.dumps({"plan_sha": "p", "generate": {"status": "COMPLETE"}}))
    assert check_generation_out(run_dir, plan_sha="p", run_ids=["r1"])["plan_sha"] == "p"
    with pytest.raises(OutputRefused, match="another plan"):
        check_generation_out(run_dir, plan_sha="q", run_ids=["r1"])
    (run_dir / "scores.csv").write_text("x\n")
    with pytest.raises(OutputRefused, match="scores.csv, which a generation merge does not write"):
        check_generation_out(run_dir, plan_sha="p", run_ids=["r1"])
    (run_dir / "scores.csv").unlink()
    (run_dir / CONSOLIDATION_FILE).write_text(json.dumps({"plan_sha": "p", "generate": {"x": 1}, "judge": {"x": 1}}))
    with pytest.raises(OutputRefused, match="orphan its grades"):
        check_generation_out(run_dir, plan_sha="p", run_ids=["r1"])


def test_commit_replaces_the_folder_in_one_step_and_keeps_its_lock(tmp_path):
    run_dir = tmp_path / "week"
    run_dir.mkdir()
    (run_dir / "old.txt").write_text("old")
    with run_dir_lock(run_dir) as locked:
        inode = os.stat(locked / LOCK_FILE).st_ino
        staging = staging_dir(locked)
        (staging / "new.txt").write_text("new")
        commit(staging, locked)
        assert os.stat(locked / LOCK_FILE).st_ino == inode  # the held lock is still RUN_DIR's lock
        assert sorted(p.name for p in locked.iterdir()) == [LOCK_FILE, "new.txt"]
        assert not staging.exists()
    assert [p.name for p in run_dir.iterdir()] == ["new.txt"]


def test_a_merge_that_is_not_complete_keeps_the_week_incomplete(tmp_path):
    legs, _ = read_legs([leg(tmp_path, f"s{i}", i) for i in (1, 2, 3)])
    assert consolidation_incomplete(tmp_path) == ""  # not a consolidation
    for status in ("INCOMPLETE", "COMPLETE"):
        problems = [Problem(legs[0].label, "2 of its 6 runs are not complete", blocking=False)] \
            if status == "INCOMPLETE" else []
        data = consolidation(merge_record("generate", legs, GENERATE_IDENTITY, problems, {}), None)
        assert data["status"] == status
        (tmp_path / CONSOLIDATION_FILE).write_text(json.dumps(data))
        reason = consolidation_incomplete(tmp_path)
        assert bool(reason) == (status == "INCOMPLETE")
    (tmp_path / CONSOLIDATION_FILE).write_text("{not json")
    reason = consolidation_incomplete(tmp_path)
    assert reason == f"{CONSOLIDATION_FILE} says the merge of the shards is unreadable"
    coverage = pd.DataFrame({"gradeable": pd.Series(dtype=bool), "reason": pd.Series(dtype=object)})
    assert incomplete_reasons(None, coverage, reason) == [reason]
    assert incomplete_reasons(None, coverage) == []


def test_an_unreadable_retries_or_reconciliation_file_blocks_the_merge(tmp_path):
    """A leg's retried, capped and limited runs live in these files: a damaged one must not vanish from the merge."""
    from skillbench.consolidate._generation_checks import check_side_files

    folders = [leg(tmp_path, f"s{i}", i) for i in (1, 2, 3)]
    (folders[1] / "retries.json").write_text("{not json", encoding="utf-8")
    (folders[2] / "reconciliation.json").write_text("[1, 2]", encoding="utf-8")
    legs, _ = read_legs(folders)
    found = check_side_files(legs)
    assert [(p.blocking, p.what.split(" ")[0]) for p in found] == [(True, "retries.json"),
                                                                  (True, "reconciliation.json")]
    assert all("rerun the leg" in p.what for p in found)
    assert check_side_files(read_legs(folders[:1])[0]) == []
