"""The deployment files' shell scripts, run for real against a recording stand-in for ``skillbench``.

Each workflow step and Job script that calls skillbench runs in the shell its platform uses (GitHub's
``bash --noprofile --norc -eo pipefail`` for ``shell: bash``, the Job's ``sh -c``) with a stub ``skillbench`` first on
the path that records its argv and exits as told. The recorded argv must parse with skillbench's real parser, each
leg must get its own shard and folder, and a refused consolidation must stop what follows (fail closed).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from skillbench.cli import build_parser
from skillbench.suite.dotnet import load_strict
from tests.deploy.test_deploy_files import K8S, WORKFLOW

STUB = f"""#!{sys.executable}
import json, os, sys
with open(os.environ["STUB_LOG"], "a") as fh:
    fh.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1:3] == ["image", "show"]:
    print("skillbench-runner:0.0.0-stub present")
sys.exit(int(os.environ.get("STUB_EXIT_" + sys.argv[1].replace("-", "_").upper(), "0")))
"""
GITHUB_BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]


def _stub(folder: Path) -> Path:
    bin_dir = folder / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "skillbench").write_text(STUB, encoding="utf-8")
    (bin_dir / "skillbench").chmod(0o755)
    return bin_dir


def _calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def _parses(argv: list[str]) -> None:
    try:
        build_parser().parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"skillbench {' '.join(argv)}: the CLI refuses it (exit {exc.code})")


def _expression(match: re.Match, shard: int) -> str:
    inner = match.group(1).strip()
    values = {"matrix.shard": str(shard), "needs.plan.outputs.run_key": "20261130",
              "inputs.backend || 'anthropic'": "sim", "inputs.families || ''": ""}
    if inner.startswith("secrets."):
        return "sk-test"
    return values.get(inner, "x")


def _resolve(text: str, shard: int) -> str:
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: _expression(m, shard), str(text))


def _run_step(tmp: Path, job: str, step_name: str, *, shard: int = 1, exits: dict[str, int] | None = None) \
        -> subprocess.CompletedProcess:
    workflow = load_strict(WORKFLOW)
    assert workflow["defaults"]["run"]["shell"] == "bash"
    spec = workflow["jobs"][job]
    step = next(s for s in spec["steps"] if s.get("name", "").startswith(step_name))
    env = {**os.environ, "STUB_LOG": str(tmp / "calls.jsonl"), "GITHUB_STEP_SUMMARY": str(tmp / "summary.md")}
    env["PATH"] = f"{tmp / '.venv' / 'bin'}:{env['PATH']}"
    for scope in (workflow.get("env", {}), spec.get("env", {}), step.get("env", {})):
        env.update({k: _resolve(v, shard) for k, v in scope.items()})
    env.update({f"STUB_EXIT_{k.replace('-', '_').upper()}": str(v) for k, v in (exits or {}).items()})
    script = tmp / "step.sh"
    script.write_text(_resolve(step["run"], shard), encoding="utf-8")
    return subprocess.run([*GITHUB_BASH, str(script)], cwd=tmp, env=env, capture_output=True, text=True, timeout=60)


def test_workflow_legs_and_consolidation_call_the_cli_as_it_parses(tmp_path: Path) -> None:
    _stub(tmp_path)
    (tmp_path / "week").mkdir()
    (tmp_path / "week" / "scorecard.md").write_text("# scorecard\n", encoding="utf-8")
    shards = int(load_strict(WORKFLOW)["env"]["SHARDS"])
    steps = [("generate", "Generate leg", shard) for shard in range(1, shards + 1)]
    steps += [("consolidate", "Consolidate the generate legs", 1), ("judge", "Judge leg", 2),
              ("scorecard", "Consolidate the judge legs", 1), ("scorecard", "Pairwise judge", 1),
              ("scorecard", "Scorecard", 1)]
    for job, name, shard in steps:
        done = _run_step(tmp_path, job, name, shard=shard)
        assert done.returncode == 0, f"{job}/{name}: {done.stderr}"
    calls = _calls(tmp_path / "calls.jsonl")
    for argv in calls:
        _parses(argv)
    generate = [c for c in calls if c[0] == "generate"]
    assert [c[c.index("--shard") + 1] for c in generate] == [f"{i}/{shards}" for i in range(1, shards + 1)]
    assert len({c[c.index("--out-dir") + 1] for c in generate}) == shards  # one folder per leg
    assert [c[0] for c in calls[shards:]] == ["consolidate", "judge", "consolidate", "judge-pairs", "calibrate",
                                              "scorecard"]
    assert all(c[c.index("--expect") + 1] == str(shards) for c in calls if c[0] == "consolidate")


def test_a_refused_consolidation_fails_its_step_through_the_pipe(tmp_path: Path) -> None:
    _stub(tmp_path)
    for name in ("Consolidate the generate legs", "Consolidate the judge legs"):
        job = "consolidate" if "generate" in name else "scorecard"
        done = _run_step(tmp_path, job, name, exits={"consolidate": 1})
        assert done.returncode == 1, f"{name}: a refused merge must fail the step (pipefail), got {done.returncode}"


def test_a_calibration_below_its_bar_warns_and_the_chain_goes_on(tmp_path: Path) -> None:
    _stub(tmp_path)
    done = _run_step(tmp_path, "scorecard", "Pairwise judge", exits={"calibrate": 1})
    assert done.returncode == 0, done.stderr
    assert "::warning title=calibration::" in done.stdout


def _job_script(name: str) -> tuple[str, dict[str, str], dict]:
    job = load_strict(K8S / name)
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["sh", "-c"]
    env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    return container["args"][0], env, job


def _run_job(tmp: Path, name: str, extra: dict[str, str]) -> subprocess.CompletedProcess:
    script, env, _ = _job_script(name)
    bin_dir = _stub(tmp)
    run_env = {**os.environ, **env, **extra, "STUB_LOG": str(tmp / "calls.jsonl"),
               "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return subprocess.run(["sh", "-c", script], cwd=tmp, env=run_env, capture_output=True, text=True, timeout=60)


def test_each_completion_index_runs_its_own_shard_into_its_own_folder(tmp_path: Path) -> None:
    _, env, job = _job_script("indexed-job.yaml")
    completions = job["spec"]["completions"]
    generate = []
    for index in range(completions):
        folder = tmp_path / f"pod-{index}"
        folder.mkdir()
        done = _run_job(folder, "indexed-job.yaml", {"JOB_COMPLETION_INDEX": str(index)})
        assert done.returncode == 0, done.stderr
        calls = _calls(folder / "calls.jsonl")
        assert calls[0] == ["image", "show"] and calls[1] == ["image", "build"]  # RUNNER_IMAGE empty: build here
        for argv in calls:
            _parses(argv)
        generate.append(calls[-1])
    assert [c[c.index("--shard") + 1] for c in generate] == [f"{i}/{completions}" for i in range(1, completions + 1)]
    folders = [c[c.index("--out-dir") + 1] for c in generate]
    assert len(set(folders)) == completions and all(env["RUN_KEY"] in f for f in folders)


def test_the_consolidate_job_judges_only_after_a_complete_merge(tmp_path: Path) -> None:
    (tmp_path / "ok").mkdir()
    done = _run_job(tmp_path / "ok", "consolidate-job.yaml", {})
    assert done.returncode == 0, done.stderr
    calls = _calls(tmp_path / "ok" / "calls.jsonl")
    for argv in calls:
        _parses(argv)
    assert [c[0] for c in calls] == ["consolidate", "judge", "judge-pairs", "calibrate", "scorecard"]
    (tmp_path / "refused").mkdir()
    done = _run_job(tmp_path / "refused", "consolidate-job.yaml", {"STUB_EXIT_CONSOLIDATE": "1"})
    assert done.returncode == 1
    assert [c[0] for c in _calls(tmp_path / "refused" / "calls.jsonl")] == ["consolidate"]
