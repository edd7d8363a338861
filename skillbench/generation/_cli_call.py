"""How skillbench calls the Claude Code CLI: the command line and the environment of one run.

The command is qdrant's weekly call (``claude -p --no-session-persistence --output-format stream-json
--verbose --permission-mode … --max-turns … --model … --max-budget-usd … --allowedTools … -- PROMPT``) with
``--setting-sources user`` (workspace settings and hooks are inert), the same in every arm; only the installed
skills differ between arms. The run identity travels as custom headers (``ANTHROPIC_CUSTOM_HEADERS``), which
the CLI forwards on every request, so the simulated endpoint can key its draws on them and a real endpoint simply
ignores them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skillbench.suite import RunSettings
from skillbench.wire import ATTEMPT_HEADER, RUN_ID_HEADER

# Keep the CLI from any traffic but the Messages API (no telemetry, updater or error reports).
QUIET_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


@dataclass(frozen=True)
class CliCall:
    """Everything that is the same for a run whatever the sandbox: flags and run identity."""

    prompt: str
    model: str
    run_id: str
    attempt: int = 1


def cli_args(call: CliCall, run: RunSettings, claude: str = "claude",
             allowed_tools: Sequence[str] | None = None) -> list[str]:
    """The argv of one run (qdrant's flags; values from the suite's ``[run]`` settings).

    Args:
        call: prompt, model and run identity.
        run: the suite's ``[run]`` settings.
        claude: the CLI's name or path.
        allowed_tools: a task's own allow-list (its prompt's ``allowed_tools``), instead of the suite's; a
            per-prompt setting, so every arm of the prompt runs with the same tools.
    """
    tools = run.allowed_tools if allowed_tools is None else allowed_tools
    return [
        # user settings only (the root-owned ~/.claude/settings.json): a workspace's .claude/settings*.json and
        # its hooks are inert, so content under evaluation cannot run a hook beside the CLI
        claude, "-p", "--no-session-persistence", "--setting-sources", "user", "--output-format", "stream-json",
        "--verbose",
        "--permission-mode", run.permission_mode, "--max-turns", str(run.max_turns), "--model", call.model,
        "--max-budget-usd", f"{run.max_budget_usd:g}", "--allowedTools", ",".join(tools),
        "--", call.prompt,
    ]


def custom_headers(run_id: str, attempt: int, extra: Mapping[str, str] | None = None) -> str:
    """The value of ``ANTHROPIC_CUSTOM_HEADERS``: one ``Name: value`` per line."""
    headers = {RUN_ID_HEADER: run_id, ATTEMPT_HEADER: str(attempt), **(extra or {})}
    return "\n".join(f"{k}: {v}" for k, v in headers.items())


def cli_env(
    call: CliCall,
    *,
    base_url: str,
    api_key: str,
    home: str,
    tmpdir: str,
    path: str = "/usr/local/bin:/usr/bin:/bin",
    headers: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The whole environment of one run: nothing from the caller's environment leaks in.

    Args:
        call: prompt, model and run identity.
        base_url: the Messages endpoint (simulated or Anthropic's).
        api_key: the key for that endpoint (never written to a run dir).
        home: a fresh HOME; user skills are read from ``HOME/.claude/skills``.
        tmpdir: a fresh TMPDIR; the CLI keeps its sockets and task files there.
        path: PATH inside the sandbox.
        headers: more request headers (e.g. the simulated endpoint's truth path); a real API ignores them.
        extra: more variables (e.g. ``CLAUDE_CODE_MAX_RETRIES`` in tests).
    """
    env = {
        "HOME": home,
        "TMPDIR": tmpdir,
        "PATH": path,
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": api_key,
        "ANTHROPIC_CUSTOM_HEADERS": custom_headers(call.run_id, call.attempt, headers),
        **QUIET_ENV,
    }
    env.update(extra or {})
    return env

