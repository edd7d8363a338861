"""Three shards of a matrix, run as separate processes with the real CLI in Docker on the simulated endpoint,
consolidated into one run directory that equals an unsharded pass; judge legs on copies of it consolidated and
scored as a complete week; and the merges consolidate refuses (nothing written) or labels INCOMPLETE.

The matrix is the tiny suite × haiku × 3 conditions × 1 rep (8 runs: 2 lift prompts × 3 arms and the dormancy
prompt in the 2 skilled arms; the legs hold 4, 3 and 1). Every generate pass runs once per module.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from skillbench.generation import docker_available
from skillbench.ledgers import CONSOLIDATION_FILE, HISTORY_FILE, RECONCILIATION_FILE, owner, read_summary
from tests.helpers.shared import IN_CI, ROOT, TINY_SUITE
from tests.helpers.sim import require_cli

CLI = [sys.executable, "-c", "import sys; from skillbench.cli import main; sys.exit(main())"]  # its UsageError → 2
# One rep: sharding and merging do not depend on how many reps a prompt has, and each run costs a container.
GENERATE = ["generate", str(TINY_SUITE), "--run-key", "t1", "--backend", "sim", "--models", "haiku", "--reps", "1",
            "--sandbox", "docker", "--jobs", "2", "--timeout", "180"]
MANIFEST_KEYS = ["run_id", "prompt", "skill_family", "model", "condition", "rep", "dormancy", "run_state",
                 "skill_activation", "sandbox", "endpoint"]
N = 3
RUNS = 8  # the matrix's planned runs

pytestmark = [pytest.mark.docker, pytest.mark.cli]


def cli(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def run_parallel(commands: list[list[str]]) -> None:
    """Start every command as its own process, then wait for all (each must exit 0)."""
    procs = [subprocess.Popen([*CLI, *c], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
             for c in commands]
    for proc, command in zip(procs, commands, strict=True):
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, f"{command}: {err[-3000:]}"


@pytest.fixture(scope="module")
def matrix(tmp_path_factory) -> dict[str, Path]:
    """The three legs (``leg1`` … ``leg3``) and an unsharded pass (``local``), run concurrently."""
    require_cli()
    if not docker_available():
        if IN_CI:
            pytest.fail("CI must have a Docker engine: `make setup` starts dockerd")
        pytest.skip("no Docker engine answers (run `make setup` as root to start dockerd)")
    root = tmp_path_factory.mktemp("matrix")
    folders = {f"leg{i}": root / f"leg{i}" for i in range(1, N + 1)} | {"local": root / "local"}
    run_parallel([[*GENERATE, "--shard", f"{i}/{N}", "--out-dir", str(folders[f"leg{i}"])] for i in range(1, N + 1)]
                 + [[*GENERATE, "--out-dir", str(folders["local"])]])
    return folders


@pytest.fixture(scope="module")
def merged(matrix, tmp_path_factory) -> Path:
    """The legs consolidated (read-only for tests: copy it to change it)."""
    out = tmp_path_factory.mktemp("merged") / "t1"
    done = cli("consolidate", *(str(matrix[f"leg{i}"]) for i in range(1, N + 1)), "--out", str(out), "--expect", "3")
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def judged(merged, tmp_path_factory) -> Path:
    """A copy of the merged week, graded by three judge legs (each on its own copy) and consolidated."""
    root = tmp_path_factory.mktemp("judged")
    week = Path(shutil.copytree(merged, root / "weekly" / "t1"))
    legs = [Path(shutil.copytree(merged, root / f"judge-leg{i}")) for i in range(1, N + 1)]
    run_parallel([["judge", str(leg), "--backend", "sim", "--shard", f"{i}/{N}"] for i, leg in enumerate(legs, 1)])
    done = cli("consolidate", *map(str, legs), "--out", str(week))
    assert done.returncode == 0, done.stderr
    return week


def judge_legs(judged: Path) -> list[Path]:
    return [judged.parent.parent / f"judge-leg{i}" for i in range(1, N + 1)]


def copy_legs(matrix: dict[str, Path], tmp_path: Path) -> list[Path]:
    return [Path(shutil.copytree(matrix[f"leg{i}"], tmp_path / f"leg{i}")) for i in range(1, N + 1)]


def frame(path: Path, columns: list[str] | None = None) -> pd.DataFrame:
    data = pd.read_csv(path, dtype=str, keep_default_na=False)
    data = data[columns] if columns else data
    return data.sort_values(list(data.columns)).reset_index(drop=True)


def test_the_merge_equals_an_unsharded_pass(matrix, merged):
    local = matrix["local"]
    assert (merged / "plan.csv").read_bytes() == (local / "plan.csv").read_bytes()
    assert json.loads((merged / "run.json").read_text()) == json.loads((local / "run.json").read_text())
    run_ids = sorted(p.parent.name for p in merged.glob("*/metadata.json"))
    assert run_ids == sorted(p.parent.name for p in local.glob("*/metadata.json"))
    assert len(run_ids) == RUNS
    pd.testing.assert_frame_equal(frame(merged / "manifest.csv", MANIFEST_KEYS), frame(local / "manifest.csv",
                                                                                         MANIFEST_KEYS))
    assert set(frame(merged / "manifest.csv")["sandbox"]) == {"docker"}
    pd.testing.assert_frame_equal(frame(merged / "truth.csv"), frame(local / "truth.csv"))
    recon = json.loads((merged / RECONCILIATION_FILE).read_text())
    assert recon["complete"] and recon["observed"] == recon["expected"] == RUNS
    assert [c["shard"] for c in recon["consolidated_from"]] == ["1/3", "2/3", "3/3"]
    record = json.loads((merged / CONSOLIDATION_FILE).read_text())
    assert record["status"] == "COMPLETE" and record["kind"] == "generate"
    assert record["generate"]["runs"] == {"planned": RUNS, "complete": RUNS, "missing": []}
    assert [s["folder"] for s in record["generate"]["shards"]] == [str(matrix[f"leg{i}"]) for i in (1, 2, 3)]
    assert not list(merged.glob("shard-*-of-*.json"))  # the merged week is not a leg
    for run_id in run_ids:  # each run folder is its owner leg's, byte for byte
        leg = matrix[f"leg{owner(run_id, N)}"]
        assert (merged / run_id / "transcript.jsonl").read_bytes() == (leg / run_id / "transcript.jsonl").read_bytes()


def test_a_rerun_replaces_the_merge(matrix, merged, tmp_path):
    week = Path(shutil.copytree(merged, tmp_path / "t1"))
    (week / "scorecard.md").write_text("derived, replaced\n")
    done = cli("consolidate", *(str(matrix[f"leg{i}"]) for i in range(1, N + 1)), "--out", str(week))
    assert done.returncode == 0, done.stderr
    assert not (week / "scorecard.md").exists()
    assert sorted(p.name for p in week.iterdir()) == sorted(p.name for p in merged.iterdir())
    assert not list(tmp_path.glob(".t1.*"))  # no staging folder left behind
    done = cli("consolidate", *(str(matrix[f"leg{i}"]) for i in range(1, N + 1)), "--out", str(matrix["local"]))
    assert done.returncode == 2 and "not a consolidation of this plan" in done.stderr


def test_judge_legs_consolidate_into_a_complete_week(merged, judged):
    scores = pd.read_csv(judged / "scores.csv", dtype=str, keep_default_na=False)
    graded = set(scores["run_id"])
    record = json.loads((judged / CONSOLIDATION_FILE).read_text())
    assert record["status"] == "COMPLETE" and record["kind"] == "judge"
    assert record["generate"] == json.loads((merged / CONSOLIDATION_FILE).read_text())["generate"]
    assert record["judge"]["runs"]["graded"] == record["judge"]["runs"]["gradeable"] == len(graded) > 0
    assert not scores.duplicated(["run_id", "item_index"]).any()
    assert all((judged / r / "judge.json").is_file() and (judged / r / "judge_cost.txt").is_file() for r in graded)
    passes = json.loads((judged / "judge.json").read_text())["passes"]
    assert sorted({p["shard"] for p in passes}) <= ["1/3", "2/3", "3/3"] and passes
    done = cli("scorecard", str(judged), "--bootstrap", "200")
    assert done.returncode == 0, done.stderr
    assert "INCOMPLETE" not in (judged / "scorecard.md").read_text().splitlines()[0]
    history = pd.read_csv(judged.parent / HISTORY_FILE, dtype=str)
    assert list(history["run_key"]) == ["t1"]


def _rewrite(summary: Path, **changes) -> None:
    data = read_summary(summary)
    summary.write_text(json.dumps({**data, **changes}))


def _missing(legs: list[Path], tmp_path: Path) -> tuple[list[Path], str]:
    return [legs[0], legs[2]], "shard 2/3: missing"


def _duplicated(legs: list[Path], tmp_path: Path) -> tuple[list[Path], str]:
    again = Path(shutil.copytree(legs[1], tmp_path / "leg2-again"))
    return [*legs, again], f"shard 2/3: duplicated — {legs[1]} and {again} both hold shard-2-of-3.json"


def _other_commit(legs: list[Path], tmp_path: Path) -> tuple[list[Path], str]:
    _rewrite(legs[2] / "shard-3-of-3.json", skillbench_commit="0" * 40)
    return legs, f"{'0' * 40} in shard 3/3 ({legs[2]})"  # in the line of field 'skillbench_commit' (asserted)


def _foreign_run(legs: list[Path], tmp_path: Path) -> tuple[list[Path], str]:
    run_id = next(p.parent.name for p in sorted(legs[1].glob("*/metadata.json")))
    shutil.copytree(legs[1] / run_id, legs[0] / run_id)
    return legs, f"shard 1/3 ({legs[0]}): 1 run folder(s) of another leg's slice: {run_id} (shard 2/3)"


def _lost_run(legs: list[Path], tmp_path: Path) -> tuple[list[Path], str]:
    run_id = next(p.parent.name for p in sorted(legs[0].glob("*/metadata.json")))
    shutil.rmtree(legs[0] / run_id)  # the summary still lists it: which is right cannot be told
    return legs, f"shard 1/3 ({legs[0]}): the summary disagrees with its folder"


@pytest.mark.parametrize("damage", [_missing, _duplicated, _other_commit, _foreign_run, _lost_run],
                         ids=["missing", "duplicated", "other-commit", "foreign-run", "summary-disagrees"])
def test_consolidate_refuses_and_writes_nothing(matrix, tmp_path, damage):
    folders, named = damage(copy_legs(matrix, tmp_path), tmp_path)
    out = tmp_path / "out" / "t1"
    done = cli("consolidate", *map(str, folders), "--out", str(out))
    assert done.returncode == 1, done.stderr
    assert named in done.stderr, done.stderr
    assert "nothing written" in done.stderr
    if damage is _other_commit:
        assert "field 'skillbench_commit' differs" in done.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_an_incomplete_leg_merges_labelled_incomplete_and_stays_out_of_the_history(matrix, tmp_path):
    legs = copy_legs(matrix, tmp_path)
    expected = read_summary(legs[0] / "shard-1-of-3.json")["expected"]
    # A leg that ran part of its slice (--limit; a cancelled leg alike): its summary and ledgers say what it has.
    # (Editing a finished leg's folder and summary instead is tampering, which consolidate refuses:
    # tests/security/test_merges.py.)
    shutil.rmtree(legs[0])
    done = cli(*GENERATE, "--shard", f"1/{N}", "--limit", str(expected - 1), "--out-dir", str(legs[0]))
    assert done.returncode == 0, done.stderr
    data = read_summary(legs[0] / "shard-1-of-3.json")
    (lost,) = sorted(set(data["expected_runs"]) - set(data["observed_runs"]))
    week = tmp_path / "weekly" / "t1"
    done = cli("consolidate", *map(str, legs), "--out", str(week))
    assert done.returncode == 1, done.stderr
    assert f"incomplete: shard 1/3 ({legs[0]}): 1 of its {data['expected']} runs are not complete" in done.stderr
    assert "INCOMPLETE" in done.stderr
    record = json.loads((week / CONSOLIDATION_FILE).read_text())
    assert record["status"] == "INCOMPLETE" and record["generate"]["runs"]["missing"] == [lost]
    recon = json.loads((week / RECONCILIATION_FILE).read_text())
    # kept out by the leg's --limit: limited (a later pass of the leg runs it), never also missing; not complete
    assert not recon["complete"] and recon["limited"] == [lost] and lost not in recon["missing"]
    assert not (week / lost).exists() and len(list(week.glob("*/metadata.json"))) == RUNS - 1
    scored = cli("scorecard", str(week), "--bootstrap", "200")
    assert scored.returncode == 1
    assert "INCOMPLETE" in scored.stderr and "consolidation.json says the merge of the shards is INCOMPLETE" in \
        scored.stderr
    history = week.parent / HISTORY_FILE
    assert not history.exists() or "t1" not in set(pd.read_csv(history, dtype=str)["run_key"])


def test_a_judge_leg_that_graded_part_of_its_slice_merges_incomplete(merged, judged, tmp_path):
    legs = [Path(shutil.copytree(leg, tmp_path / leg.name)) for leg in judge_legs(judged)]
    big = max(legs, key=lambda leg: read_summary(next(leg.glob("shard-*-of-*.json")))["expected"])
    index = int(big.name[-1])
    regraded = cli("judge", str(big), "--backend", "sim", "--shard", f"{index}/{N}", "--fresh", "--limit", "1")
    assert regraded.returncode == 0, regraded.stderr
    week = Path(shutil.copytree(merged, tmp_path / "weekly" / "t1"))
    done = cli("consolidate", *map(str, legs), "--out", str(week))
    assert done.returncode == 1, done.stderr
    assert f"incomplete: shard {index}/{N} ({big}):" in done.stderr and "not fully graded" in done.stderr
    record = json.loads((week / CONSOLIDATION_FILE).read_text())
    assert record["status"] == "INCOMPLETE" and record["judge"]["status"] == "INCOMPLETE"
    assert record["generate"]["status"] == "COMPLETE"
    scored = cli("scorecard", str(week), "--bootstrap", "200")
    assert scored.returncode == 1 and "not graded yet" in scored.stderr, scored.stderr
    assert not (week.parent / HISTORY_FILE).exists() or "t1" not in (week.parent / HISTORY_FILE).read_text()
