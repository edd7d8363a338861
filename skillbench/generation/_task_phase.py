"""The task side of a generate run: its settings, its metadata, and its check phase.

Per task the run's external timeout is the prompt's ``timeout`` when set, and its allow-list the prompt's
``allowed_tools`` (the same in every arm: a per-prompt setting). After the CLI the run's checks are graded
(:func:`skillbench.checks.grade_checks`) and ``checks.json`` is written into the run's temporary folder, before
the rename that commits the run; then ``checks.csv`` is rebuilt from the committed runs. A task whose setup
failed is committed ``harness_invalid`` with its setup outcome and no check rows.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from skillbench.checks import grade_checks, write_checks_ledger, write_run_checks
from skillbench.generation._plan import PlanError
from skillbench.generation._sandbox import SandboxResult
from skillbench.generation._workspace import TaskRun
from skillbench.signals import parse_transcript_text
from skillbench.suite import PromptSpec, RunSettings, Suite

_LEDGER_LOCK = threading.Lock()  # one rebuild of checks.csv at a time across the pass's worker threads


def run_timeout(spec: PromptSpec, default_s: float) -> float:
    """The external timeout of this prompt's runs: its ``timeout`` when set, else the pass's."""
    return float(spec.test.timeout) if spec.test.timeout is not None else default_s


def run_tools(spec: PromptSpec, run: RunSettings) -> list[str]:
    """The allow-list of this prompt's runs: its ``allowed_tools`` when set, else the suite's."""
    return list(spec.test.allowed_tools) if spec.test.allowed_tools is not None else list(run.allowed_tools)


def refuse_local_workspace_checks(suite: Suite, prompts: Iterable[str], sandbox: str) -> None:
    """Refuse (one line) a local pass over prompts whose checks read the workspace; they need Docker.

    Raises:
        PlanError: names the prompts and says they need ``--sandbox docker``.
    """
    if sandbox != "local":
        return
    names = sorted({p for p in prompts if suite.prompt(p).test.has_workspace_checks})
    if names:
        raise PlanError(f"{', '.join(names)}: workspace checks need --sandbox docker (the local sandbox cannot hide "
                        "them from an agent with Bash on this machine) — rerun with --sandbox docker, or leave "
                        "these prompts out with --prompts")


def task_metadata(spec: PromptSpec, tools: list[str], timeout_s: float, task: TaskRun | None) -> dict[str, Any]:
    """What a run's ``metadata.json`` records of its task: checks, allow-list, timeout, workspace, and what
    ``--skip-missing`` dropped from it (``dropped``, only when something was)."""
    meta = {"checks": [{"id": c.check_id, "type": c.type} for c in spec.test.checks], "allowed_tools": tools,
            "timeout_s": timeout_s, "workspace": list(task.dests) if task else []}
    if spec.dropped:
        meta["dropped"] = list(spec.dropped)
    return meta


def record_checks(tmp_dir: Path, spec: PromptSpec, result: SandboxResult) -> bool:
    """Grade the run's checks and write ``checks.json`` into its temporary folder; False when it has none.

    A run whose setup failed gets its setup outcome and no check rows (it is harness-invalid, never graded).
    """
    if not spec.test.checks and result.setup is None:
        return False
    setup = result.setup.to_json() if result.setup else {"ok": True, "detail": ""}
    if result.setup_failed:
        write_run_checks(tmp_dir, setup, [])
        return True
    transcript = parse_transcript_text(result.stdout.decode("utf-8", "replace"))
    write_run_checks(tmp_dir, setup, grade_checks(spec.test.checks, transcript, result.exit_code, result.probes))
    return bool(spec.test.checks)


def rebuild_checks_ledger(out_dir: Path) -> None:
    """Rebuild ``checks.csv`` from the committed runs (serialised across worker threads)."""
    with _LEDGER_LOCK:
        write_checks_ledger(out_dir)
