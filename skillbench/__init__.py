"""skillbench: does this skill make the model answer better, by how much, at what cost, and can we trust it?

The public API is re-exported here; notebooks and the ``skillbench`` CLI call the same functions.
"""

from skillbench.config import CONFIG_FILENAME, ConfigError, SuiteConfig, load_config
from skillbench.preflight import Defect, PreflightReport, SuiteError, load_suite, preflight
from skillbench.suite import PromptSpec, RubricItem, Skill, Suite, TestPrompt, parse_skill_url

__version__ = "0.1.0"

__all__ = [
    "CONFIG_FILENAME",
    "ConfigError",
    "Defect",
    "PreflightReport",
    "PromptSpec",
    "RubricItem",
    "Skill",
    "Suite",
    "SuiteConfig",
    "SuiteError",
    "TestPrompt",
    "load_config",
    "load_suite",
    "parse_skill_url",
    "preflight",
]
