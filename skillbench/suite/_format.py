"""The eval-suite format: test prompts with rubrics, and the skills tree they target.

Test prompts are qdrant's JSON files unchanged (``name``, ``product_area``, ``skill_url``, ``prompt``, ``rubric``)
plus optional fields of ours: ``expect_activation`` (false marks a dormancy prompt) and the agentic task fields
of :mod:`skillbench.suite._task` (``workspace``, ``setup``, ``checks``, ``timeout``, ``allowed_tools``). A prompt's
``skill_url`` is ``<site base>/<family>/<sub…>/SKILL.md``: the first path segment is the family (the unit that
is installed), the whole path is the leaf (what the model should reach).

Use :func:`skillbench.load_suite` to read a suite; it runs the preflight checks and refuses a broken one.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

from skillbench.checktypes import Check, Timeout
from skillbench.ledgers import FIXTURES_DIR, SKILL_FILE, SOLUTIONS_DIR
from skillbench.suite._config import SuiteConfig
from skillbench.suite._layouts import QDRANT
from skillbench.suite._nesting import NestingError, load_yaml
from skillbench.suite._task import WorkspaceFile
from skillbench.vocab import ITEM_TYPES, ItemType  # noqa: F401 - ITEM_TYPES re-exported


class RubricItem(BaseModel):
    """One rubric line: ``must`` (expected), ``bonus`` (depth) or ``avoid`` (an active harm)."""

    model_config = ConfigDict(extra="forbid")

    type: ItemType
    text: StrictStr
    # An absence-style must ("Did NOT download symbols") is graded like an avoid item: the judge hunts for the
    # violation and must quote it; clean earns the must's credit. None: decided by the documented detection rule
    # (skillbench.suite._absence); true/false overrides it for this item.
    absence: StrictBool | None = None


class TestPrompt(BaseModel):
    """One file of ``test-prompts/``: the question and the rubric it is graded against."""

    __test__ = False  # not a pytest test class
    model_config = ConfigDict(extra="forbid")

    name: StrictStr
    product_area: StrictStr
    skill_url: StrictStr
    prompt: StrictStr
    rubric: list[RubricItem]
    expect_activation: StrictBool = True
    workspace: list[WorkspaceFile] = Field(default_factory=list)
    setup: list[StrictStr] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)
    timeout: Timeout | None = Field(default=None, description="external timeout of this task's runs, seconds (at "
                                    "most a day)")
    allowed_tools: list[StrictStr] | None = Field(default=None, description="overrides [run].allowed_tools")
    # A should-trigger query of a trigger eval set (skillbench.suite.skill_creator): run in the with-skill arm
    # only, for trigger recall; never lift-scored or judged (it has no rubric).
    trigger_only: StrictBool = False

    @property
    def dormancy(self) -> bool:
        """True when the target skill must NOT trigger on this prompt."""
        return not self.expect_activation

    @property
    def is_task(self) -> bool:
        """True when the agent starts in a prepared workspace (files or setup commands)."""
        return bool(self.workspace or self.setup)

    @property
    def has_workspace_checks(self) -> bool:
        """True when a check reads the workspace after the run (it needs a container)."""
        return any(c.in_workspace for c in self.checks)

    def rubric_sha(self) -> str:
        """Short hash of the rubric (types and texts in file order), for provenance."""
        payload = json.dumps([[i.type, i.text] for i in self.rubric], ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()[:12]


class SkillUrlError(ValueError):
    """A ``skill_url`` that is malformed or on another host; the message says which."""


def parse_skill_url(url: str, site_base: str) -> tuple[str, str]:
    """Split a ``skill_url`` into its family and leaf.

    Args:
        url: e.g. ``https://skills.qdrant.tech/qdrant-scaling/minimize-latency/SKILL.md``.
        site_base: the suite's published site base, e.g. ``https://skills.qdrant.tech``.

    Returns:
        ``(family, leaf)``, e.g. ``("qdrant-scaling", "qdrant-scaling/minimize-latency/SKILL.md")``.

    Raises:
        SkillUrlError: not under ``site_base``, or not a ``…/SKILL.md`` path with a family segment.
    """
    base = urlsplit(site_base.rstrip("/"))
    got = urlsplit(url)
    if not got.scheme or not got.netloc:
        raise SkillUrlError(f"not an absolute URL: {url!r}")
    if (got.scheme, got.netloc.lower()) != (base.scheme, base.netloc.lower()):
        raise SkillUrlError(f"host {got.netloc!r} is not the site base {site_base!r}")
    prefix = base.path.rstrip("/") + "/"
    if not got.path.startswith(prefix):
        raise SkillUrlError(f"path {got.path!r} is not under the site base path {prefix!r}")
    if got.query or got.fragment:
        raise SkillUrlError(f"has a query or fragment: {url!r}")
    leaf = got.path[len(prefix) :]
    parts = leaf.split("/")
    if len(parts) < 2 or parts[-1] != SKILL_FILE or any(p in ("", ".", "..") for p in parts):
        raise SkillUrlError(f"expected <site base>/<family>/…/SKILL.md, got {url!r}")
    return parts[0], leaf


FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)  # a SKILL.md's YAML head
_FRONTMATTER = FRONTMATTER  # the older private name


FRONTMATTER_FIX = "start the file with '---', 'name: …', 'description: …', '---'"


class FrontmatterError(ValueError):
    """A SKILL.md whose YAML frontmatter is absent or invalid: ``str()`` says what is wrong (where, for YAML that
    does not parse), :attr:`fix` how to fix it."""

    def __init__(self, problem: str, fix: str = FRONTMATTER_FIX):
        super().__init__(problem)
        self.fix = fix


# The YAML errors an author meets in a frontmatter, and their usual fix. An unquoted value that contains ": " is
# by far the commonest (a description such as "Keywords: launch, video" starts a second mapping on its line).
_YAML_FIXES = {
    "mapping values are not allowed here": "quote the value: {key}: \"…\" (an unquoted value that contains ': ' "
                                           "reads as a new key), or fold it with {key}: >-",
    "found character '\\t' that cannot start any token": "indent with spaces, not tabs",
    "found undefined alias": "quote the value: {key}: \"…\" (a value that starts with '*' reads as an alias)",
    "found character '@' that cannot start any token": "quote the value: {key}: \"…\" (a value cannot start "
                                                        "with '@' or '`' unquoted)",
    "found character '`' that cannot start any token": "quote the value: {key}: \"…\" (a value cannot start "
                                                        "with '@' or '`' unquoted)",
}
_KEY = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:")


def yaml_error(exc: yaml.YAMLError, text: str, *, first_line: int = 1) -> tuple[str, str]:
    """``(problem, fix)`` for YAML that does not parse: where (line and column in the file, ``first_line`` being
    the file's line of the text's first line), what, under which top-level key, and the usual fix."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    key = ""
    where = ""
    if mark is not None:
        where = f" at line {mark.line + first_line}, column {mark.column + 1}"
        for line in reversed(text.splitlines()[: mark.line + 1]):  # the top-level key the error sits under
            if found := _KEY.match(line):
                key = found.group(1)
                break
    under = f" (in {key!r})" if key else ""
    fix = _YAML_FIXES.get(what, "fix the YAML syntax there (quote a value that contains ': ', '#' or starts with "
                                "a special character)")
    return f"not valid YAML{where}{under}: {what}", fix.format(key=key or "key")


@dataclass(frozen=True)
class Skill:
    """One SKILL.md in the skills tree."""

    leaf: str  # path relative to the skills root, e.g. "qdrant-scaling/minimize-latency/SKILL.md"
    path: Path
    name: str
    description: str
    allowed_tools: tuple[str, ...] = ()
    # (problem, fix) when strict YAML refuses the frontmatter but Claude Code reads it: a warning, not an error
    lenient: tuple[str, str] | None = field(default=None, compare=False)

    @property
    def family(self) -> str:
        return self.leaf.split("/", 1)[0]


def read_skill(path: Path, leaf: str) -> Skill:
    """Parse a SKILL.md's frontmatter.

    Raises:
        FrontmatterError: no ``---`` block, YAML that does not parse, or a missing/empty ``name`` or ``description``.
    """
    text = path.read_text(encoding="utf-8")
    match = FRONTMATTER.match(text)
    if not match:
        raise FrontmatterError("no YAML frontmatter (a leading '---' block)")
    lenient: tuple[str, str] | None = None
    try:
        meta = load_yaml(match.group(1))
    except yaml.YAMLError as exc:
        problem, fix = yaml_error(exc, match.group(1), first_line=2)  # line 1 is the opening '---'
        meta = _as_the_cli_reads(match.group(1))
        if meta is None:
            raise FrontmatterError(f"frontmatter is {problem}", fix) from exc
        lenient = (f"frontmatter is {problem} (Claude Code still reads it, each value taken as a string)", fix)
    except NestingError as exc:
        raise FrontmatterError(f"frontmatter is {exc}") from None
    if not isinstance(meta, dict):
        raise FrontmatterError("frontmatter is not a mapping")
    for key in ("name", "description"):
        value = meta.get(key)
        if not isinstance(value, str) or not value.strip():
            raise FrontmatterError(f"frontmatter '{key}' is missing or empty")
    tools = meta.get("allowed-tools") or ()
    if isinstance(tools, str):
        tools = [t.strip() for t in tools.split(",") if t.strip()]
    return Skill(leaf, path, meta["name"].strip(), meta["description"].strip(), tuple(str(t) for t in tools),
                 lenient=lenient)


_PLAIN_VALUE = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:[ \t]+([^'\"|>\[{ \t].*?)[ \t]*$")


def _as_the_cli_reads(text: str) -> dict[str, Any] | None:
    """A frontmatter strict YAML refuses, read as Claude Code reads it, or None.

    The pinned CLI lists a skill whose frontmatter has an unquoted value with ``': '`` in it (the commonest slip:
    ``description: Launch videos: when …``), so refusing it would measure a skill the agent really gets as
    missing. As the CLI does, each top-level ``key: value`` line whose value is plain is read as one string; what
    still does not parse is refused.
    """
    lines = [f"{m.group(1)}: {json.dumps(m.group(2), ensure_ascii=False)}" if (m := _PLAIN_VALUE.match(line)) else line
             for line in text.splitlines()]
    try:
        meta = load_yaml("\n".join(lines))
    except (yaml.YAMLError, NestingError):
        return None
    return meta if isinstance(meta, dict) else None


@dataclass(frozen=True)
class PromptSpec:
    """A test prompt as the suite sees it: the file's content plus where it sits in the suite."""

    test: TestPrompt
    path: Path
    family: str
    leaf: str
    heldout: bool
    # dotnet specs (skillbench.suite.dotnet): the stimulus's own name (``name`` is a folder-safe slug of the eval's
    # name and it), its tags as ``key=value``, and the golden trajectory's agent messages — a reference answer for
    # the simulated endpoint only: never in the workspace, never shown to the agent or the judge.
    stimulus: str = ""
    tags: tuple[str, ...] = ()
    reference_answer: str = field(default="", repr=False)
    # What --skip-missing took out of this prompt (missing files and what used them), one line each; recorded
    # with every run and listed in the scorecard's coverage.
    dropped: tuple[str, ...] = ()
    # Whether the absence detection rule decides this prompt's unmarked must items: recorded by the layout that
    # loaded it (Layout.absence_rule: true for imported formats, false for skillbench's own JSON prompts).
    absence_rule: bool = False
    # The folders this prompt's workspace files may be read from, set by the layout that loaded it (the suite
    # folder and its skills root: skillbench.suite._containment); see source_roots.
    roots: tuple[Path, ...] = ()

    @property
    def name(self) -> str:
        return self.test.name

    @property
    def dormancy(self) -> bool:
        return self.test.dormancy

    @property
    def trigger_only(self) -> bool:
        """True for a should-trigger query: with-skill runs only, feeding trigger recall (never lift or judge)."""
        return self.test.trigger_only

    @property
    def scored(self) -> bool:
        """Scored prompts are every prompt that is not held out (dormancy prompts included)."""
        return not self.heldout

    @property
    def preference_eligible(self) -> bool:
        """Scored, not dormancy and not a trigger-only query: the prompts that lift and the preference gate use."""
        return self.scored and not self.dormancy and not self.trigger_only

    def workspace_source(self, entry: WorkspaceFile) -> Path | None:
        """Where a ``src`` workspace entry is read from: beside the prompt file, else in the suite's fixtures/.

        Returns None for an inline ``content`` entry, or when neither place has it (preflight refuses that).
        """
        if entry.src is None:
            return None
        suite_dir = self.path.parent.parent  # SUITE_DIR/test-prompts/<name>.json
        for base in (self.path.parent, suite_dir / FIXTURES_DIR):
            candidate = base / entry.src
            if candidate.exists():
                return candidate
        return None

    @property
    def source_roots(self) -> tuple[Path, ...]:
        """The folders a workspace file of this prompt may resolve into: the loader's ``roots``, else the suite
        folder the prompt file sits in (``SUITE_DIR/test-prompts/<name>.json``)."""
        return self.roots or (self.path.parent.parent,)

    @property
    def hidden_paths(self) -> tuple[Path, Path]:
        """What no workspace may hold: the prompt file (its checks, its rubric) and its solutions."""
        return self.path, self.solution_dir

    @property
    def solution_dir(self) -> Path:
        """``SUITE_DIR/solutions/<name>/``: files that solve the task, read by the simulated agent only."""
        return self.path.parent.parent / SOLUTIONS_DIR / self.name


@dataclass(frozen=True)
class EvalInfo:
    """One dotnet eval spec as loaded: where it is, its format, and what it says about itself."""

    path: Path
    format: str  # "skill-validator" or "vally"
    name: str
    plugin: str
    skill: str
    stimuli: int  # every stimulus of the file, broken ones included
    dormancy: int
    heldout: int = 0
    description: str = ""
    type: str = ""
    tags: tuple[str, ...] = ()
    runs: int | None = None  # Vally's defaults.runs
    shadowed: Path | None = None  # the eval.yaml this eval.vally.yaml shadows


@dataclass
class Suite:
    """A loaded, validated suite.

    ``layout`` is the name of the registered layout that loaded it (:mod:`skillbench.suite._layouts`): ``qdrant``
    (``test-prompts/`` and a skills tree of families), ``dotnet`` (``tests/<plugin>/<skill>/eval.yaml`` beside
    ``plugins/<plugin>/skills/<skill>/``: each skill is a family, ``family_dirs`` says where it lives, ``plugin_of``
    which plugin it belongs to, ``evals`` what was read) or ``skill-creator`` (skill folders with
    ``evals/evals.json``).
    """

    suite_dir: Path
    config: SuiteConfig
    skills_root: Path
    site_base: str
    heldout_prefixes: tuple[str, ...]
    prompts: list[PromptSpec] = field(default_factory=list)
    skills: dict[str, Skill] = field(default_factory=dict)  # keyed by leaf
    layout: str = QDRANT
    family_dirs: dict[str, Path] = field(default_factory=dict)  # family -> its folder, where not skills_root/family
    plugin_of: dict[str, str] = field(default_factory=dict)  # family (skill) -> its plugin (dotnet layout)
    evals: list[EvalInfo] = field(default_factory=list)
    heldout_tags: tuple[str, ...] = ()  # a prompt with one of these tags is held out (set by preflight)
    # the --config file the config was read from, when not the suite folder's own (qdrant's repository commits none):
    # a week records it in run.json, so the passes after generation read the same [judge], [gate] and [[api]]
    config_file: Path | None = None
    # family -> the validator's lines: families a week leaves out for a broken spec (skillbench.suite._families)
    invalid_families: dict[str, list[str]] = field(default_factory=dict)

    @property
    def scored_prompts(self) -> list[PromptSpec]:
        return [p for p in self.prompts if p.scored]

    @property
    def preference_eligible_prompts(self) -> list[PromptSpec]:
        return [p for p in self.prompts if p.preference_eligible]

    @property
    def families(self) -> list[str]:
        """Skill families of the tree: top-level folders with a SKILL.md, sorted."""
        return sorted({s.family for s in self.skills.values() if s.leaf == f"{s.family}/{SKILL_FILE}"})

    def family_dir(self, family: str) -> Path:
        """The folder that is installed as ``~/.claude/skills/<family>/``."""
        return self.family_dirs.get(family, self.skills_root / family)

    def plugin_families(self, plugin: str) -> list[str]:
        """Every family (skill) of a plugin, sorted: what a dotnet plugin arm installs."""
        return sorted(f for f, p in self.plugin_of.items() if p == plugin)

    def prompt(self, name: str) -> PromptSpec:
        for spec in self.prompts:
            if spec.name == name:
                return spec
        raise KeyError(f"no prompt named {name!r} in {self.suite_dir}")

    @cached_property
    def _by_text(self) -> dict[str, PromptSpec]:
        return {_norm_ws(p.test.prompt): p for p in self.prompts}

    def find_by_prompt_text(self, text: str) -> PromptSpec | None:
        """The prompt whose text equals ``text`` (whitespace-insensitive), else one contained in it."""
        key = _norm_ws(text)
        if key in self._by_text:
            return self._by_text[key]
        hits = [p for k, p in self._by_text.items() if k and k in key]
        return max(hits, key=lambda p: len(p.test.prompt)) if hits else None

    def prompts_df(self):
        """One row per prompt: name, family, leaf, heldout, dormancy, scored, preference_eligible, n_must…"""
        import pandas as pd

        rows = []
        for p in self.prompts:
            counts = {t: sum(1 for i in p.test.rubric if i.type == t) for t in ITEM_TYPES}
            rows.append(
                {
                    "prompt": p.name,
                    "product_area": p.test.product_area,
                    "skill_family": p.family,
                    "skill_leaf": p.leaf,
                    "heldout": p.heldout,
                    "dormancy": p.dormancy,
                    "scored": p.scored,
                    "preference_eligible": p.preference_eligible,
                    **{f"n_{t}": n for t, n in counts.items()},
                }
            )
        return pd.DataFrame(rows)


def _norm_ws(text: str) -> str:
    return " ".join(text.split())
