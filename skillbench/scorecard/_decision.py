"""The week's decision in one block: the lift per model with its interval, the change since last week and the rule's
call, each family's verdict in plain words with its cause, and the trust flags that say whether to read any of it.

Everything here is read off a computed :class:`~skillbench.scorecard._compute.ScorecardData`; nothing is computed a
second time. The block is written three ways from one :class:`WeekDecision`: at the top of ``scorecard.md``
(:func:`decision_markdown`), as ``decision.json`` in the run directory (the file contract's reader is
:func:`skillbench.ledgers.read_decision`), and from that file on the week page and the reports index (the report
layer never recomputes a week).

A trust flag is ``red`` when the week's numbers must not be read as a clean week (the judge failed its bar or
drifted, runs are missing, a simulated week disagrees with its own truth) and ``amber`` when they can be read with a
stated caveat (a subset, simulated answers, a self-served baseline, unverified evidence, invalid families). The block
takes the worst of its flags' colours; green means no flag.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from skillbench.markdown import fmt, is_missing, md_table, md_text, p_value, signed, span
from skillbench.scorecard._compute import ScorecardData
from skillbench.scorecard._gate import dormancy_causes
from skillbench.scorecard._labels import arm_names
from skillbench.scorecard._noise import MOVED, WITHIN_NOISE
from skillbench.scorecard._render_stimuli import record_label, with_icon
from skillbench.scorecard._stats import ci_flag_text
from skillbench.scorecard._verdicts import Wording, gate_rule
from skillbench.vocab import (
    ACTIVATION_CONTRACT_FAILED,
    BAR_FAIL,
    BAR_NOT_SHOWN,
    FABRICATION,
    INCOMPLETE_RECONCILIATION,
    INVALID_SPEC,
    JUDGE_ERRORS,
    NET_WIN_BELOW_FLOOR,
    NO_POSITIVE_DIRECTION,
    NOT_SIGNIFICANT,
    NOT_SIGNIFICANT_ADJUSTED,
    OBJECTIVE_LOSS,
    REAL,
    TAMPERED,
    UNANIMOUS_MUSTS_BAR,
    UNDERPOWERED,
)

RED, AMBER, GREEN = "red", "amber", "green"
LEVEL_ICONS = {RED: "🔴", AMBER: "🟠", GREEN: "🟢"}
LEVEL_WORDS = {RED: "Do not act on this week's numbers yet", AMBER: "Read with the caveats below",
               GREEN: "No trust flag"}
# The rule's call on the change since last week (the week-over-week rule of skillbench.scorecard._noise).
ACT, WITHIN, NOT_YET, NO_SERIES = "act", "within noise", "not yet", "no series"
SELF_AGREEMENT = "self-agreement"  # calibration.csv's comparison of the judge with itself
SIMULATION_TITLE = "Simulation check — the measurement against the simulation's truth"  # scorecard.md.j2's heading


@dataclass(frozen=True)
class TrustFlag:
    """One reason to doubt the week, with the page that shows why.

    Attributes:
        key: what it is (``calibration_failed``, ``sentinel_drift``, …; one name per kind of doubt).
        level: ``red`` or ``amber``.
        text: one sentence for the reader.
        link: the report page (and anchor) that shows the evidence, relative to the week's report folder.
    """

    key: str
    level: str
    text: str
    link: str


@dataclass(frozen=True)
class ModelCall:
    """One model's lift this week and the rule's call on its change since the last week."""

    model: str
    lift: float | None
    low: float | None
    high: float | None
    n_prompts: int
    excludes_zero: str  # "yes", "no" or "too few prompts" (the lift table's "95% CI != 0?")
    previous: str | None
    delta: float | None
    threshold: float | None
    call: str  # ACT, WITHIN, NOT_YET or NO_SERIES
    call_text: str


@dataclass(frozen=True)
class FamilyCall:
    """One skill family × model verdict in the verdict specification's plain words, with its cause in one line."""

    skill_family: str
    model: str
    label: str
    state: str
    reason: str
    cause: str


@dataclass
class WeekDecision:
    """What a reader needs first: is there an answer, and can it be trusted."""

    run_key: str
    endpoint: str
    level: str
    models: list[ModelCall] = field(default_factory=list)
    families: list[FamilyCall] = field(default_factory=list)
    flags: list[TrustFlag] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> WeekDecision:
        """A decision read back from ``decision.json``.

        Raises:
            ValueError: the file does not hold a decision (hand-edited or written by another version).
        """
        try:
            return cls(run_key=str(data["run_key"]), endpoint=str(data["endpoint"]), level=str(data["level"]),
                       models=[ModelCall(**m) for m in data["models"]],
                       families=[FamilyCall(**f) for f in data["families"]],
                       flags=[TrustFlag(**f) for f in data["flags"]])
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a decision block ({type(exc).__name__}: {exc})") from exc


def section_anchor(title: str) -> str:
    """A section's anchor as GitHub and the report pages name it: lower case, punctuation dropped, spaces → ``-``."""
    text = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return re.sub(r" ", "-", text)


def _number(x: Any) -> float | None:
    return None if is_missing(x) else float(x)


def _model_calls(d: ScorecardData) -> list[ModelCall]:
    lift = d.lift.set_index("model")
    wow = d.wow.table.set_index("model") if d.wow.ready and not d.wow.table.empty else pd.DataFrame()
    calls = []
    for m in d.models:
        if m not in lift.index:
            continue
        r = lift.loc[m]
        previous = delta = limit = None
        if not d.keeps_history:
            call, text = NO_SERIES, "a comparison, not a week of the series"
        elif not d.wow.ready:
            left = d.wow.min_runs - d.wow.n_runs
            call, text = NOT_YET, f"not yet: {left} more week{'s' if left != 1 else ''} of history"
        elif m not in wow.index:
            call, text = NOT_YET, "not yet: no lift of this model last week"
        else:
            w = wow.loc[m]
            previous, delta, limit = d.wow.previous, _number(w["delta"]), _number(w["threshold"])
            verdict = str(w["actionable"])
            if verdict == MOVED:
                call, text = ACT, f"act: moved {signed(delta)} since {previous}, beyond the noise band ±{fmt(limit)}"
            elif verdict == WITHIN_NOISE:
                call, text = WITHIN, f"within noise: {signed(delta)} since {previous}, inside ±{fmt(limit)}"
            else:
                call, text = NOT_YET, f"not yet: the change since {previous} has no noise band"
        calls.append(ModelCall(
            model=str(m), lift=_number(r["paired_lift"]), low=_number(r["ci_low"]), high=_number(r["ci_high"]),
            n_prompts=int(r["n_pairs"]), excludes_zero=ci_flag_text(r["excludes_zero"]), previous=previous,
            delta=delta, threshold=limit, call=call, call_text=text))
    return calls


def _votes(r: Any) -> str:
    return f"{int(r.wins)}W/{int(r.ties)}T/{int(r.losses)}L"


def family_cause(r: Any, wording: Wording | None = None, fired: str = "") -> str:
    """Why a gate record reads as it does, in one line a reader acts on (the gate row's columns; ``wording``: the
    arms' names the rule's words use, default the neutral ones; ``fired``: for a failed activation contract, where
    the skill fired, as :func:`~skillbench.scorecard._gate.dormancy_causes` says it)."""
    reason = str(r.reason or "")
    evidence = str(r.evidence or "")
    if reason == ACTIVATION_CONTRACT_FAILED:
        where = (fired.replace("activated on ", "fired on ", 1) if fired
                 else f"fired on a dormancy prompt in {int(r.dormancy_activations)} run(s)")
        return (f"{where}; where it should help it voted {_votes(r)} (p {p_value(r.p_value)}) — narrow its description "
                "before reading that as a win")
    if reason in (INVALID_SPEC, INCOMPLETE_RECONCILIATION):
        return evidence.split(";")[0] if evidence else reason.replace("_", " ")
    if reason == JUDGE_ERRORS:
        return f"{int(r.judge_errors)} pairwise judge call(s) failed: rerun to retry them"
    if reason == UNDERPOWERED:
        return f"only {int(r.n)} {'stimulus' if int(r.n) == 1 else 'stimuli'} voted ({_votes(r)}): too few to call"
    if reason == OBJECTIVE_LOSS:
        n, losses = getattr(r, "objective_n", None), getattr(r, "objective_losses", None)
        lost = f"{int(losses)} of {int(n)} stimuli" if not is_missing(n) and not is_missing(losses) else "stimuli"
        return (f"deterministic checks fail more often with the skill ({lost} lost, p(loss) "
                f"{p_value(getattr(r, 'objective_p', None))})")
    if reason == FABRICATION:  # the opt-in rule: its record is the evidence's last part
        record = evidence[evidence.find("fabrication n="):] if "fabrication n=" in evidence else evidence
        return f"answers use identifiers the declared libraries lack more often with the skill ({record})"
    if reason == NOT_SIGNIFICANT_ADJUSTED:
        return (f"{_votes(r)}, p {p_value(r.p_value)} alone but {p_value(r.p_adjusted)} after Holm across the week's "
                "records")
    if reason in (NOT_SIGNIFICANT, NO_POSITIVE_DIRECTION, NET_WIN_BELOW_FLOOR):  # the rule's own words
        return f"{_votes(r)}, p {p_value(r.p_value)}: {gate_rule(reason).what_to_do(wording)}"
    return f"{_votes(r)}, p {p_value(r.p_value)} (Holm {p_value(r.p_adjusted)})"


def _family_calls(d: ScorecardData) -> list[FamilyCall]:
    if d.gate is None or d.gate.empty:
        return []
    rank = {m: i for i, m in enumerate(d.models)}
    gate = d.gate.assign(_rank=d.gate["model"].map(rank).fillna(len(rank)))
    gate = gate.sort_values(["skill_family", "_rank", "model"], kind="stable")
    names = arm_names(d.pair)
    wording = Wording(treatment=names.treatment, control=names.control, arms=f"{names.treatment} and {names.control}",
                      command="week")
    fired = dormancy_causes(d.manifest, d.pair)  # the gate's own account of where a skill fired, not its text parsed
    return [FamilyCall(skill_family=str(r.skill_family), model=str(r.model), label=record_label(r),
                       state=str(r.state), reason=str(r.reason or ""),
                       cause=family_cause(r, wording, fired.get((str(r.skill_family), str(r.model)), "")))
            for r in gate.itertuples(index=False)]


def _calibration_flag(calibration: pd.DataFrame | None) -> TrustFlag | None:
    """The judge's self-agreement must bar, when the week was calibrated and the bar was not passed."""
    if calibration is None or "unanimity" not in calibration:
        return None
    rows = calibration[calibration["comparison"].astype(str).eq(SELF_AGREEMENT)
                       & calibration["item_type"].astype(str).eq("must")]
    if rows.empty:
        return None
    r = rows.iloc[0]
    state = str(r["bar_state"]) if "bar_state" in r and not is_missing(r["bar_state"]) else ""
    if not state and not is_missing(r["unanimity"]) and float(r["unanimity"]) < UNANIMOUS_MUSTS_BAR:
        state = BAR_FAIL  # a calibration.csv from before the bar's interval: an estimate below the bar still fails
    if state not in (BAR_FAIL, BAR_NOT_SHOWN):
        return None
    share = f"{float(r['unanimity']) * 100:.1f} %" if not is_missing(r["unanimity"]) else "?"
    n = int(r["n_units"]) if not is_missing(r["n_units"]) else 0
    week = r.get("population_units", float("nan"))  # absent before the sample (issue 34): every must was graded
    of = f" sampled (of the week's {int(week):,})" if not is_missing(week) and int(week) > n else ""
    interval = span(r.get("unanimity_low", float("nan")), r.get("unanimity_high", float("nan")), 3)
    bar = f"{UNANIMOUS_MUSTS_BAR * 100:g} %"
    high = r.get("unanimity_high", float("nan"))
    if state == BAR_FAIL and not is_missing(high) and float(high) >= UNANIMOUS_MUSTS_BAR:
        # below the bar, but on too few musts to tell (18 musts: [0.727, 0.999]): a caveat, not a stop
        return TrustFlag("calibration_failed", AMBER,
                         f"Judge calibration bar failed on too few musts to tell: {share} of {n:,}{of} unanimous, 95 % "
                         f"interval {interval} still reaches {bar} — grade more musts before trusting small lifts",
                         "calibration.html")
    if state == BAR_FAIL:
        return TrustFlag("calibration_failed", RED,
                         f"Judge calibration bar failed: {share} of {n:,} musts{of} unanimous"
                         + (f" (95 % interval {interval})" if interval else "")
                         + f", below the {bar} bar — the judge's grades are not stable enough to read small lifts",
                         "calibration.html")
    return TrustFlag("calibration_not_shown", AMBER,
                     f"Judge calibration bar not shown: {share} of {n:,} musts{of} unanimous, but the interval "
                     f"{interval} reaches below {bar} — grade more musts to decide", "calibration.html")


def trust_flags(d: ScorecardData, calibration: pd.DataFrame | None = None) -> list[TrustFlag]:
    """Every reason to doubt the week, worst first."""
    page = "scorecard.html"
    flags: list[TrustFlag] = []
    cal = _calibration_flag(calibration)
    if cal is not None:
        flags.append(cal)
    if d.extras.get("calibration_error"):
        flags.append(TrustFlag("calibration_unreadable", AMBER, f"Judge calibration unreadable: "
                               f"{d.extras['calibration_error']}", "calibration.html"))
    if d.judge_drift:
        reasons = "; ".join((d.sentinel or {}).get("reasons") or []) or "the judge moved on its gold set"
        flags.append(TrustFlag("sentinel_drift", RED, f"Judge drift: {reasons} — re-certify the judge before "
                               "reading the lift", f"{page}#{section_anchor('Judge drift sentinel')}"))
    if d.incomplete:
        flags.append(TrustFlag("incomplete", RED, "INCOMPLETE week: " + "; ".join(d.incomplete_reasons),
                               f"{page}#coverage"))
    tampered = d.manifest.loc[d.manifest["run_state"].astype(str).eq(TAMPERED), "run_id"]
    if len(tampered):
        flags.append(TrustFlag("tampered", RED, f"{len(tampered)} run{'s' if len(tampered) != 1 else ''} tampered "
                               "with its own output (the transcript disagrees with what its relay saw): never "
                               "graded, so its family's numbers miss it — inspect the skill or spec that did it",
                               f"{page}#coverage"))
    if d.disagrees_with_truth and d.simulation is not None:
        flags.append(TrustFlag("disagrees_with_truth", RED, "The measurement disagrees with the simulation's "
                               "truth: " + "; ".join(d.simulation.reasons),
                               f"{page}#{section_anchor(SIMULATION_TITLE)}"))
    if d.invalid_families:
        names = ", ".join(sorted(d.invalid_families))
        flags.append(TrustFlag("invalid_families", AMBER, f"{len(d.invalid_families)} famil"
                               f"{'y' if len(d.invalid_families) == 1 else 'ies'} never ran (invalid spec): {names}",
                               page))
    if d.subset_label:
        flags.append(TrustFlag("subset", AMBER, f"Part of the suite ({d.subset_label}): the week enters no history "
                               "until the rest runs", f"{page}#coverage"))
    if not d.self_served.empty:
        n = len(d.self_served)
        flags.append(TrustFlag("self_served", AMBER, f"{n} no-skill run{'s' if n != 1 else ''} fetched the skills "
                               "site themselves: the baseline had the skill, so the lift is understated",
                               f"{page}#{section_anchor('Lift caveat — baseline self-served the skill')}"))
    unverified = d.health.get("unverified_evidence")
    if unverified:
        flags.append(TrustFlag("unverified_evidence", AMBER, f"{unverified} judge verdict"
                               f"{'s' if unverified != 1 else ''} quoted evidence that is not in the answer",
                               f"{page}#{section_anchor('Run health')}"))
    no_claim = d.health.get("no_claim_evidence")
    if no_claim:
        flags.append(TrustFlag("no_claim_evidence", AMBER, f"{no_claim} avoid violation{'s' if no_claim != 1 else ''} "
                               "quote evidence that cannot show the harm (a bare number or a short fragment): "
                               "read those violations in their answers",
                               f"{page}#{section_anchor('`avoid` violations (most damaging failures)')}"))
    if d.keeps_history and calibration is None and not d.extras.get("calibration_error"):
        flags.append(TrustFlag("not_calibrated", AMBER, "The judge was not calibrated this week (no calibration.csv): "
                               "how stable its grades are is unknown — `skillbench calibrate RUN_DIR` measures it",
                               f"{page}#{section_anchor('Run health')}"))
    if unverified is None and not d.scores.empty:
        flags.append(TrustFlag("evidence_unchecked", AMBER, "The judge's evidence quotes were not checked against "
                               "the answers (the ledger has no evidence_verified)",
                               f"{page}#{section_anchor('Run health')}"))
    if d.endpoint != REAL:
        flags.append(TrustFlag("simulated", AMBER, f"{d.endpoint.capitalize()} endpoint: these numbers test the "
                               "harness, not a model", page))
    order = {RED: 0, AMBER: 1}
    return sorted(flags, key=lambda f: order.get(f.level, 2))


def level_of(flags: list[TrustFlag] | list[dict[str, Any]]) -> str:
    """The block's colour: the worst flag's, green without one."""
    levels = {f.level if isinstance(f, TrustFlag) else str(f.get("level")) for f in flags}
    return RED if RED in levels else AMBER if AMBER in levels else GREEN


def week_decision(d: ScorecardData) -> WeekDecision:
    """The decision block of a computed week (its calibration, when the week was calibrated, is ``d.calibration``)."""
    flags = trust_flags(d, d.calibration)
    return WeekDecision(run_key=d.run_key, endpoint=d.endpoint, level=level_of(flags), models=_model_calls(d),
                        families=_family_calls(d), flags=flags)


def decision_markdown(dec: WeekDecision, counts: str = "") -> str:
    """The block at the top of ``scorecard.md``: verdict line, flags, the lift per model and the families
    (``counts``: how many records read each plain verdict, :func:`~._render_stimuli.label_counts`)."""
    lines = ["## Decision", "",
             f"**{LEVEL_ICONS[dec.level]} {LEVEL_WORDS[dec.level]}**"
             + (f" — {len(dec.flags)} trust flag{'s' if len(dec.flags) != 1 else ''}:" if dec.flags else "."), ""]
    for f in dec.flags:
        lines.append(f"- {LEVEL_ICONS[f.level]} {md_text(f.text)} ([evidence]({f.link}))")
    if dec.flags:
        lines.append("")
    if dec.models:
        rows = [[md_text(m.model), "n/a" if m.lift is None else f"{signed(m.lift)} {span(m.low, m.high, 3)}",
                 str(m.n_prompts), m.excludes_zero, md_text(m.call_text)] for m in dec.models]
        lines += [md_table(["model", "must lift [95 % CI]", "prompts", "CI excludes 0?", "since last week"], rows),
                  ""]
    if dec.families:
        n = len(dec.families)
        lines.append(f"**Verdicts** ({n} skill family × model record{'' if n == 1 else 's'}, the preference gate's "
                     f"rules in plain words; details under Preference gate): {counts}")
        lines.append("")
        for fam in dec.families:
            lines.append(f"- {with_icon(fam.label)} — **{md_text(fam.skill_family)} × {md_text(fam.model)}**: "
                         f"{md_text(fam.cause)}")
        lines.append("")
    return "\n".join(lines) + "\n"
