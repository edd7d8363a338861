from .config import (
    CONFIG_FILENAME as CONFIG_FILENAME,
    DEFAULT_ALLOWED_TOOLS as DEFAULT_ALLOWED_TOOLS,
    ConfigError as ConfigError,
    RunSettings as RunSettings,
    SuiteConfig as SuiteConfig,
    SuiteSettings as SuiteSettings,
    load_config as load_config,
)
from .defects import (
    RUBRIC_RANGES as RUBRIC_RANGES,
    Defect as Defect,
)
from .format import (
    EvalInfo as EvalInfo,
    FrontmatterError as FrontmatterError,
    PromptSpec as PromptSpec,
    RubricItem as RubricItem,
    Skill as Skill,
    SkillUrlError as SkillUrlError,
    Suite as Suite,
    TestPrompt as TestPrompt,
    parse_skill_url as parse_skill_url,
    read_skill as read_skill,
)
from .layouts import (
    FORMATS as FORMATS,
    FileField as FileField,
    Layout as Layout,
    SuiteRoots as SuiteRoots,
    detect_format as detect_format,
    detect_layout as detect_layout,
    is_suite as is_suite,
    layout_named as layout_named,
    layouts_table as layouts_table,
    register_layout as register_layout,
    registered_layouts as registered_layouts,
)
from .validation import (
    PreflightReport as PreflightReport,
    SuiteError as SuiteError,
    load_suite as load_suite,
    preflight as preflight,
)
