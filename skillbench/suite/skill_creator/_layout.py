"""Skills written with Anthropic's skill-creator as a suite: ``<skill>/evals/evals.json`` and trigger eval sets.

DIR is one skill folder (``DIR/SKILL.md``, ``DIR/evals/evals.json``) or a tree of them
(``DIR/<skill>/evals/evals.json``), or a repository that keeps ``evals/evals.json`` at its root and its skills
under ``DIR/skills/<folder>/SKILL.md`` (the eval set's ``skill_name`` says whose evals they are; the only skill
needs no name). Each skill is a family and its own leaf (``<folder>/SKILL.md``), installed from its folder under
the folder's name. The family is the folder's name, not SKILL.md's ``name``, because that is the name the CLI lists
an installed skill by (its ``init`` event's ``skills``, which the Skill tool is called with): a repository whose root
is the skill is usually named otherwise (folder ``tech-lead-skill``, name ``tech-lead``), which is noted, not
refused. Each eval of ``evals.json`` is a prompt named ``<folder>-<id>``:
its statements to grade (``expectations``, ``assertions`` or ``checks``; see
:mod:`skillbench.suite.skill_creator._evals`) are must items (``absence`` None: the detection rule of
:mod:`skillbench.suite._absence` decides, as for every imported spec), its ``files`` workspace entries at the
same path relative to the workspace as to the folder that holds ``evals/``, and its ``expected_output`` the
simulated endpoint's reference answer (never shown to the agent or the judge). An eval with no statement still runs
and votes in the pairwise preference; it has no must coverage (a note, not a defect).

A trigger eval set — :data:`TRIGGER_SET_NAMES` beside ``evals.json`` (else another ``evals/*trigger*.json``), or
``--trigger-set FILE`` for the one skill of DIR — adds one prompt per query: ``should_trigger: false`` is a
dormancy prompt (``<skill>-dormant-<hash>``), ``true`` a trigger-only prompt (``<skill>-trigger-<hash>``) that
runs in the with-skill arm only and feeds trigger recall. Neither is ever judged, so neither has a rubric. No config
file is needed; the site base is optional.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from skillbench.ledgers import CONFIG_FILE, SKILL_EVALS_DIR, SKILL_EVALS_FILE, SKILL_FILE, is_safe, slug
from skillbench.suite._config import ConfigError, SuiteConfig, load_config
from skillbench.suite._containment import skill_folder_problem
from skillbench.suite._defects import Defect, display_path
from skillbench.suite._description import says_when
from skillbench.suite._format import EvalInfo, FrontmatterError, PromptSpec, Suite, TestPrompt, read_skill
from skillbench.suite._layouts import SKILL_CREATOR, FileField, Layout, register_layout
from skillbench.suite._skip_missing import with_missing_dropped
from skillbench.suite._task_checks import task_defects
from skillbench.suite._validation import PreflightReport
from skillbench.suite.skill_creator._evals import (
    EVALS_KEY,
    FILE_PATH_KEY,
    STATEMENT_KEYS,
    STATEMENT_TEXT_KEYS,
    EvalFileError,
    Item,
    read_evals,
    read_json,
    read_trigger_set,
    skill_name_defects,
)
from skillbench.vocab import MIN_STIMULI

EVALS_DIR, EVALS_FILE = SKILL_EVALS_DIR, SKILL_EVALS_FILE
# The trigger eval set beside evals.json: the first of these names that exists, else the first other
# evals/*trigger*.json. skill-creator leaves the name to the author: its SKILL.md passes `--eval-set
# <path-to-trigger-eval.json>` and its review page exports eval_set.json; public folders also write
# trigger_eval.json and trigger_queries.json.
TRIGGER_SET_NAMES = ("trigger-eval.json", "trigger_eval.json", "trigger_queries.json", "eval_set.json")
TRIGGER_SET_GLOB = "*trigger*.json"
SKILLS_DIR = "skills"  # a repository's skills beside a root evals/: DIR/skills/<folder>/SKILL.md


def trigger_sets(folder: Path) -> list[Path]:
    """The trigger eval sets in ``folder/evals/``, the one that is read first (see :data:`TRIGGER_SET_NAMES`)."""
    evals = folder / EVALS_DIR
    named = [p for n in TRIGGER_SET_NAMES if (p := evals / n).is_file()]
    others = sorted(p for p in evals.glob(TRIGGER_SET_GLOB) if p.is_file() and p not in named)
    return named + others


def skill_dirs(folder: Path) -> list[Path]:
    """The skill folders of DIR: DIR itself when it has ``evals/evals.json``, else ``DIR/*/`` that have one."""
    if (folder / EVALS_DIR / EVALS_FILE).is_file():
        return [folder]
    return sorted(p.parent.parent for p in folder.glob(f"*/{EVALS_DIR}/{EVALS_FILE}") if p.is_file())


def is_skill_creator_tree(folder: str | Path) -> bool:
    """True when DIR is a skill folder with ``evals/evals.json``, or holds such folders."""
    return bool(skill_dirs(Path(folder)))


@dataclass(frozen=True)
class SkillEvals:
    """What one skill's files held (broken items included), for the summary."""

    skill: str
    evals: int
    should_trigger: int
    dormant: int
    heldout: int
    trigger_set: Path | None


@dataclass
class SkillCreatorReport(PreflightReport):
    """A preflight report whose summary counts evals and trigger queries, then its notes: what was read in a way
    worth knowing (a trigger set found, evals without statements, a family named otherwise than its folder) but is
    no defect — never an error or a warning, so ``--strict`` does not fail on them."""

    counts: tuple[SkillEvals, ...] = ()
    notes: tuple[str, ...] = ()

    def summary(self) -> str:
        if self.stopped:
            return super().summary()
        evals = sum(c.evals for c in self.counts)
        pos, neg = sum(c.should_trigger for c in self.counts), sum(c.dormant for c in self.counts)
        heldout = sum(c.heldout for c in self.counts)
        line = (f"Checked {evals} evals and {pos + neg} trigger queries ({pos} should-trigger, {neg} dormancy; "
                f"{heldout} held-out) of {len(self.counts)} skills: {len(self.errors)} errors, "
                f"{len(self.warnings)} warnings")
        return "\n".join([line, *(f"note: {n}" for n in self.notes)])


class _Checker:
    def __init__(self, suite: Suite, skip_missing: bool):
        self.suite = suite
        self.skip_missing = skip_missing
        self.defects: list[Defect] = []
        self.files: list[Path] = []
        self.counts: list[SkillEvals] = []
        self.notes: list[str] = []

    def add(self, severity: str, path: Path | str, fld: str, problem: str, fix: str) -> None:
        shown = path if isinstance(path, str) else display_path(path)
        self.defects.append(Defect(severity, shown, fld, problem, fix))  # type: ignore[arg-type]

    def load_skill(self, folder: Path) -> str | None:
        """Read ``folder/SKILL.md`` into the suite; its family (the folder's name), or None when it cannot be
        installed."""
        path = folder / SKILL_FILE
        try:
            found = read_skill(path, f"{folder.name}/{SKILL_FILE}")
        except FileNotFoundError:
            self.add("error", path, "file", "missing: evals.json has no skill beside it",
                     f"put evals/ inside the skill folder that holds SKILL.md, or the skills under {SKILLS_DIR}/")
            return None
        except FrontmatterError as exc:
            self.add("error", path, "frontmatter", str(exc), exc.fix)
            return None
        except (OSError, UnicodeDecodeError) as exc:
            self.add("error", path, "file", f"cannot be read ({exc})", "make it a UTF-8 text file")
            return None
        if found.lenient:
            self.add("warning", path, "frontmatter", *found.lenient)
        if problem := skill_folder_problem(folder):
            self.add("error", folder, "symlink", problem, "copy the file into the skill instead (a run installs the "
                     "skill's folder and never follows a link out of it)")
            return None
        family = folder.name
        # the name becomes a folder of the run directory and of ~/.claude/skills: a plain name, never a path
        if not is_safe(family) or family.startswith("."):
            self.add("error", folder, "folder", f"{family!r} cannot name a skill family",
                     "name the skill's folder with letters, digits and hyphens")
            return None
        if found.name != family:  # a repository whose root is the skill is named after the repository
            self.notes.append(f"{display_path(path)}: SKILL.md names the skill {found.name!r}; the CLI lists it by its "
                              f"folder, {family!r}, the family's name here")
        if (when := says_when(found.description)) is False:
            self.add("warning", path, "description", "no explicit trigger phrase",
                     "say when to use the skill, e.g. \"Use when …\" (or 当…时使用, …の時に使用)")
        elif when is None:
            self.notes.append(f"{display_path(path)}: cannot tell whether the description says when to use the "
                              "skill (a language the trigger-phrase rule does not read)")
        self.suite.skills[found.leaf] = found
        self.suite.family_dirs[family] = folder
        return family

    def read_file(self, path: Path):
        self.files.append(path)
        try:
            return read_json(path)
        except EvalFileError as exc:
            self.add("error", path, "json", exc.problem, exc.fix)
            return None

    def skill_of(self, owner: Path, data: object) -> Path | None:
        """The skill folder whose evals ``owner/evals/`` holds: ``owner`` when it has a SKILL.md, else the one of
        ``owner/skills/*/`` that ``skill_name`` names (by frontmatter name or folder), or the only one there."""
        if (owner / SKILL_FILE).is_file():
            return owner
        skills = sorted(p.parent for p in (owner / SKILLS_DIR).glob(f"*/{SKILL_FILE}") if p.is_file())
        if not skills:
            return owner  # load_skill names the missing SKILL.md
        wanted = data.get("skill_name") if isinstance(data, dict) else None
        if isinstance(wanted, str) and wanted.strip():
            for folder in skills:
                try:
                    name = read_skill(folder / SKILL_FILE, f"{folder.name}/{SKILL_FILE}").name
                except (FrontmatterError, OSError, UnicodeDecodeError):
                    name = ""
                if wanted in (name, folder.name):
                    return folder
        elif len(skills) == 1:
            return skills[0]
        names = ", ".join(p.name for p in skills)
        self.add("error", owner / EVALS_DIR / EVALS_FILE, "skill_name",
                 f"{wanted!r} names none of {SKILLS_DIR}/*: {names}" if isinstance(wanted, str) and wanted.strip()
                 else f"missing: {len(skills)} skills under {SKILLS_DIR}/ ({names}) and no name says whose evals "
                 "these are", "set \"skill_name\" to the skill's frontmatter name")
        return None

    def trigger_set(self, owner: Path, family: str | None) -> Path | None:
        """The trigger eval set beside ``evals.json`` (noted when found; the others not read are warned about)."""
        found = trigger_sets(owner)
        for other in found[1:]:
            self.add("warning", other, "file", f"a second trigger eval set beside {found[0].name} (not read)",
                     f"merge its queries into {found[0].name}")
        if found and family is not None:
            self.notes.append(f"{family}: trigger eval set {display_path(found[0])}")
        return found[0] if found else None

    def load(self, owner: Path, trigger_set: Path | None) -> None:
        """Load the skill whose ``evals/`` is in ``owner`` (``owner`` itself, or one of ``owner/skills/*``)."""
        evals_path = owner / EVALS_DIR / EVALS_FILE
        data = self.read_file(evals_path) if evals_path.is_file() else None
        folder = self.skill_of(owner, data)
        family = self.load_skill(folder) if folder is not None else None
        items: list[tuple[Path, Item]] = []
        n_evals = 0
        if data is not None:
            got = read_evals(data, owner, skip_missing=self.skip_missing)
            n_evals = got.total
            names = (family, self.suite.skills[f"{family}/{SKILL_FILE}"].name) if family is not None else ()
            defects = got.defects + skill_name_defects(data, names)
            for severity, fld, problem, fix in defects:
                self.add(severity, evals_path, fld, problem, fix)
            items += [(evals_path, item) for item in got.items]
            shown = display_path(evals_path)
            if got.list_key != EVALS_KEY:
                where = f"under {got.list_key!r}" if got.list_key else "as the top-level list"
                self.notes.append(f"{shown}: the evals are read {where} (skill-creator writes {{\"evals\": […]}})")
            if got.ungraded:
                self.notes.append(f"{shown}: {len(got.ungraded)} of {len(got.items)} evals have no expectations "
                                  "(skill-creator's template leaves them for later): they run and vote in the "
                                  "pairwise preference, with no must coverage")
        if trigger_set is None:
            trigger_set = self.trigger_set(owner, family)
        pos = neg = 0
        if trigger_set is not None:
            tdata = self.read_file(trigger_set)
            if tdata is not None:
                got_queries, tdefects = read_trigger_set(tdata)
                for severity, fld, problem, fix in tdefects:
                    self.add(severity, trigger_set, fld, problem,
                             fix if fld != "trigger set" else f"{fix} (skill-creator's run_eval.py --eval-set)")
                items += [(trigger_set, item) for item in got_queries]
                pos = sum(i.should_trigger is True for i in got_queries)
                neg = len(got_queries) - pos
        label = family or owner.name
        heldout = 0
        for path, item in items:
            name = slug(f"{label}-{item.key}")
            heldout += self._heldout(name)
            if family is not None and folder is not None:
                self.add_prompt(path, family, name, item)
        self.counts.append(SkillEvals(label, n_evals, pos, neg, heldout, trigger_set))
        self.suite.evals.append(EvalInfo(path=evals_path, format=SKILL_CREATOR, name=label, plugin="",
                                         skill=label, stimuli=n_evals + pos + neg, dormancy=neg,
                                         heldout=heldout))
        if family is not None:
            eligible = sum(p.preference_eligible and not p.trigger_only for p in self.suite.prompts
                           if p.family == family)
            if eligible < MIN_STIMULI:
                self.add("warning", evals_path, EVALS_KEY, f"{eligible} scored evals (the paired gate needs "
                         f"{MIN_STIMULI})", "add evals, or read this skill's lift as indicative")

    def _heldout(self, name: str) -> bool:
        return any(name.startswith(p) for p in self.suite.heldout_prefixes)

    def add_prompt(self, path: Path, family: str, name: str, item: Item) -> None:
        base = self.suite.site_base
        fields = {
            "name": name, "product_area": family, "skill_url": f"{base}/{family}/{SKILL_FILE}" if base else "",
            "prompt": item.prompt, "rubric": [{"type": "must", "text": t} for t in item.expectations],
            "expect_activation": item.should_trigger is not False, "trigger_only": item.should_trigger is True,
            # src is read beside evals.json (PromptSpec.workspace_source), the path as written from the folder
            # that holds evals/
            "workspace": [{"dest": rel, "src": (Path("..") / rel).as_posix()} for rel in item.files],
        }
        try:
            test = TestPrompt.model_validate(fields)
        except ValidationError as exc:  # the readers checked every field's type: a bug, reported not raised
            self.add("error", path, item.where, str(exc).splitlines()[0], "report this as a skillbench bug")
            return
        heldout = self._heldout(name)
        if test.dormancy and heldout:
            self.add("error", path, f"{item.where}.should_trigger", "a dormancy query is also held-out",
                     "drop the held-out prefix for it")
            return
        spec = PromptSpec(test, path, family, f"{family}/{SKILL_FILE}", heldout,
                          stimulus=item.key, reference_answer=item.expected_output,
                          absence_rule=SkillCreatorLayout.absence_rule, roots=(self.suite.suite_dir,))
        if self.skip_missing:
            spec = with_missing_dropped(spec, lambda piece: self.add(
                "warning", path, item.where, f"dropped (--skip-missing): {piece}", "add the missing file"))
        errors = 0
        for severity, fld, problem, fix in task_defects(spec):
            self.add(severity, path, f"{item.where}.{fld}", problem, fix)
            errors += severity == "error"
        if not errors:
            self.suite.prompts.append(spec)

    def check_names(self) -> None:
        names = Counter(p.name for p in self.suite.prompts)
        for spec in self.suite.prompts:
            if names[spec.name] > 1:
                self.add("error", spec.path, "id", f"prompt name {spec.name!r} is not unique",
                         "give the evals ids that stay distinct as names")


def preflight_skill_creator(
    suite_dir: str | Path,
    *,
    site_base: str | None = None,
    heldout_prefixes: list[str] | None = None,
    config: SuiteConfig | None = None,
    skip_missing: bool = False,
    trigger_set: str | Path | None = None,
) -> SkillCreatorReport:
    """Read and check a skill-creator folder or tree (see the module docstring); never raises for a defect.

    Args:
        suite_dir: a skill folder with ``evals/evals.json``, or a folder of such skill folders.
        site_base: a published site base (optional).
        heldout_prefixes: prompt-name prefixes never scored.
        config: an already loaded config (else ``DIR/skillbench.toml``, optional).
        skip_missing: an eval's ``files`` entry that does not exist is dropped (a warning), not an error.
        trigger_set: a trigger eval set for the one skill of DIR (instead of the file beside ``evals.json``).
    """
    suite_dir = Path(suite_dir)
    if config is None:
        try:
            config = load_config(suite_dir)
        except ConfigError as exc:
            bare = Suite(suite_dir=suite_dir.resolve(), config=SuiteConfig(), skills_root=suite_dir.resolve(),
                         site_base="", heldout_prefixes=(), layout=SKILL_CREATOR)
            defect = Defect("error", display_path(exc.path), exc.field, exc.problem, exc.fix)
            return SkillCreatorReport(bare, [defect], stopped=f"{CONFIG_FILE} must read first")
    extra = Path(trigger_set) if trigger_set is not None else None
    folders = skill_dirs(suite_dir)
    if not folders and extra is not None and (suite_dir / SKILL_FILE).is_file():
        folders = [suite_dir]  # a skill with only a trigger eval set: trigger health without evals
    if folders == [suite_dir]:  # one skill: its parent, or the skills/ of a repository whose evals/ is at the root
        root = suite_dir / SKILLS_DIR if not (suite_dir / SKILL_FILE).is_file() else suite_dir.parent
    else:
        root = suite_dir
    root = root.resolve()
    base = (site_base or config.suite.site_base or "").rstrip("/")
    prefixes = tuple(heldout_prefixes if heldout_prefixes is not None else config.suite.heldout_prefixes)
    suite = Suite(suite_dir=suite_dir.resolve(), config=config, skills_root=root, site_base=base,
                  heldout_prefixes=prefixes, layout=SKILL_CREATOR)
    checker = _Checker(suite, skip_missing)
    if not folders:
        checker.add("error", suite_dir, EVALS_DIR, f"no {EVALS_DIR}/{EVALS_FILE} in the folder or its skill folders",
                    "DIR must be a skill folder with evals/evals.json, or the folder that holds such skills")
    elif extra is not None and len(folders) > 1:
        checker.add("error", extra, "--trigger-set", f"DIR holds {len(folders)} skills: whose queries these are is "
                    "ambiguous", f"put it beside that skill's evals.json as {TRIGGER_SET_NAMES[0]}")
        extra = None
    for folder in folders:
        checker.load(folder, extra)
    checker.check_names()
    return SkillCreatorReport(suite, checker.defects, checker.files, counts=tuple(checker.counts),
                              notes=tuple(checker.notes))


@register_layout
class SkillCreatorLayout(Layout):
    """Skills written with skill-creator (see the module docstring)."""

    name = SKILL_CREATOR
    detected_by = f"the folder is a skill with `{EVALS_DIR}/{EVALS_FILE}`, or holds such skill folders, or has " \
                  f"`{EVALS_DIR}/{EVALS_FILE}` beside `{SKILLS_DIR}/*/{SKILL_FILE}`"
    loads = f"each eval of `{EVALS_FILE}` is one prompt `<skill>-<id>` (`<skill>`: the skill's folder); each " \
            "query of a trigger eval set a dormancy (`should_trigger: false`) or trigger-only (`true`) prompt"
    roots_doc = f"suite: `DIR`; skills: `DIR`'s parent for one skill folder, `DIR/{SKILLS_DIR}` beside a root " \
                f"`{EVALS_DIR}/`, else `DIR`; fixtures: an eval's `files`, relative to the folder that holds " \
                f"`{EVALS_DIR}/`"
    fields = (
        FileField(f"{EVALS_DIR}/{EVALS_FILE}", "evals[].id", "the prompt's name after the skill's"),
        FileField(f"{EVALS_DIR}/{EVALS_FILE}", "evals[].prompt", "the user's request"),
        FileField(f"{EVALS_DIR}/{EVALS_FILE}", f"evals[].{' / '.join(STATEMENT_KEYS)}",
                  f"must items: strings, or objects whose {' or '.join(STATEMENT_TEXT_KEYS)} is the statement "
                  "(none: the eval votes in the pairwise preference only)"),
        FileField(f"{EVALS_DIR}/{EVALS_FILE}", "evals[].files",
                  f"workspace files (strings or {{{FILE_PATH_KEY}, …}} objects), at the same path as in the skill"),
        FileField(f"{EVALS_DIR}/{EVALS_FILE}", "evals[].expected_output",
                  "the simulated endpoint's reference answer (never shown to the agent or the judge)"),
        FileField(f"{EVALS_DIR}/{' or '.join(TRIGGER_SET_NAMES)} (else {TRIGGER_SET_GLOB})",
                  "[].query, [].should_trigger",
                  "a trigger eval set: a list, `{\"queries\": […]}`, or `{\"should_trigger\": […], "
                  "\"should_not_trigger\": […]}` (or `--trigger-set FILE` for the one skill of DIR)"),
        FileField(SKILL_FILE, "name", "noted when it differs from the folder (the family is the folder's name: the "
                  "CLI lists an installed skill by it)"),
    )

    def detect(self, folder: Path) -> bool:
        return is_skill_creator_tree(folder)

    def preflight(self, suite_dir: Path, *, skills_root: str | Path | None = None, site_base: str | None = None,
                  heldout_prefixes: list[str] | None = None, config: SuiteConfig | None = None,
                  skip_missing: bool = False, trigger_set: str | Path | None = None) -> SkillCreatorReport:
        # the skills root is the skill folders' own parent: --skills-root does not apply
        return preflight_skill_creator(suite_dir, site_base=site_base, heldout_prefixes=heldout_prefixes,
                                       config=config, skip_missing=skip_missing, trigger_set=trigger_set)
