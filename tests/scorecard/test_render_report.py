"""The merge report's parts (issue 30, item 8): dotnet's plain verdict words beside the machine state, the
per-stimulus votes, the dormancy contracts, and a PR comment that stays under GitHub's 65,536 characters.

Small synthetic ledgers (a stand-in for the computed scorecard: only the frames the tables read), a huge synthetic
table for the cap, hostile names for the escaping, and the committed ``tests/data/tiny-compare`` comparison for one
integration check.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from skillbench.arms import ArmPair
from skillbench.ledgers import SCORECARD_COMMENT_FILE
from skillbench.markdown import GITHUB_COMMENT_LIMIT, CutTable, capped_page
from skillbench.report import write_markdown_page
from skillbench.scorecard import (
    dormancy_rows,
    error_control_line,
    gate_rows,
    invalid_lines,
    label_counts,
    stimulus_rows,
    stimulus_tables,
    verdict_label,
    write_scorecard,
)
from skillbench.scorecard._render_stimuli import votes_to_survive
from tests.security.test_report import FAMILY, _text, assert_inert, hostile_week  # noqa: F401

TINY_COMPARE = Path(__file__).resolve().parents[1] / "data" / "tiny-compare" / "compare"
PAIR = ArmPair("with-skill@HEAD", "with-skill@main")


# -- the plain words: dotnet/skills' labels, from the one verdict specification ----------------------------------

@pytest.mark.parametrize(("state", "reason", "n", "wins", "losses", "label"), [
    ("VALID_PASS", "", 6, 5, 0, "Improved"),
    ("VALID_NO_CHANGE", "not_significant", 6, 3, 0, "Not proven improved"),
    ("VALID_NO_CHANGE", "no_positive_direction", 6, 1, 1, "Not proven improved"),
    ("VALID_NO_CHANGE", "net_win_below_floor", 40, 8, 2, "Not proven improved"),
    # the gate's rule mirrored for the control: a credible preference loss, report only
    ("VALID_NO_CHANGE", "no_positive_direction", 6, 0, 6, "Preference loss (report only)"),
    # dotnet names a failed activation contract before a preference loss
    ("VALID_NO_CHANGE", "activation_contract_failed", 6, 0, 6, "Activation contract failed"),
    ("VALID_REGRESSION", "objective_loss", 6, 3, 0, "Objective regression"),
    ("INVALID_INCONCLUSIVE", "underpowered", 3, 3, 0, "Invalid or underpowered"),
    ("INVALID_INCONCLUSIVE", "incomplete_reconciliation", 6, 6, 0, "Invalid or underpowered"),
    ("INVALID_INCONCLUSIVE", "judge_errors", 6, 6, 0, "Invalid or underpowered"),
    ("INVALID_INCONCLUSIVE", "commit_mismatch", 6, 6, 0, "Invalid or underpowered"),
    ("INVALID_INCONCLUSIVE", "invalid_spec", 0, 0, 0, "Invalid or underpowered"),
    # a reason this version's specification does not have (another version's card) reads by its state
    ("INVALID_INCONCLUSIVE", "a_reason_from_elsewhere", 0, 0, 0, "Invalid or underpowered"),
])
def test_each_verdict_reads_in_dotnets_words(state: str, reason: str, n: int, wins: int, losses: int,
                                             label: str) -> None:
    assert verdict_label(state, reason, n, wins, losses) == label


def _gate(*records: tuple[str, str, str, str, str]) -> pd.DataFrame:
    rows = [{"skill_family": f, "model": m, "state": s, "reason": r, "verdict": f"{s} ({r})" if r else s,
             "n": 6, "wins": 5, "ties": 1, "losses": 0, "evidence": e} for f, m, s, r, e in records]
    return pd.DataFrame(rows)


def test_the_verdict_table_puts_the_machine_state_beside_the_plain_label() -> None:
    gate = _gate(("fam-a", "haiku", "VALID_PASS", "", "n=6; 5W/1T/0L"),
                 ("fam-b", "haiku", "INVALID_INCONCLUSIVE", "underpowered", "n=3; 3W/0T/0L"))
    headers, rows = gate_rows(gate)
    assert headers == ["skill family", "model", "verdict", "state", "p (raw → Holm)", "evidence"]
    assert rows[0][2:4] == ["✅ Improved", "`VALID_PASS`"]
    assert rows[0][4] == "–"  # no p_adjusted column: no test was read together with others
    assert rows[1][2:4] == ["⚠️ Invalid or underpowered", "`INVALID_INCONCLUSIVE (underpowered)`"]
    headers, rows = gate_rows(gate, failing_only=True)  # the comment: only what did not pass, with what to do
    assert [r[0] for r in rows] == ["fam-b"] and headers[-1] == "next action" and "prompts" in rows[0][-1]
    assert label_counts(["Improved", "Invalid or underpowered", "Improved"]) == (
        "⚠️ 1 Invalid or underpowered · ✅ 2 Improved")


def test_the_page_says_which_passes_survive_holm() -> None:
    gate = _gate(("fam-a", "haiku", "VALID_PASS", "", "n=9"),
                 ("fam-b", "haiku", "VALID_NO_CHANGE", "not_significant_adjusted", "n=5"),
                 ("fam-c", "haiku", "INVALID_INCONCLUSIVE", "underpowered", "n=3"))
    gate = gate.assign(wins=[9, 5, 3], p_value=[1 / 512, 1 / 32, 1 / 8], p_adjusted=[2 / 512, 2 / 32, float("nan")])
    _, rows = gate_rows(gate)
    assert [r[4] for r in rows] == ["0.00195 → 0.00391", "0.0312 → 0.0625", "–"]
    assert error_control_line(gate, "this week") == (
        "Error control: Holm (family-wise error ≤ 5 %) across the 2 records with a test in this week; 2 passes "
        "alone, 1 survives; 1 pass alone but not after the correction (fam-b × haiku). Among 2 records even a "
        "clean sweep needs 6 stimuli voting W or L to survive (0.5^6 × 2 ≤ 0.05): 1 of them had fewer and could "
        "not pass — add preference-eligible prompts, or report fewer families × models at once.")
    assert "nothing was corrected" in error_control_line(gate.iloc[2:], "this week")


def test_the_page_says_when_a_record_is_too_small_to_survive_holm() -> None:
    """oc's operating characteristics: 14 records of 8 stimuli can never pass (0.5^8 × 14 > 0.05); say so."""
    assert [votes_to_survive(m) for m in (1, 2, 14, 40)] == [5, 6, 9, 10]  # ⌈log2(m / 0.05)⌉
    records = [(f"fam-{i:02d}", "haiku", "VALID_NO_CHANGE", "not_significant_adjusted", "n=8") for i in range(14)]
    gate = _gate(*records).assign(wins=8, ties=0, losses=0, p_value=1 / 256, p_adjusted=14 / 256)
    line = error_control_line(gate, "this week")
    assert "even a clean sweep needs 9 stimuli voting W or L to survive" in line
    assert "14 of them had fewer and could not pass" in line


def test_every_invalid_family_is_listed_with_its_line_uncapped() -> None:
    """The first lines name every invalid record, however many, with the evidence it carries (for a broken
    spec: the validator's line)."""
    records = [(f"fam-{i:03d}", "haiku", "INVALID_INCONCLUSIVE", "invalid_spec",
                f"evals/fam-{i:03d}/eval.yaml: field 'grader' is not supported") for i in range(300)]
    lines = invalid_lines(_gate(*records, ("ok", "haiku", "VALID_PASS", "", "n=6")))
    assert len(lines) == 300
    assert "fam-299" in lines[-1] and "`INVALID_INCONCLUSIVE (invalid_spec)`" in lines[-1]
    assert "eval.yaml: field 'grader' is not supported" in lines[-1]


# -- the per-stimulus table and the dormancy contracts --------------------------------------------------------

def _week() -> SimpleNamespace:
    """What the tables read of a computed scorecard: a comparison of two versions, with checks and dormancy."""
    manifest = pd.DataFrame([
        {"run_id": f"{p}-{c}-r{r}", "prompt": p, "skill_family": "fam", "model": "haiku", "condition": c, "rep": r,
         "dormancy": p == "quiet", "skill_activation": act}
        for p, c, r, act in [
            ("p1", "with-skill@HEAD", 1, "skill_tool"), ("p1", "with-skill@main", 1, "skill_tool"),
            ("quiet", "with-skill@HEAD", 1, "skill_tool"), ("quiet", "with-skill@HEAD", 2, "none"),
            ("quiet", "plugin", 1, "none"),
            ("quiet", "with-skill@main", 1, "skill_tool"),  # the control's version is not under test
        ]])
    pairs = pd.DataFrame([
        {"skill_family": "fam", "model": "haiku", "prompt": p, "rep": rep, "outcome": o, "error": e}
        for p, rep, o, e in [("p1", 2, "L", ""), ("p1", 1, "W", ""), ("p1", 3, "W", ""),
                             ("p2", 1, "W", ""), ("p2", 2, "", "judge timed out"),
                             ("p3", 1, "T", "")]])
    check_runs = pd.DataFrame([
        {"prompt": "p1", "model": "haiku", "condition": "with-skill@main", "passed": 2, "failed": 0},
        {"prompt": "p1", "model": "haiku", "condition": "with-skill@HEAD", "passed": 1, "failed": 1},
        {"prompt": "p3", "model": "haiku", "condition": "with-skill@HEAD", "passed": 3, "failed": 0}])
    return SimpleNamespace(pair=PAIR, manifest=manifest, pairs=pairs, objective={"check_runs": check_runs})


def test_each_stimulus_shows_its_reps_vote_and_check_rates_per_arm() -> None:
    tables = stimulus_tables(_week())
    s = tables.stimuli.set_index("prompt")
    assert s.at["p1", "reps"] == "W L W" and s.at["p1", "vote"] == "W"  # rep order, the gate's majority
    assert s.at["p2", "reps"] == "W E" and s.at["p2", "judge_errors"] == 1
    assert s.at["p1", "control_checks"] == (2, 2) and s.at["p1", "treatment_checks"] == (1, 2)
    # p1 won its vote but its checks pass less often with the head; p2 lost a judge call; p3 tied
    assert not s["passing"].any()
    headers, rows = stimulus_rows(tables)
    assert headers[-2:] == ["checks with-skill@main", "checks with-skill@HEAD"]
    assert rows[0][-2:] == ["1.000 (2/2)", "0.500 (1/2)"] and rows[2][-2:] == ["–", "1.000 (3/3)"]
    assert "quiet" not in set(tables.stimuli["prompt"]), "a dormancy prompt never votes"


def test_a_dormancy_contract_counts_the_treatment_and_plugin_runs_that_activated() -> None:
    tables = stimulus_tables(_week())
    [row] = tables.dormancy.to_dict("records")
    assert (row["prompt"], row["activated"], row["runs"], row["passing"]) == ("quiet", 1, 3, False)
    headers, rows = dormancy_rows(tables, failing_only=True)
    assert headers == ["skill family", "stimulus", "model", "expected", "activated in n of k runs", "contract"]
    assert rows == [["fam", "quiet", "haiku", "dormant", "1 of 3", "**activation contract failed**"]]


def test_a_week_without_checks_or_a_base_arm_still_renders() -> None:
    """A new family (no base arm ran) and a week without checks: no check columns, no error."""
    week = _week()
    week.objective = {}
    week.manifest = week.manifest[~week.manifest["condition"].eq("with-skill@main")]
    headers, rows = stimulus_rows(stimulus_tables(week))
    assert headers == ["skill family", "model", "stimulus", "reps (W/T/L each)", "vote"] and len(rows) == 3


# -- the PR comment's cap ---------------------------------------------------------------------------------------

def test_a_huge_report_is_cut_under_githubs_limit_and_says_so() -> None:
    # 📉 is one code point but two UTF-16 units: the cap holds however GitHub counts
    rows = [[f"family-{i}", "haiku", f"prompt-{i}-" + "📉" * 60, "L L", "**L**"] for i in range(20_000)]
    page = capped_page(["# title", "", "**Verdicts**: ⚠️ 1 Invalid or underpowered", "",
                        CutTable("### Stimuli that do not pass", ["f", "m", "p", "reps", "vote"], rows),
                        "Full report: `scorecard.md`"], full_report="scorecard.md")
    assert len(page.encode("utf-16-le")) // 2 <= GITHUB_COMMENT_LIMIT
    assert page.startswith("# title\n\n**Verdicts**"), "the decision lines come first and stay"
    kept = sum(line.startswith("| family-") for line in page.splitlines())
    assert 0 < kept < len(rows)
    last = page.rstrip().splitlines()[-1]
    assert f"{len(rows) - kept} row(s) of “Stimuli that do not pass”" in last
    assert "`scorecard.md`" in last and "65,536" in last
    assert "Full report: `scorecard.md`" in page, "a short line after the cut table still fits"


def test_a_report_that_fits_is_not_cut() -> None:
    page = capped_page(["# t", CutTable("### T", ["a"], [["1"], ["2"]])], full_report="scorecard.md")
    assert "Cut to stay under" not in page and "| 2 |" in page


def test_a_table_with_no_room_for_a_row_is_left_out_whole() -> None:
    page = capped_page(["x" * 900, CutTable("### T", ["a"], [["y" * 500]])], full_report="r.md", limit=2000)
    assert "### T" not in page and "1 row(s) of “T”" in page and len(page) <= 2000


# -- hostile names stay text; one integration check on a committed comparison ------------------------------------

def test_the_comment_shows_hostile_names_as_text(hostile_week: Path, tmp_path: Path) -> None:  # noqa: F811
    comment_file = hostile_week / SCORECARD_COMMENT_FILE
    comment = comment_file.read_text()
    assert "\n| forged | row |" not in comment and "\n## Forged" not in comment  # no line of the content's own
    page = write_markdown_page(comment_file, tmp_path / "comment.html", title="T").read_text()
    soup = assert_inert(page)
    assert FAMILY in _text(soup), "the hostile family is shown as written"
    assert "Activation contract failed" in _text(soup)


def test_a_comparison_week_writes_its_comment_beside_the_scorecard(tmp_path: Path) -> None:
    run_dir = tmp_path / "compare"
    shutil.copytree(TINY_COMPARE, run_dir)
    result = write_scorecard(run_dir, n_resamples=200)
    comment = (run_dir / SCORECARD_COMMENT_FILE).read_text()
    assert len(comment) <= GITHUB_COMMENT_LIMIT
    assert "➖ 1 Not proven improved" in comment and "`VALID_NO_CHANGE (not_significant)`" in comment
    # only the stimuli that did not win their vote; the full page has all six and the dormancy contract
    assert comment.count("| time-series-pandas | haiku | ts-") == 3
    page = result.markdown
    assert "### Per stimulus" in page and page.count("| time-series-pandas | haiku | ts-") == 6
    assert "| dormancy-time-series-cron-schedule | haiku | dormant  | 0 of 1" in page
    assert page.index("**Verdicts**") < page.index("## Lift per model")


def test_the_weekly_chain_writes_the_comment_beside_its_scorecard(tiny_chain: dict) -> None:
    """The session's weekly chain (no week of its own): 05_scorecard leaves scorecard-comment.md beside
    scorecard.md, opening with the same title and the week's plain verdicts."""
    run_dir: Path = tiny_chain["run_dir"]
    page, comment = (run_dir / "scorecard.md").read_text(), (run_dir / SCORECARD_COMMENT_FILE).read_text()
    assert comment.splitlines()[0] == page.splitlines()[0]
    assert "**Verdicts** (" in comment and "Full report: `scorecard.md`" in comment
    assert "### Per stimulus" in page and len(comment) <= GITHUB_COMMENT_LIMIT
