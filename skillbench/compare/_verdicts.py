"""The merge decision per changed family × model: the preference gate on head against base, then what it means.

The rule is the preference gate's (:mod:`skillbench.scorecard._gate`: one vote per stimulus, exact sign test,
net win ≥ 20 %, n ≥ 5, the dormancy contract), with the treatment the head and the control the base; every state,
its precedence and what repairs it come from the verdict specification (:mod:`skillbench.scorecard._verdicts`).
What the report adds:

* **provenance** — every run of a version arm must come from the commit the comparison declared (dotnet's
  exact-commit rule): a run whose ``skills_commit`` (or working-tree ``skills_diff``) is another makes the record
  ``INVALID_INCONCLUSIVE (commit_mismatch)``, ahead of every other reason;
* **the finding** — ``improvement`` (``VALID_PASS``), ``regression`` (``VALID_REGRESSION``: only the objective
  record of deterministic checks can say so), ``preference loss (report only)`` (the gate's rule mirrored: a
  credible preference for the base's answers, which never fails a merge by itself), ``no change`` and
  ``invalid``, each with the action that repairs it.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from skillbench.scorecard import GATE_RULES, ObjectiveRecord, Wording, gate_rule
from skillbench.vocab import (
    ACTIVATION_CONTRACT_FAILED,
    COMMIT_MISMATCH,
    INVALID_INCONCLUSIVE,
    MIN_STIMULI,
    UNDERPOWERED,
    VALID_NO_CHANGE,
    VALID_PASS,
    VALID_REGRESSION,
)

IMPROVEMENT, NO_CHANGE, PREFERENCE_LOSS, REGRESSION, INVALID = (
    "improvement", "no change", "preference loss (report only)", "regression", "invalid")
FINDINGS: tuple[str, ...] = (REGRESSION, INVALID, PREFERENCE_LOSS, NO_CHANGE, IMPROVEMENT)  # worst first
VERDICT_COLUMNS = ["skill_family", "model", "state", "reason", "verdict", "finding", "n", "wins", "ties", "losses",
                   "p_value", "p_adjusted", "net_win", "evidence", "repair", "new"]

COMPARE_WORDING = Wording(treatment="the head", control="the base", arms="the versions",
                          command="`skillbench compare`")
# Reason → repair, in a comparison's words; a pass needs none.
REPAIRS: dict[str, str] = {
    **{rule.reason: rule.what_to_do(COMPARE_WORDING) for rule in GATE_RULES if rule.reason},
    PREFERENCE_LOSS: "the judge credibly prefers the base's answers: review the edit before merging",
}


def preference_loss(n: int, wins: int, losses: int) -> bool:
    """A credible preference for the control: the gate's pass rule mirrored (n ≥ 5, p(loss) ≤ 0.05, more losses
    than wins, net loss ≥ 20 %) — the same test the objective record applies to check transitions."""
    return ObjectiveRecord(n=n, wins=wins, losses=losses).regression


def commit_mismatches(manifest: pd.DataFrame, declared: Mapping[str, Mapping[str, str]]) -> pd.DataFrame:
    """Runs of a declared version arm whose skills came from another commit (or another working-tree diff).

    Args:
        manifest: the week's manifest (``skills_commit``, ``skills_diff`` columns).
        declared: ``run.json``'s ``versions``: condition label → ``{ref, commit, diff}``.

    Returns:
        ``run_id, skill_family, model, condition, skills_commit, declared_commit`` of every offending run.
    """
    rows = []
    for run in manifest.itertuples(index=False):
        want = declared.get(str(run.condition))
        if not want:
            continue
        got_commit, got_diff = str(getattr(run, "skills_commit", "") or ""), str(getattr(run, "skills_diff", "") or "")
        if got_commit != str(want.get("commit", "")) or got_diff != str(want.get("diff", "") or ""):
            rows.append({"run_id": run.run_id, "skill_family": run.skill_family, "model": run.model,
                         "condition": run.condition, "skills_commit": got_commit or "(none)",
                         "declared_commit": str(want.get("commit", ""))})
    return pd.DataFrame(rows, columns=["run_id", "skill_family", "model", "condition", "skills_commit",
                                       "declared_commit"])


def finding(state: str, reason: str, n: int, wins: int, losses: int) -> str:
    """What a gate record means for a merge."""
    if state == VALID_PASS:
        return IMPROVEMENT
    if state == VALID_REGRESSION:
        return REGRESSION
    if state == INVALID_INCONCLUSIVE:
        return INVALID
    if state == VALID_NO_CHANGE and reason != ACTIVATION_CONTRACT_FAILED and preference_loss(n, wins, losses):
        return PREFERENCE_LOSS
    return NO_CHANGE


def compare_verdicts(gate: pd.DataFrame | None, families: list[str], models: list[str],
                     mismatches: pd.DataFrame | None = None, *, new: bool = False,
                     eligible: Mapping[str, int] | None = None) -> pd.DataFrame:
    """One row per changed family × model (:data:`VERDICT_COLUMNS`), worst finding first.

    A family × model the gate has no record of (no pair was judged) is ``INVALID_INCONCLUSIVE (underpowered)``;
    ``eligible`` (family → preference-eligible prompts at the head) lets its evidence say a family was never run.
    ``new``: the families do not exist at the base, so the gate's record is head against no-skill.
    """
    records = {} if gate is None else {(r.skill_family, r.model): r for r in gate.itertuples(index=False)}
    bad = set() if mismatches is None else set(zip(mismatches["skill_family"], mismatches["model"], strict=True))
    rows = []
    for family in families:
        for model in models:
            r = records.get((family, model))
            n, w, t, lo = (int(r.n), int(r.wins), int(r.ties), int(r.losses)) if r is not None else (0, 0, 0, 0)
            state, reason = (str(r.state), str(r.reason)) if r is not None else (INVALID_INCONCLUSIVE, UNDERPOWERED)
            evidence = str(r.evidence) if r is not None else "n=0; no pair judged"
            if r is None and eligible is not None and not eligible.get(family):
                evidence = f"n=0; not run: no preference-eligible prompt (the gate needs {MIN_STIMULI})"
            if (family, model) in bad:  # the spec's first step: it outranks whatever the gate decided
                mismatch = gate_rule(COMMIT_MISMATCH)
                state, reason = mismatch.state, mismatch.reason
            found = finding(state, reason, n, w, lo)
            repair = REPAIRS.get(PREFERENCE_LOSS if found == PREFERENCE_LOSS else reason, "")
            rows.append({"skill_family": family, "model": model, "state": state, "reason": reason,
                         "verdict": state if not reason else f"{state} ({reason})", "finding": found, "n": n,
                         "wins": w, "ties": t, "losses": lo,
                         "p_value": float(r.p_value) if r is not None else 1.0,
                         "p_adjusted": _adjusted(r),
                         "net_win": float(r.net_win) if r is not None else float("nan"), "evidence": evidence,
                         "repair": repair, "new": new})
    out = pd.DataFrame(rows, columns=VERDICT_COLUMNS)
    rank = {f: i for i, f in enumerate(FINDINGS)}
    return out.sort_values(["finding", "skill_family", "model"], key=lambda s: s.map(rank) if s.name == "finding"
                           else s).reset_index(drop=True)


def _adjusted(record: object) -> float | None:
    """The record's Holm-adjusted p (None: no gate record, or an earlier rule decided so no test was read)."""
    value = getattr(record, "p_adjusted", None)
    return None if value is None or pd.isna(value) else float(value)


def exit_code(verdicts: pd.DataFrame, fail_on: str | None) -> int:
    """``--fail-on``: ``regression`` fails on a regression or an invalid record, ``no-improvement`` on anything
    but an improvement; without it the comparison only reports (0).

    A new family cannot regress from a base it does not have: too few prompts to judge it (underpowered, said
    before any run) does not fail ``regression``; any other invalid record of it (judge errors, missing runs) does.
    """
    if fail_on is None or verdicts.empty:
        return 0
    if fail_on == "regression":
        new = verdicts["new"] if "new" in verdicts else pd.Series(False, index=verdicts.index)
        excused = new.astype(bool) & verdicts["reason"].eq(UNDERPOWERED)
        return int((verdicts["finding"].isin([REGRESSION, INVALID]) & ~excused).any())
    if fail_on == "no-improvement":
        return int(verdicts["finding"].ne(IMPROVEMENT).any())
    raise ValueError(f"--fail-on {fail_on!r}: use regression or no-improvement")


FAIL_ON = ("regression", "no-improvement")
