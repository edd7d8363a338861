from ._absence import absence_indexes as absence_indexes, resolve_absence as resolve_absence
from ._config import (
    CONFIG_FILENAME as CONFIG_FILENAME,
    DEFAULT_ALLOWED_TOOLS as DEFAULT_ALLOWED_TOOLS,
    PACKAGE_PATTERN as PACKAGE_PATTERN,
    VERSION_PATTERN as VERSION_PATTERN,
    ApiSettings as ApiSettings,
    ConfigError as ConfigError,
    GateSettings as GateSettings,
    JudgeSettings as JudgeSettings,
    RunSettings as RunSettings,
    SuiteConfig as SuiteConfig,
    SuiteSettings as SuiteSettings,
    load_config as load_config,
    read_config as read_config,
    week_config as week_config,
)
from ._containment import (
    SourceEntry as SourceEntry,
    SourceEscape as SourceEscape,
    contained_source as contained_source,
    dest_problem as dest_problem,
)
from ._defects import (
    RUBRIC_RANGES as RUBRIC_RANGES,
    Defect as Defect,
)
from ._description import (
    MAX_DESCRIPTION_CHARS as MAX_DESCRIPTION_CHARS,
    Description as Description,
    common_words as common_words,
    content_words as content_words,
    read_description as read_description,
    says_when as says_when,
    segments as segments,
    stem as stem,
)
from ._families import (
    defect_family as defect_family,
    load_families as load_families,
    split_families as split_families,
)
from ._format import (
    FRONTMATTER as FRONTMATTER,
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
from ._layouts import (
    FORMATS as FORMATS,
    FileField as FileField,
    Layout as Layout,
    SuiteRoots as SuiteRoots,
    detect_format as detect_format,
    detect_layout as detect_layout,
    detection_summary as detection_summary,
    is_suite as is_suite,
    layout_named as layout_named,
    layouts_table as layouts_table,
    register_layout as register_layout,
    registered_layouts as registered_layouts,
)
from ._ownership import Overlap as Overlap, Ownership as Ownership, rubric_ownership as rubric_ownership
from ._placebo import carries_placebo as carries_placebo, materialize_placebo as materialize_placebo
from ._task import WorkspaceFile as WorkspaceFile
from ._task_checks import source_entries as source_entries
from ._validation import (
    PreflightReport as PreflightReport,
    SuiteError as SuiteError,
    SuiteOverrides as SuiteOverrides,
    load_suite as load_suite,
    preflight as preflight,
)
from ._versions import (
    HEAD as HEAD,
    SkillsVersion as SkillsVersion,
    SuiteRepo as SuiteRepo,
    VersionError as VersionError,
    changed_files as changed_files,
    git as git,
    resolve_version as resolve_version,
    resolve_versions as resolve_versions,
    tree_hash as tree_hash,
)
