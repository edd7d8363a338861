"""Suite configuration: `skillbench.toml` in a suite directory.

A suite directory (``SUITE_DIR``) is the folder that contains ``test-prompts/``. The config file is optional
(qdrant's suite has none); every field has a default that matches qdrant's weekly run, and command-line flags
override what the file says.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from skillbench.ledgers import CONFIG_FILE
from skillbench.vocab import CONDITIONS, LIFT_ARMS, Condition  # noqa: F401 - CONDITIONS re-exported

CONFIG_FILENAME = CONFIG_FILE
DEFAULT_ALLOWED_TOOLS = ["Skill", "WebSearch", "WebFetch", "Read", "Grep", "Glob", "Bash"]


class ConfigError(ValueError):
    """A suite config file that cannot be read; the message is one actionable line.

    Attributes:
        path: the config file.
        field: the key (``suite.site_base``), or ``file`` / ``TOML syntax`` when the file itself is unreadable.
        problem: what is wrong.
        fix: how to fix it.
    """

    def __init__(self, path: Path, field: str, problem: str, fix: str):
        self.path, self.field, self.problem, self.fix = Path(path), field, problem, fix
        super().__init__(f"{path}: {field}: {problem} — {fix}")


class SuiteSettings(BaseModel):
    """Where the suite's skills live and how prompts are split."""

    model_config = ConfigDict(extra="forbid", strict=True)  # TOML has types: true is never 1

    skills_root: str | None = Field(
        default=None, description="skills tree, relative to SUITE_DIR (default: skills/ or ../skills/)"
    )
    site_base: str | None = Field(default=None, description="published site base URL, the skill_url prefix")
    heldout_prefixes: list[str] = Field(default_factory=list, description="name prefixes never scored")
    heldout_tags: list[str] = Field(default_factory=list, description="tags whose prompts are never scored (a "
                                    "dotnet stimulus's tags, `key=value` for a mapping)")
    heldout_wear: int = Field(default=5, ge=1, description="decisions a held-out prompt may inform (runs asked "
                              "for with --generalization, recorded in heldout-uses.csv) before the report warns "
                              "that it is worn out")


class RunSettings(BaseModel):
    """How a weekly run calls the CLI; defaults are qdrant's weekly run."""

    model_config = ConfigDict(extra="forbid", strict=True)

    models: list[str] = Field(default_factory=lambda: ["sonnet", "haiku"])
    reps: int = Field(default=2, ge=1)
    conditions: list[Condition] = Field(default_factory=lambda: list(LIFT_ARMS))
    allowed_tools: list[str] = Field(default_factory=lambda: list(DEFAULT_ALLOWED_TOOLS))
    permission_mode: str = "dontAsk"
    max_turns: int = Field(default=20, ge=1)
    max_budget_usd: float = Field(default=2.0, gt=0, allow_inf_nan=False)


class JudgeSettings(BaseModel):
    """How the weekly chain's judges call the model (the judging stage and calibration)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    batch: bool = Field(default=False, description="judge through Message Batches (half the price, not at once)")
    batch_wait_s: float = Field(default=60.0, ge=0, allow_inf_nan=False,
                                description="the longest the judging stage waits for a batch; then it stops 'judge "
                                "pending' and a rerun of the run key continues")


class QualityConfig(BaseModel):
    """How ``skillbench lint-skills`` sizes the suite's skills (the category names are checked by
    :func:`skillbench.quality._categories.quality_settings`, the home of the categories and their line targets)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    categories: dict[str, str] = Field(default_factory=dict, description="family = category (e.g. workflow)")
    default_category: str | None = Field(default=None, description="the category of a family not listed")


# A declared package reaches a `pip download` command line and a cache file name: a plain PEP 508 name and a PEP 440
# exact public version only (skillbench.identifiers checks them again before any command runs).
PACKAGE_PATTERN = r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$"
VERSION_PATTERN = (r"^[0-9]{1,9}(?:\.[0-9]{1,9}){0,5}(?:(?:a|b|rc)[0-9]{1,9})?(?:\.post[0-9]{1,9})?"
                    r"(?:\.dev[0-9]{1,9})?$")
_MODULE_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,63}(?:\.[A-Za-z_][A-Za-z0-9_]{0,63}){0,9}$"


class ApiSettings(BaseModel):
    """One ``[[api]]`` entry: a library whose identifiers an answer may use, read at the exact version the suite
    targets (the fabricated-identifier detector, docs/fabrication.md)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    language: Literal["python"] = Field(default="python", description="the language its identifiers are written in")
    package: str = Field(pattern=PACKAGE_PATTERN, description="the PyPI project (pandas, qdrant-client)")
    version: str = Field(pattern=VERSION_PATTERN, description="the exact released version the suite targets")
    module: str | None = Field(default=None, pattern=_MODULE_PATTERN,
                               description="the import name (default: the package name, '-' read as '_')")
    stubs: str | None = Field(default=None, pattern=PACKAGE_PATTERN,
                              description="a typed-stubs project that follows return types (pandas-stubs)")
    stubs_version: str | None = Field(default=None, pattern=VERSION_PATTERN, description="its exact version")
    config_models: list[Annotated[str, Field(pattern=_MODULE_PATTERN)]] = Field(
        default_factory=list, description="modules whose model classes hold the config keys (JSON/YAML blocks)")
    rest_modules: list[Annotated[str, Field(pattern=_MODULE_PATTERN)]] = Field(
        default_factory=list, description="modules whose `method=`/`url=` string literals are the REST paths")

    @model_validator(mode="after")
    def _stubs_pinned(self) -> ApiSettings:
        if (self.stubs is None) != (self.stubs_version is None):
            raise ValueError("stubs and stubs_version go together (an exact stubs version, like the package's)")
        return self

    @property
    def import_name(self) -> str:
        return self.module or self.package.replace("-", "_").replace(".", "_").lower()


class GateSettings(BaseModel):
    """Opt-in rules of the verdict specification (``[gate]``)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    # opt-in: a false flag would fail a good run, so the rule applies only while every declared surface's measured
    # precision has a 95 % lower bound >= 0.98 (the scorecard checks it and says so)
    fabrication: bool = Field(default=False, description="a family x model whose treatment's answers carry an "
                              "unresolved identifier credibly more often than the control's reads VALID_REGRESSION")


class SuiteConfig(BaseModel):
    """The whole `skillbench.toml`: ``[suite]``, ``[run]``, ``[judge]``, ``[quality]`` and ``[gate]`` tables, and
    ``[[api]]`` (the libraries whose identifiers are checked)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    suite: SuiteSettings = Field(default_factory=SuiteSettings)
    run: RunSettings = Field(default_factory=RunSettings)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    quality: QualityConfig = Field(default_factory=QualityConfig)
    api: list[ApiSettings] = Field(default_factory=list)
    gate: GateSettings = Field(default_factory=GateSettings)

    @field_validator("api")
    @classmethod
    def _one_surface_per_module(cls, api: list[ApiSettings]) -> list[ApiSettings]:
        seen: set[str] = set()
        for entry in api:
            if entry.import_name in seen:  # two versions of one module: which one would `import` get?
                raise ValueError(f"module {entry.import_name!r} is declared twice; keep one version")
            seen.add(entry.import_name)
        return api


def load_config(suite_dir: str | Path) -> SuiteConfig:
    """Read ``SUITE_DIR/skillbench.toml``, or the defaults when the file is absent.

    Raises:
        ConfigError: the path is not a file, the file is not UTF-8 or not TOML, or a key is unknown or ill-typed
            (the first such defect, as one line; nothing falls back to the defaults).
    """
    path = Path(suite_dir) / CONFIG_FILENAME
    if not path.exists():
        return SuiteConfig()
    return read_config(path)


def week_config(run: Mapping[str, Any]) -> tuple[SuiteConfig, Path] | None:
    """The config a week was generated with, from its ``run.json`` (``run``): the ``--config`` file it recorded as
    ``config_file``, else its ``suite_dir``'s own ``skillbench.toml`` (the defaults when that has none); with the suite
    folder. None when the week names no suite folder that exists (a qdrant-layout week: the caller's defaults).

    Raises:
        ConfigError: the recorded file is gone or unreadable (a week never silently reads the defaults instead).
    """
    suite_dir = Path(str(run.get("suite_dir") or ""))
    if run.get("config_file"):
        return read_config(str(run["config_file"])), suite_dir
    if not str(run.get("suite_dir") or "") or not suite_dir.is_dir():
        return None
    return load_config(suite_dir), suite_dir


def read_config(path: str | Path) -> SuiteConfig:
    """Read one config file, wherever it is (``--config FILE``: a repository that commits none, such as qdrant's).

    Raises:
        ConfigError: as :func:`load_config`, and when the file does not exist (it was asked for by name).
    """
    path = Path(path)
    if not path.exists():
        raise ConfigError(path, "file", "does not exist", "pass --config the path of a skillbench.toml")
    if not path.is_file():
        raise ConfigError(path, "file", "is not a file", f"make {CONFIG_FILENAME} a TOML file, or remove it")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(path, "file", f"cannot be read ({exc.strerror})", "check its permissions") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(path, "file", f"not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line})",
                          "save it as UTF-8") from exc
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(path, "TOML syntax", str(exc), "fix the file's syntax") from exc
    except RecursionError:  # tomllib recurses once per level of nested arrays and inline tables
        raise ConfigError(path, "TOML syntax", "nested too deeply to read", "flatten the file (the config nests "
                          "two levels)") from None
    try:
        return SuiteConfig.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise ConfigError(path, field, err["msg"], "see README 'Suite config'") from exc
