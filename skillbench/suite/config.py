"""Suite configuration: `skillbench.toml` in a suite directory.

A suite directory (``SUITE_DIR``) is the folder that contains ``test-prompts/``. The config file is optional
(qdrant's suite has none); every field has a default that matches qdrant's weekly run, and command-line flags
override what the file says.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillbench.ledgers.files import CONFIG_FILE
from skillbench.vocab import CONDITIONS, LIFT_ARMS, Condition  # noqa: F401 - CONDITIONS re-exported

CONFIG_FILENAME = CONFIG_FILE
DEFAULT_ALLOWED_TOOLS = ["Skill", "WebSearch", "WebFetch", "Read", "Grep", "Glob", "Bash"]


class ConfigError(ValueError):
    """A suite config file that cannot be read; the message is one actionable line."""


class SuiteSettings(BaseModel):
    """Where the suite's skills live and how prompts are split."""

    model_config = ConfigDict(extra="forbid")

    skills_root: str | None = Field(
        default=None, description="skills tree, relative to SUITE_DIR (default: skills/ or ../skills/)"
    )
    site_base: str | None = Field(default=None, description="published site base URL, the skill_url prefix")
    heldout_prefixes: list[str] = Field(default_factory=list, description="name prefixes never scored")


class RunSettings(BaseModel):
    """How a weekly run calls the CLI; defaults are qdrant's weekly run."""

    model_config = ConfigDict(extra="forbid")

    models: list[str] = Field(default_factory=lambda: ["sonnet", "haiku"])
    reps: int = Field(default=2, ge=1)
    conditions: list[Condition] = Field(default_factory=lambda: list(LIFT_ARMS))
    allowed_tools: list[str] = Field(default_factory=lambda: list(DEFAULT_ALLOWED_TOOLS))
    permission_mode: str = "dontAsk"
    max_turns: int = Field(default=20, ge=1)
    max_budget_usd: float = Field(default=2.0, gt=0)


class SuiteConfig(BaseModel):
    """The whole `skillbench.toml`: a ``[suite]`` and a ``[run]`` table."""

    model_config = ConfigDict(extra="forbid")

    suite: SuiteSettings = Field(default_factory=SuiteSettings)
    run: RunSettings = Field(default_factory=RunSettings)


def load_config(suite_dir: str | Path) -> SuiteConfig:
    """Read ``SUITE_DIR/skillbench.toml``, or the defaults when the file is absent.

    Raises:
        ConfigError: the file is not TOML or has an unknown or ill-typed key.
    """
    path = Path(suite_dir) / CONFIG_FILENAME
    if not path.is_file():
        return SuiteConfig()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: TOML syntax: {exc} — fix the file's syntax") from exc
    try:
        return SuiteConfig.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"{path}: {field}: {err['msg']} — see README 'Suite config'") from exc
