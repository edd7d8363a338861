"""``skillbench demo-history``: N simulated weeks through the weekly chain, with a scripted story, and a page that
says which moves were scripted and whether the week-over-week rule caught them.

Each week is the real chain (:func:`skillbench.weekly.run_weekly`: preflight … scorecard, real CLI in Docker, the
simulated endpoint) on a copy of the suite in ``OUT/suite/``, its ledgers and the history in
``OUT/suite/weekly/`` and its report in ``REPORTS/demo-wNN/``. Before each week :func:`enact_week` puts the
week's SKILL.md in the copy and writes the week's profile file (:mod:`skillbench.weekly._demo_story`). At the end
the demo re-reads every week's scorecard against the history (the rule applied as it was that week: only the
weeks before it count), writes ``OUT/demo.md`` (and ``demo.html``, ``demo-story.json``), and executes
``explore_weeks`` on the weeks. Rerunning resumes: finished weeks are not run again, only re-rendered.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from skillbench.calibration import read_sentinel
from skillbench.ledgers import GOLD_DIR, HISTORY_FILE, SKILL_FILE, WEEKLY_DIR, atomic_write_text
from skillbench.markdown import md_table, signed
from skillbench.suite import SuiteOverrides
from skillbench.weekly._demo_story import (
    DEFAULT_DRAFT_GAIN,
    DEFAULT_DRIFT,
    DEFAULT_JUDGE_LENIENCY,
    JUDGE_DRIFT,
    SKILL_EDIT,
    UP,
    DemoStory,
    enact_week,
    plan_story,
)

DEMO_DIR = "demo-history"  # REPORTS/demo-history/: the suite copy, the profiles, the story and the page
STORY_FILE, PAGE_FILE = "demo-story.json", "demo.md"
WEEK_KEY = "demo-w{week:02d}"
WEEK_COLUMNS = ["week", "run_key", "model", "must_lift", "true_lift", "reps", "delta", "threshold", "actionable",
                "sentinel", "moves"]
CAUGHT_COLUMNS = ["week", "move", "target", "by", "model", "expected", "delta", "true_delta", "threshold",
                  "reps_to_see", "rule", "caught"]
# The rules a scripted move is read by (the ``by`` column): the headline lift's week-over-week rule per model, the
# same paired rule on the edited family's prompts alone (every model's), the per-prompt movers, the drift sentinel.
HEADLINE, FAMILY_RULE, MOVERS, SENTINEL = ("headline lift, week over week", "family lift, paired week over week",
                                           "per-prompt movers", "drift sentinel")
ALL_MODELS = "(all models)"
SUITE_PARTS = ("skillbench.toml", "test-prompts", "fixtures", "solutions", GOLD_DIR)


@dataclass
class DemoOptions:
    """What ``skillbench demo-history`` was asked to do (the weekly chain's options, plus the story's)."""

    weekly: Any  # skillbench.weekly.WeeklyOptions: suite, models, reps, jobs, seed, reports, sandbox, …
    weeks: int = 8
    out_dir: Path | None = None  # default REPORTS/demo-history/
    edit_week: int | None = None  # None: scaled from ``weeks`` (_demo_story.scaled_schedule); 0: no such move
    drift_week: int | None = None
    edit_family: str = ""
    drift_model: str = ""
    before_gain: float = DEFAULT_DRAFT_GAIN
    drift: float = DEFAULT_DRIFT
    judge_week: int | None = None
    judge_leniency: float = DEFAULT_JUDGE_LENIENCY
    base_profiles: Path | None = None  # the simulated endpoint's profile file the story starts from (None: shipped)


@dataclass
class DemoResult:
    """What the demo wrote and found."""

    out_dir: Path
    page: Path
    story: DemoStory
    weeks: pd.DataFrame  # run_key, week, model, must_lift, actionable, moves
    caught: pd.DataFrame  # one row per scripted move × model it moves
    failed: list[str] = field(default_factory=list)  # weeks whose chain failed

    @property
    def ok(self) -> bool:
        return not self.failed


def copy_suite(suite_dir: Path, dest: Path, families: Sequence[str] = (),
               overrides: SuiteOverrides | None = None) -> Path:
    """The demo's own copy of the suite (the story edits it; the original is never touched), keeping only
    ``families`` when given so each week is complete rather than a partial run of a bigger suite. A skills root
    outside the suite (qdrant's ``skills/`` beside ``evals/``) is copied to the copy's ``skills/``: read the copy
    with :func:`copied_overrides`."""
    from skillbench.suite import load_suite

    if dest.is_dir():
        return dest
    suite = load_suite(suite_dir, overrides)
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for part in SUITE_PARTS:
        src = suite.suite_dir / part
        if src.is_dir():
            shutil.copytree(src, tmp / part)
        elif src.is_file():
            shutil.copy2(src, tmp / part)
    keep = set(families) or set(suite.families)
    inside = suite.skills_root.is_relative_to(suite.suite_dir)
    rel_root = suite.skills_root.relative_to(suite.suite_dir) if inside else Path(COPIED_SKILLS)
    for family in sorted(keep):
        shutil.copytree(suite.family_dir(family), tmp / rel_root / family)
    for spec in suite.prompts:
        if spec.family not in keep:
            (tmp / spec.path.relative_to(suite.suite_dir)).unlink(missing_ok=True)
    (tmp / COPIED_ROOT_FILE).write_text(str(rel_root), encoding="utf-8")
    tmp.rename(dest)
    return dest


COPIED_SKILLS, COPIED_ROOT_FILE = "skills", ".skills-root"  # where copy_suite put the skills, and its record


def copied_overrides(dest: Path, overrides: SuiteOverrides) -> SuiteOverrides:
    """The suite flags that read :func:`copy_suite`'s copy: its own skills root, whatever the original's was."""
    rel = (dest / COPIED_ROOT_FILE).read_text(encoding="utf-8") if (dest / COPIED_ROOT_FILE).is_file() else ""
    return dataclasses.replace(overrides, skills_root=str((dest / rel).resolve()) if rel else None)


def run_demo(opts: DemoOptions, *, log: Callable[[str], None] = print,
             progress: Callable[[str], None] | None = None) -> DemoResult:
    """Run (or resume) the demo's weeks, then evaluate and render the story.

    Raises:
        ValueError: a story that cannot be planned (unknown family or model, no weeks).
        WeeklyError: a week's chain cannot start.
    """
    from skillbench.suite import load_suite
    from skillbench.weekly._chain import run_weekly

    w = opts.weekly
    out = Path(opts.out_dir) if opts.out_dir else Path(w.reports_dir) / DEMO_DIR
    original = load_suite(Path(w.suite_dir), w.suite_overrides)
    unknown = [f for f in w.families or () if f not in original.families]
    if unknown:
        raise ValueError(f"--families {unknown[0]}: not a skill family of {original.suite_dir} "
                         f"({', '.join(original.families)})")
    kept = dataclasses.replace(original, prompts=[p for p in original.prompts
                                                  if not w.families or p.family in w.families])
    kept.skills = {k: v for k, v in original.skills.items() if not w.families or v.family in w.families}
    models = list(w.models or original.config.run.models)
    base = None
    if opts.base_profiles is not None:
        from skillbench.sim import load_profiles

        load_profiles(opts.base_profiles)  # a bad file is one line naming it, before any week runs
        base = yaml.safe_load(Path(opts.base_profiles).read_text(encoding="utf-8"))
    story = plan_story(kept, opts, models=models, profiles=base)  # checked before writing
    _same_story(out, story)
    out.mkdir(parents=True, exist_ok=True)
    copy = copy_suite(Path(w.suite_dir), out / "suite", w.families or (), w.suite_overrides)
    w = replace(w, suite_overrides=copied_overrides(copy, w.suite_overrides))
    suite = load_suite(copy, w.suite_overrides)
    suite_dir = suite.suite_dir
    real = _real_skill(out, suite, story)
    atomic_write_text(out / STORY_FILE, json.dumps(story.as_json(), indent=2) + "\n")
    failed = []
    for week in range(1, opts.weeks + 1):
        profiles = enact_week(story, week, suite, real, out, base)
        key = WEEK_KEY.format(week=week)
        log(f"demo-history: week {week}/{opts.weeks} ({key})" + "".join(
            f" — scripted: {m.what}" for m in story.moves if m.week == week))
        result = run_weekly(replace(w, suite_dir=suite_dir, run_key=key, models=models, families=None,
                                    weeks_dir=suite_dir / WEEKLY_DIR, sim_profiles=profiles, backend="sim"),
                            log=log, progress=progress)
        if not result.ok:
            failed.append(f"{key}: stage {result.failed_stage} failed: {result.state.get('error')}")
            break  # a damaged week would poison every later week's noise band
    weeks, caught = evaluate(story, suite_dir / WEEKLY_DIR)
    page = out / PAGE_FILE
    atomic_write_text(page, render_demo(story, weeks, caught, failed=failed, reports=Path(w.reports_dir)))
    from skillbench.report import link_to_week, write_markdown_page

    write_markdown_page(page, page.with_suffix(".html"), title="skillbench demo — the scripted weeks",
                        back="../index.html")
    if not failed:
        _explore(out, suite_dir / WEEKLY_DIR, w.kernel_name)
        # its movers compare the newest week with the one before: each prompt opens that week's run page
        link_to_week(out / "explore_weeks.html", Path(w.reports_dir) / WEEK_KEY.format(week=opts.weeks))
    return DemoResult(out_dir=out, page=page, story=story, weeks=weeks, caught=caught, failed=failed)


def _same_story(out: Path, story: DemoStory) -> None:
    """Refuse to resume weeks that ran under another story: their moves would not be the ones the page states."""
    recorded = out / STORY_FILE
    if not recorded.is_file() or not any((out / "suite" / WEEKLY_DIR).glob("demo-w*/manifest.csv")):
        return
    try:
        before = json.loads(recorded.read_text(encoding="utf-8"))
    except ValueError:
        before = None
    if before != json.loads(json.dumps(story.as_json())):
        raise ValueError(f"{recorded}: its weeks ran under another story (other flags or defaults); rerun with the "
                         f"same flags, or pass another --out-dir (or remove {out}) to start over")


def _real_skill(out: Path, suite: Any, story: DemoStory) -> str:
    """The edited family's real SKILL.md, kept beside the story so a resumed demo never takes the draft for it."""
    edit = story.move(SKILL_EDIT)
    if edit is None:
        return ""
    keep = out / "profiles" / f"real-{edit.target}-{SKILL_FILE}"
    if not keep.is_file():
        keep.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(keep, (suite.family_dir(edit.target) / SKILL_FILE).read_text(encoding="utf-8"))
    return keep.read_text(encoding="utf-8")


def evaluate(story: DemoStory, weekly_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each week's lift and week-over-week verdict per model, and for every scripted move whether the rule caught
    it (a move of the expected sign beyond the noise threshold, in the move's week)."""
    from skillbench.weekly._stages import scorecard_week

    rows = []
    history = weekly_dir / HISTORY_FILE
    for week in range(1, story.weeks + 1):
        run_dir = weekly_dir / WEEK_KEY.format(week=week)
        if not (run_dir / "manifest.csv").is_file():
            continue
        data = scorecard_week(run_dir, history if history.is_file() else "").data
        wow = data.wow.table.set_index("model") if data.wow.ready and not data.wow.table.empty else None
        truth = (data.simulation.lift.set_index("model")["true_lift"] if data.simulation is not None
                 else pd.Series(dtype=float))
        reps = int(pd.to_numeric(data.manifest["rep"], errors="coerce").max()) if len(data.manifest) else 0
        sentinel = read_sentinel(run_dir) or {}
        for rec in data.lift.itertuples(index=False):
            verdict = wow.loc[rec.model] if wow is not None and rec.model in wow.index else None
            rows.append({"week": week, "run_key": data.run_key, "model": rec.model, "must_lift": rec.must_lift,
                         "true_lift": float(truth.get(rec.model, float("nan"))), "reps": reps,
                         "delta": verdict["delta"] if verdict is not None else float("nan"),
                         "threshold": verdict["threshold"] if verdict is not None else float("nan"),
                         "actionable": verdict["actionable"] if verdict is not None else "not ready",
                         "sentinel": str(sentinel.get("flag") or "not run"),
                         "moves": "; ".join(f"{m.kind} ({m.target})" for m in story.moves if m.week == week)})
    weeks = pd.DataFrame(rows, columns=WEEK_COLUMNS)
    across = _prompt_lifts(weekly_dir)
    caught = []
    for move in story.moves:
        if move.kind == JUDGE_DRIFT:
            caught.append(_sentinel_caught(move, weeks))
            continue
        if move.kind == SKILL_EDIT:
            caught.append(_family_caught(move, across))
        caught.append(_movers_caught(move, across))
        for model in move.models:
            mine = weeks[weeks["model"] == model].set_index("week")
            rec = mine.loc[move.week] if move.week in mine.index else None
            direction = (UP if rec["delta"] > 0 else "down") if rec is not None and pd.notna(rec["delta"]) else ""
            verdict = rec["actionable"] if rec is not None else "week not run"
            true_delta = (float(rec["true_lift"]) - float(mine.loc[move.week - 1, "true_lift"])
                          if rec is not None and move.week - 1 in mine.index else float("nan"))
            hit = verdict == "yes" and direction == move.expected
            caught.append({"week": move.week, "move": move.kind, "target": move.target, "by": HEADLINE,
                           "model": model,
                           "expected": move.expected, "delta": rec["delta"] if rec is not None else float("nan"),
                           "true_delta": true_delta,
                           "threshold": rec["threshold"] if rec is not None else float("nan"),
                           "reps_to_see": (float("nan") if hit or rec is None
                                           else reps_to_see(true_delta, rec["threshold"], int(rec["reps"]))),
                           "rule": verdict, "caught": hit})
    return weeks, pd.DataFrame(caught, columns=CAUGHT_COLUMNS)


def _sentinel_caught(move: Any, weeks: pd.DataFrame) -> dict[str, Any]:
    """A judge drift is caught when the drift sentinel flags its week (``drift`` or ``judge changed``)."""
    from skillbench.calibration import DRIFT, JUDGE_CHANGED

    hit = weeks[weeks["week"] == move.week]
    flag = str(hit["sentinel"].iloc[0]) if len(hit) else "week not run"
    return {"week": move.week, "move": move.kind, "target": move.target, "by": SENTINEL, "model": "(the judge)",
            "expected": move.expected, "delta": float("nan"), "true_delta": float("nan"), "threshold": float("nan"),
            "reps_to_see": float("nan"), "rule": f"sentinel: {flag}", "caught": flag in (DRIFT, JUDGE_CHANGED)}


def _prompt_lifts(weekly_dir: Path) -> Any:
    """Every demo week's per-prompt lifts (:func:`skillbench.weekly.load_weeks`), with each prompt's skill family."""
    from skillbench.weekly._across import load_weeks

    weeks = load_weeks(weekly_dir)
    weeks.keys = [k for k in weeks.keys if k.startswith("demo-w")]
    return weeks


def _not_read(move: Any, by: str, model: str, why: str) -> dict[str, Any]:
    nan = float("nan")
    return {"week": move.week, "move": move.kind, "target": move.target, "by": by, "model": model,
            "expected": move.expected, "delta": nan, "true_delta": nan, "threshold": nan, "reps_to_see": nan,
            "rule": why, "caught": False}


def _family_of(weeks: Any) -> pd.Series:
    runs = weeks.runs
    if runs.empty or "skill_family" not in runs:
        return pd.Series(dtype=str)
    return runs.drop_duplicates("prompt").set_index("prompt")["skill_family"]


def _family_caught(move: Any, weeks: Any) -> dict[str, Any]:
    """The edited family's lift, read by the headline's paired rule (:func:`skillbench.scorecard.paired_week_delta`)
    on the family's prompt × model lifts alone: one family's edit is a small share of a model's headline (a sixth of
    the bundled suite's prompts), but all of the family's own lift."""
    from skillbench.scorecard import paired_week_delta

    key = WEEK_KEY.format(week=move.week)
    if key not in weeks.keys or weeks.keys.index(key) == 0 or weeks.paired.empty:
        return _not_read(move, FAMILY_RULE, ALL_MODELS, "week not run" if key not in weeks.keys else "no week before")
    family = _family_of(weeks)
    p = weeks.paired[weeks.paired["prompt"].map(family).eq(move.target)]
    lift = p.assign(unit=p["model"] + "/" + p["prompt"]).set_index("unit")
    at = weeks.keys.index(key)

    def week(k: str) -> pd.Series:
        return lift.loc[lift["run_key"].eq(k), "d"]

    prior = [float(week(k).mean()) for k in weeks.keys[:at]]
    got = paired_week_delta(week(key), week(weeks.keys[at - 1]), prior_lifts=prior)
    hit = got.verdict == "yes" and (got.delta > 0) == (move.expected == UP)
    return {"week": move.week, "move": move.kind, "target": move.target, "by": FAMILY_RULE, "model": ALL_MODELS,
            "expected": move.expected, "delta": got.delta, "true_delta": float("nan"), "threshold": got.threshold,
            "reps_to_see": float("nan"), "rule": f"{got.verdict} ({got.n} prompt × model moves)", "caught": hit}


def _movers_caught(move: Any, weeks: Any) -> dict[str, Any]:
    """The per-prompt movers (:func:`skillbench.weekly.prompt_movers`) of the move's week: how many of the moved
    prompts (the edited family's, or the drifting model's) were flagged in the expected direction."""
    from skillbench.weekly._across import prompt_movers

    key = WEEK_KEY.format(week=move.week)
    if key not in weeks.keys or weeks.keys.index(key) == 0:
        return _not_read(move, MOVERS, ALL_MODELS, "week not run" if key not in weeks.keys else "no week before")
    movers = prompt_movers(weeks, key)
    family = _family_of(weeks)
    mine = (movers[movers["prompt"].map(family).eq(move.target)] if move.kind == SKILL_EDIT
            else movers[movers["model"].eq(move.target)])
    right = (mine["delta"] > 0) == (move.expected == UP)
    flagged = int((mine["moved"].eq("yes") & right).sum())
    tested = int(mine["p_value"].notna().sum())
    return {"week": move.week, "move": move.kind, "target": move.target, "by": MOVERS,
            "model": ALL_MODELS if move.kind == SKILL_EDIT else move.target, "expected": move.expected,
            "delta": float(mine["delta"].mean()) if len(mine) else float("nan"), "true_delta": float("nan"),
            "threshold": float(mine["threshold"].median()) if tested else float("nan"), "reps_to_see": float("nan"),
            "rule": f"{flagged} of {len(mine)} flagged ({tested} tested)", "caught": flagged > 0}


def reps_to_see(true_delta: float, threshold: float, reps: int) -> float:
    """The repetitions at which a move of ``true_delta`` would clear the rule's threshold (NaN: no move, or no
    threshold yet).

    The within-week noise falls as one over the square root of the runs per cell, so the threshold measured at
    ``reps`` scales to ``threshold * sqrt(reps / r)``; the spread of earlier weeks is taken to scale the same way.
    """
    if not (pd.notna(true_delta) and pd.notna(threshold)) or abs(true_delta) < 1e-9 or reps < 1:
        return float("nan")
    return float(math.ceil(reps * (float(threshold) / abs(true_delta)) ** 2))


def render_demo(story: DemoStory, weeks: pd.DataFrame, caught: pd.DataFrame, *, failed: Sequence[str] = (),
                reports: Path | None = None) -> str:
    """``demo.md``: the scripted moves and whether the rule caught them, then every week's lift per model."""
    lines = [f"# skillbench demo — {story.weeks} simulated weeks with a scripted story", "",
             "> **Simulated endpoint**: the moves below were scripted; the point is whether the measurement sees "
             "them.", ""]
    if failed:
        lines += ["**INCOMPLETE** — " + "; ".join(failed), ""]
    lines += ["## The scripted moves", ""]
    if story.moves:
        lines += [md_table(["week", "move", "what"], [[m.week, m.kind, m.what] for m in story.moves]), ""]
    lines += ["Unless `--edit-week`, `--drift-week` or `--judge-week` gives one, each move's week scales with "
              "`--weeks`: the skill edit 60 % of the way in and never before week 4 (the week-over-week rule's first "
              "verdict), the model drift 85 % of the way in and after the edit, the judge drift in the last week.", ""]
    for note in story.left_out:
        lines.append(f"- Left out: {note}")
    if story.left_out:
        lines.append("")
    lines += ["## Did the measurement catch them?", "",
              "Each move is read by the rules that could see it. The **headline** week-over-week rule compares a "
              "model's lift with the previous week's against the larger of the within-week noise and the spread of "
              "the earlier weeks; it needs four weeks of history. The **family** rule is the same paired rule on "
              "the edited family's prompts alone (every model's): a one-family edit is a small share of the "
              "headline but all of the family's lift. The **per-prompt movers** test each prompt's move, "
              "Benjamini–Hochberg across the week's prompts (explore_weeks' table). A judge drift is the drift "
              "sentinel's to catch: it re-grades the suite's frozen gold set every week and flags a move beyond its "
              "own noise band (a lift read in a flagged week says \"re-certify\" on its scorecard).", ""]
    for move in story.moves:
        mine = caught[(caught["week"] == move.week) & (caught["move"] == move.kind)]
        by = list(dict.fromkeys(mine.loc[mine["caught"], "by"]))
        lines.append(f"- **{move.kind}** ({move.target}, week {move.week}): "
                     + (f"caught by the {' and the '.join(by)}" if by else "missed by every rule"))
    if story.moves:
        lines.append("")
    rows = [[r.week, r.move, r.target, r.by, r.model, r.expected, signed(r.delta), signed(r.true_delta),
             _num(r.threshold), r.rule, "caught" if r.caught else "missed" + _power(r)]
            for r in caught.itertuples(index=False)]
    lines += [md_table(["week", "move", "target", "rule", "model", "expected", "Δ lift", "true Δ", "threshold",
                        "rule said", "verdict"], rows) if rows else "No scripted move fell inside the demo's weeks.",
              ""]
    if (~caught["caught"]).any():
        lines += ["*True Δ* is the change of the lift the simulated truth scores (truth.csv: what the answers "
                  "really covered, before any judge error, so it carries the runs' own variation). A miss whose "
                  "true move is below the threshold is the design's power, not the rule's fault: the threshold "
                  "falls as one over the square root of the runs per cell. A skill edit moves one family of the "
                  "headline; `skillbench compare --base REF` runs only the changed families, paired, and is the "
                  "instrument for it.", ""]
    false_alarms = [int(w) for w in weeks.drop_duplicates("week").query(
        "sentinel in ('drift', 'judge changed')")["week"] if not any(
        m.kind == JUDGE_DRIFT and m.week == w for m in story.moves)]
    if false_alarms:
        lines += [f"The sentinel also flagged week(s) {', '.join(map(str, false_alarms))}, where no judge drift was "
                  "scripted (false alarms).", ""]
    lines += ["## Every week", ""]
    rows = [[r.run_key, r.model, signed(r.must_lift), signed(r.true_lift), signed(r.delta), _num(r.threshold),
             r.actionable, r.sentinel, r.moves or ""] for r in weeks.itertuples(index=False)]
    lines += [md_table(["week", "model", "must lift", "true lift", "Δ vs previous", "threshold", "moved beyond noise?",
                        "judge sentinel",
                        "scripted this week"], rows) if rows else "No week finished.", ""]
    lines += ["Each week's report: " + ", ".join(f"[{k}](../{k}/index.html)" for k in dict.fromkeys(weeks["run_key"]))
              if len(weeks) else "", "", "The weeks side by side: [explore_weeks](explore_weeks.html).", ""]
    return "\n".join(lines)


def _power(r: Any) -> str:
    """Why a move was missed, from its true move (the realised truth's change) and the threshold."""
    if pd.isna(r.true_delta) or pd.isna(r.threshold):
        return ""
    if (r.true_delta > 0) != (r.expected == UP):
        return " (the truth itself moved the other way: run-to-run variation swamped the scripted move)"
    if abs(r.true_delta) > r.threshold:
        return (" (the truth moved beyond the threshold but the measurement did not: judge error — see the "
                "sentinel — or noise)")
    if pd.isna(r.reps_to_see):
        return ""
    return f" (too small for this design: its true move would clear the threshold at about {int(r.reps_to_see)} reps)"


def _num(x: Any) -> str:
    return "n/a" if x is None or pd.isna(x) else f"{float(x):.3f}"


def _explore(out: Path, weekly_dir: Path, kernel_name: str) -> None:
    """Execute ``explore_weeks`` on the demo's weeks into ``OUT/explore_weeks.ipynb`` and its HTML."""

    from skillbench.paths import NOTEBOOKS_DIR
    from skillbench.report import execute_notebook, export_notebook_html

    nb = out / "explore_weeks.ipynb"
    execute_notebook(NOTEBOOKS_DIR / "explore_weeks.ipynb", nb, parameters={"weekly_dir": str(weekly_dir.resolve())},
                     kernel_name=kernel_name)
    export_notebook_html(nb, nb.with_suffix(".html"))
