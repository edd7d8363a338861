"""Rubric ownership from git history (issue 33, point 3): a small synthetic repository, built in one ``git
fast-import`` from ``tests/data/ownership_history.json``, whose families pin each rule — identities merged by
e-mail (any case) and by ``.mailmap``, a prompt renamed keeps its author, a deleted prompt and a bot own nothing, an
author of prompts only is no overlap — then preflight's and validate's lines (a warning that never changes the exit
code), the preflight page's table, a non-repository and a shallow clone (one line each), the history cut at a
compared head, and the merge report's section.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from skillbench.cli import main
from skillbench.compare import render_compare, render_compare_comment
from skillbench.report import markdown_to_html
from skillbench.suite import Overlap, Ownership, SuiteOverrides, SuiteRepo, preflight, rubric_ownership
from skillbench.suite._ownership import _parse_log
from tests.compare.test_compare_report import HOSTILE, _results, _verdict
from tests.helpers.shared import DATA_DIR

CASES = json.loads((DATA_DIR / "ownership_history.json").read_text(encoding="utf-8"))
SITE = "https://skills.example.test"
RUBRIC = [{"type": "must", "text": f"must claim {i}"} for i in range(3)] + [
    {"type": "bonus", "text": "bonus claim"}, {"type": "avoid", "text": "avoid claim"}]


def _content(path: str, number: int) -> str:
    """A file's text at commit ``number``: a valid skill, prompt or config, different at each commit."""
    stem = Path(path).stem
    if path.endswith("SKILL.md"):
        family = Path(path).parent.name
        return (f"---\nname: {family}\ndescription: Helps with {family}. Use when asked about {family}.\n---\n"
                f"v{number}\n")
    if path.endswith(".json"):
        family = stem.split("-")[0]
        return json.dumps({"name": stem, "product_area": "area", "skill_url": f"{SITE}/{family}/SKILL.md",
                           "prompt": f"Question {stem}? (v{number})", "rubric": RUBRIC}, indent=2) + "\n"
    if path.endswith("skillbench.toml"):
        return f'[suite]\nsite_base = "{SITE}"\nskills_root = "../skills"\n'
    if path == ".mailmap":
        return CASES["mailmap"]
    return f"{path} v{number}\n"


def _data(text: str) -> str:
    return f"data {len(text.encode())}\n{text}\n"


def _stream(commits: list[dict]) -> str:
    """The history as one ``git fast-import`` stream (one process for every commit)."""
    out = []
    for number, commit in enumerate(commits, start=1):
        stamp = f"{1_700_000_000 + number * 60} +0000"
        out += ["commit refs/heads/main", f"author {commit['author']} {stamp}",
                f"committer {commit['author']} {stamp}", _data(f"commit {number}").rstrip("\n")]
        for old, new in commit.get("rename", []):
            out += [f"R {old} {new}", f"M 100644 inline {new}", _data(_content(new, number)).rstrip("\n")]
        out += [f"D {path}" for path in commit.get("delete", [])]
        for path in commit.get("write", []):
            out += [f"M 100644 inline {path}", _data(_content(path, number)).rstrip("\n")]
        out.append("")
    return "\n".join(out) + "\n"


def _git(where: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["git", "-C", str(where), *args], input=stdin, capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic repository, checked out: ``evals/`` (the suite) beside ``skills/``."""
    root = tmp_path_factory.mktemp("owned") / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "fast-import", "--quiet", stdin=_stream(CASES["commits"]))
    _git(root, "reset", "-q", "--hard", "main")
    return root


def _report(suite_dir: Path):
    return preflight(suite_dir, SuiteOverrides())


@pytest.fixture(scope="module")
def owned(repo: Path) -> Ownership:
    return _report(repo / "evals").ownership


@pytest.mark.parametrize("family", sorted(CASES["expected"]))
def test_each_family_overlaps_as_its_history_says(owned: Ownership, family: str) -> None:
    want = CASES["expected"][family]
    got = [o for o in owned.overlaps if o.family == family]
    if want["author"] is None:
        assert got == [], want["why"]
        return
    assert got == [Overlap(family, want["author"], tuple(want["skill"]), tuple(want["rubric"]))], want["why"]


def test_one_note_counts_the_families_and_the_commits(owned: Ownership) -> None:
    assert owned.families == ("alpha", "beta", "delta", "gamma")
    assert owned.note() == ("rubric ownership: 3 of 4 families have a rubric author who also wrote the skill (from "
                            f"{len(CASES['commits'])} commits of git history)")


def test_validate_warns_per_family_and_keeps_its_exit_code_even_strict(repo: Path, capsys) -> None:
    report = _report(repo / "evals")
    assert report.warnings == [] and report.ok(strict=True), "ownership is no preflight defect"
    assert main(["validate", str(repo / "evals"), "--strict"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    warned = [line for line in lines if line.startswith("warning: rubric ownership: ")]
    assert len(warned) == 3 and lines[-1].endswith("0 errors, 0 warnings")
    assert ("warning: rubric ownership: beta: Carl wrote both the skill (skills/beta/SKILL.md) and its prompts' "
            "rubrics (evals/test-prompts/beta-q0.json, evals/test-prompts/beta-q1.json, "
            "evals/test-prompts/beta-q2.json and 2 more) — have someone other than the skill's author write or "
            "review these rubrics") in warned
    assert sum(line.startswith("note: rubric ownership") for line in lines) == 1


def test_the_preflight_page_table_has_one_warning_row_per_overlap(repo: Path) -> None:
    table = _report(repo / "evals").defects_df()
    rows = table[table["field"] == "rubric ownership"]
    assert list(rows["severity"]) == ["warning"] * 3
    assert [Path(p).name for p in rows["path"]] == ["alpha", "beta", "delta"]
    assert rows["problem"].str.startswith(("Ann wrote both", "Carl wrote both", "Fay wrote both")).all()


def test_a_suite_outside_any_repository_is_one_line_and_no_warning(repo: Path, tmp_path: Path, capsys) -> None:
    plain = tmp_path / "plain"
    shutil.copytree(repo, plain, ignore=shutil.ignore_patterns(".git"))
    got = _report(plain / "evals").ownership
    assert got.overlaps == () and "is not inside a git repository" in got.unread
    assert main(["validate", str(plain / "evals")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if "rubric ownership" in line] == [f"note: {got.note()}"]


def test_a_shallow_clone_says_its_history_is_incomplete(repo: Path, tmp_path: Path) -> None:
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(tmp_path / "shallow")], check=True,
                   capture_output=True)
    got = _report(tmp_path / "shallow" / "evals").ownership
    assert got.overlaps == () and got.lines() == [f"note: {got.note()}"]
    assert "shallow clone, so its history is incomplete" in got.note() and "--unshallow" in got.note()


def test_no_git_is_one_line(repo: Path, monkeypatch) -> None:
    report = _report(repo / "evals")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert report.ownership.lines() == ["note: rubric ownership not checked: git is not installed (or not on PATH)"]


def test_a_compared_head_reads_the_history_up_to_its_commit(repo: Path, tmp_path: Path) -> None:
    """compare --head REF: the head's suite is a copy materialized at REF; its history ends there (at the second
    commit, alpha's prompts were Bob's alone)."""
    here = _report(repo / "evals").suite
    at = SuiteRepo.of(here)
    second = _git(repo, "rev-list", "--reverse", "main").split()[1]
    copy = at.materialize(second, tmp_path / "versions")
    then = _report(copy / "evals").suite
    got = rubric_ownership(then, ["alpha"], repo=repo, commit=second, checkout=copy)
    assert got.overlaps == () and got.families == ("alpha",) and got.commits == 2
    now = rubric_ownership(here, ["alpha", "gamma"], repo=repo)
    assert [o.family for o in now.overlaps] == ["alpha"] and now.asked == ("alpha", "gamma")


# (name, git log -z --name-status text with ␞ for \x1e, ␟ for \x1f and ␀ for NUL, each commit's files today)
PARSE_CASES = [
    ("rename chain", "␞A␟a@x␀\nR100␀b.json␀c.json␀␞B␟b@x␀\nR090␀a.json␀b.json␀␞C␟c@x␀\nA␀a.json␀",
     [["c.json"], ["c.json"], ["c.json"]]),
    ("a name added again is another file", "␞A␟a@x␀\nA␀p.json␀␞B␟b@x␀\nD␀p.json␀␞C␟c@x␀\nM␀p.json␀",
     [["p.json"], [], []]),
    ("a merge lists no file", "␞M␟m@x␀\n␞A␟a@x␀\nM␀x␀M␀y␀", [[], ["x", "y"]]),
    ("a copy leaves its source", "␞A␟a@x␀\nC075␀s␀t␀␞B␟b@x␀\nM␀s␀", [["t"], ["s"]]),
]


@pytest.mark.parametrize(("text", "files"), [c[1:] for c in PARSE_CASES], ids=[c[0] for c in PARSE_CASES])
def test_the_log_is_read_newest_first_with_renames_followed(text: str, files: list[list[str]]) -> None:
    raw = text.replace("␞", "\x1e").replace("␟", "\x1f").replace("␀", "\0")
    assert [c.files for c in _parse_log(raw)] == files


def test_the_merge_report_says_it_under_the_verdicts_and_escapes_names() -> None:
    owned = Ownership((Overlap(HOSTILE, HOSTILE, ("skills/x/SKILL.md",), ("evals/test-prompts/x.json",)),),
                      commits=3, families=(HOSTILE,), asked=(HOSTILE,))
    results = _results([_verdict("x")])
    md = render_compare(results, ownership=owned)
    assert md.index("## Verdicts") < md.index("## Rubric ownership") < md.index("## Measurement health")
    assert "the verdicts stand" in md and "\n## Forged" not in md
    soup = BeautifulSoup(markdown_to_html(md), "html.parser")
    assert not soup.find_all("script") and not [a for a in soup.find_all("a") if "javascript" in a.get("href", "")]
    assert "fam<script>alert(1)</script>" in soup.get_text(), "the name shown as text"
    assert "1 of 1 families have a rubric author who also wrote the skill" in md
    comment = render_compare_comment(results, full_report="compare.md", ownership=owned)
    assert "### Rubric ownership" in comment and "wrote both the skill" in comment and "of 1 families" not in comment
    assert "Rubric ownership" not in render_compare_comment(results, full_report="compare.md",
                                                            ownership=Ownership(asked=("x",), families=("x",)))


@pytest.mark.parametrize("head", ["HEAD", "HEAD~1"])
def test_a_comparison_reads_the_changed_families_history_at_its_head(repo: Path, tmp_path: Path, head: str) -> None:
    """What ``compare`` writes under its verdicts: the changed families only (delta's prompts were renamed and
    added, gamma's touched by the bot), read at the head — the working tree, or a commit materialized apart."""
    from skillbench.compare import plan_comparison
    from skillbench.compare._run import changed_ownership

    suite = _report(repo / "evals").suite
    comp = plan_comparison(suite, "HEAD~3", head, cache_dir=tmp_path / "versions")
    got = changed_ownership(comp)
    assert comp.changes.families == (["delta", "gamma"] if head == "HEAD" else ["delta"])
    assert [(o.family, o.author) for o in got.overlaps] == [("delta", "Fay")]
    # the commits that touched the families' folders or the prompts' folder, up to the head (the bot's last)
    assert got.commits == {"HEAD": 9, "HEAD~1": 8}[head]


def test_a_hostile_name_or_path_from_history_stays_on_one_line(tmp_path: Path) -> None:
    from skillbench.suite._ownership import _Commit, _overlaps, _Sides

    odd = "evals/p\n\x1b[2Jx.json"
    for rel in ("skills/a/SKILL.md", odd):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    got = _overlaps([_Commit("Eve\x1b]0;owned\x07", "e@x", ["skills/a/SKILL.md", odd])],
                    {"a": _Sides("skills/a", frozenset({odd}))}, tmp_path)
    [line] = got.overlaps
    assert "\n" not in str(line) and "\x1b" not in str(line) and "\x07" not in str(line)
    assert "Eve\\x1b]0;owned\\x07 wrote both" in str(line) and "evals/p\\n\\x1b[2Jx.json" in str(line)


# (layout, the family's folder, its rubric files, a path, the side it is on: skill, rubric or neither)
SIDE_CASES = [
    ("qdrant", "skills/a", ["evals/test-prompts/a-q0.json"], "skills/a/sub/SKILL.md", "skill"),
    ("qdrant", "skills/a", ["evals/test-prompts/a-q0.json"], "skills/ab/SKILL.md", None),
    ("dotnet", "plugins/p/skills/s", ["tests/p/s/eval.yaml"], "tests/p/s/eval.yaml", "rubric"),
    ("dotnet", "plugins/p/skills/s", ["tests/p/s/eval.yaml"], "tests/p/s/fixture.cs", None),
    ("skill-creator", "s", ["s/evals/evals.json"], "s/evals/files/orders.csv", None),
    ("skill-creator", "s", ["s/evals/evals.json"], "s/references/api.md", "skill"),
    ("skill-creator at the top", ".", ["evals/evals.json"], "SKILL.md", "skill"),
]


@pytest.mark.parametrize(("folder", "rubrics", "path", "side"), [c[1:] for c in SIDE_CASES],
                         ids=[f"{c[0]}:{c[3]}" for c in SIDE_CASES])
def test_a_file_is_on_the_skill_side_the_rubric_side_or_neither(folder, rubrics, path, side) -> None:
    from skillbench.suite._ownership import _Sides

    assert _Sides(folder, frozenset(rubrics)).side(path) == side
