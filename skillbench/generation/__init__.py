"""Generation: the plan, the real Claude Code CLI call, the sandbox it runs in, the endpoint, reconciliation.

:func:`generate` runs every planned run of a week in a fresh sandbox (one Docker container per run, or the
local sandbox), resumably, and ends with ``manifest.csv`` and ``reconciliation.json``. A task prompt's run gets
its workspace and setup first and its checks graded after, in the same container (``checks.csv``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys((
        "make_plan", "write_plan", "installed_families", "run_id", "run_name", "selected", "PlanError",
        "SelectionError"
    ), "plan"),
    **dict.fromkeys(("CliCall", "cli_args", "cli_env", "custom_headers",), "cli_call"),
    **dict.fromkeys((
        "Sandbox", "SandboxResult", "DockerSandbox", "LocalSandbox", "SandboxFailure",
        "choose_sandbox", "SkillLinkError", "install_skills", "skill_entries", "EndpointRelay", "sealed_address",
        "remove_stale_relays"
    ), "sandbox"),
    **dict.fromkeys(("build_image", "find_image", "current_spec", "ImageSpec", "ImageBuildError",), "image"),
    **dict.fromkeys((
        "BACKENDS", "BackendError", "Endpoint", "existing_endpoint", "simulation_at", "resolve_backend",
        "require_loopback", "is_loopback_host", "sim_info", "probe_endpoint", "PROBE_TIMEOUT"
    ), "backend"),
    **dict.fromkeys((
        "CLAUDE_CODE_VERSION", "ToolMissing", "claude_path", "claude_version",
        "docker_available"
    ), "toolchain"),
    **dict.fromkeys((
        "GenerateOptions", "generate", "default_out_dir"
    ), "run"),
    **dict.fromkeys(("finished_runs", "write_truth", "skills_sha", "move_partials_aside",), "folders"),
    **dict.fromkeys(("TaskRun", "TaskError", "SetupOutcome", "Probe", "WorkspaceItem", "prepare_task"), "workspace"),
    **dict.fromkeys(("refuse_local_workspace_checks", "run_timeout", "run_tools"), "task_phase"),
    **dict.fromkeys(("reconcile", "summary_line",), "reconciliation"),
    # the run states live beside the manifest, the lowest layer that reads them (ARCHITECTURE.md, "Run states")
    **dict.fromkeys(("run_state", "RUN_STATES", "COMPLETE_STATES", "PLAN_STATES",), "skillbench.signals.manifest"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.generation.backend import (
        BACKENDS,
        PROBE_TIMEOUT,
        BackendError,
        Endpoint,
        existing_endpoint,
        is_loopback_host,
        probe_endpoint,
        require_loopback,
        resolve_backend,
        sim_info,
        simulation_at,
    )
    from skillbench.generation.cli_call import (
        CliCall,
        cli_args,
        cli_env,
        custom_headers,
    )
    from skillbench.generation.folders import finished_runs, move_partials_aside, skills_sha, write_truth
    from skillbench.generation.image import (
        ImageBuildError,
        ImageSpec,
        build_image,
        current_spec,
        find_image,
    )
    from skillbench.generation.plan import (
        PlanError,
        SelectionError,
        installed_families,
        make_plan,
        run_id,
        run_name,
        selected,
        write_plan,
    )
    from skillbench.generation.reconciliation import (
        reconcile,
        summary_line,
    )
    from skillbench.generation.run import GenerateOptions, default_out_dir, generate
    from skillbench.generation.sandbox import (
        DockerSandbox,
        EndpointRelay,
        LocalSandbox,
        Sandbox,
        SandboxFailure,
        SandboxResult,
        SkillLinkError,
        choose_sandbox,
        install_skills,
        remove_stale_relays,
        sealed_address,
        skill_entries,
    )
    from skillbench.generation.task_phase import refuse_local_workspace_checks, run_timeout, run_tools
    from skillbench.generation.toolchain import (
        CLAUDE_CODE_VERSION,
        ToolMissing,
        claude_path,
        claude_version,
        docker_available,
    )
    from skillbench.generation.workspace import (
        Probe,
        SetupOutcome,
        TaskError,
        TaskRun,
        WorkspaceItem,
        prepare_task,
    )
    from skillbench.signals.manifest import (
        COMPLETE_STATES,
        PLAN_STATES,
        RUN_STATES,
        run_state,
    )
