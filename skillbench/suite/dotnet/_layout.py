"""dotnet/skills' tree as a suite: ``tests/<plugin>/<skill>/eval.yaml`` beside ``plugins/<plugin>/skills/<skill>/``.

:func:`preflight_dotnet` reads every eval spec of ``DIR/tests`` (per file, ``scenarios:`` is the skill-validator
format, ``stimuli:`` Vally's; an ``eval.vally.yaml`` shadows the ``eval.yaml`` beside it, which is reported) into
the same :class:`~skillbench.suite._format.Suite` a qdrant suite loads into: each skill is a family and its own
leaf (``<skill>/SKILL.md``), installed from ``family_dirs[skill]``; ``plugin_of`` records its plugin, whose every
skill a plugin arm installs. A prompt's name is a folder-safe slug of the eval's name and the stimulus's; the
stimulus's own name stays on :attr:`PromptSpec.stimulus`. No config file is needed, and the site base is
optional (reaches of a published site are tracked only when one is configured).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from skillbench.ledgers import CONFIG_FILE, SKILL_FILE, slug
from skillbench.suite._config import ConfigError, SuiteConfig, load_config
from skillbench.suite._containment import skill_folder_problem
from skillbench.suite._defects import (
    MAX_PROMPT_BYTES,
    Defect,
    display_path,
    field_name,
)
from skillbench.suite._description import says_when
from skillbench.suite._format import (
    EvalInfo,
    FrontmatterError,
    PromptSpec,
    Suite,
    TestPrompt,
    read_skill,
    yaml_error,
)
from skillbench.suite._layouts import DOTNET, FileField, Layout, register_layout
from skillbench.suite._nesting import NestingError
from skillbench.suite._skip_missing import with_missing_dropped
from skillbench.suite._task_checks import MISSING_FIXTURE, task_defects
from skillbench.suite._validation import PreflightReport
from skillbench.suite.dotnet._authoring import duplicate_name_defects, underpowered_defect
from skillbench.suite.dotnet._skill_validator import load_scenarios
from skillbench.suite.dotnet._stimulus import SPEC_NAMES, Draft, EvalContext, TaskDefect
from skillbench.suite.dotnet._vally import load_stimuli
from skillbench.suite.dotnet._yaml_strict import DuplicateKeyError, load_strict
from skillbench.vocab import MIN_STIMULI

PLUGINS_DIR, TESTS_DIR = "plugins", "tests"  # DIR/plugins/<plugin>/skills/<skill>/, DIR/tests/<plugin>/<skill>/
SKILL_VALIDATOR, VALLY = "skill-validator", "vally"


@dataclass
class DotnetReport(PreflightReport):
    """A preflight report whose summary counts stimuli, evals, skills and plugins."""

    def summary(self) -> str:
        if self.stopped:
            return super().summary()
        evals = self.suite.evals
        total, heldout = sum(e.stimuli for e in evals), sum(e.heldout for e in evals)
        plugins = {e.plugin for e in evals}
        return (
            f"Checked {total} stimuli ({total - heldout} scored, {heldout} held-out, "
            f"{sum(e.dormancy for e in evals)} dormancy) in {len(evals)} evals of {len({e.skill for e in evals})} "
            f"skills in {len(plugins)} plugins: {len(self.errors)} errors, {len(self.warnings)} warnings"
        )


def eval_specs(suite_dir: Path) -> list[tuple[Path, Path | None]]:
    """``(spec to load, the eval.yaml it shadows or None)`` for every ``tests/<plugin>/<skill>/`` folder."""
    out = []
    for folder in sorted(p for p in (suite_dir / TESTS_DIR).glob("*/*") if p.is_dir()):
        vally, old = folder / SPEC_NAMES[0], folder / SPEC_NAMES[1]
        if vally.is_file():
            out.append((vally, old if old.is_file() else None))
        elif old.is_file():
            out.append((old, None))
    return out


class _DotnetChecker:
    def __init__(self, suite: Suite, skip_missing: bool = False):
        self.suite = suite
        self.skip_missing = skip_missing
        self.defects: list[Defect] = []
        self.files: list[Path] = []

    def add(self, severity: str, path: str, fld: str, problem: str, fix: str) -> None:
        self.defects.append(Defect(severity, path, fld, problem, fix))  # type: ignore[arg-type]

    # -- skills ---------------------------------------------------------------------------------------
    def load_skills(self, fallback: Path | None) -> None:
        """Skills of the skills root, then of the tree's own ``plugins/`` (``fallback``) for any it lacks."""
        root = self.suite.skills_root
        if not root.is_dir():
            self.add("error", display_path(root), "skills_root", "skills root is not a folder",
                     "pass --skills-root DIR/plugins (a tree's plugins/ folder)")
            return
        paths = sorted(root.glob(f"*/skills/*/{SKILL_FILE}"))
        if fallback is not None and fallback.is_dir() and fallback != root:
            have = {p.parent.name for p in paths}
            paths += [p for p in sorted(fallback.glob(f"*/skills/*/{SKILL_FILE}")) if p.parent.name not in have]
        for path in paths:
            plugin, skill = path.parent.parent.parent.name, path.parent.name
            if skill in self.suite.plugin_of:
                self.add("error", display_path(path), "skill", f"skill {skill!r} is also in plugin "
                         f"{self.suite.plugin_of[skill]!r}", "give each skill one home (its name is its family)")
                continue
            try:
                found = read_skill(path, f"{skill}/{SKILL_FILE}")
            except FrontmatterError as exc:
                self.add("error", display_path(path), "frontmatter", str(exc), exc.fix)
                continue
            except (OSError, UnicodeDecodeError) as exc:
                self.add("error", display_path(path), "file", f"cannot be read ({exc})", "make it a UTF-8 text file")
                continue
            if found.lenient:
                self.add("warning", display_path(path), "frontmatter", *found.lenient)
            if problem := skill_folder_problem(path.parent):
                self.add("error", display_path(path.parent), "symlink", problem, "copy the file into the skill "
                         "instead (a run installs the skill's folder and never follows a link out of it)")
            if found.name != skill:  # the CLI lists the skill by its folder (the family): a slip, not a refusal
                self.add("warning", display_path(path), "frontmatter.name", f"{found.name!r} differs from its folder "
                         f"{skill!r} (Claude Code lists the skill by its folder)",
                         f"set name: {skill} (or rename the folder)")
            if says_when(found.description) is False:
                self.add("warning", display_path(path), "description", "no explicit trigger phrase",
                         "say when to use the skill, e.g. \"Use when …\"")
            self.suite.skills[found.leaf] = found
            self.suite.family_dirs[skill] = path.parent
            self.suite.plugin_of[skill] = plugin

    # -- evals ----------------------------------------------------------------------------------------
    def read(self, path: Path) -> dict | None:
        shown = display_path(path)
        try:
            data = load_strict(path)
        except DuplicateKeyError as exc:
            for dup in exc.duplicates:
                self.add("error", f"{shown}:{dup.line}", dup.field, f"duplicate key {dup.key!r} (first at line "
                         f"{dup.first_line}); YAML would keep the last silently", "delete the stray block (compare "
                         "it with the stimulus it overwrites first)")
            return None
        except yaml.YAMLError as exc:
            problem, fix = yaml_error(exc, path.read_text(encoding="utf-8", errors="replace"))
            self.add("error", shown, "yaml", f"unreadable spec: {problem}", fix)
            return None
        except NestingError as exc:
            self.add("error", shown, "yaml", f"unreadable spec: {exc}", "flatten the spec (a stimulus nests a few "
                     "levels, never a hundred)")
            return None
        except (OSError, UnicodeDecodeError) as exc:
            self.add("error", shown, "file", f"unreadable spec ({exc})", "make it a UTF-8 YAML file")
            return None
        if not isinstance(data, dict):
            self.add("error", shown, "yaml", "unreadable spec: the top level is not a mapping",
                     "give it scenarios: (skill-validator) or stimuli: (Vally)")
            return None
        return data

    def load_eval(self, path: Path, shadowed: Path | None) -> None:
        shown = display_path(path)
        self.files.append(path)
        if shadowed is not None:
            self.add("warning", display_path(shadowed), "file", f"shadowed by {path.name} beside it: not loaded",
                     f"delete it once {path.name} is the spec, or ignore this")
        plugin, skill = path.parent.parent.name, path.parent.name
        data = self.read(path)
        if data is None:
            return
        ctx = EvalContext(path, self.suite.suite_dir, plugin, skill, skip_missing=self.skip_missing)
        if "stimuli" in data and "scenarios" in data:
            self.add("error", shown, "stimuli", "both stimuli: (Vally) and scenarios: (skill-validator)",
                     "keep one format per file")
            return
        meta: dict = {}
        if "stimuli" in data:
            fmt = VALLY
            drafts, defects, meta = load_stimuli(data, ctx)
        elif "scenarios" in data:
            fmt = SKILL_VALIDATOR
            drafts, defects = load_scenarios(data, ctx)
        else:
            self.add("error", shown, "stimuli", "unreadable spec: neither stimuli: (Vally) nor scenarios: "
                     "(skill-validator)", "list the eval's stimuli")
            return
        defects += duplicate_name_defects(drafts)
        name = meta.get("name") if isinstance(meta.get("name"), str) and meta.get("name") else skill
        if name != skill:
            defects.append(("warning", "name", f"{name!r} differs from its folder {skill!r}",
                            "name the eval after its skill"))
        if skill not in self.suite.family_dirs:
            defects.append(("error", "skill", f"no {PLUGINS_DIR}/{plugin}/skills/{skill}/{SKILL_FILE} under the "
                            f"skills root {display_path(self.suite.skills_root)}",
                            "add the skill, or pass --skills-root a tree's plugins/ folder that holds it"))
        elif self.suite.plugin_of[skill] != plugin:
            defects.append(("error", "skill", f"the skill {skill!r} is in plugin {self.suite.plugin_of[skill]!r}, "
                            f"the eval in tests/{plugin}/", "move the eval under its plugin's folder"))
        heldout = 0
        for draft in drafts:
            is_heldout = self.load_stimulus(draft, ctx, name, skill in self.suite.family_dirs and not any(
                d[0] == "error" and d[1] == "skill" for d in defects))
            heldout += is_heldout
        for severity, fld, problem, fix in defects:
            self.add(severity, shown, fld, problem, fix)
        scored = [d for d in drafts if not self._heldout(self._prompt_name(name, d))]
        eligible = sum(d.expect_activation is not False for d in scored)
        if drafts and (under := underpowered_defect(eligible, len(drafts), MIN_STIMULI)):
            self.add(under[0], shown, under[1], under[2], under[3])
        self.suite.evals.append(EvalInfo(
            path=path, format=fmt, name=name, plugin=plugin, skill=skill, stimuli=len(drafts),
            dormancy=sum(d.expect_activation is False for d in drafts), heldout=heldout,
            description=meta.get("description") or "", type=meta.get("type") or "", tags=meta.get("tags") or (),
            runs=meta.get("runs"), shadowed=shadowed))

    def _prompt_name(self, eval_name: str, draft: Draft) -> str:
        return slug(f"{eval_name}/{draft.name or draft.index}")

    def _heldout(self, name: str) -> bool:
        return any(name.startswith(p) for p in self.suite.heldout_prefixes)

    def load_stimulus(self, draft: Draft, ctx: EvalContext, eval_name: str, skill_ok: bool) -> bool:
        """Validate one draft; add its prompt to the suite when it has no error. Returns whether it is held out."""
        shown = display_path(ctx.path)
        name = self._prompt_name(eval_name, draft)
        heldout = self._heldout(name)
        base = self.suite.site_base
        url = f"{base}/{ctx.skill}/{SKILL_FILE}" if base else ""
        errors = [d for d in draft.defects if d[0] == "error"]
        for severity, fld, problem, fix in draft.defects:
            self.add(severity, shown, fld, problem, fix)
        try:
            test = TestPrompt.model_validate(draft.test_fields(name, ctx.plugin, url))
        except ValidationError as exc:
            for err in exc.errors():
                fld = draft.spec_field(field_name(tuple(err["loc"])))
                self.add("error", shown, fld, err["msg"], "see the README's dotnet mapping table")
            return heldout
        found = self.check_content(shown, draft, test, heldout)
        spec = PromptSpec(test, ctx.path, ctx.skill, f"{ctx.skill}/{SKILL_FILE}", heldout, stimulus=draft.name,
                          tags=draft.tags, reference_answer=draft.reference_answer,
                          absence_rule=DotnetLayout.absence_rule, roots=(ctx.root, self.suite.skills_root))
        if self.skip_missing:
            spec = with_missing_dropped(spec, lambda piece: self.add(
                "warning", shown, draft.where(), f"dropped (--skip-missing): {piece}",
                "add the missing file to run this piece too"))
        for severity, fld, problem, fix in task_defects(spec):
            if fld.startswith("workspace[") and fld.endswith("].src") and problem.startswith(MISSING_FIXTURE):
                continue  # the loaders named each missing fixture by the spec's own field already
            self.add(severity, shown, draft.spec_field(fld), problem, fix)
            found += severity == "error"
        if not errors and not found and skill_ok:
            self.suite.prompts.append(spec)
        return heldout

    def check_content(self, shown: str, draft: Draft, test: TestPrompt, heldout: bool) -> int:
        """Errors of the prompt and rubric that validation of the fields alone does not see; returns their count."""
        out: list[TaskDefect] = []
        if not test.prompt.strip():
            out.append(("error", draft.where("prompt"), "is empty", "write the user's request"))
        elif len(test.prompt.encode("utf-8", "surrogatepass")) > MAX_PROMPT_BYTES:
            out.append(("error", draft.where("prompt"), f"longer than {MAX_PROMPT_BYTES} bytes (one command-line "
                        "argument)", "shorten the prompt"))
        if not test.rubric:
            out.append(("error", draft.where("rubric"), "is empty: the judge has nothing to grade",
                        "add the rubric's criteria as strings"))
        seen: dict[str, int] = {}
        for i, item in enumerate(test.rubric):
            key = " ".join(item.text.split()).casefold()
            if not key:
                out.append(("error", draft.where(f"rubric[{i}]"), "is empty", "write the criterion, or delete it"))
            elif key in seen:
                out.append(("error", draft.where(f"rubric[{i}]"), f"duplicates rubric[{seen[key]}]",
                            "delete one or make them different criteria"))
            else:
                seen[key] = i
        if test.dormancy and heldout:
            out.append(("error", draft.where("expect_activation"), "a dormancy stimulus is also held-out",
                        "drop the held-out prefix for it"))
        for severity, fld, problem, fix in out:
            self.add(severity, shown, fld, problem, fix)
        return len(out)

    def check_names(self) -> None:
        names = Counter(p.name for p in self.suite.prompts)
        for spec in self.suite.prompts:
            if names[spec.name] > 1:
                self.add("error", display_path(spec.path), "name", f"prompt name {spec.name!r} is not unique",
                         "give the stimuli distinct names")


def preflight_dotnet(
    suite_dir: str | Path,
    *,
    skills_root: str | Path | None = None,
    site_base: str | None = None,
    heldout_prefixes: list[str] | None = None,
    config: SuiteConfig | None = None,
    skip_missing: bool = False,
) -> DotnetReport:
    """Read and check a dotnet tree (see the module docstring); never raises for a defect, writes nothing.

    Args:
        suite_dir: the folder holding ``tests/`` and ``plugins/``.
        skills_root: another tree's ``plugins/`` folder (default ``[suite].skills_root``, else ``DIR/plugins``);
            a skill it lacks is still read from ``DIR/plugins`` (a later tree whose older skills live elsewhere).
        site_base: a published site base (optional for this layout).
        heldout_prefixes: prompt-name prefixes never scored.
        config: an already loaded config (else ``DIR/skillbench.toml``, optional).
        skip_missing: run a stimulus without the fixtures the tree lacks and what uses them
            (:mod:`skillbench.suite._skip_missing`), each dropped piece a warning, instead of refusing it.
    """
    suite_dir = Path(suite_dir)
    if config is None:
        try:
            config = load_config(suite_dir)
        except ConfigError as exc:
            bare = Suite(suite_dir=suite_dir.resolve(), config=SuiteConfig(), skills_root=suite_dir / PLUGINS_DIR,
                         site_base="", heldout_prefixes=(), layout=DOTNET)
            defect = Defect("error", display_path(exc.path), exc.field, exc.problem, exc.fix)
            return DotnetReport(bare, [defect], stopped=f"{CONFIG_FILE} must read first")
    config = config.model_copy(deep=True)
    if skills_root:
        root = Path(skills_root).resolve()
    elif config.suite.skills_root:
        root = (suite_dir / config.suite.skills_root).resolve()
    else:
        root = (suite_dir / PLUGINS_DIR).resolve()
    base = (site_base or config.suite.site_base or "").rstrip("/")
    prefixes = tuple(heldout_prefixes if heldout_prefixes is not None else config.suite.heldout_prefixes)
    suite = Suite(suite_dir=suite_dir.resolve(), config=config, skills_root=root, site_base=base,
                  heldout_prefixes=prefixes, layout=DOTNET)
    checker = _DotnetChecker(suite, skip_missing)
    checker.load_skills((suite_dir / PLUGINS_DIR).resolve() if skills_root or config.suite.skills_root else None)
    specs = eval_specs(suite.suite_dir)
    if not specs:
        checker.add("error", display_path(suite_dir / TESTS_DIR), TESTS_DIR, "no tests/<plugin>/<skill>/eval.yaml",
                    "DIR must be the folder that holds tests/ and plugins/")
    for path, shadowed in specs:
        checker.load_eval(path, shadowed)
    checker.check_names()
    runs = {e.runs for e in suite.evals if e.runs}
    if runs and "reps" not in config.run.model_fields_set:  # skillbench.toml's [run].reps, when given, wins
        config.run.reps = max(runs)
        if len(runs) > 1:
            checker.add("warning", display_path(suite_dir), "defaults.runs", f"the evals ask for different runs "
                        f"({', '.join(map(str, sorted(runs)))}); the suite runs {max(runs)} reps",
                        "align defaults.runs across the evals")
    return DotnetReport(suite, checker.defects, checker.files)


@register_layout
class DotnetLayout(Layout):
    """dotnet/skills' tree (see the module docstring)."""

    name = DOTNET
    detected_by = f"the folder holds `{TESTS_DIR}/*/*/eval.yaml` or `eval.vally.yaml`"
    loads = "each stimulus (skill-validator `scenarios:`, Vally `stimuli:`) is one prompt of its skill's family"
    roots_doc = f"suite: `DIR`; skills: `--skills-root` or `[suite].skills_root` (another tree's `{PLUGINS_DIR}/`), " \
                f"else `DIR/{PLUGINS_DIR}/` (which also fills in skills the other root lacks); fixtures: beside " \
                "each eval spec"
    fields = (
        FileField(f"{TESTS_DIR}/<plugin>/<skill>/eval.yaml", "scenarios[]",
                  "skill-validator's stimuli: `name`, `prompt`, `rubric`, `assertions`, `setup`, `timeout`, "
                  "`expect_activation` (skillbench.suite.dotnet._skill_validator)"),
        FileField(f"{TESTS_DIR}/<plugin>/<skill>/eval.vally.yaml", "stimuli[]",
                  "Vally's stimuli and `graders` (skillbench.suite.dotnet._vally); shadows the `eval.yaml` beside it"),
        FileField(f"{TESTS_DIR}/<plugin>/<skill>/eval.vally.yaml", "defaults.runs",
                  "the suite's reps, unless `[run].reps` is set"),
        FileField(f"{PLUGINS_DIR}/<plugin>/skills/<skill>/SKILL.md", "name, description",
                  "the skill (its folder name is its family); a plugin arm installs every skill of its plugin"),
    )

    def detect(self, folder: Path) -> bool:
        tests = folder / TESTS_DIR
        return tests.is_dir() and any(p.name in SPEC_NAMES for p in tests.glob("*/*/eval*.yaml"))

    def preflight(self, suite_dir: Path, *, skills_root: str | Path | None = None, site_base: str | None = None,
                  heldout_prefixes: list[str] | None = None, config: SuiteConfig | None = None,
                  skip_missing: bool = False, trigger_set: str | Path | None = None) -> DotnetReport:
        # a trigger eval set belongs to a skill-creator skill: a dotnet tree ignores it
        return preflight_dotnet(suite_dir, skills_root=skills_root, site_base=site_base,
                                heldout_prefixes=heldout_prefixes, config=config, skip_missing=skip_missing)
