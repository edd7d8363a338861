"""The verdict specification: every verdict the preference gate and the objective record give, in the order they
are checked, with the rule in words, a plain-word label and what to do — as data, in one place.

:data:`GATE_RULES` is the gate's precedence: :func:`decide` returns the first rule whose condition holds for a
record (:class:`GateRecord`), so reordering a precedence step is moving one line of the tuple and relabelling a
verdict is editing one string. :data:`OBJECTIVE_RULES` does the same for the objective record of deterministic
checks (:class:`ObjectiveRecord`), whose credible loss is the gate's ``VALID_REGRESSION (objective_loss)``. The
state and reason words are :mod:`skillbench.vocab`'s; every page that explains a verdict (the scorecard, compare's
repairs, the docs' table from :func:`verdicts_table`) reads this module.

The rule itself is dotnet/skills' adapter policy: one vote per stimulus, an exact one-sided sign test of wins
against losses (``scipy.stats.binomtest``; ties leave the test only) at ``p ≤ 0.05`` in the positive direction, a
net-win floor ``(W − L)/n ≥ 0.20`` and an eligibility floor ``n ≥ 5``; the objective record mirrors it for losses.
Evidence reads ``n=5; 4W/1T/0L; p=0.0625; net +80.0%``; a record with checks adds
``; objective n=6; 0W/0T/6L; p(loss)=0.0156; net loss +100.0%``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from typing import Generic, TypeVar

import numpy as np
from scipy.stats import binomtest

from skillbench.markdown import p_value
from skillbench.vocab import (
    ACTIVATION_CONTRACT_FAILED,
    COMMIT_MISMATCH,
    FABRICATION,
    INCOMPLETE_RECONCILIATION,
    INVALID_INCONCLUSIVE,
    INVALID_SPEC,
    JUDGE_ERRORS,
    MIN_STIMULI,
    NET_LOSS_BELOW_FLOOR,
    NET_WIN_BELOW_FLOOR,
    NO_LOSS_DIRECTION,
    NO_POSITIVE_DIRECTION,
    NOT_SIGNIFICANT,
    NOT_SIGNIFICANT_ADJUSTED,
    OBJECTIVE_LOSS,
    UNDERPOWERED,
    VALID_NO_CHANGE,
    VALID_PASS,
    VALID_REGRESSION,
)

ALPHA = 0.05
NET_WIN_FLOOR = 0.20
NET_LOSS_FLOOR = NET_WIN_FLOOR  # VALID_REGRESSION: "by the same rule as the pass"


@lru_cache(maxsize=4096)
def sign_test_p(wins: int, losses: int) -> float:
    """Exact one-sided sign test of wins against losses (ties excluded); 1.0 without a discordant vote."""
    if wins + losses == 0:
        return 1.0
    return float(binomtest(wins, wins + losses, 0.5, alternative="greater").pvalue)


R = TypeVar("R")


@dataclass(frozen=True)
class Wording:
    """The words a rule's action is phrased in: the weekly docs' neutral ones, or a comparison's (head, base)."""

    treatment: str = "the treatment"
    control: str = "the control"
    arms: str = "the arms"
    command: str = "command"


@dataclass(frozen=True)
class VerdictRule(Generic[R]):
    """One precedence step.

    Attributes:
        state: the :mod:`~skillbench.vocab` state it gives (``""``: an objective record that is no loss, which
            gives the gate no state of its own).
        reason: the reason word of ``STATE (reason)`` (``""`` for a pass and for a credible objective loss).
        when: the condition, in words.
        label: the verdict in plain words, for a reader who does not know the state names.
        action: what it means or what to do; ``{treatment}``, ``{control}``, ``{arms}`` and ``{command}`` are
            filled from a :class:`Wording` (:meth:`what_to_do`).
        holds: the condition itself.
        comparison_only: only ``skillbench compare`` applies it (a weekly gate never gives it).
    """

    state: str
    reason: str
    when: str
    label: str
    action: str
    holds: Callable[[R], bool] = field(repr=False, compare=False)
    comparison_only: bool = False

    @property
    def verdict(self) -> str:
        """``STATE (reason)``, or the bare state when there is no reason."""
        return self.state if not self.reason else f"{self.state} ({self.reason})"

    def what_to_do(self, wording: Wording | None = None) -> str:
        """:attr:`action` in ``wording``'s words (default: the neutral treatment / control)."""
        return self.action.format(**asdict(wording or Wording()))


def first_rule(rules: Sequence[VerdictRule[R]], record: R) -> VerdictRule[R]:
    """The first rule of ``rules`` whose condition holds for ``record`` (the last rule always holds)."""
    return next(rule for rule in rules if rule.holds(record))


@dataclass(frozen=True)
class ObjectiveRecord:
    """The deterministic checks of one family × model: every stimulus with a known outcome in both arms.

    ``wins``/``losses`` are the transitions (skilled-only / baseline-only, by each arm's majority) a page shows;
    the loss is decided on the per-stimulus completion *rates*: ``loss_p`` is the exact conditional test of
    :func:`skillbench.scorecard._objective.objective_loss_test` and ``rate_drop`` the mean per-stimulus drop of
    the completion rate (control − treatment). Without them (a record of votes with one known run per arm, e.g.
    the gate's preference votes mirrored) they are the sign test of losses against wins and ``(L − W)/n``, which
    is what the rate test gives when every stimulus has one known run per arm.
    """

    n: int
    wins: int
    losses: int
    loss_p: float | None = None
    rate_drop: float | None = None

    @property
    def ties(self) -> int:
        """Stimuli that completed in both arms or in neither: they count in ``n``, never in the sign test."""
        return self.n - self.wins - self.losses

    @property
    def p_value(self) -> float:
        """One-sided p of a loss: the rate test's, or the sign test of losses against wins (the pass's mirrored)."""
        return self.loss_p if self.loss_p is not None else sign_test_p(self.losses, self.wins)

    @property
    def net_loss(self) -> float:
        """The mean completion-rate drop per stimulus (``(L − W)/n`` for one known run per arm)."""
        if self.rate_drop is not None:
            return self.rate_drop
        return (self.losses - self.wins) / self.n if self.n else float("nan")

    @property
    def rule(self) -> VerdictRule[ObjectiveRecord]:
        """The first of :data:`OBJECTIVE_RULES` that holds."""
        return first_rule(OBJECTIVE_RULES, self)

    @property
    def reason(self) -> str:
        """Why the record is not a credible loss (the pass's reasons mirrored); ``""`` when it is one."""
        return self.rule.reason

    @property
    def regression(self) -> bool:
        """A credible loss: n ≥ 5, p ≤ 0.05, the completion rate drops, by ≥ 20 points per stimulus on average."""
        return self.rule.state == VALID_REGRESSION

    @property
    def evidence(self) -> str:
        """``objective n=6; 0W/0T/6L; p(loss)=0.0156; completion drops 100.0 points`` — the change said in words
        ("drops", "rises", "unchanged"): a signed "net loss -33.3%" beside a win read as a loss."""
        change = self._change(("drops", "rises"))
        return (f"objective n={self.n}; {self.wins}W/{self.ties}T/{self.losses}L; p(loss)={p_value(self.p_value)}; "
                f"completion {change}")

    def _change(self, words: tuple[str, str]) -> str:
        """The net loss in words: ``words[0]`` when it is positive, ``words[1]`` when negative, with its points."""
        if not self.n or not np.isfinite(self.net_loss):
            return "n/a"
        if abs(self.net_loss) < 1e-12:
            return "unchanged"
        return f"{words[0] if self.net_loss > 0 else words[1]} {abs(self.net_loss) * 100:.1f} points"


@dataclass(frozen=True)
class FabricationRecord(ObjectiveRecord):
    """The answers of one family × model as the opt-in fabrication rule reads them (``[gate] fabrication``).

    Per prompt with checked answers in both arms, each arm's answers *free* of an unresolved identifier out of
    its checked answers: the objective record's rules (:data:`OBJECTIVE_RULES`) on that rate, so a credible loss
    is a credible rise of the answers that use an identifier the declared libraries lack. ``wins``/``losses``:
    prompts where the treatment's answers are clean more / less often than the control's.
    """

    @property
    def evidence(self) -> str:
        """``fabrication n=6; 0W/2T/4L; p(more)=0.0156; answers with an unresolved identifier rise 50.0 points``."""
        change = self._change(("rise", "drop"))
        return (f"fabrication n={self.n}; {self.wins}W/{self.ties}T/{self.losses}L; p(more)={p_value(self.p_value)}; "
                f"answers with an unresolved identifier {change}")


@dataclass(frozen=True)
class GateRecord:
    """What the gate decides on for one family × model: its stimulus votes and the health of their measurement.

    Attributes:
        wins, ties, losses: the stimulus votes (one per prompt) for the treatment.
        reconciliation_complete: the week accounts for every planned run.
        judge_errors: pairwise judge calls of the record that failed.
        dormancy_activations: treatment or plugin runs of the family's dormancy prompts that activated the skill.
        commit_mismatches: runs of a version arm from another commit than declared (``skillbench compare``).
        objective: the record's deterministic checks (None: no checks).
        p_adjusted: the sign test's p, Holm-adjusted across the report's records that reached it
            (:func:`decide_week`; None: not adjusted, a record decided alone).
        invalid_spec: the family's eval or prompt failed validation (or its setup cannot start in this
            sandbox), so the week left it out
            (:mod:`skillbench.suite._families`).
        fabrication: the record's answers as the opt-in fabrication rule reads them (None: the rule is off —
            not asked, or a declared surface's measured precision is not high enough —, or nothing was checked).
    """

    wins: int
    ties: int
    losses: int
    reconciliation_complete: bool = True
    judge_errors: int = 0
    dormancy_activations: int = 0
    commit_mismatches: int = 0
    objective: ObjectiveRecord | None = None
    invalid_spec: bool = False
    p_adjusted: float | None = None
    fabrication: FabricationRecord | None = None

    @property
    def n(self) -> int:
        return self.wins + self.ties + self.losses

    @property
    def p_value(self) -> float:
        return sign_test_p(self.wins, self.losses)

    @property
    def survives(self) -> bool:
        """The Holm-adjusted p across the report's records is ≤ α (True when no adjustment was made)."""
        return self.p_adjusted is None or not np.isfinite(self.p_adjusted) or self.p_adjusted <= ALPHA

    @property
    def net_win(self) -> float:
        return (self.wins - self.losses) / self.n if self.n else float("nan")


# dotnet/skills' plain words for a verdict (eng/vally-adapter: the PR comment's Verdict column and "How to read
# this report"): every invalid or underpowered state reads alike, and the machine state beside it says which.
INVALID_LABEL = "Invalid or underpowered"
NOT_PROVEN_LABEL = "Not proven improved"
PREFERENCE_LOSS_LABEL = "Preference loss (report only)"


def _percent(x: float) -> str:
    return f"{x * 100:g} %"


GATE_RULES: tuple[VerdictRule[GateRecord], ...] = (
    VerdictRule(INVALID_INCONCLUSIVE, COMMIT_MISMATCH,
                "a run of a version arm came from another commit than the comparison declared",
                INVALID_LABEL,
                "runs from another commit are in the run directory: rerun with a fresh --out-dir",
                lambda r: r.commit_mismatches > 0, comparison_only=True),
    VerdictRule(INVALID_INCONCLUSIVE, INVALID_SPEC, "an eval or prompt of the family failed validation (or its "
                "setup cannot start in this sandbox), so no run of the family was planned", INVALID_LABEL,
                "the family's spec is invalid: fix the lines `skillbench validate` prints, then rerun the {command}",
                lambda r: r.invalid_spec),
    VerdictRule(INVALID_INCONCLUSIVE, INCOMPLETE_RECONCILIATION, "the family's planned runs are not all accounted "
                "for", INVALID_LABEL,
                "some planned runs are missing: rerun the same {command} to resume them",
                lambda r: not r.reconciliation_complete),
    VerdictRule(VALID_REGRESSION, OBJECTIVE_LOSS,
                "the objective record of deterministic checks is a credible loss (its rules below), decided on its "
                "own n whatever the judge's health: a judge outage or too few preference prompts never hide it",
                "Objective regression",
                "{treatment} fails deterministic checks {control} passes: see the objective record",
                lambda r: r.objective is not None and r.objective.regression),
    VerdictRule(VALID_REGRESSION, FABRICATION,
                "opt-in (`[gate] fabrication = true`, and only while every declared API surface's measured precision "
                "has a 95 % lower bound ≥ 0.98): the treatment's answers use an identifier the declared libraries "
                "lack credibly more often than the control's (the objective record's rules, below, on the answers "
                "free of one), decided on its own n whatever the judge's health",
                "Objective regression",
                "{treatment}'s answers use identifiers the declared libraries lack more often than {control}'s: see "
                "the scorecard's Fabricated identifiers",
                lambda r: r.fabrication is not None and r.fabrication.regression),
    VerdictRule(INVALID_INCONCLUSIVE, JUDGE_ERRORS, "a pairwise judge call failed (a judge outage is not a skill loss)",
                INVALID_LABEL,
                "pairwise judge calls failed: rerun the same {command} to retry them",
                lambda r: r.judge_errors > 0),
    VerdictRule(VALID_NO_CHANGE, ACTIVATION_CONTRACT_FAILED,
                "a treatment or plugin run of one of the family's dormancy prompts activated the skill",
                "Activation contract failed",
                "the skill activated on a dormancy prompt: narrow its description",
                lambda r: r.dormancy_activations > 0),
    VerdictRule(INVALID_INCONCLUSIVE, UNDERPOWERED, f"n < {MIN_STIMULI} stimuli voted",
                INVALID_LABEL,
                f"fewer than {MIN_STIMULI} stimuli voted: add preference-eligible prompts to the family",
                lambda r: r.n < MIN_STIMULI),
    VerdictRule(VALID_NO_CHANGE, NOT_SIGNIFICANT, f"exact one-sided sign test of wins against losses: p > {ALPHA:g}",
                NOT_PROVEN_LABEL,
                "no credible difference between {arms}: more prompts would narrow it",
                lambda r: r.p_value > ALPHA),
    VerdictRule(VALID_NO_CHANGE, NO_POSITIVE_DIRECTION, "wins ≤ losses",
                NOT_PROVEN_LABEL,
                "{treatment} does not win more often than {control}",
                lambda r: r.wins <= r.losses),
    VerdictRule(VALID_NO_CHANGE, NET_WIN_BELOW_FLOOR, f"net win (W − L)/n < {_percent(NET_WIN_FLOOR)}",
                NOT_PROVEN_LABEL,
                f"{{treatment}} wins, but by less than the {_percent(NET_WIN_FLOOR)} net-win floor",
                lambda r: r.net_win < NET_WIN_FLOOR),
    VerdictRule(VALID_NO_CHANGE, NOT_SIGNIFICANT_ADJUSTED,
                f"the record passes alone, but its p Holm-adjusted across the report's records is > {ALPHA:g}",
                NOT_PROVEN_LABEL,
                "{treatment} wins this record, but not by enough to stand out among the report's records "
                "(Holm's correction): more prompts would tell",
                lambda r: not r.survives),
    VerdictRule(VALID_PASS, "", f"none of the above: n ≥ {MIN_STIMULI}, p ≤ {ALPHA:g}, wins > losses, "
                f"net win ≥ {_percent(NET_WIN_FLOOR)}, Holm-adjusted p ≤ {ALPHA:g}",
                "Improved",
                "nothing to repair: {treatment} credibly beats {control}",
                lambda r: True),
)

OBJECTIVE_RULES: tuple[VerdictRule[ObjectiveRecord], ...] = (
    VerdictRule("", UNDERPOWERED, f"n < {MIN_STIMULI} stimuli with checks",
                "no credible loss",
                "too few stimuli with checks to call a loss: add checks to more prompts",
                lambda r: r.n < MIN_STIMULI),
    VerdictRule("", NOT_SIGNIFICANT, "exact one-sided test of a completion-rate loss, conditional on each "
                f"stimulus's runs (the sign test with one run per arm): p > {ALPHA:g}",
                "no credible loss",
                "no credible loss on the checks",
                lambda r: r.p_value > ALPHA),
    VerdictRule("", NO_LOSS_DIRECTION, "the completion rate does not drop (losses ≤ wins with one run per arm)",
                "no credible loss",
                "the checks do not fail more often with {treatment}",
                lambda r: not r.net_loss > 0),
    VerdictRule("", NET_LOSS_BELOW_FLOOR, "net loss (the mean per-stimulus drop of the completion rate; "
                f"(L − W)/n with one run per arm) < {_percent(NET_LOSS_FLOOR)}",
                "no credible loss",
                f"a loss below the {_percent(NET_LOSS_FLOOR)} net-loss floor",
                lambda r: r.net_loss < NET_LOSS_FLOOR),
    VerdictRule(VALID_REGRESSION, "", f"none of the above: n ≥ {MIN_STIMULI}, p(loss) ≤ {ALPHA:g}, "
                f"the rate drops, net loss ≥ {_percent(NET_LOSS_FLOOR)}",
                "credible loss",
                f"the gate's `{VALID_REGRESSION} ({OBJECTIVE_LOSS})` unless an earlier step decides",
                lambda r: True),
)


def gate_rule(reason: str) -> VerdictRule[GateRecord]:
    """The gate's rule with ``reason`` (``""``: the pass); a reason names one rule, so it names the state too."""
    for rule in GATE_RULES:
        if rule.reason == reason:
            return rule
    raise KeyError(f"no verdict rule has the reason {reason!r}")


def objective_rule(reason: str) -> VerdictRule[ObjectiveRecord]:
    """The objective record's rule with ``reason`` (``""``: the credible loss)."""
    for rule in OBJECTIVE_RULES:
        if rule.reason == reason:
            return rule
    raise KeyError(f"no objective rule has the reason {reason!r}")


def verdict_label(state: str, reason: str, n: int, wins: int, losses: int) -> str:
    """A gate record in dotnet's plain words: its rule's label, except that a ``VALID_NO_CHANGE`` record whose
    votes credibly prefer the control (the pass's rule mirrored, :attr:`ObjectiveRecord.regression`) reads
    ``Preference loss (report only)`` — unless its activation contract failed, which dotnet names first.

    A reason no rule has (a card written by another version) reads as the last rule with its state does.
    """
    if state == VALID_NO_CHANGE and reason != ACTIVATION_CONTRACT_FAILED and \
            ObjectiveRecord(n=n, wins=wins, losses=losses).regression:
        return PREFERENCE_LOSS_LABEL
    rule = next((r for r in GATE_RULES if (r.state, r.reason) == (state, reason)), None)
    rule = rule or next((r for r in reversed(GATE_RULES) if r.state == state), None)
    return rule.label if rule is not None else state


@dataclass(frozen=True)
class GateDecision:
    """The gate's decision for one record."""

    state: str
    reason: str
    n: int
    wins: int
    ties: int
    losses: int
    p_value: float
    net_win: float
    objective: ObjectiveRecord | None = None  # the record's deterministic checks (None: no checks)
    p_adjusted: float = float("nan")  # Holm-adjusted across the report's tested records (NaN: not a member)
    fabrication: FabricationRecord | None = None  # the opt-in fabrication rule's record (None: the rule is off)

    @property
    def tested(self) -> bool:
        """The record reached the sign test, so it is one of the tests Holm corrects together."""
        return bool(np.isfinite(self.p_adjusted))

    @property
    def verdict(self) -> str:
        """``VALID_PASS`` or ``STATE (reason)``."""
        return self.state if not self.reason else f"{self.state} ({self.reason})"

    @property
    def rule(self) -> VerdictRule[GateRecord]:
        """The rule that decided (its plain label and what to do)."""
        return gate_rule(self.reason)

    @property
    def evidence(self) -> str:
        """``n=5; 4W/1T/0L; p=0.0625; net +80.0%`` (``; p(Holm)=0.250`` when Holm changed the p), then
        ``; objective …`` for a record with checks."""
        net = f"{self.net_win * 100:+.1f}%" if np.isfinite(self.net_win) else "n/a"
        text = f"n={self.n}; {self.wins}W/{self.ties}T/{self.losses}L; p={p_value(self.p_value)}"
        # a family of one (or a p Holm leaves as it is) prints nothing more: the page's columns show both anyway
        corrected = self.tested and not np.isclose(self.p_adjusted, self.p_value, rtol=0, atol=1e-12)
        text += (f"; p(Holm)={p_value(self.p_adjusted)}" if corrected else "") + f"; net {net}"
        text = text if self.objective is None else f"{text}; {self.objective.evidence}"
        return text if self.fabrication is None else f"{text}; {self.fabrication.evidence}"


def decide(wins: int, ties: int, losses: int, *, reconciliation_complete: bool = True, judge_errors: int = 0,
           dormancy_activations: int = 0, commit_mismatches: int = 0,
           objective: ObjectiveRecord | None = None) -> GateDecision:
    """Apply the gate to one W/T/L record of stimulus votes: the first of :data:`GATE_RULES` that holds.

    ``objective``: the family × model's transition record from its deterministic checks (None: no checks).
    """
    return decide_record(GateRecord(wins, ties, losses, reconciliation_complete, judge_errors, dormancy_activations,
                                    commit_mismatches, objective))


def decide_record(record: GateRecord) -> GateDecision:
    """Apply the gate to a whole :class:`GateRecord` (e.g. a family left out for an invalid spec, with no votes)."""
    wins, ties, losses, objective = record.wins, record.ties, record.losses, record.objective
    rule = first_rule(GATE_RULES, record)
    adjusted = record.p_adjusted if record.p_adjusted is not None else float("nan")
    return GateDecision(rule.state, rule.reason, record.n, wins, ties, losses, record.p_value, record.net_win,
                        objective, adjusted, record.fabrication)


# The rules a record reaches only by having its sign test computed and read: the tests Holm corrects together.
_TESTED_FROM = NOT_SIGNIFICANT


def reaches_sign_test(record: GateRecord) -> bool:
    """True when no health or power rule decides ``record`` first: its sign test is one of the report's tests."""
    at = next(i for i, rule in enumerate(GATE_RULES) if rule.reason == _TESTED_FROM)
    return not any(rule.holds(record) for rule in GATE_RULES[:at])


def decide_week(records: Sequence[GateRecord]) -> list[GateDecision]:
    """The gate for every record of one report (a week, a subset week, a comparison), Holm-corrected across it.

    Each record is first checked alone; the records that reach the sign test (healthy, powered, no objective
    regression: :func:`reaches_sign_test`) are the family, and their p-values are Holm-adjusted together
    (:func:`skillbench.scorecard._inference.adjust`), so the chance of *any* false "Improved" in the report stays
    ≤ 5 %. A record that passes alone but not after the correction is ``VALID_NO_CHANGE
    (not_significant_adjusted)``. A record decided earlier is no member and keeps ``p_adjusted`` NaN.
    """
    from skillbench.scorecard._inference import HOLM, adjust

    tested = [reaches_sign_test(r) for r in records]
    raw = [r.p_value if t else float("nan") for r, t in zip(records, tested, strict=True)]
    adjusted = adjust(raw, HOLM)
    return [decide_record(replace(r, p_adjusted=float(a)) if t else r)
            for r, t, a in zip(records, tested, adjusted, strict=True)]


def rule_words() -> dict[str, str]:
    """The rule's thresholds and precedence as the scorecard's explanations print them: ``alpha`` (0.05),
    ``floor`` (20%), ``min_n`` (5), and ``before_regression`` / ``after_regression``, the weekly gate's verdicts
    checked before and after ``VALID_REGRESSION (objective_loss)``."""
    before, after = weekly_rules_around(OBJECTIVE_LOSS)
    return {"alpha": f"{ALPHA:g}", "floor": f"{NET_WIN_FLOOR:.0%}", "loss_floor": f"{NET_LOSS_FLOOR:.0%}",
            "min_n": str(MIN_STIMULI), "before_regression": precedence_text(before),
            "after_regression": precedence_text(after)}


def precedence_text(rules: Sequence[VerdictRule[R]]) -> str:
    """``A``, ``B`` and ``C``: the rules' verdicts in backticks, in order."""
    names = [f"`{rule.verdict}`" for rule in rules]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def weekly_rules_around(reason: str) -> tuple[list[VerdictRule[GateRecord]], list[VerdictRule[GateRecord]]]:
    """The weekly gate's rules checked before and after the one with ``reason`` (comparison-only ones left out)."""
    rules = [rule for rule in GATE_RULES if not rule.comparison_only]
    at = next(i for i, rule in enumerate(rules) if rule.reason == reason)
    return rules[:at], rules[at + 1:]


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def _rules_table(rules: Sequence[VerdictRule[R]]) -> list[str]:
    lines = ["| precedence | state | reason | when | plain label | meaning / what to do |",
             "| --- | --- | --- | --- | --- | --- |"]
    for i, rule in enumerate(rules, start=1):
        when = rule.when + (" (`skillbench compare` only)" if rule.comparison_only else "")
        cells = [str(i), f"`{rule.state}`" if rule.state else "—", f"`{rule.reason}`" if rule.reason else "—", when,
                 rule.label, rule.what_to_do()]
        lines.append("| " + " | ".join(_md_cell(c) for c in cells) + " |")
    return lines


def verdicts_table() -> str:
    """The docs' verdict table: the gate's rules in the order :func:`decide` checks them, then the objective
    record's in the order :attr:`ObjectiveRecord.reason` checks them (GitHub-flavoured markdown)."""
    return "\n".join([
        *_rules_table(GATE_RULES), "",
        "The objective record of deterministic checks (one vote per stimulus with checks: skilled-only W, "
        "baseline-only L), checked in this order; its credible loss is the gate's "
        f"`{VALID_REGRESSION} ({OBJECTIVE_LOSS})`:", "",
        *_rules_table(OBJECTIVE_RULES),
    ]) + "\n"
