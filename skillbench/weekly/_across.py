"""Across weeks (``explore_weeks``): every week's ledgers in one table, which prompts moved, what never triggers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from skillbench.arms import DEFAULT_PAIR
from skillbench.ledgers import HISTORY_FILE, MANIFEST_FILE
from skillbench.scorecard import (
    BH,
    MOVED,
    NOT_KNOWN,
    WITHIN_NOISE,
    adjust,
    band_p_value,
    between_noise,
    family_words,
    floored_between_noise,
    t_critical,
    threshold,
    within_noise,
)
from skillbench.signals import activated, reliable, with_skill_runs
from skillbench.weekly._notebook import _path


@dataclass
class Weeks:
    """Every week of a ``weekly/`` folder as one table surface.

    Attributes:
        keys: run keys in time order (by their latest run start).
        runs: one row per run of every week: the manifest with ``run_key`` and the run's rubric metrics
            (``must_coverage``, ``bonus_rate``, ``avoid_violations``, ``composite``; empty when not graded).
        prompts: per week × model × condition × prompt, metrics averaged over reps (``n_reps`` kept).
        paired: per week × model × prompt, the lift ``d`` (with-skill − no-skill) and its rep-noise ``se``.
        history: ``scorecard-history.csv`` (numeric).
        skipped: weeks whose ledgers could not be read, with the reason.
    """

    keys: list[str]
    runs: pd.DataFrame
    prompts: pd.DataFrame
    paired: pd.DataFrame
    history: pd.DataFrame
    skipped: dict[str, str] = field(default_factory=dict)


def _rep_noise(prompt_reps: pd.DataFrame) -> pd.DataFrame:
    """Pooled within-prompt SD of ``must_coverage`` across reps, per model × condition, and its degrees of freedom.

    Pooling over the week's prompts gives a usable noise estimate with only two reps per prompt.
    """
    g = prompt_reps.dropna(subset=["must_coverage"]).groupby(["model", "condition", "prompt"])["must_coverage"]
    parts = pd.DataFrame({"ss": g.apply(lambda s: float(((s - s.mean()) ** 2).sum())), "df": g.count() - 1})
    pooled = parts.groupby(["model", "condition"]).sum()
    pooled["sd"] = np.sqrt(pooled["ss"] / pooled["df"].where(pooled["df"] > 0))
    return pooled[["sd", "df"]].reset_index()


def _week_pairs(reps: pd.DataFrame, per_prompt: pd.DataFrame) -> pd.DataFrame:
    """Per model × prompt of one week: the lift ``d`` and its ``se`` from the arms' pooled rep noise."""
    lift_arms = DEFAULT_PAIR.lift_arms  # the weekly series is with-skill − no-skill (a comparison is not a week of it)
    no, wi = lift_arms
    arms = per_prompt[per_prompt["condition"].isin(lift_arms)].merge(_rep_noise(reps), on=["model", "condition"],
                                                                      how="left")
    if arms.empty:
        return pd.DataFrame()
    wide = arms.pivot(index=["model", "prompt", "skill"], columns="condition",
                      values=["must_coverage", "n_reps", "sd", "df"])

    def col(metric: str, arm: str) -> pd.Series:
        return wide[(metric, arm)] if (metric, arm) in wide.columns else pd.Series(np.nan, index=wide.index)

    pair = pd.DataFrame({"no_skill": col("must_coverage", no), "with_skill": col("must_coverage", wi)})
    pair["d"] = pair["with_skill"] - pair["no_skill"]
    pair["se"] = np.sqrt(col("sd", no) ** 2 / col("n_reps", no) + col("sd", wi) ** 2 / col("n_reps", wi))
    pair["df"] = np.fmin(col("df", no), col("df", wi))
    return pair.dropna(subset=["d"]).reset_index()


def load_weeks(weekly_dir: str | Path, history_path: str | Path = "") -> Weeks:
    """Read every week under ``weekly_dir`` (each sub-folder with a ``manifest.csv``) into :class:`Weeks`.

    ``weekly_dir`` may also be the suite folder (its ``weekly/``), as for :func:`skillbench.weeks.connect`.
    """
    from skillbench.ledgers import LedgerError, load_week
    from skillbench.scorecard import numeric_history, prompt_rep_scores, prompt_scores, read_history
    from skillbench.weeks import weekly_folder

    root, _ = weekly_folder(weekly_dir)
    runs, prompts, paired, skipped, starts = [], [], [], {}, {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and (p / MANIFEST_FILE).is_file()):
        try:
            led = load_week(folder)
        except LedgerError as exc:
            skipped[folder.name] = str(exc)
            continue
        key = led.run_key
        manifest, scores = led.manifest, led.scores
        starts[key] = manifest["started_at"].max()
        dormant = set(manifest.loc[manifest["dormancy"], "prompt"])
        reps = prompt_rep_scores(scores[~scores["prompt"].isin(dormant)])
        metrics = reps[["model", "condition", "prompt", "rep", "must_coverage", "bonus_rate", "avoid_violations",
                        "composite"]]
        runs.append(manifest.merge(metrics, on=["model", "condition", "prompt", "rep"], how="left")
                    .assign(run_key=key))
        per_prompt = prompt_scores(reps)
        prompts.append(per_prompt.assign(run_key=key))
        pair = _week_pairs(reps, per_prompt)
        if not pair.empty:
            paired.append(pair.assign(run_key=key))
    keys = sorted(starts, key=lambda k: (starts[k], k))
    hpath = _path(history_path) if str(history_path) else root / HISTORY_FILE

    def cat(frames: list[pd.DataFrame]) -> pd.DataFrame:
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    return Weeks(keys=keys, runs=cat(runs), prompts=cat(prompts), paired=cat(paired),
                 history=numeric_history(read_history(hpath)), skipped=skipped)


def _unknown(asked: Sequence[str], known: set[str], what: str) -> None:
    wrong = [a for a in asked if a not in known]
    if wrong:
        raise ValueError(f"{what} {', '.join(map(repr, wrong))}: not in these weeks (they have "
                         f"{', '.join(sorted(known)) or 'none'}) — correct the parameter, or leave it [] for all")


def compared_weeks(weeks: Weeks, run_key: str = "", previous: str = "") -> tuple[str, str]:
    """``(run_key, previous)``: the week looked at (default: the latest) and the one it is compared with (default:
    the week before it; ``""`` when there is none).

    Raises:
        ValueError: a key that is not one of ``weeks.keys`` (the message lists them).
    """
    _unknown([k for k in (run_key, previous) if k], set(weeks.keys), "week")
    if not weeks.keys:
        return "", ""
    now = run_key or weeks.keys[-1]
    at = weeks.keys.index(now)
    return now, previous or (weeks.keys[at - 1] if at else "")


def select_weeks(weeks: Weeks, families: Sequence[str] = (), models: Sequence[str] = (), until: str = "") -> Weeks:
    """``weeks`` up to the week ``until`` (default: every week), only the given skill families and models (empty:
    all) — what ``explore_weeks``' parameters ask for, so every table and figure of the page reads the same slice.

    The history has one row per week × model (no family), so only ``models`` and ``until`` narrow it.

    Raises:
        ValueError: a family, model or week these weeks do not have (one line listing the ones they have).
    """
    # one name given as a string (``-p families dates`` on papermill's command line) is a list of one, not of letters
    families = [families] if isinstance(families, str) else list(families)
    models = [models] if isinstance(models, str) else list(models)
    runs = weeks.runs
    _unknown(families, set(runs["skill_family"]) if len(runs) else set(), "skill family")
    _unknown(models, set(runs["model"]) if len(runs) else set(), "model")
    now, _ = compared_weeks(weeks, until)
    keys = weeks.keys[: weeks.keys.index(now) + 1] if until else list(weeks.keys)
    later = set(weeks.keys) - set(keys)

    def pick(frame: pd.DataFrame, family: str) -> pd.DataFrame:
        if frame.empty:
            return frame
        keep = ~frame["run_key"].isin(later) if "run_key" in frame else pd.Series(True, index=frame.index)
        if families and family in frame:
            keep &= frame[family].isin(families)
        if models and "model" in frame:
            keep &= frame["model"].isin(models)
        return frame[keep].reset_index(drop=True)

    return replace(weeks, keys=keys, runs=pick(weeks.runs, "skill_family"), prompts=pick(weeks.prompts, "skill"),
                   paired=pick(weeks.paired, "skill"), history=pick(weeks.history, ""))


def slice_line(weeks: Weeks, families: Sequence[str] = (), models: Sequence[str] = (),
               compared: tuple[str, str] = ("", "")) -> str:
    """The line ``explore_weeks`` prints over its first table: which weeks, runs, families and models the page reads,
    which two weeks it compares, and each week left out and why."""
    asked = [f"{name}: {', '.join(values)}" for name, values in (("families", families), ("models", models)) if values]
    now, prev = compared
    line = (f"{len(weeks.keys)} weeks: {', '.join(weeks.keys) or 'none'}; {len(weeks.runs)} runs "
            f"({', '.join(asked) or 'every family and model'}); looking at {now or 'no week'}, compared with "
            f"{prev or 'no earlier week'}")
    return "\n".join([line, *(f"left out: week {key}: {why}" for key, why in weeks.skipped.items())])


MOVER_COLUMNS = ["model", "prompt", "skill", "prev_lift", "now_lift", "delta", "within", "between", "threshold",
                 "p_value", "p_adjusted", "moved"]
MOVERS_ALPHA = 0.05  # the false-discovery rate the movers' list is held to


def prompt_movers(weeks: Weeks, run_key: str = "", previous: str = "", *, confidence: float = 0.95) -> pd.DataFrame:
    """Which prompts' lift moved most between two weeks, and was the move beyond noise once the week's many
    prompt moves are read together?

    The rule is the scorecard's noise band (:mod:`skillbench.scorecard._noise`) applied per prompt:
    ``Δ = d_now − d_prev``; the within-week half-width ``t·√(se_now² + se_prev²)`` uses each week's ``se`` from
    the pooled rep-to-rep SD of that week's arms (``t`` at the smaller of the two weeks' rep degrees of freedom;
    none with one rep); the between-week half-width ``t·σ·√2`` uses the ddof = 1 SD of the prompt's lifts in the
    ``k`` weeks before ``run_key``, ``t`` at ``k − 1`` degrees of freedom (σ's own).
    Each move's ``p_value`` is its two-sided p against the larger of the two
    (:func:`skillbench.scorecard._noise.band_p_value`: below 0.05 exactly when ``|Δ|`` clears it); a week has
    dozens of prompt × model moves, so the p-values are adjusted together by Benjamini–Hochberg
    (``p_adjusted``), and ``moved`` is ``yes`` when the adjusted p is at most 0.05 — the share of false leads among
    the listed moves is held at 5 % (:func:`movers_correction` says so in a sentence).

    Args:
        weeks: :func:`load_weeks` output.
        run_key: the week to look at (default: the latest).
        previous: the week to compare with (default: the one before ``run_key``).
        confidence: of the t multiplier.

    Returns:
        :data:`MOVER_COLUMNS`, the largest moves first.
    """
    if len(weeks.keys) < 2 or weeks.paired.empty:
        return pd.DataFrame(columns=MOVER_COLUMNS)
    now, prev = compared_weeks(weeks, run_key, previous)
    if not prev:  # the first week has none before it
        return pd.DataFrame(columns=MOVER_COLUMNS)
    p = weeks.paired
    both = p[p["run_key"] == now].merge(p[p["run_key"] == prev][["model", "prompt", "d", "se", "df"]],
                                         on=["model", "prompt"], suffixes=("", "_prev")).set_index(["model", "prompt"])
    prior_keys = weeks.keys[: weeks.keys.index(now)]
    prior = p[p["run_key"].isin(prior_keys)].groupby(["model", "prompt"])["d"]
    # a prompt's σ is floored at its model's pooled σ, so no band is 0 wide (scorecard._noise.floored_between_noise)
    sigma = floored_between_noise(prior.agg(between_noise), prior.count() - 1, "model")
    # σ is estimated from the prompt's k earlier weekly lifts, so its band's t has k − 1 degrees of freedom — not
    # the reps' (a one-rep week has no rep noise at all, and its moves are still read against the earlier weeks)
    between_df = (prior.count() - 1).reindex(both.index).astype(float)
    df = np.minimum(both["df"], both["df_prev"])
    out = pd.DataFrame({"skill": both["skill"], "prev_lift": both["d_prev"], "now_lift": both["d"]})
    out["delta"] = out["now_lift"] - out["prev_lift"]
    out["within"] = within_noise(both["se"], both["se_prev"], df, confidence)
    out["between"] = t_critical(between_df, confidence) * np.sqrt(2.0) * sigma.reindex(out.index)
    out["threshold"] = threshold(out["within"], out["between"])
    # the p-value reads the band that set the threshold, with that band's degrees of freedom
    by_between = out["between"].notna() & ~(out["within"] >= out["between"])
    out["p_value"] = band_p_value(out["delta"], out["threshold"], df.where(~by_between, between_df), confidence)
    out["p_adjusted"] = adjust(out["p_value"], BH)
    out["moved"] = np.where(out["p_adjusted"].isna(), NOT_KNOWN,
                            np.where(out["p_adjusted"] <= MOVERS_ALPHA, MOVED, WITHIN_NOISE))
    out = out.reset_index()
    return out.reindex(out["delta"].abs().sort_values(ascending=False).index)[MOVER_COLUMNS].reset_index(drop=True)


def movers_correction(movers: pd.DataFrame) -> str:
    """The sentence a page prints under the movers: which tests were corrected together, by which rule."""
    tested = int(movers["p_value"].notna().sum()) if "p_value" in movers else 0
    if not tested:
        return "No prompt move has a known noise band, so none is tested."
    line = (f"{family_words(tested, BH, 'prompt × model moves')}: `moved = yes` when the adjusted p ≤ "
            f"{MOVERS_ALPHA:g}.")
    flagged = int(movers["moved"].eq(MOVED).sum())
    if flagged:
        line += (f" Of the {flagged} flagged, at most {MOVERS_ALPHA * flagged:.1f} are expected to be noise on "
                 f"average ({MOVERS_ALPHA:.0%}).")
    if "within" in movers and movers["within"].isna().all():
        line += (" No within-week noise is known (one rep per arm): every band comes from the prompt's earlier "
                 "weeks, so a prompt needs two earlier weeks to be tested at all.")
    return line


def activation_by_week(weeks: Weeks) -> pd.DataFrame:
    """Per week × skill family: the scorecard's trigger health (:func:`skillbench.signals.trigger_health`),
    as ``run_key, skill_family, runs, activations, rate, low, high, dormancy_runs, false_triggers`` — ``low`` and
    ``high`` the activation rate's 95 % interval (:func:`skillbench.scorecard.rate_intervals`: Wilson, exact
    below 20 runs; runs counted as independent, so a prompt's repetitions make it somewhat too narrow)."""
    from skillbench.scorecard import rate_intervals
    from skillbench.signals import trigger_health

    columns = ["run_key", "skill_family", "runs", "activations", "rate", "low", "high", "dormancy_runs",
               "false_triggers"]
    if weeks.runs.empty:
        return pd.DataFrame(columns=columns)
    health = trigger_health(weeks.runs, by=("run_key", "skill_family"))
    out = health.rename(columns={"scored_runs": "runs", "recall": "rate"})
    interval = rate_intervals(out["activations"], out["runs"])
    out = out.assign(low=interval["low"].to_numpy(), high=interval["high"].to_numpy())[columns]
    order = {k: i for i, k in enumerate(weeks.keys)}
    return out.sort_values(["skill_family", "run_key"], key=lambda s: s.map(order) if s.name == "run_key" else s,
                           kind="stable").reset_index(drop=True)


def never_triggered_in_weeks(weeks: Weeks) -> pd.DataFrame:
    """Skill families and prompts that never activated in the with-skill arm in any week.

    Only runs whose signals parsed count (an unparsed transcript is not evidence of a miss); compare the
    scorecard's per-week list, :func:`skillbench.signals._trigger.never_triggered`.

    Returns:
        ``level`` (``family``/``prompt``), ``name``, ``skill_family``, ``weeks``, ``runs`` — only the never-triggered.
    """
    r = weeks.runs
    columns = ["level", "name", "skill_family", "weeks", "runs"]
    if r.empty:
        return pd.DataFrame(columns=columns)
    own = with_skill_runs(r)
    own = own[reliable(own)].assign(active=lambda f: activated(f))
    rows = []
    for level, key in (("family", "skill_family"), ("prompt", "prompt")):
        g = own.groupby(key).agg(skill_family=("skill_family", "first"), weeks=("run_key", "nunique"),
                                 runs=("run_id", "count"), activations=("active", "sum"))
        for name, row in g[g["activations"] == 0].iterrows():
            rows.append({"level": level, "name": name, "skill_family": row["skill_family"], "weeks": row["weeks"],
                         "runs": row["runs"]})
    return pd.DataFrame(rows, columns=columns)
