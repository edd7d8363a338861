"""Skills written with Anthropic's skill-creator: ``<skill>/evals/evals.json`` and trigger eval sets, loaded into
the one :class:`~skillbench.suite.format.Suite` (see :mod:`skillbench.suite.skill_creator.layout`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("preflight_skill_creator", "is_skill_creator_tree", "skill_dirs", "SkillCreatorReport",
                     "SkillEvals", "SkillCreatorLayout", "TRIGGER_SET_NAMES", "EVALS_FILE"), "layout"),
    **dict.fromkeys(("read_evals", "read_trigger_set", "read_json", "query_key", "Item", "EvalFileError"), "evals"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.suite.skill_creator.evals import (
        EvalFileError,
        Item,
        query_key,
        read_evals,
        read_json,
        read_trigger_set,
    )
    from skillbench.suite.skill_creator.layout import (
        EVALS_FILE,
        TRIGGER_SET_NAMES,
        SkillCreatorLayout,
        SkillCreatorReport,
        SkillEvals,
        is_skill_creator_tree,
        preflight_skill_creator,
        skill_dirs,
    )
