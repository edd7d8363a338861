"""``--skip-missing``: run a task without the workspace files its tree does not hold, and say what was dropped.

Some trees are published without their grader scripts (``../shared``'s dotnet copy leaves every code file out;
its PROVENANCE lists them). Preflight names each missing file as an error; with ``--skip-missing`` the task is
run without it instead, and without everything that uses it, per stimulus:

* a workspace entry whose ``src`` the tree does not hold;
* a setup command that names a dropped entry's destination (or its file name);
* a ``run_command`` check that names one, or that runs a script file the remaining workspace does not hold
  (and no setup command is left that could make it); a ``file_*`` check on a dropped destination.

Each dropped piece is one line (``workspace[1] logs/x.txt: src … is missing``), recorded with every run of the
prompt (``metadata.json: dropped``) and listed in the scorecard's coverage, so a trimmed stimulus never reads as
the whole one.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Callable
from pathlib import PurePosixPath

from skillbench.suite._format import PromptSpec, TestPrompt
from skillbench.suite._task_checks import _SCRIPT, workspace_paths


def _names(dest: str) -> set[str]:
    path = PurePosixPath(dest)
    return {path.as_posix(), f"./{path.as_posix()}", path.name}


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:  # preflight names the quoting; here a rough split is enough to find file names
        return command.split()


def _mentions(command: str, names: set[str]) -> bool:
    return any(w in names or w.removeprefix("./") in names for w in _words(command))


def drop_missing(spec: PromptSpec) -> tuple[TestPrompt, list[str]]:
    """The prompt without its missing workspace files and what uses them, and one line per dropped piece.

    Returns the prompt unchanged (and ``[]``) when nothing is missing.
    """
    test = spec.test
    dropped: list[str] = []
    keep, gone = [], set()
    for i, entry in enumerate(test.workspace):
        if entry.src is not None and spec.workspace_source(entry) is None:
            dropped.append(f"workspace[{i}] {entry.dest}: src {entry.src} is missing from the tree")
            gone |= _names(entry.dest)
        else:
            keep.append(entry)
    if not dropped:
        return test, []
    setup = []
    for i, command in enumerate(test.setup):
        if _mentions(command, gone):
            dropped.append(f"setup[{i}] {command!r}: uses a dropped file")
        else:
            setup.append(command)
    trimmed = test.model_copy(update={"workspace": keep, "setup": setup})
    files = workspace_paths(dataclasses.replace(spec, test=trimmed))
    checks = []
    for check in test.checks:
        uses = check.command is not None and (_mentions(check.command, gone) or (not setup and any(
            _SCRIPT.match(w) and w.removeprefix("./") not in files for w in _words(check.command))))
        if uses or (check.path is not None and check.path in gone):
            dropped.append(f"check {check.check_id} ({check.type}): uses a dropped file")
        else:
            checks.append(check)
    return trimmed.model_copy(update={"checks": checks}), dropped


def with_missing_dropped(spec: PromptSpec, report: Callable[[str], None]) -> PromptSpec:
    """``spec`` after :func:`drop_missing`, its dropped pieces in ``spec.dropped``, each also passed to ``report``."""
    test, dropped = drop_missing(spec)
    for piece in dropped:
        report(piece)
    return dataclasses.replace(spec, test=test, dropped=tuple(dropped)) if dropped else spec
