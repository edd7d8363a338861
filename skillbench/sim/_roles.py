"""Which simulated responder answers a request that is neither the agent nor the rubric/pairwise judge.

Contract: a request forcing one of :data:`TOOL_ROLES`' tools has that role (the caller's forced tool is the only
signal: the simulation reads no other hint), and :func:`respond` hands it to the role's module, whose
``respond(sim, body, headers) -> Reply`` must answer from the request alone and from the simulation's profiles —
never from a canned answer.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from skillbench.quality import DESCRIPTION_TOOL, NEAR_MISS_TOOL, SKILL_QUALITY_TOOL

if TYPE_CHECKING:
    from skillbench.sim._agent import Reply

TOOL_ROLES = {SKILL_QUALITY_TOOL: "skill_judge", DESCRIPTION_TOOL: "rewriter", NEAR_MISS_TOOL: "near_miss"}
ROLE_MODULES = {"skill_judge": "skillbench.sim._skill_judge", "rewriter": "skillbench.sim._rewrite",
                "near_miss": "skillbench.sim._near_miss"}


def forced_role(body: Mapping[str, Any]) -> str | None:
    """The role a forced tool names, or None."""
    choice = body.get("tool_choice")
    forced = choice.get("name") if isinstance(choice, Mapping) else None
    return TOOL_ROLES.get(forced) if isinstance(forced, str) else None


def respond(role: str, sim: Any, body: dict[str, Any], headers: Mapping[str, str]) -> Reply:
    """The reply of ``role``'s responder module."""
    return importlib.import_module(ROLE_MODULES[role]).respond(sim, body, headers)
