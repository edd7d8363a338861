"""The programs the runner image does not have, as the simulated container and preflight know them.

A real run finds out from the shell's exit 127 (:mod:`~skillbench.checktypes.kinds._commands`); the simulated
container cannot run anything, so it reads this list to give the same outcome, and preflight warns before a run
that a setup command or a check needs one of them.
"""

from __future__ import annotations

import shlex

# Programs the runner image (generation._image.PACKAGES) does not install: the .NET SDK and PowerShell.
ABSENT_PROGRAMS = frozenset({"dotnet", "msbuild", "nuget", "csc", "pwsh", "powershell"})


def _programs(command: str) -> list[str]:
    """The programs a command runs first in each of its ``&&``/``;``/``|`` parts (best effort: the sim's view)."""
    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        return []
    out, start = [], True
    for word in words:
        if start and "=" not in word:
            out.append(word.rsplit("/", 1)[-1])
            start = False
        if word in ("&&", "||", ";", "|") or word.endswith(";"):
            start = True
    return out


def absent_programs(command: str) -> list[str]:
    """The programs ``command`` runs that the runner image lacks (:data:`ABSENT_PROGRAMS`), in order, once each."""
    return list(dict.fromkeys(p for p in _programs(command) if p in ABSENT_PROGRAMS))
