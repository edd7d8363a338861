from ._evals import (
    EvalFileError as EvalFileError,
    EvalSet as EvalSet,
    Item as Item,
    query_key as query_key,
    read_evals as read_evals,
    read_json as read_json,
    read_trigger_set as read_trigger_set,
)
from ._layout import (
    EVALS_FILE as EVALS_FILE,
    TRIGGER_SET_NAMES as TRIGGER_SET_NAMES,
    SkillCreatorLayout as SkillCreatorLayout,
    SkillCreatorReport as SkillCreatorReport,
    SkillEvals as SkillEvals,
    is_skill_creator_tree as is_skill_creator_tree,
    preflight_skill_creator as preflight_skill_creator,
    skill_dirs as skill_dirs,
)
