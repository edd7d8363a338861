"""The generalization check (issue 33, point 2; :mod:`skillbench.scorecard._generalization`) on small frames and
fixtures: the flag rule from the data-driven cases in ``tests/data/generalization_cases.json``, the gap's Welch
interval against scipy's, the suite's held-out use record (append-only, idempotent per decision, damage is one line),
the wear warning, the held-out week built apart from the scored one, the sim's ``heldout_gain``, and the report's
section with hostile names as text."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pandas as pd
import pytest
from bs4 import BeautifulSoup
from scipy import stats

from skillbench.compare import CompareResults, render_compare, render_compare_comment
from skillbench.compare._comparison import ComparedWeek, heldout_prompts, heldout_week
from skillbench.ledgers import (
    HELDOUT_USE_COLUMNS,
    LedgerError,
    heldout_decisions,
    load_week,
    read_heldout_uses,
    record_heldout_use,
)
from skillbench.report import markdown_to_html
from skillbench.scorecard import (
    Gap,
    Lift,
    family_differences,
    gap_row,
    gap_table,
    prompt_rep_scores,
    prompt_scores,
    worn,
)
from skillbench.sim import version_key
from skillbench.sim._agent import Agent
from skillbench.sim._conversation import parse_request
from skillbench.sim._profiles import SkillVersion
from skillbench.suite import load_suite
from tests.compare.test_compare_report import HOSTILE, _results, _verdict
from tests.sim.test_sim_units import _cli_like_body

DATA = Path(__file__).resolve().parents[1] / "data"
EVALS = Path(__file__).resolve().parents[2] / "evals"
TINY_COMPARE = DATA / "tiny-compare" / "compare"
CASES = json.loads((DATA / "generalization_cases.json").read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_flag_rule(case: dict) -> None:
    row = gap_row("fam", "haiku", case["scored"], case["heldout"])
    assert (row["tested"], row["flagged"], row["reading"]) == (case["tested"], case["flagged"], case["reading"])
    assert row["gap"] == pytest.approx(sum(case["scored"]) / len(case["scored"])
                                       - sum(case["heldout"]) / len(case["heldout"]))


def test_the_gap_interval_is_welchs_t_interval_and_each_lift_a_paired_t_interval() -> None:
    scored, heldout = [0.5, 0.25, 0.5, 0.75, 0.5, 0.25, 0.0], [0.25, 0.0, -0.25, 0.5, 0.0]
    s, h = Lift.of(scored), Lift.of(heldout)
    gap = Gap.of(s, h)
    welch = stats.ttest_ind(scored, heldout, equal_var=False)
    ci = welch.confidence_interval(0.95)
    assert (gap.low, gap.high) == pytest.approx((ci.low, ci.high))
    assert gap.df == pytest.approx(welch.df)
    one = stats.ttest_1samp(scored, 0.0).confidence_interval(0.95)
    assert (s.low, s.high) == pytest.approx((one.low, one.high))
    assert math.isnan(Lift.of([0.5]).low) and Lift.of([]).n == 0


def test_the_gap_is_read_per_family_and_model_from_a_weeks_prompt_scores() -> None:
    week = load_week(TINY_COMPARE)
    prompts = prompt_scores(prompt_rep_scores(week.scores))
    names = ["ts-asof-join-quotes", "ts-dst-localize-errors", "ts-fill-missing-days-panel"]
    d = family_differences(prompts, week.arms, names)
    assert sorted(d["prompt"]) == names and set(d["skill_family"]) == {"time-series-pandas"}
    head, base = week.arms.treatment, week.arms.control
    one = prompts.set_index(["prompt", "condition"])["must_coverage"]
    assert d.set_index("prompt").loc["ts-asof-join-quotes", "d"] == pytest.approx(
        one[("ts-asof-join-quotes", head)] - one[("ts-asof-join-quotes", base)])
    table = gap_table(d, d.iloc[0:0], ["time-series-pandas", "other"], ["haiku"])
    assert list(table["n_scored"]) == [3, 0] and list(table["n_heldout"]) == [0, 0]
    assert not table["tested"].any() and set(table["reading"]) == {"described only"}


# -- the held-out week ------------------------------------------------------------------------------------


def test_the_held_out_week_runs_only_the_families_held_out_prompts_apart_from_the_scored_week(tmp_path) -> None:
    from skillbench.arms import ArmPair

    suite = load_suite(EVALS)
    families = ["time-series-pandas", "regression-statsmodels"]
    mine = [p for p in suite.prompts if p.family in families]
    scored = ComparedWeek(families, dataclasses.replace(suite, prompts=mine),
                          ArmPair(treatment="with-skill@HEAD", control="with-skill@HEAD~1", reference="no-skill"),
                          {}, "compare-a-b", tmp_path)
    held = heldout_week(scored)
    assert held is not None and held.run_dir == tmp_path / "_heldout" and held.run_key == "compare-a-b-heldout"
    assert held.arms == scored.arms and held.conditions == ["with-skill@HEAD~1", "with-skill@HEAD"]  # the pair
    assert scored.conditions == ["no-skill", "with-skill@HEAD~1", "with-skill@HEAD"]
    expected = sorted(p.name for p in mine if p.heldout)
    assert sorted(p.name for p in held.suite.prompts) == expected and len(expected) >= 10
    assert all(p.name.startswith("heldout-") for p in held.suite.prompts)
    assert sorted(p.name for p in held.suite.scored_prompts) == expected  # planned there, and only there
    assert not any(p.name.startswith("heldout-") for p in scored.suite.scored_prompts)
    by_family = heldout_prompts(suite, families)
    assert sum(f == "time-series-pandas" for f, _ in by_family) >= 5
    assert sum(f == "regression-statsmodels" for f, _ in by_family) >= 5
    none = ComparedWeek(["x"], dataclasses.replace(suite, prompts=[]), scored.arms, {}, "k", tmp_path)
    assert heldout_week(none) is None


# -- the use record ---------------------------------------------------------------------------------------


def test_the_use_record_appends_each_decision_once_and_counts_decisions_per_prompt(tmp_path) -> None:
    path = tmp_path / "heldout-uses.csv"
    assert read_heldout_uses(path).empty  # no file: no use yet
    prompts = [("ts", "heldout-a"), ("ts", "heldout-b")]
    assert record_heldout_use(path, command="compare", run_key="compare-1-2", prompts=prompts,
                              base_commit="1" * 40, head_commit="2" * 40) == 2
    assert record_heldout_use(path, command="compare", run_key="compare-1-2", prompts=prompts) == 0  # a rerun
    assert record_heldout_use(path, command="weekly", run_key="20261205", prompts=prompts[:1]) == 1
    uses = read_heldout_uses(path)
    assert list(uses.columns) == list(HELDOUT_USE_COLUMNS) and len(uses) == 3
    assert uses.iloc[0]["base_commit"] == "1" * 40 and uses.iloc[2]["head_commit"] == ""
    decisions = heldout_decisions(uses)
    assert decisions.to_dict() == {"heldout-a": 2, "heldout-b": 1}
    assert worn(decisions, ["heldout-a", "heldout-b"], 1) == [("heldout-a", 2)]
    assert worn(decisions, ["heldout-a", "heldout-b"], 2) == []


@pytest.mark.parametrize("damage", [
    "used_at,command,run_key\r\n",  # other columns
    "{header}x,compare,k,,,ts\r\n{good}",  # a short row before the last line
    "{header}2026-01-01T00:00:00Z,compare,,,,ts,heldout-a\r\n",  # an empty run key
])
def test_a_damaged_use_record_is_one_line_never_a_fresh_record(tmp_path, damage: str) -> None:
    path = tmp_path / "heldout-uses.csv"
    header = ",".join(HELDOUT_USE_COLUMNS) + "\r\n"
    good = "2026-01-01T00:00:00Z,compare,k,,,ts,heldout-a\r\n"
    path.write_text(damage.format(header=header, good=good), encoding="utf-8")
    with pytest.raises(LedgerError) as err:
        read_heldout_uses(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    before = path.read_bytes()
    with pytest.raises(LedgerError):
        record_heldout_use(path, command="compare", run_key="k2", prompts=[("ts", "heldout-a")])
    assert path.read_bytes() == before  # nothing appended to a damaged record


# -- the sim's heldout_gain -------------------------------------------------------------------------------


def test_a_version_with_a_heldout_gain_helps_the_scored_prompts_only() -> None:
    suite = load_suite(EVALS)
    hub = suite.skills["time-series-pandas/SKILL.md"]
    key = version_key(hub.description)
    agent = Agent(suite, 1, "http://127.0.0.1/site", versions={key: SkillVersion(gain=2.0, heldout_gain=1.0)})
    listing = f"- {hub.name}: {hub.description}"
    specs = {p.name: p for p in suite.prompts}
    for name, want in (("ts-lag-features-leakage", 2.0), ("heldout-weekly-totals-mismatch", 1.0)):
        conv = parse_request(_cli_like_body(specs[name].test.prompt, listing=listing))
        assert agent.version_gain(conv, specs[name]) == want
    assert SkillVersion(gain=0.5).for_prompt(True) == 0.5  # no heldout_gain: the same gain everywhere


# -- the pages --------------------------------------------------------------------------------------------


def _with_generalization(records: list[dict], worn_prompts: list[dict] | None = None) -> CompareResults:
    results = _results([_verdict(r["skill_family"]) for r in records])
    return results.model_copy(update={"generalization": CompareResults.model_validate({
        **results.model_dump(), "generalization": {
            "run_dirs": ["/tmp/compare-a-b/_heldout"], "prompts": ["heldout-x"], "records": records,
            "rule": "the rule", "interval": "Welch t", "wear_limit": 5, "worn": worn_prompts or [],
            "record": "heldout-uses.csv: this use added 1 row(s)"}}).generalization})


def _record(family: str, scored: list[float], heldout: list[float]) -> dict:
    row = gap_row(family, "haiku", scored, heldout)
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}


def test_the_section_shows_both_lifts_the_gap_and_the_flag_with_hostile_names_as_text() -> None:
    tuned = _record(HOSTILE, [0.5, 0.25, 0.5, 0.75, 0.5, 0.25], [0.0, 0.25, -0.25, 0.0, 0.0])
    small = _record("few-heldout", [0.5, 0.25, 0.5], [0.0, 0.1])
    results = _with_generalization([tuned, small], [{"prompt": "heldout-<b>old</b>", "decisions": 7}])
    md = render_compare(results)
    assert "⚠️ **May be tuned to the test**: fam" in md.split("## Verdicts", 1)[0]  # the decision lines say it
    section = md.split("## Generalization: held-out prompts", 1)[1].split("\n## ", 1)[0]
    assert "⚠️ **may be tuned to the test**" in section and "(not tested)" in section
    assert "few-heldout is described only" in section and "Worn held-out prompts" in section
    assert "(n=6)" in section and "(n=5)" in section and "- Rule: the rule." in section
    comment = render_compare_comment(results, full_report="compare.md")
    assert "### Generalization: held-out prompts" in comment and "may be tuned to the test" in comment
    for page in (md, comment):
        assert "\n## Forged" not in page
        soup = BeautifulSoup(markdown_to_html(page), "html.parser")
        assert not soup.find_all("script") and not soup.find_all("b")
        assert "fam<script>alert(1)</script>|x" in soup.get_text() and "heldout-<b>old</b>" in soup.get_text()
        for table in soup.find_all("table"):
            assert len({len(tr.find_all(["th", "td"])) for tr in table.find_all("tr")}) == 1
    assert "Generalization" not in render_compare(_results([_verdict("x")]))  # not asked: no section


# -- the weekly scorecard's section -----------------------------------------------------------------------


def test_the_scorecard_section_reads_the_held_out_week_apart_and_says_when_it_cannot(tmp_path) -> None:
    from skillbench.scorecard import WeekGeneralization, generalization_markdown, week_generalization
    from skillbench.scorecard._generalization import with_generalization

    week = load_week(TINY_COMPARE)
    prompts = prompt_scores(prompt_rep_scores(week.scores))
    assert week_generalization(tmp_path, prompts, week.arms, ["haiku"]) is None  # not asked: no section
    (tmp_path / "_heldout").mkdir()
    (tmp_path / "_heldout" / "heldout-use.json").write_text("[1, 2", encoding="utf-8")
    damaged = week_generalization(tmp_path, prompts, week.arms, ["haiku"])
    assert damaged is not None and damaged.table.empty and "heldout-use.json" in damaged.problem
    text = generalization_markdown(damaged)
    assert "**Not read**" in text and "|" not in text  # one line, never a table that reads as clean
    table = gap_table(family_differences(prompts, week.arms, prompts["prompt"]).assign(skill_family=HOSTILE),
                      pd.DataFrame(columns=["model", "prompt", "skill_family", "d"]), [HOSTILE], ["haiku"])
    good = WeekGeneralization(table, {"worn": [["heldout-a", 6]], "wear_limit": 5, "record": "uses.csv: added 1"})
    page = with_generalization("# Scorecard\n\n## Lift\n\nx\n\n## Coverage\n\ny\n", good)
    assert page.index("## Lift") < page.index("## Generalization: held-out prompts") < page.index("## Coverage")
    assert "described only" in page and "Worn held-out prompts" in page and "heldout-a (6)" in page
    soup = BeautifulSoup(markdown_to_html(page), "html.parser")
    assert not soup.find_all("script") and "fam<script>alert(1)</script>|x" in soup.get_text()


def test_a_head_that_rewrites_the_use_record_is_refused_before_any_run(tmp_path, capsys) -> None:
    """The pull request under review may not reset the wear of the prompts it is judged on: its record must extend
    the base's (rows appended only), or --generalization refuses in one line, before anything runs."""
    import shutil

    from skillbench.cli import main
    from tests.helpers.git import commit_all, git

    suite = tmp_path / "evals"
    shutil.copytree(EVALS, suite, ignore=shutil.ignore_patterns("weekly", "compare"))
    git(tmp_path, "init", "-q")
    record = suite / "heldout-uses.csv"
    record_heldout_use(record, command="compare", run_key="compare-1-2", prompts=[("time-series-pandas", "h-a")])
    record_heldout_use(record, command="compare", run_key="compare-3-4", prompts=[("time-series-pandas", "h-a")])
    commit_all(tmp_path, "base: two recorded decisions")
    skill = suite / "skills" / "time-series-pandas" / "SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8") + "\nAn edit.\n", encoding="utf-8")
    lines = record.read_text(encoding="utf-8").splitlines(keepends=True)
    record.write_text("".join(lines[:2]), encoding="utf-8")  # one decision dropped: the wear reset by one
    commit_all(tmp_path, "head: an edit, and a record with a row removed")
    code = main(["compare", str(suite), "--base", "HEAD~1", "--generalization", "--backend", "sim",
                 "--models", "haiku", "--reps", "1", "--sandbox", "local"])
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]  # the notes said before any run come first; then the one refusal line
    assert code == 1 and last.startswith("skillbench compare: --generalization: ")
    assert "does not extend its copy at the base" in last and "git checkout" in last
    assert not (suite / "compare").exists()  # refused before anything is written


def test_a_held_out_week_beside_a_week_changes_none_of_its_scored_numbers(tmp_path) -> None:
    """Apart by construction: the same week with and without a ``_heldout/`` folder (here a copy of another week)
    has the same lift, gate, history rows and decision, byte for byte; only the generalization section is added."""
    import shutil

    from skillbench.scorecard import compute_scorecard, render_markdown, week_decision
    from tests.helpers.shared import TINY_WEEK

    week = tmp_path / "20261130"
    shutil.copytree(TINY_WEEK / "20261130", week)
    before = compute_scorecard(load_week(week), n_resamples=200)
    shutil.copytree(TINY_WEEK / "20261123", week / "_heldout")
    after = compute_scorecard(load_week(week), n_resamples=200)
    assert before.extras["generalization"] is None and after.extras["generalization"] is not None
    for name in ("lift", "gate", "history_rows", "prompts", "paired", "coverage"):
        one, two = getattr(before, name), getattr(after, name)
        assert (one is None and two is None) or one.to_csv() == two.to_csv(), name
    assert json.dumps(week_decision(before).to_json()) == json.dumps(week_decision(after).to_json())
    md_before, md_after = render_markdown(before), render_markdown(after)
    section = md_after[md_after.index("## Generalization: held-out prompts"):md_after.index("## Coverage")]
    assert md_after.replace(section, "") == md_before
