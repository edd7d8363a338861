from ._authoring import (
    GRADER_REQUIRED as GRADER_REQUIRED,
    INSTRUMENT_DEBT as INSTRUMENT_DEBT,
)
from ._layout import (
    DotnetLayout as DotnetLayout,
    DotnetReport as DotnetReport,
    eval_specs as eval_specs,
    preflight_dotnet as preflight_dotnet,
)
from ._skill_validator import (
    ASSERTIONS as ASSERTIONS,
    load_scenarios as load_scenarios,
)
from ._stimulus import (
    Draft as Draft,
    EvalContext as EvalContext,
    parse_duration as parse_duration,
)
from ._unsupported import (
    UNSUPPORTED_FIELDS as UNSUPPORTED_FIELDS,
    UNSUPPORTED_GRADERS as UNSUPPORTED_GRADERS,
)
from ._vally import (
    GRADERS as GRADERS,
    load_stimuli as load_stimuli,
    reference_answer as reference_answer,
)
from ._yaml_strict import (
    DuplicateKey as DuplicateKey,
    DuplicateKeyError as DuplicateKeyError,
    load_strict as load_strict,
)
