from ._profiles import (
    AgentProfile as AgentProfile,
    FaultSpec as FaultSpec,
    JudgeProfile as JudgeProfile,
    ProfileError as ProfileError,
    Profiles as Profiles,
    SkillVersion as SkillVersion,
    load_profiles as load_profiles,
    parse_fault_option as parse_fault_option,
    pick_key as pick_key,
)
from ._server import (
    Serving as Serving,
    SimServer as SimServer,
    serve_forever as serve_forever,
    simulated_endpoint as simulated_endpoint,
)
from ._tasks import (
    TaskRun as TaskRun,
)
from ._versions import (
    skill_version_key as skill_version_key,
    version_key as version_key,
)
