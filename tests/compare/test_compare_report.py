"""``compare.md`` and ``compare-comment.md`` from synthetic results (issue 30, item 8): the decision first, dotnet's
plain verdict beside the machine state, a new family named as new, every invalid record in the first lines,
hostile names as text, the comment under GitHub's limit; and one check on the committed tiny comparison.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from bs4 import BeautifulSoup

from skillbench.compare import CompareResults, render_compare, render_compare_comment
from skillbench.ledgers import COMPARE_COMMENT_FILE, load_week
from skillbench.markdown import GITHUB_COMMENT_LIMIT
from skillbench.report import markdown_to_html
from skillbench.scorecard import compute_scorecard, stimulus_tables

TINY_COMPARE = Path(__file__).resolve().parents[1] / "data" / "tiny-compare" / "compare"
HOSTILE = "fam<script>alert(1)</script>|x [go](javascript:alert(2))\n## Forged"


def _verdict(family: str, state: str = "VALID_PASS", reason: str = "", **fields: object) -> dict:
    """A verdict record; ``fields`` override its counts, finding, evidence and repair."""
    n, wins, losses = fields.pop("n", 6), fields.pop("wins", 5), fields.pop("losses", 0)
    record = {"skill_family": family, "model": "haiku", "state": state, "reason": reason,
              "verdict": f"{state} ({reason})" if reason else state, "finding": "improvement", "n": n, "wins": wins,
              "ties": n - wins - losses, "losses": losses, "p_value": 0.03, "net_win": 0.8,
              "evidence": "n=6; 5W/1T/0L; p=0.03125; net +83.3%", "must_lift": 0.2, "repair": ""}
    return record | fields


def _results(verdicts: list[dict], *, added: tuple[str, ...] = ()) -> CompareResults:
    families = sorted({v["skill_family"] for v in verdicts})
    return CompareResults.model_validate({
        "run_key": "compare-a-b", "run_dir": "/tmp/compare-a-b", "endpoint": "simulated",
        "base": {"ref": "main", "commit": "a" * 40}, "head": {"ref": "HEAD", "commit": "b" * 40},
        "arms": {"treatment": "with-skill@HEAD", "control": "with-skill@main", "reference": "no-skill"},
        "models": ["haiku"],
        "changes": {"files": ["skills/x/SKILL.md"], "families": families, "prompts": [], "added": list(added),
                    "removed": []},
        "verdicts": verdicts,
        "health": {"expected": 10, "observed": 10, "written": 10, "complete": True, "missing": [], "judge_errors": 0,
                   "ungraded": 0, "underpowered": [], "commit_mismatches": []},
        "fail_on": "regression", "exit_code": 1})


def test_the_decision_lines_name_the_verdicts_every_invalid_family_and_a_new_one() -> None:
    invalid = [_verdict(f"broken-{i:02d}", "INVALID_INCONCLUSIVE", "invalid_spec", n=0, wins=0, finding="invalid",
                        evidence=f"evals/broken-{i:02d}/eval.yaml: field 'grader' is not supported")
               for i in range(40)]
    results = _results([*invalid, _verdict("sizing")], added=("sizing",))
    md = render_compare(results)
    first = md.split("## Verdicts", 1)[0]
    assert "**INVALID** — ⚠️ 40 Invalid or underpowered · ✅ 1 Improved (41 family × model records)" in first
    assert all(f"broken-{i:02d} × haiku" in first for i in range(40)), "every invalid family, no cap"
    assert "eval.yaml: field 'grader' is not supported" in first
    row = next(line for line in md.splitlines() if line.startswith("| ✅ Improved"))
    assert "sizing (new: head vs no-skill)" in row and "`VALID_PASS`" in row
    assert "New at the head (new: head vs no-skill" in md
    comment = render_compare_comment(results, full_report="compare.md")
    assert "New at the head (new: head vs no-skill): sizing" in comment
    assert "| ✅ Improved" not in comment, "the comment keeps only what did not pass"


def _tables(html: str) -> list:
    return BeautifulSoup(html, "html.parser").find_all("table")


def test_hostile_family_names_stay_text_in_both_pages() -> None:
    results = _results([_verdict(HOSTILE, "VALID_NO_CHANGE", "not_significant", wins=2, finding="no change",
                                 repair="more prompts")])
    for md in (render_compare(results), render_compare_comment(results, full_report="compare.md")):
        assert "\n## Forged" not in md
        html = markdown_to_html(md)
        soup = BeautifulSoup(html, "html.parser")
        assert not soup.find_all("script") and not [a for a in soup.find_all("a") if "javascript" in
                                                    str(a.get("href", ""))]
        for table in _tables(html):
            assert len({len(tr.find_all(["th", "td"])) for tr in table.find_all("tr")}) == 1
        assert "fam<script>alert(1)</script>|x" in soup.get_text()


def test_the_comment_of_a_huge_comparison_stays_under_githubs_limit() -> None:
    verdicts = [_verdict(f"family-{i:05d}", "VALID_NO_CHANGE", "not_significant", wins=2, finding="no change",
                         evidence="n=6; 2W/4T/0L; p=0.25; net +33.3% " + "y" * 80, repair="more prompts")
                for i in range(3000)]
    comment = render_compare_comment(_results(verdicts), full_report="compare.md")
    assert len(comment) <= GITHUB_COMMENT_LIMIT
    assert comment.startswith("# skillbench compare") and "➖ 3000 Not proven improved" in comment
    kept = comment.count("| ➖ Not proven improved")
    assert 0 < kept < 3000
    assert f"{3000 - kept} row(s) of “Verdicts that are not Improved”" in comment.splitlines()[-1]
    assert "`compare.md`" in comment.splitlines()[-1]


def test_the_tiny_comparison_reports_each_stimulus_and_its_dormancy_contract() -> None:
    results = CompareResults.model_validate(json.loads((TINY_COMPARE / "results.json").read_text()))
    tables = stimulus_tables(compute_scorecard(load_week(TINY_COMPARE), n_resamples=200))
    md = render_compare(results, tables=tables)
    assert md.index("## Verdicts") < md.index("## Measurement health") < md.index("## Per stimulus") < md.index(
        "## Dormancy contracts") < md.index("## What changed")
    assert "| ➖ Not proven improved | time-series-pandas | haiku | `VALID_NO_CHANGE (not_significant)`" in md
    assert md.count("| time-series-pandas | haiku | ts-") == 6
    comment = render_compare_comment(results, tables=tables, full_report="compare.md")
    assert comment.count("| time-series-pandas | haiku | ts-") == 3  # the three ties; the wins passed
    assert "Dormancy contracts broken" not in comment  # its one contract held


def test_a_comparison_writes_its_comment_beside_compare_md(tmp_path: Path) -> None:
    """``write_outcome`` (what ``skillbench compare`` ends with) on the tiny comparison's ledgers: compare.md with
    the per-stimulus table, compare-comment.md beside it, both from the same results."""
    from types import SimpleNamespace

    from skillbench.arms import ArmPair
    from skillbench.compare._run import write_outcome
    from skillbench.scorecard import write_scorecard

    run_dir = tmp_path / "compare"
    shutil.copytree(TINY_COMPARE, run_dir)
    card = write_scorecard(run_dir, n_resamples=200)
    def version(ref: str, commit: str) -> SimpleNamespace:
        return SimpleNamespace(as_json=lambda: {"ref": ref, "commit": commit, "diff": ""})

    comp = SimpleNamespace(
        run_key="compare-2ad0ce961d87-4bfe014776eb", base=version("HEAD~1", "2ad0ce961d87" + "0" * 28),
        head=version("HEAD", "4bfe014776eb" + "0" * 28),
        arms=ArmPair("with-skill@HEAD", "with-skill@HEAD~1", "no-skill"),
        changes=SimpleNamespace(files=["skills/time-series-pandas/SKILL.md"], families=["time-series-pandas"],
                                prompts=[], added=[], removed=[]),
        suite=SimpleNamespace(preference_eligible_prompts=[SimpleNamespace(family="time-series-pandas")] * 6),
        notes=[], repo=SimpleNamespace(repo=tmp_path, rel="."))  # no weekly history there: no noise floor yet
    week = SimpleNamespace(run_dir=run_dir, families=["time-series-pandas"], new=False)
    outcome = write_outcome(comp, run_dir, [(week, card)], fail_on="regression")
    md, comment = outcome.report_path.read_text(), (run_dir / COMPARE_COMMENT_FILE).read_text()
    assert "## Per stimulus" in md and "## Dormancy contracts" in md
    assert comment.splitlines()[0] == md.splitlines()[0] and len(comment) <= GITHUB_COMMENT_LIMIT
    assert "➖ 1 Not proven improved" in comment and "Full report: `compare.md`" in comment
    assert "Noise floor: no weekly A/A record of this suite" in md
    assert "Error control: Holm (family-wise error ≤ 5 %) across the 1 record with a test in the changed " in md
