"""The simulated judge: grades the answer in a judge request from the request's text alone.

It parses the delimited answer and the rubric lines (:func:`skillbench.judge._protocol.parse_judge_message`)
and recognises each item by its core phrase in a line of the answer (:mod:`skillbench.sim._claims`) — for an
absence line (:func:`~skillbench.judge._protocol.absence_line`) the phrase of its violation — so it
grades any answer, not only those the simulated agent wrote. Its errors are knobs: a verdict flips with
probability ε per (answer, item, sample); then a lenient judge turns an unfavourable reading (a must or bonus
missing, an avoid violated) into the favourable one with the leniency probability, per (answer, item, sample) —
a false "met" quotes a real line of the answer, as a flip does; a met/violated quote is fabricated at a rate,
drawn afresh on a re-ask. The pairwise judge picks position A regardless with the position-bias probability;
otherwise it prefers the answer that satisfies more items, and within the tie margin calls a tie — or, with
the length-bias probability, picks the longer answer (in characters). Each knob has its own draw, so a knob
at 0 leaves every other decision, and every output, as it was without it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from skillbench.judge import PREFERENCE_TOOL, VERDICTS_TOOL, RubricLine, absence_requirement, parse_judge_message
from skillbench.sim import _draws as draws
from skillbench.sim._answers import answer_lines
from skillbench.sim._claims import line_matches, line_violates
from skillbench.sim._profiles import JudgeProfile
from skillbench.vocab import ALLOWED_VERDICTS


@dataclass(frozen=True)
class Grade:
    """The simulated judge's honest reading of one item, before any error is applied."""

    item: int
    kind: str
    found: bool
    evidence: str


def answer_hash(answer: str) -> str:
    return hashlib.blake2b(answer.encode(), digest_size=8).hexdigest()


def grade(answer: str, items: Sequence[RubricLine]) -> list[Grade]:
    """Which items the answer states (an absence line: commits its violation), with the first such line verbatim."""
    lines = answer_lines(answer)
    out = []
    for index, kind, text in items:
        requirement = absence_requirement(text) if kind == "avoid" else None
        if requirement is not None:
            hit = next((line for line in lines if line_violates(line, requirement)), "")
        else:
            hit = next((line for line in lines if line_matches(line, text)), "")
        out.append(Grade(index, kind, bool(hit), hit))
    return out


def fabricate(quote: str) -> str:
    """A quote that reads like the answer but is not in it (a word inserted after the first one)."""
    head, _, tail = quote.partition(" ")
    return f"{head} essentially {tail}" if tail else f"{quote} (essentially)"


class SimJudge:
    """Answers ``record_verdicts`` and ``record_preference`` calls."""

    def __init__(self, seed: int):
        self.seed = seed

    def verdicts(self, view_answer: str, items: Sequence[RubricLine], prof: JudgeProfile, sample: int,
                 attempt: int, ask: int) -> dict[str, Any]:
        """``record_verdicts`` input for one answer.

        Args:
            view_answer: the answer cut out of the request.
            items: the rubric lines as shown.
            prof: the judge profile of the requested model.
            sample: ``X-Skillbench-Sample`` (independent flips per sample).
            attempt: ``X-Skillbench-Attempt`` of the request (0 when absent).
            ask: how many identical requests came before this one (a re-ask draws new quotes).
        """
        h = answer_hash(view_answer)
        lines = answer_lines(view_answer)
        out = []
        for g in sorted(grade(view_answer, items), key=lambda g: g.item):
            positive, negative = ALLOWED_VERDICTS[g.kind]
            found, evidence = g.found, g.evidence
            if draws.uniform(self.seed, "judge", "flip", h, g.item, sample) < prof.flip_rate:
                if found:
                    found, evidence = False, ""
                elif lines:  # a false positive quotes some real line of the answer
                    found = True
                    evidence = draws.rng(self.seed, "judge", "quote", h, g.item, sample).choice(lines)
            if prof.leniency and found == (g.kind == "avoid") and (lines or g.kind == "avoid") and \
                    draws.uniform(self.seed, "judge", "lenient", h, g.item, sample) < prof.leniency:
                # The favourable reading: a must/bonus credited (quoting a real line), an avoid called clean.
                found = g.kind != "avoid"
                evidence = draws.rng(self.seed, "judge", "lenient-quote", h, g.item, sample).choice(lines) \
                    if found else ""
            if found and draws.uniform(self.seed, "judge", "fabricate", h, g.item, sample, attempt,
                                       ask) < prof.fabricated_quote_rate:
                evidence = fabricate(evidence)
            out.append({"item": g.item, "verdict": positive if found else negative,
                        "evidence": evidence if found else ""})
        return {"verdicts": out}

    def preference(self, answer_a: str, answer_b: str, items: Sequence[RubricLine], prof: JudgeProfile,
                   sample: int) -> dict[str, Any]:
        """``record_preference`` input for a pair."""

        def satisfied(answer: str) -> int:
            return sum(g.found != (g.kind == "avoid") for g in grade(answer, items))

        sa, sb = satisfied(answer_a), satisfied(answer_b)
        u = draws.uniform(self.seed, "judge", "position", answer_hash(answer_a), answer_hash(answer_b), sample)
        if u < prof.position_bias:
            winner = "A"
        elif abs(sa - sb) > prof.tie_margin:
            winner = "A" if sa > sb else "B"
        elif prof.length_bias and len(answer_a) != len(answer_b) and draws.uniform(
                self.seed, "judge", "length", answer_hash(answer_a), answer_hash(answer_b), sample) < prof.length_bias:
            winner = "A" if len(answer_a) > len(answer_b) else "B"  # as good, so the longer one
        else:
            winner = "tie"
        reason = f"A satisfies {sa} of {len(items)} rubric items and B satisfies {sb}."
        return {"winner": winner, "reason": reason}

    def reply(self, body: dict[str, Any], prof: JudgeProfile, sample: int, attempt: int,
              ask: int) -> tuple[str, dict[str, Any]]:
        """``(tool name, tool input)`` answering a judge request.

        Raises:
            skillbench.judge._protocol.ProtocolError: the request does not follow the judge protocol.
        """
        messages = body.get("messages") or []
        first = messages[0] if messages else {}
        content = first.get("content", "") if isinstance(first, dict) else ""
        if isinstance(content, list):
            content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
        view = parse_judge_message(str(content))
        forced = (body.get("tool_choice") or {}).get("name")
        if forced == PREFERENCE_TOOL or (forced is None and "A" in view.answers):
            return PREFERENCE_TOOL, self.preference(view.answers.get("A", ""), view.answers.get("B", ""),
                                                    view.items, prof, sample)
        answer = view.answers.get("", view.answers.get("A", ""))
        return VERDICTS_TOOL, self.verdicts(answer, view.items, prof, sample, attempt, ask)
