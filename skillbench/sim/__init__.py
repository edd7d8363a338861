"""The simulated Anthropic Messages endpoint: the offline default backend of every model-calling command.

The real Claude Code CLI and the real ``anthropic`` SDK talk to it over HTTP on 127.0.0.1. It simulates
agent models (profiles per model family, working in a task's workspace when the prompt is a task, and the
true effect of each listed version of a skill), a judge, a published skills site and faults, and keeps the
ground truth of what each simulated run decided (rubric items and checks), which a harness reads back over
``GET /skillbench/truth``.

Use :func:`simulated_endpoint` (a context manager yielding the base URL) or :class:`SimServer`.
"""

from skillbench.sim.agent import CHECK_ITEM, TruthRow
from skillbench.sim.faults import FAULT_HEADER
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
from skillbench.sim.server import SIM_API_KEY, SimServer, simulated_endpoint
from skillbench.sim.tasks import TaskRun
from skillbench.sim.truth import TRUTH_COLUMNS, TRUTH_ROUTE, TruthWriter
from skillbench.sim.versions import skill_version_key, version_key

__all__ = [
    "CHECK_ITEM",
    "FAULT_HEADER",
    "SIM_API_KEY",
    "TRUTH_COLUMNS",
    "TRUTH_ROUTE",
    "AgentProfile",
    "FaultSpec",
    "JudgeProfile",
    "ProfileError",
    "Profiles",
    "SimServer",
    "SkillVersion",
    "TaskRun",
    "TruthRow",
    "TruthWriter",
    "load_profiles",
    "parse_fault_option",
    "simulated_endpoint",
    "skill_version_key",
    "version_key",
]
