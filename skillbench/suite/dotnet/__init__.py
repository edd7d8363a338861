"""dotnet/skills eval specs as a suite: both formats (skill-validator ``scenarios:``, Vally ``stimuli:``), their
tree layout, and dotnet's authoring gate — all loading into the one :class:`~skillbench.suite.format.Suite`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("load_strict", "DuplicateKey", "DuplicateKeyError"), "yaml_strict"),
    **dict.fromkeys(("preflight_dotnet", "eval_specs", "DotnetLayout", "DotnetReport"), "layout"),
    **dict.fromkeys(("parse_duration", "EvalContext", "Draft"), "stimulus"),
    **dict.fromkeys(("ASSERTIONS", "load_scenarios"), "skill_validator"),
    **dict.fromkeys(("GRADERS", "load_stimuli", "reference_answer"), "vally"),
    **dict.fromkeys(("GRADER_REQUIRED", "INSTRUMENT_DEBT"), "authoring"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.suite.dotnet.authoring import GRADER_REQUIRED, INSTRUMENT_DEBT
    from skillbench.suite.dotnet.layout import DotnetLayout, DotnetReport, eval_specs, preflight_dotnet
    from skillbench.suite.dotnet.skill_validator import ASSERTIONS, load_scenarios
    from skillbench.suite.dotnet.stimulus import Draft, EvalContext, parse_duration
    from skillbench.suite.dotnet.vally import GRADERS, load_stimuli, reference_answer
    from skillbench.suite.dotnet.yaml_strict import DuplicateKey, DuplicateKeyError, load_strict
