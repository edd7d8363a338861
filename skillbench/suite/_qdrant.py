"""qdrant's suite format: ``SUITE_DIR/test-prompts/*.json`` and a skills tree of families (the bundled suite's too).

Each JSON file is one :class:`~skillbench.suite._format.TestPrompt` (qdrant's fields plus ours); its ``skill_url``
``<site base>/<family>/…/SKILL.md`` names the family installed and the leaf to reach, under the skills root
(``[suite].skills_root``, else ``SUITE_DIR/skills`` or ``SUITE_DIR/../skills``). A task's ``src`` files are read
beside the prompt or in ``SUITE_DIR/fixtures/``. The site base is required: without it no ``skill_url`` resolves.
"""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import ValidationError

from skillbench.ledgers import CONFIG_FILE, FIXTURES_DIR, PROMPTS_DIR, SOLUTIONS_DIR
from skillbench.suite._config import ConfigError, SuiteConfig, load_config
from skillbench.suite._defects import (
    MAX_ARG_STRLEN,
    MAX_PROMPT_BYTES,
    RUBRIC_RANGES,
    Defect,
    display_path,
    pydantic_defects,
)
from skillbench.suite._description import says_when
from skillbench.suite._format import (
    SKILL_FILE,
    FrontmatterError,
    PromptSpec,
    SkillUrlError,
    Suite,
    TestPrompt,
    parse_skill_url,
    read_skill,
)
from skillbench.suite._layouts import QDRANT, SKILL_CREATOR, FileField, Layout, layout_named, register_layout
from skillbench.suite._nesting import NestingError, load_json
from skillbench.suite._skip_missing import with_missing_dropped
from skillbench.suite._task_checks import task_defects
from skillbench.suite._validation import PreflightReport
from skillbench.vocab import MIN_STIMULI


class _Checker:
    def __init__(self, suite: Suite, skip_missing: bool = False):
        self.suite = suite
        self.skip_missing = skip_missing
        self.defects: list[Defect] = []
        self.prompt_files: list[Path] = []
        self.unresolved: list[str] = []  # skill_urls left unresolved for want of a site base

    def error(self, path: str, fld: str, problem: str, fix: str) -> None:
        self.defects.append(Defect("error", path, fld, problem, fix))

    def warn(self, path: str, fld: str, problem: str, fix: str) -> None:
        self.defects.append(Defect("warning", path, fld, problem, fix))

    # -- skills ---------------------------------------------------------------------------------------
    def load_skills(self) -> None:
        root = self.suite.skills_root
        if not root.is_dir():
            self.error(display_path(root), "skills_root", "skills root is not a folder",
                       "set [suite].skills_root in skillbench.toml or pass --skills-root")
            return
        self.check_links(root)
        for path in sorted(root.rglob(SKILL_FILE)):
            leaf = path.relative_to(root).as_posix()
            if "/" not in leaf:  # SKILL.md directly in the root belongs to no family
                continue
            try:
                self.suite.skills[leaf] = read_skill(path, leaf)
            except FrontmatterError as exc:
                self.error(display_path(path), "frontmatter", str(exc), exc.fix)
            except (OSError, UnicodeDecodeError) as exc:
                self.error(display_path(path), "file", f"cannot be read ({exc})", "make it a UTF-8 text file")
        for skill in self.suite.skills.values():
            if skill.lenient:
                self.warn(display_path(skill.path), "frontmatter", *skill.lenient)
            if skill.leaf == f"{skill.family}/{SKILL_FILE}" and skill.name != skill.family:
                # the pinned CLI lists an installed skill by its folder's name (the family), not by this name: a
                # slip to point out, never a reason to refuse a skill the agent really gets
                self.warn(display_path(skill.path), "frontmatter.name",
                          f"{skill.name!r} differs from its folder {skill.family!r} (Claude Code lists the skill by "
                          "its folder)", f"set name: {skill.family} (or rename the folder)")
            if says_when(skill.description) is False:
                self.warn(display_path(skill.path), "description", "no explicit trigger phrase",
                          "say when to use the skill, e.g. \"Use when …\"")

    def check_links(self, root: Path) -> None:
        """Refuse a symlink in the skills tree that leaves it or is broken.

        A skill folder is copied into each run's HOME; a link out of the tree would carry a host file into the
        sandbox (or, broken, fail every run of its family).
        """
        for folder, dirs, files in os.walk(root):  # never follows a link: each one is checked, not entered
            for name in sorted([*dirs, *files]):
                link = Path(folder) / name
                if not link.is_symlink():
                    continue
                raw = os.readlink(link)
                target = link.resolve()
                shown = raw if raw == str(target) else f"{raw} (→ {target})"
                if not link.exists():
                    self.error(display_path(link), "symlink", f"is broken: {shown} does not exist",
                               "remove the link or restore its target inside the skills root")
                elif not target.is_relative_to(root):
                    self.error(display_path(link), "symlink", f"to {shown} leaves the skills root {display_path(root)}",
                               "copy the file into the skill instead (a link out of the tree would copy a host "
                               "file into every run's HOME)")
                else:
                    # A run installs whole families: a link into another family would be refused by the sandbox
                    # at the first run of its family, so it is refused here, before any model call.
                    parts = link.relative_to(root).parts
                    family = root / parts[0]
                    if len(parts) == 1 or not target.is_relative_to(family):
                        self.error(display_path(link), "symlink", f"to {shown} leaves its skill family's folder "
                                   f"{display_path(family)}", "copy the file into the family instead (a run installs "
                                   "one family and never follows a link out of it)")

    # -- prompts --------------------------------------------------------------------------------------
    def load_prompts(self) -> None:
        pdir = self.suite.suite_dir / PROMPTS_DIR
        if not pdir.is_dir():
            self.error(display_path(pdir), PROMPTS_DIR, "folder is missing",
                       "SUITE_DIR must be the folder that contains test-prompts/")
            return
        files = sorted(pdir.glob("*.json"))
        self.prompt_files = files
        if not files:
            self.error(display_path(pdir), PROMPTS_DIR, "no *.json prompt files", "add at least one test prompt")
        for path in files:
            spec = self.load_prompt(path)
            if spec is not None:
                self.suite.prompts.append(spec)
        self.check_duplicate_names(files)

    def load_prompt(self, path: Path) -> PromptSpec | None:
        shown = display_path(path)
        try:
            raw = load_json(path.read_text(encoding="utf-8"))
        except NestingError as exc:
            self.error(shown, "json", str(exc), "flatten the file (a prompt nests a few levels, never a hundred)")
            return None
        except json.JSONDecodeError as exc:
            self.error(shown, "json", f"syntax error at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                       "fix the JSON (a validator or `python -m json.tool` shows the spot)")
            return None
        except (OSError, UnicodeDecodeError) as exc:
            self.error(shown, "file", f"cannot be read ({exc})", "make it a UTF-8 JSON file")
            return None
        if not isinstance(raw, dict):
            self.error(shown, "json", "top level is not an object", "the file must be one JSON object")
            return None
        try:
            test = TestPrompt.model_validate(raw)
        except ValidationError as exc:
            self.defects.extend(pydantic_defects(shown, exc))
            return None

        ok = True
        if test.name != path.stem:
            self.error(shown, "name", f"{test.name!r} differs from the file stem {path.stem!r}",
                       f"rename the file to {test.name}.json or set name to {path.stem!r}")
            ok = False
        if not test.prompt.strip():
            self.error(shown, "prompt", "is empty", "write the user's question")
            ok = False
        size = len(test.prompt.encode("utf-8", "surrogatepass"))
        if size > MAX_PROMPT_BYTES:
            self.error(shown, "prompt", f"{size} bytes (UTF-8) exceed the OS limit for one command-line argument, "
                       f"{MAX_PROMPT_BYTES} bytes (Linux MAX_ARG_STRLEN {MAX_ARG_STRLEN} with its terminating NUL)",
                       "shorten the prompt: the CLI receives it as one argument, and every run would fail with "
                       "'argument list too long'")
            ok = False
        ok &= self.check_rubric(shown, test)
        heldout = any(test.name.startswith(p) for p in self.suite.heldout_prefixes)
        if test.dormancy and heldout:
            self.error(shown, "expect_activation", "a dormancy prompt is also held-out",
                       "rename it without the held-out prefix, or drop expect_activation")
            ok = False
        family, leaf = self.resolve_skill(shown, test)
        spec = PromptSpec(test, path, family, leaf, heldout, absence_rule=QdrantLayout.absence_rule,
                          roots=(self.suite.suite_dir, self.suite.skills_root))
        if self.skip_missing:
            spec = with_missing_dropped(spec, lambda piece: self.warn(shown, "workspace", f"dropped (--skip-missing): "
                                                                      f"{piece}", "add the missing file to run it too"))
        for severity, fld, problem, fix in task_defects(spec):
            self.defects.append(Defect(severity, shown, fld, problem, fix))  # type: ignore[arg-type]
            ok &= severity != "error"
        return spec if ok and family else None

    def check_rubric(self, shown: str, test: TestPrompt) -> bool:
        ok = True
        seen: dict[str, int] = {}
        for i, item in enumerate(test.rubric):
            key = " ".join(item.text.split()).casefold()
            if not key:
                self.error(shown, f"rubric[{i}].text", "is empty", "write the checkable claim, or delete the item")
                ok = False
            elif key in seen:
                self.error(shown, f"rubric[{i}].text", f"duplicates rubric[{seen[key]}]",
                           "delete one or make them different claims")
                ok = False
            else:
                seen[key] = i
        counts = Counter(item.type for item in test.rubric)
        if counts["must"] == 0:
            self.error(shown, "rubric", "has no 'must' item", "add 3–5 must items: lift is measured on musts")
            ok = False
        for kind, (lo, hi) in RUBRIC_RANGES.items():
            if not lo <= counts[kind] <= hi and (kind != "must" or counts[kind]):  # zero musts: error above
                self.warn(shown, "rubric", f"{counts[kind]} {kind} items (guidance: {lo}–{hi})",
                          f"aim for {lo}–{hi} {kind} items")
        return ok

    def resolve_skill(self, shown: str, test: TestPrompt) -> tuple[str, str]:
        if not test.skill_url.strip():
            what = "a dormancy prompt has no skill" if test.dormancy else "is empty"
            self.error(shown, "skill_url", what, "name the skill it targets: <site base>/<family>/…/SKILL.md")
            return "", ""
        if not self.suite.site_base:
            self.unresolved.append(test.skill_url)  # said once, for the suite (missing_site_base), not per prompt
            return "", ""
        try:
            family, leaf = parse_skill_url(test.skill_url, self.suite.site_base)
        except SkillUrlError as exc:
            self.error(shown, "skill_url", str(exc),
                       f"use {self.suite.site_base.rstrip('/')}/<family>/…/SKILL.md (or fix --site-base)")
            return "", ""
        root = self.suite.skills_root
        if not (root / family / SKILL_FILE).is_file():
            self.error(shown, "skill_url", f"family SKILL.md {family}/{SKILL_FILE} is missing under "
                       f"{display_path(root)}", "add the skill or fix the URL")
            return "", ""
        if not (root / leaf).is_file():
            self.error(shown, "skill_url", f"leaf {leaf} is missing under {display_path(root)}",
                       "add the sub-skill or fix the URL")
            return "", ""
        return family, leaf

    def check_duplicate_names(self, files: list[Path]) -> None:
        """Two files whose names differ only by case collide on case-insensitive disks and in run ids."""
        stems: dict[str, list[Path]] = defaultdict(list)
        for path in files:
            stems[path.stem.casefold()].append(path)
        for paths in stems.values():
            if len(paths) > 1:
                others = ", ".join(p.name for p in paths[1:])
                self.error(display_path(paths[0]), "name", f"duplicate prompt name (also in {others})",
                           "give every prompt a unique name")

    def missing_site_base(self, suite_dir: Path) -> None:
        """No site base: one error for the suite, naming how to set it and the base the prompts' own skill_urls
        point to (a suite that commits no config, as qdrant's, is valid: only the flag is missing)."""
        guess = _site_base_of(self.unresolved, self.suite.skills_root)
        value = guess or "URL"
        used = " (the base the prompts' skill_urls use)" if guess else ""
        count = f"none of the {len(self.unresolved)} prompts' skill_url can name its skill" if self.unresolved \
            else "no skill_url can name its skill"
        self.error(display_path(suite_dir), "suite.site_base", f"no site base URL is configured, so {count}",
                   f"pass --site-base {value}{used}, or set site_base = \"{value}\" under [suite] in {CONFIG_FILE} "
                   "(beside the prompts, or a file given to --config)")

    # -- families -------------------------------------------------------------------------------------
    def check_families(self) -> None:
        scored = Counter(p.family for p in self.suite.prompts if p.scored)
        eligible = Counter(p.family for p in self.suite.prompts if p.preference_eligible)
        for family in self.suite.families:
            path = display_path(self.suite.family_dir(family) / SKILL_FILE)
            if not scored[family]:
                self.warn(path, "family", "no scored prompt targets this skill family",
                          "add a test prompt whose skill_url is under it, or remove the skill")
            elif eligible[family] < MIN_STIMULI:
                self.warn(path, "family",
                          f"{eligible[family]} preference-eligible prompts (the paired gate needs "
                          f"{MIN_STIMULI})",
                          "add scored, non-dormancy prompts for this family")


def _site_base_of(urls: list[str], skills_root: Path) -> str:
    """The site base most of ``urls`` share: the prefix before the first path segment that is a family folder of
    the skills tree ("" when no URL has one)."""
    bases: Counter[str] = Counter()
    for url in urls:
        got = urlsplit(url)
        if not got.scheme or not got.netloc:
            continue
        parts = got.path.split("/")
        for i, part in enumerate(parts):
            if part and part not in (".", "..") and (skills_root / part / SKILL_FILE).is_file():
                bases[f"{got.scheme}://{got.netloc}{'/'.join(parts[:i])}"] += 1
                break
    return bases.most_common(1)[0][0] if bases else ""


def _resolve_skills_root(suite_dir: Path, configured: str | None) -> Path:
    if configured:
        return (suite_dir / configured).resolve()
    for candidate in (suite_dir / "skills", suite_dir.parent / "skills"):
        if candidate.is_dir():
            return candidate.resolve()
    return (suite_dir / "skills").resolve()


@register_layout
class QdrantLayout(Layout):
    """qdrant's format (see the module docstring)."""

    name = QDRANT
    detected_by = f"the folder holds `{PROMPTS_DIR}/` (also the fallback: a folder no layout recognises is read " \
                  "as this one, and preflight says what is missing)"
    loads = f"each `{PROMPTS_DIR}/<name>.json` is one prompt; its `skill_url` names the family and leaf"
    roots_doc = f"suite: `SUITE_DIR`; skills: `[suite].skills_root`, else `SUITE_DIR/skills/` or " \
                f"`SUITE_DIR/../skills/`; fixtures: `SUITE_DIR/{FIXTURES_DIR}/`, `SUITE_DIR/{SOLUTIONS_DIR}/`"
    fields = (
        FileField(f"{PROMPTS_DIR}/<name>.json", "name", "the prompt's name; equals the file's stem"),
        FileField(f"{PROMPTS_DIR}/<name>.json", "product_area", "qdrant's grouping label, kept as is"),
        FileField(f"{PROMPTS_DIR}/<name>.json", "skill_url",
                  "`<site base>/<family>/…/SKILL.md`: the family installed and the leaf to reach"),
        FileField(f"{PROMPTS_DIR}/<name>.json", "prompt", "the user's question, one CLI argument"),
        FileField(f"{PROMPTS_DIR}/<name>.json", "rubric", "`{type: must|bonus|avoid, text, absence?}` items"),
        FileField(f"{PROMPTS_DIR}/<name>.json", "expect_activation", "false marks a dormancy prompt"),
        FileField(f"{PROMPTS_DIR}/<name>.json", "workspace, setup, checks, timeout, allowed_tools",
                  "an agentic task (skillbench.suite._task)"),
        FileField("skillbench.toml", "[suite] skills_root, site_base, heldout_prefixes",
                  "where the skills are, the `skill_url` base, the prompts never scored"),
    )
    # qdrant's rubrics are written for positive grading and its ledgers must reproduce unchanged: an item opts in
    # with "absence": true (skillbench.suite._absence).
    absence_rule = False

    def detect(self, folder: Path) -> bool:
        return (folder / PROMPTS_DIR).is_dir()

    def preflight(self, suite_dir: Path, *, skills_root: str | Path | None = None, site_base: str | None = None,
                  heldout_prefixes: list[str] | None = None, config: SuiteConfig | None = None,
                  skip_missing: bool = False, trigger_set: str | Path | None = None) -> PreflightReport:
        if trigger_set is not None:  # a trigger eval set is skill-creator's: the folder is read as a skill of it
            return layout_named(SKILL_CREATOR).preflight(
                suite_dir, site_base=site_base, heldout_prefixes=heldout_prefixes, config=config,
                skip_missing=skip_missing, trigger_set=trigger_set)
        return _preflight(suite_dir, skills_root=skills_root, site_base=site_base,
                          heldout_prefixes=heldout_prefixes, config=config, skip_missing=skip_missing)


def _preflight(suite_dir: Path, *, skills_root: str | Path | None, site_base: str | None,
               heldout_prefixes: list[str] | None, config: SuiteConfig | None, skip_missing: bool) -> PreflightReport:
    suite_dir = Path(suite_dir)
    if config is None:
        try:
            config = load_config(suite_dir)
        except ConfigError as exc:
            # Alone: checked against defaults it never asked for (no site_base, …) every prompt would fail too.
            bare = Suite(suite_dir=suite_dir.resolve(), config=SuiteConfig(),
                         skills_root=_resolve_skills_root(suite_dir, None), site_base=(site_base or "").rstrip("/"),
                         heldout_prefixes=())
            defect = Defect("error", display_path(exc.path), exc.field, exc.problem, exc.fix)
            return PreflightReport(bare, [defect], stopped=f"{CONFIG_FILE} must read first")
    root = Path(skills_root).resolve() if skills_root else _resolve_skills_root(suite_dir, config.suite.skills_root)
    base = site_base or config.suite.site_base or ""
    prefixes = tuple(heldout_prefixes if heldout_prefixes is not None else config.suite.heldout_prefixes)
    suite = Suite(suite_dir=suite_dir.resolve(), config=config, skills_root=root, site_base=base.rstrip("/"),
                  heldout_prefixes=prefixes)
    checker = _Checker(suite, skip_missing)
    checker.load_skills()
    checker.load_prompts()
    if not base:
        checker.missing_site_base(suite_dir)
    if len(suite.prompts) == len(checker.prompt_files):  # with broken prompts, family counts would mislead
        checker.check_families()
    return PreflightReport(suite, checker.defects, checker.prompt_files)
