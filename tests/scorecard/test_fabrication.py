"""The scorecard's "Fabricated identifiers" section and the opt-in fabrication rule's records, on small frames:
counts per model × arm, the rate of answers with an unresolved identifier and its interval, the paired Δ, the top
names shown as text, and whether the gate is on (and why not, in one line)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from bs4 import BeautifulSoup

from skillbench.arms import DEFAULT_PAIR
from skillbench.ledgers import IDENTIFIERS_COLUMNS, LedgerError, WeekIdentifiers
from skillbench.report import markdown_to_html
from skillbench.scorecard import rate_interval, t_critical
from skillbench.scorecard._decision import family_cause
from skillbench.scorecard._fabrication import fabrication_check, fabrication_markdown, gate_state
from skillbench.scorecard._gate import preference_gate

NO, WITH = "no-skill", "with-skill"
SURFACE = "pandas==3.1.1"
HOSTILE = "pd.merge_nearest<img src=x onerror=alert(1)>|[x](javascript:alert(1))"


def _record(*, gate: bool = False, low: float | None = 0.99, cached: bool = True) -> dict:
    return {"surfaces": [{"surface": SURFACE, "language": "python", "cached": cached, "precision": 1.0,
                          "precision_low": low, "precision_flags": 180}],
            "gate_fabrication": gate, "complete": True}


def _week(answers: list[tuple[str, str, str, int, list[str]]], record: dict) -> tuple[WeekIdentifiers, pd.DataFrame]:
    """``answers``: (prompt, condition, family, rep, statuses of its identifiers); returns the week and a manifest."""
    runs, ids = [], []
    for prompt, condition, family, rep, statuses in answers:
        run_id = f"{prompt}-m-{condition}-r{rep}"
        ident = {"run_id": run_id, "prompt": prompt, "skill_family": family, "model": "m", "condition": condition,
                 "rep": rep}
        runs.append(ident)
        for i, status in enumerate(statuses):
            text = HOSTILE if status == "unresolved" else f"pd.read_csv#{i}"
            ids.append(ident | {"text": text, "target": "", "kind": "name", "language": "python",
                                "status": status, "surface": SURFACE, "quote": f"x = {text}(left, right)"})
    runs_f = pd.DataFrame(runs, columns=list(IDENTIFIERS_COLUMNS[:6]))
    ids_f = pd.DataFrame(ids, columns=[c for c in IDENTIFIERS_COLUMNS if c != "row"])
    manifest = runs_f[["run_id"]].copy()
    return WeekIdentifiers(record, runs_f, ids_f), manifest


# three prompts × two reps per arm; the no-skill arm fabricates more often
ANSWERS = [
    ("p1", NO, "fam", 1, ["unresolved", "resolved"]), ("p1", NO, "fam", 2, ["resolved"]),
    ("p1", WITH, "fam", 1, ["resolved", "unchecked"]), ("p1", WITH, "fam", 2, []),
    ("p2", NO, "fam", 1, ["unresolved"]), ("p2", NO, "fam", 2, ["unresolved", "unresolved"]),
    ("p2", WITH, "fam", 1, ["resolved"]), ("p2", WITH, "fam", 2, ["unresolved"]),
    ("p3", NO, "fam", 1, ["resolved"]), ("p3", NO, "fam", 2, ["unresolved"]),
    ("p3", WITH, "fam", 1, ["resolved"]), ("p3", WITH, "fam", 2, ["resolved"]),
]


def test_counts_rates_and_the_paired_delta() -> None:
    week, manifest = _week(ANSWERS, _record())
    f = fabrication_check(week, manifest, DEFAULT_PAIR, ["m"])
    arms = f.arms.set_index("condition")
    assert list(f.arms["condition"]) == [NO, WITH]
    assert arms.loc[NO, ["answers", "identifiers", "resolved", "unresolved", "unchecked", "fabricated"]].tolist() == \
        [6, 8, 3, 5, 0, 4]
    # an answer without identifiers is an answer checked: it counts, as a clean one
    assert arms.loc[WITH, ["answers", "identifiers", "resolved", "unresolved", "unchecked", "fabricated"]].tolist() == \
        [6, 6, 4, 1, 1, 1]
    expected = rate_interval(4, 6)
    assert (arms.loc[NO, "low"], arms.loc[NO, "high"]) == pytest.approx((expected.low, expected.high))
    # per prompt: no-skill 1/2, 2/2, 1/2; with-skill 0, 1/2, 0 → d = −0.5, −0.5, −0.5
    d = np.array([-0.5, -0.5, -0.5])
    row = f.delta.iloc[0]
    assert (row["n_prompts"], row["delta"]) == (3, pytest.approx(d.mean()))
    assert row["se"] == pytest.approx(0.0) and row["ci_low"] == pytest.approx(-0.5)
    uneven = ANSWERS[:-1] + [("p3", WITH, "fam", 2, ["unresolved"])]  # p3 with-skill now 1/2: d = −.5, −.5, 0
    row = fabrication_check(*_week(uneven, _record()), DEFAULT_PAIR, ["m"]).delta.iloc[0]
    diffs = np.array([-0.5, -0.5, 0.0])
    half = t_critical(2) * diffs.std(ddof=1) / np.sqrt(3)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((diffs.mean() - half, diffs.mean() + half))
    assert not row["excludes_zero"]


def test_a_prompt_one_arm_answered_is_left_out_of_the_delta_and_a_run_gone_from_the_week_is_not_counted() -> None:
    answers = [*ANSWERS, ("p4", NO, "fam", 1, ["unresolved"])]
    week, manifest = _week(answers, _record())
    gone = manifest[manifest["run_id"].ne("p1-m-no-skill-r1")]  # moved aside since the pass
    f = fabrication_check(week, gone, DEFAULT_PAIR, ["m"])
    assert f.delta.iloc[0]["n_prompts"] == 3
    assert f.arms.set_index("condition").loc[NO, "answers"] == 6  # p4 in, p1 r1 out


def test_the_page_shows_names_and_quotes_as_text_and_says_the_gate_is_off() -> None:
    week, manifest = _week(ANSWERS, _record())
    page = fabrication_markdown(fabrication_check(week, manifest, DEFAULT_PAIR, ["m"]), DEFAULT_PAIR)
    assert page.startswith("## Fabricated identifiers")
    html = BeautifulSoup(markdown_to_html(page), "html.parser")
    assert not html.find_all(["img", "a"]), "an answer's text is never markup: no image, no link"
    assert HOSTILE.split("|")[0] in html.get_text(), "shown as text"
    assert "Fabrication gate: **off** (not asked" in page
    assert "`pandas==3.1.1` (the detector's measured precision 1.000, 95 % lower bound 0.990 over 180 flags)" in page
    assert "4/6 = 0.667" in page and ("−0.500" in page or "-0.500" in page)


@pytest.mark.parametrize(("record", "on", "words"), [
    (_record(gate=False), False, "not asked"),
    (_record(gate=True, low=0.97), False, "lower bound of 0.970 < 0.98"),
    (_record(gate=True, low=None), False, "has no measured precision"),
    ({"surfaces": [], "gate_fabrication": True}, False, "declares no API surface"),
    (_record(gate=True, low=0.985), True, "**on**"),
])
def test_the_gate_is_on_only_when_asked_and_every_surface_is_precise_enough(record: dict, on: bool,
                                                                             words: str) -> None:
    state, line = gate_state(record)
    assert state is on and words in line
    assert "\n" not in line, "one line"


def test_records_exist_only_while_the_gate_is_on_and_decide_the_verdict() -> None:
    # six prompts, each: no-skill clean in both reps, with-skill fabricating in both
    answers = [(f"p{i}", arm, "fam", rep, ["unresolved"] if arm == WITH else ["resolved"])
               for i in range(6) for arm in (NO, WITH) for rep in (1, 2)]
    off = fabrication_check(*_week(answers, _record(gate=True, low=0.9)), DEFAULT_PAIR, ["m"])
    assert off.records == {} and not off.gate_on
    on = fabrication_check(*_week(answers, _record(gate=True, low=0.99)), DEFAULT_PAIR, ["m"])
    rec = on.records[("fam", "m")]
    assert (rec.n, rec.wins, rec.losses, rec.regression) == (6, 0, 6, True)
    assert rec.evidence.startswith("fabrication n=6; 0W/0T/6L; p(more)=") and "rise 100.0 points" in rec.evidence
    # the gate reads it: a clean preference pass becomes VALID_REGRESSION (fabrication)
    pairs = pd.DataFrame([{"run_key": "k", "skill_family": "fam", "prompt": f"p{i}", "model": "m", "rep": 1,
                           "winner_ab": "", "winner_ba": "", "outcome": "W", "judge_model": "j", "error": ""}
                          for i in range(6)])
    manifest = pd.DataFrame({"prompt": [f"p{i}" for i in range(6)], "skill_family": "fam", "model": "m",
                             "condition": WITH, "dormancy": False, "skill_activation": "none"})
    gate = preference_gate(pairs, manifest, fabrication=on.records)
    assert gate.iloc[0]["verdict"] == "VALID_REGRESSION (fabrication)"
    assert "fabrication n=6" in gate.iloc[0]["evidence"]
    cause = family_cause(gate.iloc[0])  # the decision block's one line
    assert cause.startswith("answers use identifiers the declared libraries lack") and "fabrication n=6" in cause
    assert preference_gate(pairs, manifest).iloc[0]["verdict"] == "VALID_PASS", "off: the rule reads nothing"


def test_no_surface_and_an_unknown_status() -> None:
    week, manifest = _week(ANSWERS[:2], {"surfaces": [], "note": "the suite declares no API surface"})
    page = fabrication_markdown(fabrication_check(week, manifest, DEFAULT_PAIR, ["m"]), DEFAULT_PAIR)
    assert "_Not checked: the suite declares no API surface._" in page
    assert fabrication_markdown(None, DEFAULT_PAIR) == "", "a week from before the pass has no section"
    week, manifest = _week(ANSWERS[:1], _record())
    week.identifiers.loc[0, "status"] = "made-up"
    with pytest.raises(LedgerError, match="'status'"):
        fabrication_check(week, manifest, DEFAULT_PAIR, ["m"])


def test_an_unresolved_rest_path_is_shown_but_never_counted() -> None:
    """Only the kinds the detector's precision was measured on (names, keywords) make an answer fabricated: a REST
    path the client's generated API lacks may still be a route its server serves (qdrant's `/points/search`)."""
    week, manifest = _week([("p1", WITH, "fam", 1, ["unresolved"]), ("p1", NO, "fam", 1, ["resolved"])], _record())
    ids = week.identifiers.assign(kind="rest_path", text="POST /collections/{collection_name}/points/search")
    f = fabrication_check(WeekIdentifiers(week.record, week.runs, ids), manifest, DEFAULT_PAIR, ["m"])
    arms = f.arms.set_index("condition")
    assert arms.loc[WITH, ["unresolved", "fabricated"]].tolist() == [1, 0] and f.uncounted == 1
    page = fabrication_markdown(f, DEFAULT_PAIR)
    assert "points/search (not counted) | pandas==3.1.1" in page and "1 unresolved identifier(s) are of a kind" in page
