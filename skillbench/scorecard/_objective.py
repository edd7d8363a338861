"""The objective layer: what the deterministic checks say, per run, arm, stimulus and model.

Rubric items keep qdrant's maths; checks are a separate record shown beside them. From ``checks.csv`` and the
manifest:

* a run **completes the task** when every one of its checks passed; a run with a check in ``error`` (it could not
  run) has an unknown outcome and is left out — an error is never a skill loss;
* **check pass rate** = passed / (passed + failed) per arm × model; **task pass rate** = completing runs / runs with
  a known outcome;
* **pass@k** and **pass^k** per stimulus (prompt × model × arm) for k = 1 … reps, with the unbiased estimators over
  its ``n`` known runs of which ``c`` completed: pass@k = 1 − C(n−c, k)/C(n, k) (at least one of k tries
  completes), pass^k = C(c, k)/C(n, k) (all k do); averaged over the stimuli that have at least k known runs;
* the **task-pass lift** (with-skill − no-skill: treatment − control) with its paired SE over stimuli, the same
  pairing as the rubric lift (:func:`skillbench.scorecard._stats.paired_differences`);
* **transitions** per stimulus: each lift arm completes when most of its known reps completed (an even split does
  not), giving skilled-only, baseline-only, both or neither — from the control to the treatment (a comparison:
  skilled-only means only the head version completed, baseline-only only the base version);
* the **objective record** per skill family × model (:func:`objective_record_table`): skilled-only (W) against
  baseline-only (L) over its preference-eligible stimuli with a transition, both/neither the ties, and whether it
  is a credible loss (:class:`skillbench.scorecard._verdicts.ObjectiveRecord`, what the gate's ``VALID_REGRESSION``
  reads);
* a check in ``error`` is named in coverage as "check could not run" (:func:`unrunnable_checks`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.special import comb

from skillbench.arms import DEFAULT_PAIR, ArmPair
from skillbench.scorecard._inference import rate_intervals
from skillbench.scorecard._stats import ci_flag, paired_differences, t_critical
from skillbench.scorecard._verdicts import ObjectiveRecord
from skillbench.vocab import (
    BASELINE_ONLY,
    BOTH,
    CHECK_ERROR,
    CHECK_FAILED,
    CHECK_PASSED,
    NEITHER,
    SKILLED_ONLY,
    TRANSITIONS,
)

RUN_COLUMNS = ["run_id", "prompt", "skill_family", "model", "condition", "rep", "dormancy", "checks", "passed",
               "failed", "errors", "completed"]
TOOL_CHECK_TYPES = ("expect_tools", "reject_tools")
RECORD_COLUMNS = ["skill_family", "model", "n", "wins", "ties", "losses", "p_value", "net_loss", "regression",
                  "reason", "evidence"]
UNRUNNABLE = "check could not run"  # the coverage reason of a check in error: never a skill loss
TRANSITION_COLUMNS = ["no_skill_completes", "with_skill_completes", "transition", "no_skill_n", "no_skill_c",
                      "with_skill_n", "with_skill_c"]
RATE_COLUMNS = ["model", "condition", "runs", "check_pass_rate", "check_pass_low", "check_pass_high", "check_errors",
                "known_runs", "task_pass_rate", "task_pass_low", "task_pass_high", "task_pass_method", "unknown_runs"]
ERROR_COLUMNS = ["run_id", "prompt", "model", "condition", "rep", "check_id", "check_type", "detail", "reason"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``n`` tries with ``c`` successes (NaN when ``k > n``)."""
    if k > n or k < 1:
        return float("nan")
    return 1.0 - float(comb(n - c, k, exact=True)) / float(comb(n, k, exact=True))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k (all ``k`` tries succeed) from ``n`` tries with ``c`` successes (NaN when ``k > n``)."""
    if k > n or k < 1:
        return float("nan")
    return float(comb(c, k, exact=True)) / float(comb(n, k, exact=True))


def run_outcomes(checks: pd.DataFrame, manifest: pd.DataFrame) -> pd.DataFrame:
    """One row per run with checks: its counts and ``completed`` (True/False, or NA when a check errored).

    Args:
        checks: ``checks.csv`` rows (:func:`skillbench.ledgers._checks.read_checks`).
        manifest: the week's manifest (family and dormancy of each run).
    """
    if checks.empty:
        return pd.DataFrame(columns=RUN_COLUMNS)
    status = checks.assign(_p=checks["status"].eq(CHECK_PASSED), _f=checks["status"].eq(CHECK_FAILED),
                           _e=checks["status"].eq(CHECK_ERROR))
    g = status.groupby("run_id", sort=True)
    runs = pd.DataFrame({"checks": g.size(), "passed": g["_p"].sum(), "failed": g["_f"].sum(),
                         "errors": g["_e"].sum()}).reset_index()
    info = manifest[["run_id", "prompt", "skill_family", "model", "condition", "rep", "dormancy"]].astype(
        {"run_id": str})
    runs = runs.merge(info, on="run_id", how="inner")
    runs["completed"] = pd.Series(runs["failed"].eq(0), dtype="boolean").mask(runs["errors"].gt(0))
    return runs[RUN_COLUMNS].sort_values(["model", "prompt", "condition", "rep"], kind="stable").reset_index(drop=True)


def arm_rates(runs: pd.DataFrame) -> pd.DataFrame:
    """Per model × arm: check and task pass rates with their 95 % intervals, and the counts behind them (errors
    counted apart).

    The intervals are :func:`skillbench.scorecard._inference.rate_intervals`' (Wilson; exact below 20 trials),
    over checks and over runs with a known outcome as independent trials: a prompt's runs and a run's checks are
    correlated, so the interval is the narrowest the data allow, not a claim about prompts in general (the task
    lift's paired SE over stimuli is that).
    """
    if runs.empty:
        return pd.DataFrame(columns=RATE_COLUMNS)
    g = runs.assign(_known=runs["completed"].notna(), _done=runs["completed"].fillna(False).astype(bool)
                    ).groupby(["model", "condition"], sort=True)
    out = pd.DataFrame({"runs": g.size(), "passed": g["passed"].sum(), "failed": g["failed"].sum(),
                        "check_errors": g["errors"].sum(), "known_runs": g["_known"].sum(),
                        "completed_runs": g["_done"].sum()})
    graded = out["passed"] + out["failed"]
    out["check_pass_rate"] = (out["passed"] / graded).where(graded > 0)
    out["task_pass_rate"] = (out["completed_runs"] / out["known_runs"]).where(out["known_runs"] > 0)
    out["unknown_runs"] = out["runs"] - out["known_runs"]
    checks = rate_intervals(out["passed"], graded)
    tasks = rate_intervals(out["completed_runs"], out["known_runs"])
    out["check_pass_low"], out["check_pass_high"] = checks["low"], checks["high"]
    out["task_pass_low"], out["task_pass_high"], out["task_pass_method"] = tasks["low"], tasks["high"], tasks["method"]
    return out.reset_index()[RATE_COLUMNS]


def stimulus_outcomes(runs: pd.DataFrame) -> pd.DataFrame:
    """Per prompt × model × arm: ``n`` known runs, ``c`` completed, and whether the arm completes (majority)."""
    known = runs[runs["completed"].notna()]
    g = known.assign(_c=known["completed"].astype(bool)).groupby(
        ["skill_family", "prompt", "model", "condition", "dormancy"], sort=True)
    out = pd.DataFrame({"n": g.size(), "c": g["_c"].sum()}).reset_index()
    out["task_pass_rate"] = out["c"] / out["n"]
    out["completes"] = 2 * out["c"] > out["n"]  # an even split does not complete
    return out


def pass_k_table(stimuli: pd.DataFrame) -> pd.DataFrame:
    """Per model × arm × k: mean pass@k and pass^k over the stimuli with at least k known runs."""
    rows = []
    for (model, cond), block in stimuli.groupby(["model", "condition"], sort=True):
        for k in range(1, int(block["n"].max()) + 1):
            ok = block[block["n"] >= k]
            tries = list(zip(ok["n"].astype(int), ok["c"].astype(int), strict=True))
            rows.append({"model": model, "condition": cond, "k": k, "stimuli": len(ok),
                         "pass_at_k": float(np.mean([pass_at_k(n, c, k) for n, c in tries])),
                         "pass_hat_k": float(np.mean([pass_hat_k(n, c, k) for n, c in tries]))})
    return pd.DataFrame(rows, columns=["model", "condition", "k", "stimuli", "pass_at_k", "pass_hat_k"])


def transitions(stimuli: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> pd.DataFrame:
    """Per prompt × model present in both lift arms: the transition (skilled-only, baseline-only, both, neither).

    Control → treatment: ``no_skill_completes`` is the control's outcome, ``with_skill_completes`` the
    treatment's (:data:`~skillbench.vocab.SKILLED_ONLY` = only the treatment completes); ``no_skill_n``/``_c``
    and ``with_skill_n``/``_c`` are each arm's known runs and completions, what the loss test reads.
    """
    no, wi = pair.lift_arms
    arms = stimuli[stimuli["condition"].isin(pair.lift_arms)]
    index = ["skill_family", "prompt", "model", "dormancy"]
    if arms.empty:  # no run with a known outcome in either arm (e.g. every run harness-invalid)
        return pd.DataFrame(columns=[*index, *TRANSITION_COLUMNS])
    wide = arms.pivot(index=index, columns="condition", values=["completes", "n", "c"])
    both = wide["completes"].reindex(columns=list(pair.lift_arms)).dropna().index
    wide = wide.loc[both]

    def arm(value: str, cond: str) -> pd.Series:
        return wide[value].reindex(columns=list(pair.lift_arms))[cond]

    base, skilled = arm("completes", no).astype(bool), arm("completes", wi).astype(bool)
    kind = np.select([skilled & ~base, base & ~skilled, base & skilled], [SKILLED_ONLY, BASELINE_ONLY, BOTH], NEITHER)
    out = pd.DataFrame({"no_skill_completes": base, "with_skill_completes": skilled, "transition": kind,
                        "no_skill_n": arm("n", no).astype(int), "no_skill_c": arm("c", no).astype(int),
                        "with_skill_n": arm("n", wi).astype(int), "with_skill_c": arm("c", wi).astype(int)})
    return out[TRANSITION_COLUMNS].reset_index()


def transition_counts(trans: pd.DataFrame) -> pd.DataFrame:
    """Per model: how many stimuli fall in each transition (dormancy stimuli left out)."""
    scored = trans[~trans["dormancy"].astype(bool)]
    counts = scored.groupby(["model", "transition"]).size().unstack(fill_value=0)
    return counts.reindex(columns=list(TRANSITIONS), fill_value=0).reset_index()


def task_lift(stimuli: pd.DataFrame, pair: ArmPair = DEFAULT_PAIR) -> pd.DataFrame:
    """Per model: task pass rate control → treatment (no-skill → with-skill) over paired stimuli, the lift and its
    paired SE (``no_skill``/``with_skill`` columns: the control's and the treatment's rates)."""
    prompts = stimuli[~stimuli["dormancy"].astype(bool)]
    paired = paired_differences(prompts, metric="task_pass_rate", pair=pair)
    rows = []
    for model, block in paired.groupby("model", sort=True):
        n = len(block)
        se = float(block["d"].std(ddof=1) / np.sqrt(n)) if n >= 2 else float("nan")
        half = t_critical(n - 1) * se if n >= 2 else float("nan")
        lift = float(block["d"].mean())
        rows.append({"model": model, "n_pairs": n, "no_skill": float(block["no_skill"].mean()),
                     "with_skill": float(block["with_skill"].mean()), "task_lift": lift, "task_lift_se": se,
                     "excludes_zero": ci_flag(lift, se, half, n)})
    return pd.DataFrame(rows, columns=["model", "n_pairs", "no_skill", "with_skill", "task_lift", "task_lift_se",
                                       "excludes_zero"])


def objective_loss_test(no_n: Sequence[int] | np.ndarray, no_c: Sequence[int] | np.ndarray,
                        with_n: Sequence[int] | np.ndarray, with_c: Sequence[int] | np.ndarray) -> tuple[float, float]:
    """Does the treatment complete the task less often than the control? Exact, whatever reps are missing.

    Per stimulus, the control completed ``no_c`` of its ``no_n`` known runs and the treatment ``with_c`` of
    ``with_n``. The statistic is the sum over stimuli of the rate drop ``no_c/no_n − with_c/with_n``. Under the
    null (within a stimulus every run completes with the same chance in both arms, whatever that chance is),
    given the stimulus's total completions the treatment's count is hypergeometric, independently across
    stimuli; the exact null distribution of the sum is the convolution of those, on the grid of ``1/L`` with
    ``L`` the least common multiple of the run counts. So a stimulus that lost a rep to a check that could not
    run in one arm only weighs its rate as what it is, instead of a majority over fewer runs (which inflates
    false regressions when errors hit one arm), and with one known run per arm the test *is* the sign test of
    losses against wins.

    Returns:
        ``(p, drop)``: the one-sided p of a loss (1.0 without a stimulus) and the mean rate drop (NaN without one).
    """
    from scipy.stats import hypergeom

    nn, nc = np.asarray(no_n, dtype=int), np.asarray(no_c, dtype=int)
    wn, wc = np.asarray(with_n, dtype=int), np.asarray(with_c, dtype=int)
    keep = (nn > 0) & (wn > 0)
    nn, nc, wn, wc = nn[keep], nc[keep], wn[keep], wc[keep]
    if not nn.size:
        return 1.0, float("nan")
    scale = int(np.lcm.reduce(np.concatenate([nn, wn])))
    observed = int(np.sum(scale * nc // nn - scale * wc // wn))
    dist, low = np.array([1.0]), 0  # the null distribution of the scaled sum, starting at value `low`
    for a, b, s_ in zip(nn, wn, nc + wc, strict=True):  # control runs, treatment runs, completions
        k = np.arange(max(0, s_ - a), min(s_, b) + 1)  # the treatment's possible completions
        values = scale * (s_ - k) // a - scale * k // b
        probs = hypergeom.pmf(k, a + b, s_, b)
        kernel = np.zeros(int(values.max() - values.min()) + 1)
        np.add.at(kernel, values - values.min(), probs)
        dist, low = np.convolve(dist, kernel), low + int(values.min())
    p = float(dist[max(0, observed - low):].sum())
    return min(1.0, p), float(np.mean(nc / nn - wc / wn))


def objective_records(transitions: pd.DataFrame | None) -> dict[tuple[str, str], ObjectiveRecord]:
    """Per family × model, the objective record of its non-dormancy stimuli with checks.

    The transitions give the W/T/L a page shows; the loss is tested on each stimulus's completion rates
    (:func:`objective_loss_test`) when the frame carries each arm's known runs
    and completions, else (a frame from before they were kept) by the sign test of its transitions.

    Args:
        transitions: :func:`transitions` output (None or empty: no checks).
    """
    if transitions is None or transitions.empty:
        return {}
    votes = transitions[~transitions["dormancy"].astype(bool)]
    counted = {"no_skill_n", "no_skill_c", "with_skill_n", "with_skill_c"} <= set(votes.columns)
    out = {}
    for (family, model), block in votes.groupby(["skill_family", "model"], sort=True):
        p, drop = (objective_loss_test(block["no_skill_n"], block["no_skill_c"], block["with_skill_n"],
                                       block["with_skill_c"]) if counted else (None, None))
        out[(family, model)] = ObjectiveRecord(len(block), int(block["transition"].eq(SKILLED_ONLY).sum()),
                                               int(block["transition"].eq(BASELINE_ONLY).sum()), p, drop)
    return out


def tool_violations(checks: pd.DataFrame) -> pd.DataFrame:
    """The failed tool-constraint checks (``expect_tools``/``reject_tools``): run, check and what was used."""
    v = checks[checks["check_type"].isin(TOOL_CHECK_TYPES) & checks["status"].eq(CHECK_FAILED)]
    return v[["prompt", "model", "condition", "rep", "run_id", "check_id", "detail"]].sort_values(
        ["prompt", "model", "condition", "rep"], kind="stable").reset_index(drop=True)


def objective_record_table(trans: pd.DataFrame) -> pd.DataFrame:
    """Per skill family × model: the objective record the gate reads, with its loss test and why it is not one.

    Args:
        trans: :func:`transitions` output (dormancy stimuli are left out here, as in the gate).

    Returns:
        :data:`RECORD_COLUMNS`; ``reason`` is empty for a credible loss (``regression``), else ``underpowered``,
        ``not_significant``, ``no_loss_direction`` or ``net_loss_below_floor``.
    """
    rows = [{"skill_family": family, "model": model, "n": rec.n, "wins": rec.wins, "ties": rec.ties,
             "losses": rec.losses, "p_value": rec.p_value, "net_loss": rec.net_loss, "regression": rec.regression,
             "reason": rec.reason, "evidence": rec.evidence}
            for (family, model), rec in objective_records(trans).items()]
    return pd.DataFrame(rows, columns=RECORD_COLUMNS)


def unrunnable_checks(checks: pd.DataFrame) -> pd.DataFrame:
    """The checks in ``error``, each named "check could not run" (coverage lists them; they are never a loss)."""
    e = checks[checks["status"].eq(CHECK_ERROR)].assign(reason=UNRUNNABLE)
    return e[ERROR_COLUMNS].sort_values(["prompt", "model", "condition", "rep", "check_id"], kind="stable"
                                        ).reset_index(drop=True)
