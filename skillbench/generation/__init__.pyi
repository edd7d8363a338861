from ._backend import (
    BACKENDS as BACKENDS,
    PROBE_TIMEOUT as PROBE_TIMEOUT,
    BackendError as BackendError,
    Endpoint as Endpoint,
    existing_endpoint as existing_endpoint,
    is_loopback_host as is_loopback_host,
    probe_endpoint as probe_endpoint,
    require_loopback as require_loopback,
    resolve_backend as resolve_backend,
    sim_api_key as sim_api_key,
    sim_info as sim_info,
    simulation_at as simulation_at,
)
from ._cli_call import (
    CliCall as CliCall,
    cli_args as cli_args,
    cli_env as cli_env,
    custom_headers as custom_headers,
)
from ._folders import (
    finished_runs as finished_runs,
    move_partials_aside as move_partials_aside,
    skills_sha as skills_sha,
    write_truth as write_truth,
)
from ._image import (
    RUNNER_UID as RUNNER_UID,
    ImageBuildError as ImageBuildError,
    ImageSpec as ImageSpec,
    build_image as build_image,
    current_spec as current_spec,
    find_image as find_image,
)
from ._jobs import (
    JobsChoice as JobsChoice,
    MachineFacts as MachineFacts,
    RunsCap as RunsCap,
    default_jobs as default_jobs,
    machine_facts as machine_facts,
    machine_sample as machine_sample,
    memory_available as memory_available,
    sustained_jobs as sustained_jobs,
)
from ._limits import ContainerLimits as ContainerLimits
from ._plan import (
    PlanError as PlanError,
    SelectionError as SelectionError,
    installed_families as installed_families,
    make_plan as make_plan,
    run_id as run_id,
    run_name as run_name,
    selected as selected,
    write_plan as write_plan,
)
from ._provenance import config_sha as config_sha, image_tag as image_tag
from ._reconciliation import (
    reconcile as reconcile,
    summary_line as summary_line,
)
from ._relay import (
    Relay as Relay,
    RelayPlan as RelayPlan,
    relay_summary as relay_summary,
    remove_stale_relays as remove_stale_relays,
)
from ._retries import MAX_RETRIED_GROUPS as MAX_RETRIED_GROUPS
from ._run import (
    GenerateOptions as GenerateOptions,
    LocalExecutor as LocalExecutor,
    default_out_dir as default_out_dir,
    generate as generate,
)
from ._sandbox import (
    LABEL as LABEL,
    NETWORK_SEALED as NETWORK_SEALED,
    DockerSandbox as DockerSandbox,
    LocalSandbox as LocalSandbox,
    Sandbox as Sandbox,
    SandboxFailure as SandboxFailure,
    SandboxResult as SandboxResult,
    SkillLinkError as SkillLinkError,
    choose_sandbox as choose_sandbox,
    install_skills as install_skills,
    refuse_local_real as refuse_local_real,
    sealed_address as sealed_address,
    skill_entries as skill_entries,
    skills_tar as skills_tar,
)
from ._task_phase import (
    rebuild_checks_ledger as rebuild_checks_ledger,
    refuse_local_workspace_checks as refuse_local_workspace_checks,
    run_timeout as run_timeout,
    run_tools as run_tools,
)
from ._toolchain import (
    CLAUDE_CODE_VERSION as CLAUDE_CODE_VERSION,
    ToolMissing as ToolMissing,
    claude_path as claude_path,
    claude_version as claude_version,
    docker_available as docker_available,
)
from ._versions import arm_versions as arm_versions
from ._workspace import (
    Probe as Probe,
    SetupOutcome as SetupOutcome,
    TaskError as TaskError,
    TaskRun as TaskRun,
    WorkspaceItem as WorkspaceItem,
    prepare_task as prepare_task,
)
