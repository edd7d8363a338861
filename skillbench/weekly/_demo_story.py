"""The demo's script: which moves happen in which simulated week, and how each week's suite and endpoint enact them.

Two kinds of move, both recorded before the first week runs (``demo-story.json``):

* **skill edit** (week ``edit_week``): the family's SKILL.md before that week is a draft — its description carries
  ``(draft)``, and the simulated endpoint's profile (``skill_versions``, :mod:`skillbench.sim._versions`) gives
  that version only ``before_gain`` of the skill's effect; from that week on the demo's copy of the suite holds
  the real SKILL.md, worth its full effect. The family's lift rises, and so does the model's headline lift.
* **judge drift** (week ``judge_week``): from that week on the judge's profile is ``judge_leniency`` more lenient
  (:class:`skillbench.sim._profiles.JudgeProfile` ``leniency``: an unfavourable reading given the favourable
  verdict), as a judge model upgrade might be; the drift sentinel (:mod:`skillbench.calibration._sentinel`), which
  re-grades the suite's frozen gold set every week, should flag that week.
* **model drift** (week ``drift_week``): from that week on one model's baseline (its ``must`` coverage without the
  skill) is ``drift`` higher, as a model build that learned the topic would be; its lift falls. The default model
  is the one the skill helps most (the largest ``must`` gap in the profiles), so the drift moves a lift that the
  week-over-week rule can see at one rep.

The moves' weeks scale with the demo's length unless given (:func:`scaled_schedule`); a move scheduled after the
last week is left out of the story (and said so). Everything a week needs is written
by :func:`enact_week` (the suite's SKILL.md and the week's profile file), so rerunning a week reproduces it.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from skillbench.ledgers import SKILL_FILE, atomic_write_text
from skillbench.suite import Suite

if TYPE_CHECKING:
    from skillbench.weekly._demo import DemoOptions

SKILL_EDIT, MODEL_DRIFT, JUDGE_DRIFT = "skill edit", "model drift", "judge drift"
UP, DOWN, FLAG = "up", "down", "flag"
DRAFT_SUFFIX = " (draft)"
MAX_BASELINE = 0.95  # a drifted baseline stays a probability short of certainty
# Large enough that the drift's move of the lift clears the rule's noise threshold at one rep of the bundled suite
# (about 0.17 there); a smaller one is a lesson in power, not a demo.
DEFAULT_DRIFT = 0.45
DEFAULT_JUDGE_LENIENCY = 0.4  # moves the bundled gold set's agreement well beyond the sentinel's noise band
# The edited family's draft misleads: worth −½ of the skill's effect, so the edit moves the family's lift by about
# 0.47 at one rep — what the family's paired rule catches about 80 % of the time at the bundled suite's size
# (benchmarks/movers.py). A draft worth +¼ (a 0.23 move) is caught about a quarter of the time, and a one-family
# edit barely moves a model's headline lift (a sixth of its prompts): a demo should show a move the rule can see.
DEFAULT_DRAFT_GAIN = -0.5


@dataclass(frozen=True)
class ScriptedMove:
    """One scripted change of the simulated world.

    Attributes:
        week: the first week (1-based) that has it.
        kind: :data:`SKILL_EDIT` or :data:`MODEL_DRIFT`.
        target: the family edited or the model that drifts.
        models: the models whose headline lift it moves.
        expected: :data:`UP` or :data:`DOWN`, the direction of those lifts (:data:`FLAG` for a judge drift: the
            sentinel should flag the week).
        what: one sentence for the report.
    """

    week: int
    kind: str
    target: str
    models: tuple[str, ...]
    expected: str
    what: str


@dataclass
class DemoStory:
    """The whole script, as recorded in ``demo-story.json``."""

    weeks: int
    models: list[str]
    moves: list[ScriptedMove] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    before_gain: float = DEFAULT_DRAFT_GAIN
    drift: float = DEFAULT_DRIFT
    judge_leniency: float = DEFAULT_JUDGE_LENIENCY

    def as_json(self) -> dict[str, Any]:
        return {"weeks": self.weeks, "models": self.models, "moves": [asdict(m) for m in self.moves],
                "left_out": self.left_out, "before_gain": self.before_gain, "drift": self.drift,
                "judge_leniency": self.judge_leniency}

    def move(self, kind: str) -> ScriptedMove | None:
        return next((m for m in self.moves if m.kind == kind), None)


def default_family(suite: Suite) -> str:
    """The family with the most preference-eligible prompts (ties: the first by name): its edit shows best."""
    counts = {f: sum(p.family == f for p in suite.preference_eligible_prompts) for f in suite.families}
    return max(sorted(counts), key=lambda f: counts[f])


def default_drift_model(models: list[str], profiles: dict[str, Any] | None = None) -> str:
    """The model the skill helps most: the largest ``must`` gap (with − without) in ``profiles`` (default the shipped
    ones); ties go to the first listed."""
    profiles = profiles if profiles is not None else shipped_profiles()
    models_section = profiles.get("models", {})

    def gap(model: str) -> float:
        must = {**models_section.get("default", {}).get("must", {}),
                **models_section.get(profile_key(profiles, model), {}).get("must", {})}
        return float(must.get("with", 0.0)) - float(must.get("without", 0.0))

    return max(models, key=lambda m: (gap(m), -models.index(m)))


RULE_READY_WEEK = 4  # the week-over-week rule's first verdict: WOW_MIN_RUNS weeks of history (scorecard._history)


def scaled_schedule(weeks: int) -> tuple[int, int, int]:
    """The moves' weeks when the command gives none, scaled from the demo's length so every move falls inside it.

    The skill edit lands 60 % of the way in, never before the week-over-week rule's first verdict (week
    :data:`RULE_READY_WEEK`, or the last week of a shorter demo); the model drift 85 % of the way in, at least one week
    after the edit (0 — left out, and said so — when no week is left after it, so the two never share a week and
    confound the lift); the judge drift in the last week (the drift sentinel's to catch, not the lift rule's). At
    the default 8 weeks: 5, 7 and 8.

    Returns:
        ``(edit_week, drift_week, judge_week)``.
    """
    edit = min(weeks, max(math.ceil(0.6 * weeks), RULE_READY_WEEK))
    drift = max(math.ceil(0.85 * weeks), edit + 1)
    return edit, drift if drift <= weeks else 0, weeks


def plan_story(suite: Suite, opts: DemoOptions, *, models: list[str], profiles: dict[str, Any] | None = None,
               judge_model: str = "") -> DemoStory:
    """The story for ``opts.weeks`` weeks (the moves' weeks — :func:`scaled_schedule`'s where ``opts`` gives none —,
    the edited family, the drifting model, the sizes from ``opts``); a move whose week is 0 or after the last week
    is left out.

    Raises:
        ValueError: an unknown family or model, or fewer than one week.
    """
    weeks = opts.weeks
    scaled = scaled_schedule(weeks)
    edit_week, drift_week, judge_week = (scaled[i] if w is None else w
                                         for i, w in enumerate((opts.edit_week, opts.drift_week, opts.judge_week)))
    family, drift_model, before_gain, drift = opts.edit_family, opts.drift_model, opts.before_gain, opts.drift
    judge_leniency = opts.judge_leniency
    if weeks < 1:
        raise ValueError(f"--weeks {weeks}: a demo needs at least one week")
    if not -1.0 <= before_gain <= 1.0:
        raise ValueError(f"--draft-gain {before_gain}: the draft's share of the skill's effect is between -1 and 1")
    if not 0.0 < drift <= 1.0:
        raise ValueError(f"--drift {drift}: the baseline's rise is above 0 (the story expects the lift to fall) "
                         "and at most 1")
    if not 0.0 < judge_leniency <= 1.0:
        raise ValueError(f"--judge-leniency {judge_leniency}: the judge's added leniency is above 0 and at most 1")
    family = family or default_family(suite)
    if family not in suite.families:
        raise ValueError(f"--edit-family {family}: not a skill family of {suite.suite_dir} "
                         f"({', '.join(suite.families)})")
    drift_model = drift_model or default_drift_model(models, profiles)
    if drift_model not in models:
        raise ValueError(f"--drift-model {drift_model}: not one of the demo's models ({', '.join(models)})")
    story = DemoStory(weeks=weeks, models=list(models), before_gain=before_gain, drift=drift,
                      judge_leniency=judge_leniency)
    from skillbench.judge import resolve_judge_model

    judge_model = resolve_judge_model(judge_model)
    candidates = [
        (edit_week, ScriptedMove(edit_week, SKILL_EDIT, family, tuple(models), UP,
                                 f"{family}'s SKILL.md goes from its draft to the real skill (the draft was worth "
                                 f"{before_gain:+.0%} of the skill's effect"
                                 f"{': its advice misled' if before_gain < 0 else ''})")),
        (drift_week, ScriptedMove(drift_week, MODEL_DRIFT, drift_model, (drift_model,), DOWN,
                                  f"{drift_model}'s model build drifts: its baseline must coverage rises by "
                                  f"{drift:+.2f}, so its lift falls")),
        (judge_week, ScriptedMove(judge_week, JUDGE_DRIFT, judge_model, (), FLAG,
                                  f"the judge ({judge_model}) turns lenient, as a judge model upgrade might: its "
                                  f"leniency (an unfavourable reading given the favourable verdict) rises by "
                                  f"{judge_leniency:+.2f}; the drift sentinel should flag the week")),
    ]
    candidates.sort(key=lambda c: c[0])
    for week, move in candidates:
        if 1 <= week <= weeks:
            story.moves.append(move)
        elif week == 0 and move.kind == MODEL_DRIFT and scaled[1] == 0 and opts.drift_week is None:
            story.left_out.append(f"{move.kind} of {move.target} (no week after the skill edit in {weeks} weeks: "
                                  "it would share the edit's week and confound its lift)")
        elif week == 0:
            story.left_out.append(f"{move.kind} of {move.target} (not scheduled: week 0)")
        else:
            story.left_out.append(f"{move.kind} of {move.target} (week {week} is outside weeks 1–{weeks})")
    return story


def _frontmatter(skill_md: str) -> tuple[list[str], str, str, dict[str, Any]]:
    head, sep, body = skill_md.partition("\n---\n")
    return head.splitlines(), sep, body, yaml.safe_load(head.removeprefix("---\n")) or {}


def draft_description(skill_md: str) -> str:
    """The draft's description: the real one with ``(draft)`` appended."""
    return str(_frontmatter(skill_md)[3]["description"]) + DRAFT_SUFFIX


def draft_text(skill_md: str) -> str:
    """The SKILL.md with ``(draft)`` appended to its frontmatter description (the line is rewritten as JSON,
    which YAML reads back as the same string)."""
    lines, sep, body, _ = _frontmatter(skill_md)
    start = next(i for i, ln in enumerate(lines) if ln.startswith("description:"))
    end = start + 1
    while end < len(lines) and (lines[end].startswith((" ", "\t")) or not lines[end].strip()):
        end += 1  # a folded or block description continues on indented lines
    lines[start:end] = [f"description: {json.dumps(draft_description(skill_md))}"]
    return "\n".join(lines) + sep + body


def shipped_profiles() -> dict[str, Any]:
    """The shipped profile file as a mapping (each week's profile starts from it)."""
    return yaml.safe_load(resources.files("skillbench").joinpath("data", "sim_profiles.yaml").read_text("utf-8"))


def profile_key(profiles: dict[str, Any], model: str, section: str = "models") -> str:
    """The profile of ``section`` (``models`` or ``judges``) a model name selects: the sim's own rule."""
    from skillbench.sim import pick_key

    return pick_key(profiles.get(section) or {}, model)


def week_profiles(story: DemoStory, week: int, draft_key: str, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """The simulated endpoint's profiles in ``week``: ``base`` (default the shipped ones), the draft's gain, and the
    drift once it began."""
    profiles = copy.deepcopy(base if base is not None else shipped_profiles())
    edit = story.move(SKILL_EDIT)
    if edit is not None:
        profiles.setdefault("skill_versions", {})
        profiles["skill_versions"] = {**(profiles["skill_versions"] or {}), draft_key: {"gain": story.before_gain}}
    judge = story.move(JUDGE_DRIFT)
    if judge is not None and week >= judge.week:
        judges = profiles.setdefault("judges", {})
        key = profile_key(profiles, judge.target, "judges")
        if key == "default" and "default" not in judges:
            judges["default"] = {}
        entry = judges.setdefault(key, {})
        entry["leniency"] = min(1.0, float(entry.get("leniency", 0.0)) + story.judge_leniency)
    drift = story.move(MODEL_DRIFT)
    if drift is not None and week >= drift.week:
        models = profiles.setdefault("models", {})
        key = profile_key(profiles, drift.target)
        if key == "default":  # give the drifting model its own profile, so the others keep theirs
            models[drift.target] = copy.deepcopy(models["default"])
            key = drift.target
        must = models[key].setdefault("must", {"without": 0.55, "with": 0.85})
        must["without"] = min(MAX_BASELINE, float(must["without"]) + story.drift)
    return profiles


def enact_week(story: DemoStory, week: int, suite: Suite, real_skill: str, out_dir: Path,
               base: dict[str, Any] | None = None) -> Path:
    """Put the week's SKILL.md in the demo's suite and write the week's profile file (from ``base``, default the
    shipped profiles); the profile's path."""
    from skillbench.sim import version_key

    edit = story.move(SKILL_EDIT)
    if edit is not None:
        path = suite.family_dir(edit.target) / SKILL_FILE
        text = real_skill if week >= edit.week else draft_text(real_skill)
        if path.read_text(encoding="utf-8") != text:
            atomic_write_text(path, text)
    profiles = week_profiles(story, week, version_key(draft_description(real_skill)) if edit is not None else "",
                             base)
    out = out_dir / "profiles" / f"week-{week:02d}.yaml"
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, yaml.safe_dump(profiles, sort_keys=False))
    return out
