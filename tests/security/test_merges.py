"""Ledger merges trust nothing (issue 29, item 7): a leg of a CI matrix whose ledgers were cut, padded or edited
after it finished is refused by ``skillbench consolidate`` — one line naming the leg and the file, nothing written —
and a week whose answer key is damaged never scores as a clean one.

Real legs: the tiny suite's matrix (3 shards, sim backend, the real CLI in Docker, as tests/consolidate/test_matrix
builds it) and a two-shard matrix of a suite with task checks. Each test tampers with copies of the legs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from skillbench.ledgers import GENERATE_LEG_FILES, leg_files, read_summary
from tests.consolidate.test_matrix import GENERATE, N, cli, copy_legs, run_parallel
from tests.generation.test_generate import require_docker
from tests.helpers.sim import SITE, make_suite, require_cli

pytestmark = [pytest.mark.docker, pytest.mark.cli]

CHECKS_N = 2
TASK = {"name": "tyre-note", "product_area": "bicycles", "skill_url": f"{SITE}/tyre-repair/SKILL.md",
        "prompt": "Read notes.txt in the working directory and say what it asks for.",
        "rubric": [{"type": "must", "text": "Says what the notes file asks for"}],
        "workspace": [{"dest": "notes.txt", "content": "Patch the tube.\n"}],
        "checks": [{"id": "exit", "type": "exit_success"}, {"id": "notes", "type": "file_exists", "path": "notes.txt"}],
        "allowed_tools": ["Read", "Bash"]}


@pytest.fixture(scope="module")
def legs(tmp_path_factory) -> list[Path]:
    """The tiny suite's three generate legs (read-only: tests tamper with copies)."""
    require_cli()
    require_docker()
    root = tmp_path_factory.mktemp("legs")
    run_parallel([[*GENERATE, "--shard", f"{i}/{N}", "--out-dir", str(root / f"leg{i}")] for i in range(1, N + 1)])
    return [root / f"leg{i}" for i in range(1, N + 1)]


@pytest.fixture(scope="module")
def judged(legs, tmp_path_factory) -> Path:
    """The legs consolidated and graded by the simulated judge: a complete, clean week to damage."""
    week = tmp_path_factory.mktemp("judged") / "weekly" / "t1"
    done = cli("consolidate", *map(str, legs), "--out", str(week))
    assert done.returncode == 0, done.stderr
    graded = cli("judge", str(week), "--backend", "sim")
    assert graded.returncode == 0, graded.stderr
    return week


@pytest.fixture(scope="module")
def check_legs(tmp_path_factory) -> list[Path]:
    """Two generate legs of a suite whose task prompt has checks (``checks.csv`` rows)."""
    require_cli()
    require_docker()
    root = tmp_path_factory.mktemp("check-legs")
    suite = make_suite(root / "suite")
    (suite / "test-prompts" / "chain-wax.json").unlink()
    (suite / "test-prompts" / "tyre-note.json").write_text(json.dumps(TASK), encoding="utf-8")
    command = ["generate", str(suite), "--run-key", "c1", "--backend", "sim", "--models", "haiku", "--reps", "2",
               "--conditions", "no-skill,with-skill", "--sandbox", "docker", "--jobs", "2", "--timeout", "180"]
    run_parallel([[*command, "--shard", f"{i}/{CHECKS_N}", "--out-dir", str(root / f"leg{i}")]
                  for i in range(1, CHECKS_N + 1)])
    return [root / f"leg{i}" for i in range(1, CHECKS_N + 1)]


# -- tampering ----------------------------------------------------------------------------------------------
def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def summary_of(leg: Path) -> Path:
    return next(leg.glob("shard-*-of-*.json"))


def edit_summary(leg: Path, **changes) -> None:
    path = summary_of(leg)
    path.write_text(json.dumps({**read_summary(path), **changes}), encoding="utf-8")


def forge_record(leg: Path) -> None:
    """The attacker rewrites the summary's file record too: only the rows themselves can give the damage away."""
    edit_summary(leg, files=leg_files(leg, GENERATE_LEG_FILES))


def own_runs(leg: Path) -> list[str]:
    return list(read_summary(summary_of(leg))["observed_runs"])


def truth_half(leg: Path, others: list[Path]) -> str:
    rows = lines(leg / "truth.csv")
    (leg / "truth.csv").write_text("".join(rows[: len(rows) // 2]), encoding="utf-8")
    forge_record(leg)
    return "truth.csv: lacks"


def truth_mid_row(leg: Path, others: list[Path]) -> str:
    text = (leg / "truth.csv").read_text(encoding="utf-8")
    (leg / "truth.csv").write_text(text[: len(text) // 2 + 7], encoding="utf-8")
    return "truth.csv: is cut mid-row"


def truth_duplicated_row(leg: Path, others: list[Path]) -> str:
    rows = lines(leg / "truth.csv")
    (leg / "truth.csv").write_text("".join([*rows, rows[-1]]), encoding="utf-8")
    forge_record(leg)
    return "truth.csv: 1 row(s) listed twice"


def truth_foreign_run(leg: Path, others: list[Path]) -> str:
    stranger = lines(others[0] / "truth.csv")[1]  # a row of a run another leg owns
    (leg / "truth.csv").write_text("".join([*lines(leg / "truth.csv"), stranger]), encoding="utf-8")
    forge_record(leg)
    return "truth.csv: holds rows of 1 run id(s) outside the runs it may hold"


def truth_header_only(leg: Path, others: list[Path]) -> str:
    (leg / "truth.csv").write_text(lines(leg / "truth.csv")[0], encoding="utf-8")
    forge_record(leg)
    return "truth.csv: lacks"


def truth_edited_unforged(leg: Path, others: list[Path]) -> str:
    # A flipped verdict keeps every row owed and once: only the leg's record of the file gives it away.
    text = (leg / "truth.csv").read_text(encoding="utf-8")
    swapped = text.replace(",omitted,", ",covered,", 1) if ",omitted," in text else text.replace(",covered,",
                                                                                                    ",omitted,", 1)
    (leg / "truth.csv").write_text(swapped, encoding="utf-8")
    return "truth.csv: is not the file the leg's summary recorded"


def retries_torn(leg: Path, others: list[Path]) -> str:
    text = (leg / "retries.json").read_text(encoding="utf-8")
    (leg / "retries.json").write_text(text[: len(text) // 2], encoding="utf-8")
    return "retries.json is not a readable JSON object"


def retries_foreign(leg: Path, others: list[Path]) -> str:
    data = json.loads((leg / "retries.json").read_text(encoding="utf-8"))
    data["retried_runs"] = [{"run_id": own_runs(others[0])[0], "reason": "api_error"}]
    (leg / "retries.json").write_text(json.dumps(data), encoding="utf-8")
    forge_record(leg)
    return "retries.json: lists retried runs outside the leg's slice of the plan"


def reconciliation_claims_accounted(leg: Path, others: list[Path]) -> str:
    lost = own_runs(leg)[0]
    shutil.rmtree(leg / lost)  # the summary is made to agree with the folder; reconciliation.json still claims it
    summary = read_summary(summary_of(leg))
    edit_summary(leg, observed_runs=[r for r in summary["observed_runs"] if r != lost],
                 observed=summary["observed"] - 1, expected_runs=summary["expected_runs"])
    data = json.loads((leg / "reconciliation.json").read_text(encoding="utf-8"))
    assert data["accounted"] is True and lost not in data["missing"]
    return "reconciliation.json: does not account for the leg's folder: 'observed' is"


def summary_count(leg: Path, others: list[Path]) -> str:
    edit_summary(leg, observed=read_summary(summary_of(leg))["observed"] + 1)
    return "shard summary: says observed"


def summary_rows(leg: Path, others: list[Path]) -> str:
    files = read_summary(summary_of(leg))["files"]
    rows = files["truth.csv"]["rows"]
    files["truth.csv"] = {"rows": rows + 5, "sha256": "0" * 64}  # the summary says the leg wrote more
    edit_summary(leg, files=files)
    return f"truth.csv: is not the file the leg's summary recorded ({rows} rows, the summary says {rows + 5})"


def summary_retries(leg: Path, others: list[Path]) -> str:
    edit_summary(leg, retries=2)
    return "retries.json: lists 0 retried run(s), the leg's summary says 2"


def manifest_duplicated(leg: Path, others: list[Path]) -> str:
    rows = lines(leg / "manifest.csv")
    (leg / "manifest.csv").write_text("".join([*rows, rows[1]]), encoding="utf-8")
    forge_record(leg)
    return "manifest.csv: lists 1 run(s) twice"


def host_file(leg: Path, name: str, text: str) -> Path:
    """A file outside every leg (a host file an attacker wants in the week)."""
    path = leg.parent / "host" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def run_file_linked(leg: Path, others: list[Path]) -> str:
    run_id = own_runs(leg)[0]
    (leg / run_id / "stderr.txt").unlink()
    (leg / run_id / "stderr.txt").symlink_to(host_file(leg, "secret.txt", "sk-ant-host-secret\n"))
    return f"holds 1 symbolic link(s) where the merge reads or copies ({run_id}/stderr.txt)"


def ledger_linked(leg: Path, others: list[Path]) -> str:
    outside = host_file(leg, "retries.json", (leg / "retries.json").read_text(encoding="utf-8"))
    (leg / "retries.json").unlink()
    (leg / "retries.json").symlink_to(outside)  # the same bytes: only the link gives it away
    return "holds 1 symbolic link(s) where the merge reads or copies (retries.json)"


TAMPERS: list[Callable[[Path, list[Path]], str]] = [
    truth_half, truth_mid_row, truth_duplicated_row, truth_foreign_run, truth_header_only, truth_edited_unforged,
    retries_torn, retries_foreign, reconciliation_claims_accounted, summary_count, summary_rows, summary_retries,
    manifest_duplicated, run_file_linked, ledger_linked]


def assert_refused(done: subprocess.CompletedProcess, leg: Path, named: str, out: Path) -> None:
    """Refused (exit 1) in one line naming the leg and the file, nothing written, and no clean scorecard."""
    assert done.returncode == 1, done.stderr
    refused = [line for line in done.stderr.splitlines() if "refused: " in line]
    assert len(refused) == 1, done.stderr
    assert f"({leg}): {named}" in refused[0], done.stderr
    assert "rerun the leg" in refused[0] and "nothing written" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists() or not any(out.iterdir())
    scored = cli("scorecard", str(out), "--bootstrap", "200")
    assert scored.returncode != 0 and not (out / "scorecard.md").exists()


@pytest.mark.parametrize("tamper", TAMPERS, ids=[t.__name__ for t in TAMPERS])
def test_a_tampered_leg_is_refused(legs, tmp_path, tamper):
    copies = copy_legs({f"leg{i}": leg for i, leg in enumerate(legs, 1)}, tmp_path)
    target = max(copies, key=lambda leg: len(own_runs(leg)))  # the leg with the most runs: every file has rows
    named = tamper(target, [leg for leg in copies if leg != target])
    out = tmp_path / "out" / "t1"
    assert_refused(cli("consolidate", *map(str, copies), "--out", str(out)), target, named, out)


def test_a_refused_merge_leaves_the_previous_merge_as_it_was(legs, tmp_path):
    out = tmp_path / "weekly" / "t1"
    assert cli("consolidate", *map(str, legs), "--out", str(out)).returncode == 0
    before = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    copies = copy_legs({f"leg{i}": leg for i, leg in enumerate(legs, 1)}, tmp_path)
    target = max(copies, key=lambda leg: len(own_runs(leg)))
    named = truth_half(target, [])
    done = cli("consolidate", *map(str, copies), "--out", str(out))
    assert done.returncode == 1 and named in done.stderr and "nothing written" in done.stderr
    after = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert after == before  # nothing lost, nothing added, nothing half-written
    assert not [p for p in out.parent.iterdir() if p.name != "t1"]  # no staging folder left behind


def test_a_leg_missing_a_runs_check_rows_is_refused(check_legs, tmp_path):
    copies = [Path(shutil.copytree(leg, tmp_path / leg.name)) for leg in check_legs]
    target = next(leg for leg in copies if "tyre-note" in (leg / "checks.csv").read_text(encoding="utf-8"))
    rows = lines(target / "checks.csv")
    victim = rows[1].split(",")[4]
    (target / "checks.csv").write_text("".join(r for r in rows if f",{victim}," not in r), encoding="utf-8")
    forge_record(target)
    out = tmp_path / "out" / "c1"
    done = cli("consolidate", *map(str, copies), "--out", str(out))
    assert_refused(done, target, "checks.csv: lacks 2 check row(s) of 1 complete run(s)", out)
    assert victim in done.stderr


def test_untampered_legs_merge_complete(legs, check_legs, judged, tmp_path):
    """The positive control: real legs merge COMPLETE, their truth rows exactly once, and score clean."""
    for group, key in ((legs, "t1"), (check_legs, "c1")):
        out = tmp_path / key
        done = cli("consolidate", *map(str, group), "--out", str(out))
        assert done.returncode == 0, done.stderr
        assert json.loads((out / "consolidation.json").read_text())["status"] == "COMPLETE"
        merged = sorted(lines(out / "truth.csv")[1:])
        assert merged == sorted(row for leg in group for row in lines(leg / "truth.csv")[1:])
        again = tmp_path / f"{key}-again"
        assert cli("consolidate", *map(str, group), "--out", str(again)).returncode == 0
        for name in ("truth.csv", "manifest.csv", "plan.csv", "run.json", "retries.json", "checks.csv"):
            assert (out / name).exists() == (again / name).exists()
            if (out / name).exists():
                assert (out / name).read_bytes() == (again / name).read_bytes(), name
    scored = cli("scorecard", str(judged), "--bootstrap", "200")
    assert scored.returncode == 0, scored.stderr
    assert "INCOMPLETE" not in (judged / "scorecard.md").read_text().splitlines()[0]


def _cut_half(week: Path) -> None:
    rows = lines(week / "truth.csv")
    (week / "truth.csv").write_text("".join(rows[: len(rows) // 2]), encoding="utf-8")


def _duplicate(week: Path) -> None:
    rows = lines(week / "truth.csv")
    (week / "truth.csv").write_text("".join([*rows, rows[1]]), encoding="utf-8")


def _stranger(week: Path) -> None:
    row = lines(week / "truth.csv")[1].split(",", 1)[1]
    (week / "truth.csv").write_text("".join([*lines(week / "truth.csv"), f"not-a-planned-run,{row}"]),
                                    encoding="utf-8")


@pytest.mark.parametrize("damage", [_cut_half, _duplicate, _stranger], ids=["cut-in-half", "duplicated", "foreign"])
def test_a_week_with_a_damaged_answer_key_never_scores_clean(judged, tmp_path, damage):
    week = Path(shutil.copytree(judged, tmp_path / "weekly" / "t1"))
    damage(week)
    scored = cli("scorecard", str(week), "--bootstrap", "200")
    assert scored.returncode == 1, scored.stderr
    assert "INCOMPLETE" in scored.stderr and "Traceback" not in scored.stderr
    page = (week / "scorecard.md").read_text()
    assert "INCOMPLETE" in page.splitlines()[0] and "- truth.csv " in page


@pytest.fixture(scope="module")
def judge_legs(judged, tmp_path_factory) -> tuple[Path, list[Path]]:
    """The generation (``judged`` without its grades) and three judge legs graded on copies of it (read-only)."""
    root = tmp_path_factory.mktemp("judge-legs")
    generation = root / "weekly" / "t1"
    shutil.copytree(judged, generation, ignore=shutil.ignore_patterns(
        "scores.csv", "judge-skips.csv", "judge.json", "judge-batches.json", "judge_cost.*", "scorecard.md"))
    copies = [Path(shutil.copytree(generation, root / f"judge-leg{i}")) for i in range(1, N + 1)]
    run_parallel([["judge", str(leg), "--backend", "sim", "--shard", f"{i}/{N}"] for i, leg in enumerate(copies, 1)])
    return generation, copies


def scores_mid_row(leg: Path) -> str:
    text = (leg / "scores.csv").read_text(encoding="utf-8")
    (leg / "scores.csv").write_text(text[:-9], encoding="utf-8")
    return "scores.csv is cut mid-row"


def scores_rows_dropped(leg: Path) -> str:
    rows = lines(leg / "scores.csv")
    (leg / "scores.csv").write_text("".join(rows[:-2]), encoding="utf-8")  # cut at a row boundary: it parses
    return "scores.csv: is not the file the leg's summary recorded"


def scores_rows_dropped_forged(leg: Path) -> str:
    scores_rows_dropped(leg)
    files = read_summary(summary_of(leg))["files"]
    edit_summary(leg, files={**files, **leg_files(leg, ["scores.csv"])})
    return "the summary disagrees with its folder"


def skips_torn(leg: Path) -> str:
    (leg / "judge-skips.csv").write_text("run_id,reason\nsome-run,no ans", encoding="utf-8")
    return "judge-skips.csv is cut mid-row"


def run_judge_linked(leg: Path) -> str:
    record = next(leg.glob("*/judge.json"))
    outside = host_file(leg, "judge.json", record.read_text(encoding="utf-8"))
    record.unlink()
    record.symlink_to(outside)
    return f"holds 1 symbolic link(s) where the merge reads or copies ({record.parent.name}/judge.json)"


JUDGE_TAMPERS = [scores_mid_row, scores_rows_dropped, scores_rows_dropped_forged, skips_torn, run_judge_linked]


@pytest.mark.parametrize("tamper", JUDGE_TAMPERS, ids=[t.__name__ for t in JUDGE_TAMPERS])
def test_a_tampered_judge_leg_is_refused(judge_legs, tmp_path, tamper):
    """Judge legs: a leg's grades cut or edited after it finished are refused, not read as a shorter ledger."""
    generation = Path(shutil.copytree(judge_legs[0], tmp_path / "weekly" / "t1"))
    copies = [Path(shutil.copytree(leg, tmp_path / leg.name)) for leg in judge_legs[1]]
    target = max(copies, key=lambda leg: (leg / "scores.csv").stat().st_size if (leg / "scores.csv").exists() else 0)
    named = tamper(target)
    done = cli("consolidate", *map(str, copies), "--out", str(generation))
    assert done.returncode == 1, done.stderr
    refused = [line for line in done.stderr.splitlines() if "refused: " in line]
    assert len(refused) == 1 and f"({target}): {named}" in refused[0], done.stderr
    assert "nothing written" in done.stderr and "Traceback" not in done.stderr
    assert not (generation / "scores.csv").exists()
    assert cli("scorecard", str(generation), "--bootstrap", "200").returncode != 0  # not graded: never clean


def test_untampered_judge_legs_merge_complete(judge_legs, tmp_path):
    generation = Path(shutil.copytree(judge_legs[0], tmp_path / "weekly" / "t1"))
    done = cli("consolidate", *map(str, judge_legs[1]), "--out", str(generation))
    assert done.returncode == 0, done.stderr
    assert json.loads((generation / "consolidation.json").read_text())["status"] == "COMPLETE"
