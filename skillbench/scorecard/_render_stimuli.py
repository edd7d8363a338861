"""The evidence behind each gate verdict, as ``scorecard.md``, ``compare.md`` and their PR comments show it.

Per skill family × model, the verdict in dotnet/skills' plain words (the PR comment's Verdict column of their
``eng/vally-adapter/consolidate.mjs``: Improved, Not proven improved, Invalid or underpowered, Activation contract
failed, Preference loss (report only), Objective regression — :func:`skillbench.scorecard._verdicts.verdict_label`)
with the machine state beside it; per stimulus (prompt × model), the pairwise outcome of each rep, the stimulus
vote the gate counted and the deterministic checks' pass rate in each arm; per dormancy prompt, how many of its
treatment and plugin runs activated the skill it must leave dormant.

The votes come from the gate's own rule (:func:`skillbench.scorecard._gate.collapse_votes`) and the activations
from the activation contract's (:func:`skillbench.scorecard._gate.dormancy_activations`), so a row here never
disagrees with the verdict it explains. Every name in a cell came from a pull request and goes through
:func:`skillbench.markdown.md_text`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from skillbench.arms import ArmPair
from skillbench.markdown import fmt, md_code, md_table, md_text, p_value
from skillbench.scorecard._compute import ScorecardData
from skillbench.scorecard._gate import collapse_votes, dormancy_activations
from skillbench.scorecard._verdicts import (
    GATE_RULES,
    INVALID_LABEL,
    NOT_PROVEN_LABEL,
    PREFERENCE_LOSS_LABEL,
    Wording,
    gate_rule,
    verdict_label,
)
from skillbench.vocab import ACTIVATION_CONTRACT_FAILED, INVALID_INCONCLUSIVE, OBJECTIVE_LOSS

IMPROVED_LABEL = gate_rule("").label
CONTRACT_LABEL = gate_rule(ACTIVATION_CONTRACT_FAILED).label
REGRESSION_LABEL = gate_rule(OBJECTIVE_LOSS).label
# dotnet's icons, in the order their report counts the labels (worst, for a reader, last but regression first).
LABEL_ICONS: dict[str, str] = {
    REGRESSION_LABEL: "🔻", INVALID_LABEL: "⚠️", CONTRACT_LABEL: "⛔", PREFERENCE_LOSS_LABEL: "📉",
    NOT_PROVEN_LABEL: "➖", IMPROVED_LABEL: "✅",
}
# An invalid record's line is never dropped, so its evidence (which a pull request may write) is cut to a length a
# validator's line fits in: a few hundred records still fit a PR comment.
EVIDENCE_CHARS = 300
REP_ERROR = "E"  # a rep whose pairwise judge call failed: no direction, and the record is inconclusive
STIMULUS_COLUMNS = ["skill_family", "model", "prompt", "reps", "vote", "judge_errors", "control_checks",
                    "treatment_checks", "passing"]
DORMANCY_COLUMNS = ["skill_family", "prompt", "model", "activated", "runs", "passing"]


@dataclass(frozen=True)
class StimulusTables:
    """The per-stimulus votes and the dormancy contracts of a week (or of a comparison's families).

    Attributes:
        stimuli: :data:`STIMULUS_COLUMNS`, one row per preference-eligible prompt × model with a pairwise
            judgment: ``reps`` the outcome of each rep in rep order (``W``/``T``/``L``, ``E`` a judge error),
            ``vote`` the stimulus vote, ``*_checks`` ``(passed, graded)`` of the arm's checks or None.
        dormancy: :data:`DORMANCY_COLUMNS`, one row per dormancy prompt × model: of its ``runs`` treatment and
            plugin runs, how many ``activated`` the skill.
        pair: the arms (control, treatment) the check columns are of.
    """

    stimuli: pd.DataFrame
    dormancy: pd.DataFrame
    pair: ArmPair

    def for_families(self, families: list[str]) -> StimulusTables:
        """Only the rows of ``families`` (a comparison shows the changed families)."""
        keep = set(families)
        return StimulusTables(self.stimuli[self.stimuli["skill_family"].isin(keep)],
                              self.dormancy[self.dormancy["skill_family"].isin(keep)], self.pair)


def _check_counts(d: ScorecardData) -> dict[tuple[str, str, str], tuple[int, int]]:
    """(prompt, model, condition) → (checks passed, checks passed or failed); a check in error is not graded."""
    runs = d.objective.get("check_runs")
    if runs is None or runs.empty:
        return {}
    g = runs.groupby(["prompt", "model", "condition"], sort=False)[["passed", "failed"]].sum()
    return {key: (int(r.passed), int(r.passed + r.failed)) for key, r in zip(g.index, g.itertuples(), strict=True)}


def _passing(vote: str, errors: int, control: tuple[int, int] | None, treatment: tuple[int, int] | None) -> bool:
    """A stimulus passes when the treatment won its vote, no judge call failed and its checks pass at least as
    often as the control's (when both arms have graded checks)."""
    if vote != "W" or errors:
        return False
    if control and treatment and control[1] and treatment[1]:
        return treatment[0] / treatment[1] >= control[0] / control[1]
    return True


def stimulus_tables(d: ScorecardData) -> StimulusTables:
    """The per-stimulus votes and the dormancy contracts of a computed scorecard."""
    pair, manifest = d.pair, d.manifest
    dormant = set(manifest.loc[manifest["dormancy"], "prompt"])
    rows: list[dict] = []
    pairs = d.pairs if d.pairs is not None else pd.DataFrame(columns=["skill_family", "model", "prompt", "rep",
                                                                      "outcome", "error"])
    eligible = pairs[~pairs["prompt"].isin(dormant)]
    if not eligible.empty:
        errored = eligible["error"].astype(str).str.strip().ne("")
        votes = collapse_votes(eligible[~errored]).set_index(["skill_family", "model", "prompt"])["vote"]
        checks = _check_counts(d)
        marked = eligible.assign(_o=eligible["outcome"].astype(str).where(~errored, REP_ERROR),
                                 _rep=pd.to_numeric(eligible["rep"], errors="coerce"))
        for (family, model, prompt), block in marked.groupby(["skill_family", "model", "prompt"], sort=True):
            reps = " ".join(block.sort_values("_rep", kind="stable")["_o"])
            vote = str(votes.get((family, model, prompt), "–"))
            n_err = int(block["_o"].eq(REP_ERROR).sum())
            control = checks.get((prompt, model, pair.control))
            treatment = checks.get((prompt, model, pair.treatment))
            rows.append({"skill_family": family, "model": model, "prompt": prompt, "reps": reps, "vote": vote,
                         "judge_errors": n_err, "control_checks": control, "treatment_checks": treatment,
                         "passing": _passing(vote, n_err, control, treatment)})
    dorm_rows: list[dict] = []
    for prompt, block in manifest[manifest["dormancy"]].groupby("prompt", sort=True):
        for r in dormancy_activations(block, pair).itertuples(index=False):
            dorm_rows.append({"skill_family": r.skill_family, "prompt": prompt, "model": r.model,
                              "activated": int(r.dormancy_activations), "runs": int(r.dormancy_runs),
                              "passing": int(r.dormancy_activations) == 0})
    return StimulusTables(pd.DataFrame(rows, columns=STIMULUS_COLUMNS),
                          pd.DataFrame(dorm_rows, columns=DORMANCY_COLUMNS), pair)


def _has_counts(counts: object) -> bool:
    return isinstance(counts, tuple)


def _rate(counts: tuple[int, int] | None) -> str:
    if not _has_counts(counts) or not counts[1]:
        return "–"
    return f"{fmt(counts[0] / counts[1])} ({counts[0]}/{counts[1]})"


def stimulus_rows(tables: StimulusTables, *, failing_only: bool = False) -> tuple[list[str], list[list[str]]]:
    """The per-stimulus table's headers and rows (``failing_only``: the rows that do not pass)."""
    frame = tables.stimuli[~tables.stimuli["passing"]] if failing_only else tables.stimuli
    checked = bool(tables.stimuli[["control_checks", "treatment_checks"]].map(_has_counts).any().any())
    headers = ["skill family", "model", "stimulus", "reps (W/T/L each)", "vote"]
    headers += [f"checks {md_text(tables.pair.control)}", f"checks {md_text(tables.pair.treatment)}"] * checked
    rows = [[md_text(r.skill_family), md_text(r.model), md_text(r.prompt), r.reps, f"**{r.vote}**"]
            + [_rate(r.control_checks), _rate(r.treatment_checks)] * checked for r in frame.itertuples(index=False)]
    return headers, rows


def dormancy_rows(tables: StimulusTables, *, failing_only: bool = False) -> tuple[list[str], list[list[str]]]:
    """The dormancy contracts' headers and rows (``failing_only``: the broken contracts)."""
    frame = tables.dormancy[~tables.dormancy["passing"]] if failing_only else tables.dormancy
    headers = ["skill family", "stimulus", "model", "expected", "activated in n of k runs", "contract"]
    rows = [[md_text(r.skill_family), md_text(r.prompt), md_text(r.model), "dormant",
             f"{r.activated} of {r.runs}", "kept" if r.passing else f"**{CONTRACT_LABEL.lower()}**"]
            for r in frame.itertuples(index=False)]
    return headers, rows


def stimulus_markdown(tables: StimulusTables) -> str:
    """Every stimulus row as one table ("" without any)."""
    headers, rows = stimulus_rows(tables)
    return md_table(headers, rows) if rows else ""


def dormancy_markdown(tables: StimulusTables) -> str:
    """Every dormancy contract as one table ("" without any)."""
    headers, rows = dormancy_rows(tables)
    return md_table(headers, rows) if rows else ""


# -- the verdict per skill family × model -------------------------------------------------------------------

def record_label(record: object) -> str:
    """The plain label of a gate record (a row with ``state, reason, n, wins, losses``)."""
    return verdict_label(str(getattr(record, "state", "")), str(getattr(record, "reason", "") or ""),
                         int(getattr(record, "n", 0)), int(getattr(record, "wins", 0)),
                         int(getattr(record, "losses", 0)))


def with_icon(label: str) -> str:
    """``✅ Improved``: a plain label with dotnet's icon."""
    icon = LABEL_ICONS.get(label, "")
    return f"{icon} {label}" if icon else label


def machine_state(record: object) -> str:
    """``STATE (reason)`` as code, beside the plain label."""
    state, reason = str(getattr(record, "state", "")), str(getattr(record, "reason", "") or "")
    return md_code(f"{state} ({reason})" if reason else state)


def label_counts(labels: list[str]) -> str:
    """``✅ 2 Improved · ⚠️ 1 Invalid or underpowered``: how many records read each plain label, in dotnet's
    order (a label no rule has, from another version's card, last)."""
    known = [f"{icon} {labels.count(label)} {label}" for label, icon in LABEL_ICONS.items() if label in labels]
    other = [f"{labels.count(label)} {label}" for label in dict.fromkeys(labels) if label not in LABEL_ICONS]
    return " · ".join(known + other)


def invalid_lines(gate: pd.DataFrame | None) -> list[str]:
    """One line per ``INVALID_INCONCLUSIVE`` record — every one, uncapped: an invalid family is never hidden
    below the fold. Its evidence (for a broken spec: the validator's line) follows its state."""
    if gate is None or gate.empty:
        return []
    bad = gate[gate["state"].astype(str).eq(INVALID_INCONCLUSIVE)]
    return [f"- ⚠️ **{md_text(r.skill_family)} × {md_text(r.model)}** — {machine_state(r)}: "
            f"{md_text(r.evidence, EVIDENCE_CHARS)}" for r in bad.itertuples(index=False)]


def next_action(record: object, wording: Wording | None = None) -> str:
    """What to do about a record, in ``wording``'s words: its rule's action (a preference loss: inspect the
    stimuli it lost; a reason no rule has: nothing said)."""
    state, reason = str(getattr(record, "state", "")), str(getattr(record, "reason", "") or "")
    if record_label(record) == PREFERENCE_LOSS_LABEL:
        words = wording or Wording()
        return f"the judge credibly prefers {words.control}'s answers: inspect the stimuli it lost (report only)"
    rule = next((r for r in GATE_RULES if (r.state, r.reason) == (state, reason)), None)
    return rule.what_to_do(wording) if rule is not None else ""


def p_cell(r: object) -> str:
    """The record's sign-test p and, for a record Holm corrected with others, its adjusted p: ``0.03125 → 0.4375``
    (``–``: no test was read — an earlier rule decided)."""
    raw, adjusted = getattr(r, "p_value", float("nan")), getattr(r, "p_adjusted", float("nan"))
    if adjusted is None or pd.isna(adjusted):
        return "–"
    return f"{p_value(raw)} → {p_value(adjusted)}"


def gate_rows(gate: pd.DataFrame, *, failing_only: bool = False) -> tuple[list[str], list[list[str]]]:
    """The verdict table: family, model, plain verdict, machine state, p (raw → Holm), evidence; ``failing_only``:
    the records that are not Improved, each with its next action."""
    rows = []
    for r in gate.itertuples(index=False):
        label = record_label(r)
        if failing_only and label == IMPROVED_LABEL:
            continue
        row = [md_text(r.skill_family), md_text(r.model), with_icon(label), machine_state(r), p_cell(r),
               md_text(r.evidence)]
        rows.append(row + [md_text(next_action(r))] * failing_only)
    return (["skill family", "model", "verdict", "state", "p (raw → Holm)", "evidence"]
            + ["next action"] * failing_only, rows)


def error_control_line(gate: pd.DataFrame, scope: str = "this report") -> str:
    """Which tests were corrected together and which passes survive, in one sentence for the page.

    ``scope`` names the report (``this week``, ``this subset week (its own records)``, ``this comparison``).
    """
    from skillbench.scorecard._inference import HOLM, family_words
    from skillbench.vocab import NOT_SIGNIFICANT_ADJUSTED, VALID_PASS

    members = int(gate["p_adjusted"].notna().sum()) if "p_adjusted" in gate else 0
    if not members:
        return f"Error control: no record of {scope} reached the sign test, so nothing was corrected."
    passes = int(gate["state"].eq(VALID_PASS).sum())
    lost = gate[gate["reason"].eq(NOT_SIGNIFICANT_ADJUSTED)]
    names = ", ".join(f"{md_text(r.skill_family)} × {md_text(r.model)}" for r in lost.itertuples(index=False))
    tail = (f"; {len(lost)} pass{'es' if len(lost) != 1 else ''} alone but not after the correction ({names})"
            if len(lost) else "")
    alone = passes + len(lost)
    line = (f"Error control: {family_words(members, HOLM)} in {scope}; {alone} pass{'es' if alone != 1 else ''} "
            f"alone, {passes} survive{'s' if passes == 1 else ''}{tail}.")
    need = votes_to_survive(members)
    if members > 1 and "wins" in gate and "losses" in gate:
        short = gate[gate["p_adjusted"].notna() & (gate["wins"] + gate["losses"]).lt(need)]
        if len(short):
            line += (f" Among {members} records even a clean sweep needs {need} stimuli voting W or L to survive "
                     f"(0.5^{need} × {members} ≤ 0.05): {len(short)} of them had fewer and could not pass — add "
                     "preference-eligible prompts, or report fewer families × models at once.")
    return line


def votes_to_survive(members: int, alpha: float = 0.05) -> int:
    """The fewest W/L votes with which an all-wins record survives Holm among ``members`` records: its one-sided
    sign-test p is ``0.5^n`` and Holm multiplies the smallest p by ``members``."""
    return max(1, math.ceil(math.log2(max(members, 1) / alpha)))
