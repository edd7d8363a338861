"""The suite: its format (prompts, rubrics, skills), its config file, and preflight.

A suite directory holds ``test-prompts/`` and the skills under test (:mod:`skillbench.suite.qdrant`) — or is a
dotnet/skills tree (``tests/`` and ``plugins/``: :mod:`skillbench.suite.dotnet`) or a skill-creator skill folder
(:mod:`skillbench.suite.skill_creator`); each format is a :class:`Layout` of the registry
(:mod:`skillbench.suite.layouts`), and :func:`detect_layout` says which one a folder is. :func:`load_suite` reads
it for a run and :func:`preflight` reports every defect without writing anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillbench._exports import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys((
        "RubricItem", "TestPrompt", "PromptSpec", "Skill", "Suite", "EvalInfo", "SkillUrlError",
        "FrontmatterError", "parse_skill_url", "read_skill"
    ), "format"),
    **dict.fromkeys((
        "SuiteConfig", "SuiteSettings", "RunSettings", "ConfigError", "load_config",
        "CONFIG_FILENAME", "DEFAULT_ALLOWED_TOOLS"
    ), "config"),
    **dict.fromkeys((
        "PreflightReport", "SuiteError", "preflight"
    ), "validation"),
    **dict.fromkeys(("Defect", "RUBRIC_RANGES", "MIN_PREFERENCE_PROMPTS"), "defects"),
    **dict.fromkeys(("load_suite",), "validation"),
    **dict.fromkeys(("Layout", "SuiteRoots", "FileField", "register_layout", "layout_named", "registered_layouts",
                     "detect_layout", "detect_format", "is_suite", "FORMATS", "layouts_table"), "layouts"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the real imports
    from skillbench.suite.config import (
        CONFIG_FILENAME,
        DEFAULT_ALLOWED_TOOLS,
        ConfigError,
        RunSettings,
        SuiteConfig,
        SuiteSettings,
        load_config,
    )
    from skillbench.suite.defects import MIN_PREFERENCE_PROMPTS, RUBRIC_RANGES, Defect
    from skillbench.suite.format import (
        EvalInfo,
        FrontmatterError,
        PromptSpec,
        RubricItem,
        Skill,
        SkillUrlError,
        Suite,
        TestPrompt,
        parse_skill_url,
        read_skill,
    )
    from skillbench.suite.layouts import (
        FORMATS,
        FileField,
        Layout,
        SuiteRoots,
        detect_format,
        detect_layout,
        is_suite,
        layout_named,
        layouts_table,
        register_layout,
        registered_layouts,
    )
    from skillbench.suite.validation import (
        PreflightReport,
        SuiteError,
        load_suite,
        preflight,
    )
