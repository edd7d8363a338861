"""What dotnet's two schemas define and skillbench does not read, on purpose, each with why.

The sources of truth are skill-validator's ``EvalSchema.cs`` / ``AssertionEvaluator.cs`` (dotnet/skills
``eng/skill-validator/src``) and Vally's eval-spec reference and grader catalog
(https://microsoft.github.io/vally/reference/eval-spec/, .../reference/graders/, and the release notes for
``custom-metrics``, ``artifacts``, ``golden_patch``). Every field and grader they
define is either read (the loaders, the check types' records in :mod:`skillbench.checktypes.kinds`) or listed
here. A spec that uses one gets ONE error line naming it, why, and what the holder does take: a field silently
ignored would make a stimulus measure less than its author wrote, and that is the one thing a verdict must not
rest on.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_TOKENS = ("skillbench does not cap tokens per run: Claude Code counts them otherwise than Copilot, so a cap "
           "written for one means another thing here (the scorecard's cost columns report tokens)")
_ACTIVATION = ("skillbench measures activation itself (expect_activation: false is the dormancy contract) and "
               "installs each arm's skills")
_JUDGE = ("skillbench's judge already compares the arms pairwise and blind on the rubric; a second LLM grader "
          "would vote twice")

# Vally grader type -> why skillbench does not run it (the rest are check types, or ``prompt``: the rubric judge)
UNSUPPORTED_GRADERS: dict[str, str] = {
    "pairwise": _JUDGE,
    "panel": _JUDGE,
    "program": ("it runs a grader program outside the agent's container with the trajectory's JSON; skillbench "
                "runs a spec's code only inside the run's container (write it as run-command)"),
    "skill-invocation": _ACTIVATION,
    "token-budget": _TOKENS,
    "wall-time": ("a wall clock measures the machine and the endpoint, not the skill (the stimulus's timeout "
                  "bounds a run)"),
    "error-count": "Copilot's error events have no counterpart in Claude Code's transcript",
    "custom-metrics": ("it asserts on signals a run writes to a JSON file by Vally's convention; write the "
                       "assertion as run-command over that file"),
}

# A field (as ``holder.key``) -> why it is not read
UNSUPPORTED_FIELDS: dict[str, str] = {
    "scenario.max_tokens": _TOKENS,
    "constraints.max_tokens": _TOKENS,
    "stimulus.max_tokens": _TOKENS,
    "constraints.reject_skills": _ACTIVATION,
    "defaults.model": "the models come from skillbench's config or the run's command line (Copilot's model "
                      "names differ)",
    "defaults.judge_model": "the judge is skillbench's own (judge_model in skillbench.toml)",
    "defaults.executor": "skillbench's executor is Claude Code in a fresh container",
    "eval.scoring": "skillbench's verdicts come from its own gate (the paired sign test), not a weighted score",
    "environment.skills": _ACTIVATION,
    "stimulus.golden_patch": "skillbench has no oracle mode (golden_trajectory.inline serves the simulated endpoint)",
    "stimulus.artifacts": "Vally's copy of workspace files into its output; skillbench grades the workspace in the "
                          "run's container and keeps the run's transcript and checks",
    "environment.git": "a workspace is built from files and commands only (a worktree of another repository is "
                       "not materialised)",
    "environment.mcpServers": "the sandbox runs no MCP servers a spec names (the network is sealed)",
    "run-command.stdout_contains": "the probe keeps the command's exit code; check its output with a script "
                                   "that exits non-zero",
    "run-command.stderr_contains": "as stdout_contains",
    "run-command.stdout_matches": "as stdout_contains",
    "run-command.stdout_not_matches": "as stdout_contains",
    "run-command.sub_path": "the command runs in the workspace root; write cd DIR && … in the command",
    "run-command.env": "the probe's environment is the run's own (no spec-chosen variables); set them in the "
                       "command",
}


def unsupported_defects(holder: dict[str, Any], known: Iterable[str], kind: str, takes: str
                        ) -> list[tuple[str, str, str]]:
    """``(key, problem, fix)`` for each key of ``holder`` the loader does not read: an error line naming it.

    Args:
        holder: the mapping as the spec wrote it.
        known: the keys the loader reads.
        kind: the holder's name in :data:`UNSUPPORTED_FIELDS` (``constraints``, ``run-command``, …).
        takes: what the holder does take, for the fix (``"environment takes files, commands"``).
    """
    out = []
    for key in sorted(set(holder) - set(known), key=str):
        why = UNSUPPORTED_FIELDS.get(f"{kind}.{key}", f"not a field skillbench reads in {kind}")
        out.append((str(key), f"not supported: {why}", f"remove it ({takes})"))
    return out
