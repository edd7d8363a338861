"""Skills written with Anthropic's skill-creator as a suite: ``<skill>/evals/evals.json`` and trigger eval sets.

DIR is one skill folder (``DIR/SKILL.md``, ``DIR/evals/evals.json``) or a tree of them
(``DIR/<skill>/evals/evals.json``). Each skill is a family and its own leaf (``<skill>/SKILL.md``), installed
from its folder. Each eval of ``evals.json`` is a prompt named ``<skill>-<id>``: its ``expectations`` are must
items (``absence`` None: the detection rule of :mod:`skillbench.suite._absence` decides, as for every imported
spec), its ``files`` workspace entries at the same path relative to the workspace as to the skill root, and
its ``expected_output`` the simulated endpoint's reference answer (never shown to the agent or the judge).

A trigger eval set — :data:`TRIGGER_SET_NAMES` beside ``evals.json``, or ``--trigger-set FILE`` for the one
skill of DIR — adds one prompt per query: ``should_trigger: false`` is a dormancy prompt
(``<skill>-dormant-<hash>``), ``true`` a trigger-only prompt (``<skill>-trigger-<hash>``) that runs in the
with-skill arm only and feeds trigger recall. Neither is ever judged, so neither has a rubric, and the
"nothing to grade" rule of the evals does not apply to them. No config file is needed; the site base is optional.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from skillbench.ledgers import CONFIG_FILE, SKILL_EVALS_DIR, SKILL_EVALS_FILE, SKILL_FILE, slug
from skillbench.suite._config import ConfigError, SuiteConfig, load_config
from skillbench.suite._containment import skill_folder_problem
from skillbench.suite._defects import TRIGGER_PHRASE, Defect, display_path
from skillbench.suite._format import EvalInfo, FrontmatterError, PromptSpec, Suite, TestPrompt, read_skill
from skillbench.suite._layouts import SKILL_CREATOR, FileField, Layout, register_layout
from skillbench.suite._skip_missing import with_missing_dropped
from skillbench.suite._task_checks import task_defects
from skillbench.suite._validation import PreflightReport
from skillbench.suite.skill_creator._evals import EvalFileError, Item, read_evals, read_json, read_trigger_set
from skillbench.vocab import MIN_STIMULI

EVALS_DIR, EVALS_FILE = SKILL_EVALS_DIR, SKILL_EVALS_FILE
# The trigger eval set beside evals.json: the first of these names that exists (skill-creator leaves the name to
# the author; trigger_eval.json is the common one, eval_set.json what its review page exports).
TRIGGER_SET_NAMES = ("trigger_eval.json", "eval_set.json")


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
    """A preflight report whose summary counts evals and trigger queries."""

    counts: tuple[SkillEvals, ...] = ()

    def summary(self) -> str:
        if self.stopped:
            return super().summary()
        evals = sum(c.evals for c in self.counts)
        pos, neg = sum(c.should_trigger for c in self.counts), sum(c.dormant for c in self.counts)
        heldout = sum(c.heldout for c in self.counts)
        return (f"Checked {evals} evals and {pos + neg} trigger queries ({pos} should-trigger, {neg} dormancy; "
                f"{heldout} held-out) of {len(self.counts)} skills: {len(self.errors)} errors, "
                f"{len(self.warnings)} warnings")


class _Checker:
    def __init__(self, suite: Suite, skip_missing: bool):
        self.suite = suite
        self.skip_missing = skip_missing
        self.defects: list[Defect] = []
        self.files: list[Path] = []
        self.counts: list[SkillEvals] = []

    def add(self, severity: str, path: Path | str, fld: str, problem: str, fix: str) -> None:
        shown = path if isinstance(path, str) else display_path(path)
        self.defects.append(Defect(severity, shown, fld, problem, fix))  # type: ignore[arg-type]

    def load_skill(self, folder: Path) -> str | None:
        """Read ``folder/SKILL.md`` into the suite; its family name, or None when it cannot be installed."""
        path = folder / SKILL_FILE
        family = folder.name
        try:
            found = read_skill(path, f"{family}/{SKILL_FILE}")
        except FileNotFoundError:
            self.add("error", path, "file", "missing: evals.json has no skill beside it",
                     "put evals/ inside the skill folder that holds SKILL.md")
            return None
        except FrontmatterError as exc:
            self.add("error", path, "frontmatter", str(exc), exc.fix)
            return None
        except (OSError, UnicodeDecodeError) as exc:
            self.add("error", path, "file", f"cannot be read ({exc})", "make it a UTF-8 text file")
            return None
        if problem := skill_folder_problem(folder):
            self.add("error", folder, "symlink", problem, "copy the file into the skill instead (a run installs the "
                     "skill's folder and never follows a link out of it)")
            return None
        if found.name != family:  # the CLI lists a skill by its frontmatter name, installed under the folder's
            self.add("error", path, "frontmatter.name", f"{found.name!r} differs from its folder {family!r}",
                     f"set name: {family} (or rename the folder)")
            return None
        if not TRIGGER_PHRASE.search(found.description):
            self.add("warning", path, "description", "no explicit trigger phrase",
                     "say when to use the skill, e.g. \"Use when …\"")
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

    def load(self, folder: Path, trigger_set: Path | None) -> None:
        family = self.load_skill(folder)
        evals_path = folder / EVALS_DIR / EVALS_FILE
        items: list[tuple[Path, Item]] = []
        n_evals = 0
        if evals_path.is_file():
            data = self.read_file(evals_path)
            if data is not None:
                got, defects = read_evals(data, folder, skip_missing=self.skip_missing)
                n_evals = len(data["evals"]) if isinstance(data, dict) and isinstance(data.get("evals"), list) else 0
                for severity, fld, problem, fix in defects:
                    self.add(severity, evals_path, fld, problem, fix)
                items += [(evals_path, item) for item in got]
        if trigger_set is None:
            trigger_set = next((p for n in TRIGGER_SET_NAMES if (p := folder / EVALS_DIR / n).is_file()), None)
        pos = neg = 0
        if trigger_set is not None:
            data = self.read_file(trigger_set)
            if data is not None:
                got, defects = read_trigger_set(data)
                for severity, fld, problem, fix in defects:
                    self.add(severity, trigger_set, fld, problem, fix)
                items += [(trigger_set, item) for item in got]
                raw = [q for q in data if isinstance(q, dict)] if isinstance(data, list) else []
                pos = sum(q.get("should_trigger") is True for q in raw)
                neg = len(raw) - pos
        heldout = 0
        for path, item in items:
            name = slug(f"{folder.name}-{item.key}")
            heldout += self._heldout(name)
            if family is not None:
                self.add_prompt(path, folder, family, name, item)
        self.counts.append(SkillEvals(folder.name, n_evals, pos, neg, heldout, trigger_set))
        self.suite.evals.append(EvalInfo(path=evals_path, format=SKILL_CREATOR, name=folder.name, plugin="",
                                         skill=folder.name, stimuli=n_evals + pos + neg, dormancy=neg,
                                         heldout=heldout))
        if family is not None:
            eligible = sum(p.preference_eligible and not p.trigger_only for p in self.suite.prompts
                           if p.family == family)
            if eligible < MIN_STIMULI:
                self.add("warning", evals_path, "evals", f"{eligible} scored evals (the paired gate needs "
                         f"{MIN_STIMULI})", "add evals, or read this skill's lift as indicative")

    def _heldout(self, name: str) -> bool:
        return any(name.startswith(p) for p in self.suite.heldout_prefixes)

    def add_prompt(self, path: Path, folder: Path, family: str, name: str, item: Item) -> None:
        base = self.suite.site_base
        fields = {
            "name": name, "product_area": family, "skill_url": f"{base}/{family}/{SKILL_FILE}" if base else "",
            "prompt": item.prompt, "rubric": [{"type": "must", "text": t} for t in item.expectations],
            "expect_activation": item.should_trigger is not False, "trigger_only": item.should_trigger is True,
            # src is read beside evals.json (PromptSpec.workspace_source), the path as written from the skill root
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
    root = (suite_dir.parent if folders == [suite_dir] else suite_dir).resolve()
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
    return SkillCreatorReport(suite, checker.defects, checker.files, counts=tuple(checker.counts))


@register_layout
class SkillCreatorLayout(Layout):
    """Skills written with skill-creator (see the module docstring)."""

    name = SKILL_CREATOR
    detected_by = f"the folder is a skill with `{EVALS_DIR}/{EVALS_FILE}`, or holds such skill folders"
    loads = f"each eval of `{EVALS_FILE}` is one prompt `<skill>-<id>`; each query of a trigger eval set a " \
            "dormancy (`should_trigger: false`) or trigger-only (`true`) prompt"
    roots_doc = "suite: `DIR`; skills: `DIR`'s parent for one skill folder, else `DIR`; fixtures: an eval's " \
                "`files`, relative to its skill folder"
    fields = (
        FileField(f"{EVALS_DIR}/{EVALS_FILE}", "evals[].id", "the prompt's name after the skill's"),
        FileField(f"{EVALS_DIR}/{EVALS_FILE}", "evals[].prompt", "the user's request"),
        FileField(f"{EVALS_DIR}/{EVALS_FILE}", "evals[].expectations", "must items"),
        FileField(f"{EVALS_DIR}/{EVALS_FILE}", "evals[].files", "workspace files, at the same path as in the skill"),
        FileField(f"{EVALS_DIR}/{EVALS_FILE}", "evals[].expected_output",
                  "the simulated endpoint's reference answer (never shown to the agent or the judge)"),
        FileField(f"{EVALS_DIR}/{' or '.join(TRIGGER_SET_NAMES)}", "[].query, [].should_trigger",
                  "a trigger eval set (or `--trigger-set FILE` for the one skill of DIR)"),
        FileField(SKILL_FILE, "name", "equals the skill's folder name"),
    )

    def detect(self, folder: Path) -> bool:
        return is_skill_creator_tree(folder)

    def preflight(self, suite_dir: Path, *, skills_root: str | Path | None = None, site_base: str | None = None,
                  heldout_prefixes: list[str] | None = None, config: SuiteConfig | None = None,
                  skip_missing: bool = False, trigger_set: str | Path | None = None) -> SkillCreatorReport:
        # the skills root is the skill folders' own parent: --skills-root does not apply
        return preflight_skill_creator(suite_dir, site_base=site_base, heldout_prefixes=heldout_prefixes,
                                       config=config, skip_missing=skip_missing, trigger_set=trigger_set)
