"""Absence items through the judge: sent with avoid polarity, graded by the simulated judge over the real SDK
client, recorded as musts (clean → met with credit, a violation → missing with its quote) and read back."""

from __future__ import annotations

import random
from pathlib import Path

from skillbench.judge import (
    JudgeClient,
    RubricJudge,
    RunAnswer,
    ScoresLedger,
    absence_requirement,
    build_judge_request,
    parse_judge_message,
    score_rows,
)
from skillbench.ledgers import read_scores
from skillbench.scorecard import prompt_rep_scores
from skillbench.sim._answers import compose
from skillbench.sim._claims import claim, violation
from skillbench.sim._judge import grade
from tests.helpers.judge import judge_endpoint

ITEMS = ((0, "must", "Names the build id"), (1, "must", "Did NOT attempt to download symbols"),
         (2, "avoid", "Hardcodes the API key"))
ABSENCE = frozenset({1})


def _run(tmp_path: Path, answer: str, rep: int, absence: frozenset[int] = ABSENCE) -> RunAnswer:
    return RunAnswer(run_id=f"r{rep}", prompt="p", skill="fam", model="m", condition="with-skill", rep=rep,
                     dormancy=False, prompt_text="Symbolicate this tombstone.", items=ITEMS, answer=answer,
                     rubric_sha="sha", folder=tmp_path, absence=absence)


def _answer(stated: list[int], seed: int) -> str:
    return compose([(k, t) for _, k, t in ITEMS], stated, random.Random(seed), 1.0, absence=ABSENCE)


class SpyClient(JudgeClient):
    """The real client, keeping what it sent (every call reaches the endpoint)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sent: list[dict] = []

    def create(self, request, headers):
        self.sent.append(dict(request))
        return super().create(request, headers)


def test_the_absence_line_is_sent_as_avoid_and_other_rubrics_are_sent_unchanged(tmp_path: Path) -> None:
    run = _run(tmp_path, "An answer.", 1)
    sent = run.lines()
    assert sent[0] == ITEMS[0] and sent[2] == ITEMS[2]
    assert sent[1][:2] == (1, "avoid") and absence_requirement(sent[1][2]) == ITEMS[1][2]
    message = build_judge_request(run.prompt_text, run.answer, sent, 7)["messages"][0]["content"]
    assert '[1] (avoid) Does what this requirement rules out: "Did NOT attempt to download symbols"' in message
    assert sorted(parse_judge_message(message).items) == sent, "the judge's side reads the lines as sent"
    plain = _run(tmp_path, "An answer.", 1, absence=frozenset())
    assert plain.lines() == list(ITEMS), "a rubric without absence items is sent exactly as before"


def test_the_sim_agent_and_judge_agree_on_absence_items() -> None:
    clean, violating = _answer([0, 1], 3), _answer([0], 3)
    requirement = ITEMS[1][2]
    assert violation(requirement).sentence not in clean and violation(requirement).sentence in violating
    assert claim(requirement).sentence not in violating, "a violated absence must is not also stated as met"
    line = (1, "avoid", f'Does what this requirement rules out: "{requirement}"')
    assert [g.found for g in grade(clean, [line])] == [False]
    assert [g.found for g in grade(violating, [line])] == [True]
    # An answer that states compliance in the item's own words commits no violation.
    assert [g.found for g in grade(f"- {claim(requirement).sentence}", [line])] == [False]


def test_round_trip_clean_is_met_credit_and_a_violation_is_missing_with_its_quote(tmp_path: Path) -> None:
    clean, violating = _run(tmp_path, _answer([0, 1], 1), 1), _run(tmp_path, _answer([0], 2), 2)
    with judge_endpoint() as ep:
        client = SpyClient(ep.base_url, ep.api_key, "claude-judge", max_retries=1)
        judge = RubricJudge(client, seed=5)
        rows = [r for run in (clean, violating) for r in score_rows(run, judge.grade(run))]
        client.close()
    assert all('(avoid) Does what this requirement rules out: "Did NOT' in r["messages"][0]["content"]
               for r in client.sent)
    by = {(r["run_id"], r["item_index"]): r for r in rows}
    met, missed = by[("r1", "1")], by[("r2", "1")]
    assert (met["item_type"], met["verdict"], met["credit"], met["contribution"]) == ("must", "met", "1.0", "1.0")
    assert (met["evidence_quote"], met["evidence_verified"], met["absence"]) == ("", "", "1")
    assert (missed["item_type"], missed["verdict"], missed["credit"], missed["absence"]) == ("must", "missing",
                                                                                            "0.0", "1")
    assert missed["evidence_quote"] == violation(ITEMS[1][2]).sentence and missed["evidence_verified"] == "1"
    assert missed["evidence_quote"] in violating.answer
    assert by[("r1", "0")]["absence"] == "" and by[("r1", "2")]["verdict"] == "clean"

    ledger = ScoresLedger(tmp_path)
    ledger.append(rows)
    scores = read_scores(tmp_path / "scores.csv")
    assert scores.loc[scores["item_index"] == 1, "absence"].tolist() == [True, True]
    assert not scores.loc[scores["item_index"] != 1, "absence"].any()
    coverage = prompt_rep_scores(scores).set_index("rep")["must_coverage"]
    assert coverage.to_dict() == {1: 1.0, 2: 0.5}, "qdrant's maths reads an absence item as any must"


def test_an_unquotable_violation_becomes_met_and_is_flagged(tmp_path: Path) -> None:
    run = _run(tmp_path, _answer([], 4), 4)  # item 0 omitted, the absence item violated
    with judge_endpoint(fabricated_quote_rate=1.0) as ep:
        client = JudgeClient(ep.base_url, ep.api_key, "claude-judge", max_retries=1)
        grading = RubricJudge(client, seed=5).grade(run)
        client.close()
    row = next(r for r in score_rows(run, grading) if r["item_index"] == "1")
    # Every quote is fabricated: the protocol's rule makes the violation clean, hence met, flagged unverified.
    assert (row["verdict"], row["credit"], row["evidence_quote"], row["evidence_verified"]) == ("met", "1.0", "", "0")
