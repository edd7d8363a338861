"""The bundled agentic tasks (family ``analysis-debugging``) are real: in the runner image, each task's
``run_command`` checks fail on its fixtures and pass once its solution files are copied over.

The image runs Debian bookworm's python3 with pandas 1.5 and statsmodels 0.13, not the venv's versions, so a
bug and its fix are only known to be real when shown there. One container per task, sealed (no network), as the
runner user, the workspace at ``/workspace`` exactly as a run lays it out.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
import time
from pathlib import Path

import pytest

from skillbench.cli import main
from skillbench.generation import docker_available
from skillbench.generation._image import RUNNER_UID, WORKSPACE
from skillbench.suite import PromptSpec, preflight
from tests.helpers.shared import IN_CI, ROOT
from tests.helpers.sim import require_cli

BUNDLED = ROOT / "evals"
FAMILY = "analysis-debugging"
_FILES = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (BUNDLED / "test-prompts").glob("*.json")}
# every bundled task (a prompt with a workspace or setup), and the family's prompts
TASKS = sorted(name for name, body in _FILES.items() if body.get("workspace") or body.get("setup"))
FAMILY_PROMPTS = sorted(name for name, body in _FILES.items() if f"/{FAMILY}/" in body.get("skill_url", ""))


@pytest.fixture(scope="module")
def report():
    return preflight(BUNDLED)


def _task(report, name: str) -> PromptSpec:
    return report.suite.prompt(name)


# -- the suite as preflight sees it -----------------------------------------------------------------------------


def test_bundled_suite_validates_strict_with_the_family(report, capsys):
    assert not report.errors and not report.warnings, "\n".join(str(d) for d in report.defects)
    assert main(["validate", str(BUNDLED), "--strict"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].endswith(": 0 errors, 0 warnings")
    family = [p for p in report.suite.prompts if p.family == FAMILY]
    assert sorted(p.name for p in family) == FAMILY_PROMPTS
    assert sum(p.preference_eligible for p in family) >= 5
    assert any(p.dormancy and p.test.checks for p in family)
    for spec in family:
        types = {c.type for c in spec.test.checks}
        assert spec.test.is_task and spec.solution_dir.is_dir(), spec.name
        assert {"run_command", "output_matches", "reject_tools"} <= types, spec.name


@pytest.mark.parametrize("name", FAMILY_PROMPTS)
def test_output_checks_need_the_answer_not_the_prompt(report, name):
    """A correct answer (one stating every must) meets each output check; echoing the prompt meets none."""
    spec = _task(report, name)
    musts = "\n".join(i.text for i in spec.test.rubric if i.type == "must")
    for check in spec.test.checks:
        if check.type == "output_matches":
            assert re.search(check.pattern, musts), (name, check.check_id)
            assert not re.search(check.pattern, spec.test.prompt), (name, check.check_id)
        elif check.type == "output_contains":
            assert check.value in musts and check.value not in spec.test.prompt, (name, check.check_id)


# -- in the runner image ------------------------------------------------------------------------------------


def _require_image() -> str:
    """The runner image's tag (built on first use, as ``generate`` does); skips outside CI without Docker."""
    if not docker_available():
        if IN_CI:
            pytest.fail("CI must have a Docker engine: `make setup` starts dockerd")
        pytest.skip("no Docker engine answers (run `make setup` as root to start dockerd)")
    require_cli()  # the image's tag carries the CLI version
    from skillbench.generation import build_image

    return build_image(log=lambda _msg: None)


def _tar(files: dict[str, bytes], executable: frozenset[str] = frozenset()) -> bytes:
    """A tar of ``{relative path: bytes}`` owned by the runner user, with the folders it needs."""
    buf = io.BytesIO()
    folders = sorted({str(p) for dest in files for p in Path(dest).parents if str(p) != "."})
    with tarfile.open(fileobj=buf, mode="w") as tar:
        now = time.time()
        for folder in folders:
            info = tarfile.TarInfo(folder)
            info.type, info.mode, info.uid, info.gid, info.mtime = tarfile.DIRTYPE, 0o755, RUNNER_UID, RUNNER_UID, now
            tar.addfile(info)
        for dest, data in files.items():
            info = tarfile.TarInfo(dest)
            info.size, info.uid, info.gid, info.mtime = len(data), RUNNER_UID, RUNNER_UID, now
            info.mode = 0o755 if dest in executable else 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _workspace(spec: PromptSpec) -> tuple[dict[str, bytes], frozenset[str]]:
    files: dict[str, bytes] = {}
    for entry in spec.test.workspace:
        source = spec.workspace_source(entry)
        files[entry.dest] = entry.content.encode() if source is None else source.read_bytes()
    return files, frozenset(e.dest for e in spec.test.workspace if e.executable)


def _solution(spec: PromptSpec) -> dict[str, bytes]:
    root = spec.solution_dir
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _sh(container, command: str, timeout_s: float) -> tuple[int, str]:
    code, out = container.exec_run(["timeout", f"{timeout_s:g}", "sh", "-c", command], workdir=WORKSPACE,
                                   user=str(RUNNER_UID))
    return code, out.decode(errors="replace")


@pytest.mark.docker
@pytest.mark.parametrize("name", TASKS)
def test_task_fails_on_its_fixtures_and_passes_with_its_solution(report, name):
    import docker

    tag = _require_image()
    spec = _task(report, name)
    commands = [c for c in spec.test.checks if c.type == "run_command"]
    client = docker.from_env(timeout=120)
    container = client.containers.run(tag, ["sleep", "600"], detach=True, network_mode="none",
                                      user=str(RUNNER_UID), working_dir=WORKSPACE)
    try:
        files, executable = _workspace(spec)
        assert container.put_archive(WORKSPACE, _tar(files, executable))
        for command in spec.test.setup:
            code, out = _sh(container, command, 120)
            assert code == 0, f"{name}: setup {command!r} exited {code}:\n{out[-2000:]}"
        for check in commands:
            code, out = _sh(container, check.command, check.timeout_s)
            assert code != check.exit_code_expected, f"{name}: {check.check_id} passes on the fixtures:\n{out[-2000:]}"
            if check.command.startswith("python -m pytest"):  # 1: tests ran and failed (2: collection error, …)
                assert code == 1, f"{name}: {check.check_id} exited {code}, not a failed test:\n{out[-2000:]}"
        solution = _solution(spec)
        assert solution, f"{name}: {spec.solution_dir} is empty"
        assert container.put_archive(WORKSPACE, _tar(solution))
        for check in commands:
            code, out = _sh(container, check.command, check.timeout_s)
            assert code == check.exit_code_expected, f"{name}: {check.check_id} fails with the solution:\n{out[-2000:]}"
        for check in spec.test.checks:  # the file checks a solved workspace must meet
            if check.type in ("file_contains", "file_matches", "file_exists"):
                code, text = _sh(container, f"cat -- '{check.path}'", 30)
                assert code == 0, f"{name}: {check.check_id}: {check.path} is missing"
                met = (check.value in text) if check.type == "file_contains" else (
                    check.type == "file_exists" or re.search(check.pattern, text) is not None)
                assert met, f"{name}: {check.check_id} not met by the solution"
    finally:
        container.remove(force=True)
        client.close()
