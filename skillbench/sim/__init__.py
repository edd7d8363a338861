"""The simulated Anthropic Messages endpoint: the offline default backend of every model-calling command.

The real Claude Code CLI and the real ``anthropic`` SDK talk to it over HTTP on 127.0.0.1. It simulates
agent models (profiles per model family, working in a task's workspace when the prompt is a task), a
judge, a published skills site and faults, and keeps the ground truth of what each simulated run decided
(rubric items and checks), which a harness reads back over ``GET /skillbench/truth``.

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
    load_profiles,
    parse_fault_option,
)
from skillbench.sim.server import SIM_API_KEY, SimServer, simulated_endpoint
from skillbench.sim.tasks import TaskRun
from skillbench.sim.truth import TRUTH_COLUMNS, TRUTH_ROUTE, TruthWriter

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
    "TaskRun",
    "TruthRow",
    "TruthWriter",
    "load_profiles",
    "parse_fault_option",
    "simulated_endpoint",
]
