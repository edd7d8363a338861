"""The simulated Anthropic Messages endpoint: the offline default backend of every model-calling command.

The real Claude Code CLI and the real ``anthropic`` SDK talk to it over HTTP on 127.0.0.1. It simulates
agent models (profiles per model family, working in a task's workspace when the prompt is a task, and the
true effect of each listed version of a skill), a judge, a published skills site and faults, and keeps the
ground truth of what each simulated run decided (rubric items and checks), which a harness reads back over
``GET /skillbench/truth``. The headers, routes and key it speaks are :mod:`skillbench.wire`'s; the truth rows'
format is :mod:`skillbench.ledgers.truth`'s.

Use :func:`simulated_endpoint` (a context manager yielding the base URL) or :class:`SimServer`. Names are
imported on first use (PEP 562), so reading the profiles does not start loading the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys((
        "AgentProfile", "FaultSpec", "JudgeProfile", "ProfileError", "Profiles", "SkillVersion", "load_profiles",
        "parse_fault_option",
    ), "profiles"),
    **dict.fromkeys(("SimServer", "simulated_endpoint"), "server"),
    **dict.fromkeys(("skill_version_key", "version_key"), "versions"),
    "TaskRun": "tasks",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.sim.profiles import (
        AgentProfile,
        FaultSpec,
        JudgeProfile,
        ProfileError,
        Profiles,
        SkillVersion,
        load_profiles,
        parse_fault_option,
    )
    from skillbench.sim.server import SimServer, simulated_endpoint
    from skillbench.sim.tasks import TaskRun
    from skillbench.sim.versions import skill_version_key, version_key
