from .profiles import (
    AgentProfile as AgentProfile,
    FaultSpec as FaultSpec,
    JudgeProfile as JudgeProfile,
    ProfileError as ProfileError,
    Profiles as Profiles,
    SkillVersion as SkillVersion,
    load_profiles as load_profiles,
    parse_fault_option as parse_fault_option,
)
from .server import (
    SimServer as SimServer,
    simulated_endpoint as simulated_endpoint,
)
from .tasks import (
    TaskRun as TaskRun,
)
from .versions import (
    skill_version_key as skill_version_key,
    version_key as version_key,
)
