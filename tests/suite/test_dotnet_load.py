"""dotnet/skills' eval specs load into the one Suite: every stimulus counted, fields mapped, ids stable.

Reads ../shared/datasets/dotnet-skills at test time (read-only; nothing is copied into the repository); the
reordering test copies one spec into tmp_path.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillbench.cli import main
from skillbench.generation import prepare_task
from skillbench.suite import SuiteOverrides, preflight
from skillbench.suite.dotnet import load_strict
from tests.helpers.shared import DOTNET, require

SNAPSHOT = DOTNET / "snapshot-1b8f2aa"
VALLY = DOTNET / "vally-format"
SNAPSHOT_PLUGINS = SNAPSHOT / "plugins"


@pytest.fixture(scope="module")
def snapshot():
    return preflight(require(SNAPSHOT))


@pytest.fixture(scope="module")
def vally():
    return preflight(require(VALLY), SuiteOverrides(skills_root=str(SNAPSHOT_PLUGINS)))


def _by_skill(report) -> dict[str, tuple[int, int]]:
    return {e.skill: (e.stimuli, e.dormancy) for e in report.suite.evals}


def test_snapshot_every_scenario_counted(snapshot):
    suite = snapshot.suite
    assert suite.layout == "dotnet" and len(suite.evals) == 7
    assert {e.format for e in suite.evals} == {"skill-validator"}
    assert sum(e.stimuli for e in suite.evals) == 64 and sum(e.dormancy for e in suite.evals) == 15
    assert _by_skill(snapshot)["migrate-dotnet8-to-dotnet9"] == (12, 12)
    assert snapshot.errors == [], [str(d) for d in snapshot.errors]
    assert len(suite.prompts) == 64  # nothing refused: every stimulus is a prompt of the suite
    under = [d for d in snapshot.warnings if "underpowered" in d.problem]
    assert [Path(d.path).parent.name for d in under] == ["migrate-dotnet8-to-dotnet9"]
    assert "instrument debt" in under[0].problem
    assert snapshot.summary().startswith("Checked 64 stimuli (64 scored, 0 held-out, 15 dormancy) in 7 evals")


def test_snapshot_layout_families_and_plugins(snapshot):
    suite = snapshot.suite
    assert suite.families == sorted(e.skill for e in suite.evals)
    assert suite.plugin_of["dump-collect"] == "dotnet-diag"
    assert suite.family_dir("dump-collect") == SNAPSHOT_PLUGINS.resolve() / "dotnet-diag" / "skills" / "dump-collect"
    assert suite.plugin_families("dotnet-upgrade") == ["migrate-dotnet8-to-dotnet9", "thread-abort-migration"]
    spec = next(p for p in suite.prompts if p.family == "clr-activation-debugging")
    assert spec.leaf == "clr-activation-debugging/SKILL.md" and spec.test.skill_url == ""  # no site base
    assert spec.stimulus and spec.name.startswith("clr-activation-debugging-") and "/" not in spec.name
    assert all(i.type == "must" and i.absence is None for p in suite.prompts for i in p.test.rubric)


def test_snapshot_fields_map_to_checks_workspace_and_timeout(snapshot):
    suite = snapshot.suite
    spec = next(p for p in suite.prompts if p.stimulus == "Diagnose unexpected FOD dialog from native build tool")
    test = spec.test
    assert test.timeout == 120
    assert [c.type for c in test.checks] == ["output_contains"] * 3 + ["output_matches"]
    assert [w.dest for w in test.workspace] == ["logs/mt.exe.CLRLoad00.txt", "logs/link.exe.CLRLoad00.txt",
                                                "logs/csc.exe.CLRLoad00.txt"]
    task = prepare_task(spec)  # a source resolves from plugins/<plugin>/skills/<skill>/ into tests/…/fixtures
    fixture = SNAPSHOT / "tests/dotnet-diag/clr-activation-debugging/fixtures/mt-fod-launched.txt"
    assert task is not None and task.items[0].data == fixture.read_bytes()
    kinds = {c.type for p in suite.prompts for c in p.test.checks}
    assert "exit_success" not in kinds and "output_nonempty" in kinds  # skill-validator: "non-empty output"


def test_copy_test_files_copies_the_folder_but_the_spec(snapshot):
    spec = next(p for p in snapshot.suite.prompts if p.family == "android-tombstone-symbolication"
                and p.test.workspace)
    folder = SNAPSHOT / "tests/dotnet-diag/android-tombstone-symbolication"
    dests = {w.dest for w in spec.test.workspace}
    assert {p.name for p in folder.iterdir() if p.is_file() and p.name != "eval.yaml"} <= dests
    assert "eval.yaml" not in dests


def test_vally_every_stimulus_counted(vally):
    suite = vally.suite
    assert {e.format for e in suite.evals} == {"vally"}
    assert sum(e.stimuli for e in suite.evals) == 28 and sum(e.dormancy for e in suite.evals) == 8
    assert _by_skill(vally) == {"dump-collect": (14, 5), "clr-activation-debugging": (11, 2),
                                "system-text-json-net11": (3, 1)}
    assert vally.summary().startswith("Checked 28 stimuli (28 scored, 0 held-out, 8 dormancy) in 3 evals")
    # the only errors: the grader scripts PROVENANCE lists as left out, each named by the spec's field
    assert vally.errors and all("environment.files[" in d.field and d.field.endswith(".src") for d in vally.errors)
    assert {d.problem.split("'")[1] for d in vally.errors} == {"fixture_validation.py", "check_readonly.py"}
    assert all("(" in d.field and ")" in d.field for d in vally.errors)  # the stimulus is named


def test_vally_fields_map(vally):
    suite = vally.suite
    dump = [p for p in suite.prompts if p.family == "dump-collect"]
    assert len(dump) == 14
    spec = dump[0]
    assert spec.test.timeout == 360  # defaults.timeout: 6m
    assert suite.config.run.reps == 1  # dump-collect's defaults.runs (the suite's reps unless --reps is given)
    rejects = [c for c in spec.test.checks if c.type == "reject_tools"]
    assert rejects and {"bash", "edit", "create"} <= set(rejects[0].tools or [])
    assert spec.reference_answer and spec.reference_answer not in spec.test.model_dump_json()
    assert any(t.startswith("risk=") for t in spec.tags)
    json_spec = [p for p in suite.prompts if p.family == "system-text-json-net11"]
    assert {c.type for p in json_spec for c in p.test.checks} >= {"output_nonempty", "output_matches"}  # exit-success
    clr = load_strict(VALLY / "tests/dotnet-diag/clr-activation-debugging/eval.yaml")
    assert clr["defaults"]["timeout"] == "6m"
    assert [e.runs for e in suite.evals if e.skill == "clr-activation-debugging"] == [None]


def test_vally_without_the_snapshot_skills_names_the_missing_skill():
    report = preflight(require(VALLY))
    missing = [d for d in report.errors if d.field == "skill"]
    assert {Path(d.path).parent.name for d in missing} == {"dump-collect", "clr-activation-debugging"}
    assert all("--skills-root" in d.fix for d in missing)


def test_check_ids_stable_when_a_scenario_is_reordered(tmp_path):
    src = require(SNAPSHOT) / "tests/dotnet-upgrade/thread-abort-migration"
    tree = tmp_path / "tree"
    shutil.copytree(src, tree / "tests/dotnet-upgrade/thread-abort-migration")
    shutil.copytree(SNAPSHOT_PLUGINS / "dotnet-upgrade/skills/thread-abort-migration",
                    tree / "plugins/dotnet-upgrade/skills/thread-abort-migration")

    def ids() -> dict[str, list[str]]:
        report = preflight(tree)
        assert not report.errors, [str(d) for d in report.errors]
        return {p.stimulus: [c.check_id for c in p.test.checks] for p in report.suite.prompts}

    before = ids()
    spec = tree / "tests/dotnet-upgrade/thread-abort-migration/eval.yaml"
    head, *items = spec.read_text().split("\n  - name:")
    spec.write_text("\n  - name:".join([head, *reversed(items)]))
    after = ids()
    assert before == after and len(before) == 5


def test_cli_validate_summary_line(capsys):
    code = main(["validate", str(require(SNAPSHOT))])
    out = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert out[-1] == ("Checked 64 stimuli (64 scored, 0 held-out, 15 dormancy) in 7 evals of 7 skills in 3 plugins: "
                       "0 errors, 1 warnings")
    code = main(["validate", str(require(VALLY)), "--skills-root", str(SNAPSHOT_PLUGINS), "--format", "dotnet"])
    assert code == 1 and capsys.readouterr().out.strip().splitlines()[-1].startswith("Checked 28 stimuli")
    code = main(["validate", str(SNAPSHOT), "--format", "qdrant"])
    assert code == 1 and "test-prompts: folder is missing" in capsys.readouterr().out
