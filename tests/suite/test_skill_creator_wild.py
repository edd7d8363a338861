"""skill-creator folders as authors write them: the variants of ``evals.json`` and trigger sets, a repository whose
root is the skill or whose ``evals/`` sits beside ``skills/*/``, the "says when" rule in the languages descriptions
use, and the shared sample of public folders (read at test time, its count checked against the docs page)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skillbench.suite import preflight, says_when
from tests.helpers.shared import ROOT, SHARED, require

WILD = SHARED / "datasets" / "skill-creator-wild"
DOCS = ROOT / "docs" / "skill-creator.md"


def _skill(folder: Path, name: str, description: str = "Tidy CSV files. Use when the user asks to clean a CSV.",
           *, crlf: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\nSteps.\n"
    (folder / "SKILL.md").write_bytes(text.replace("\n", "\r\n" if crlf else "\n").encode("utf-8"))
    return folder


def _evals(owner: Path, data: object, *, bom_crlf: bool = False, name: str = "evals.json") -> Path:
    path = owner / "evals" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, ensure_ascii=False, indent=1)
    path.write_bytes(("\ufeff" + text.replace("\n", "\r\n")).encode("utf-8") if bom_crlf else text.encode("utf-8"))
    return path


def _notes(report) -> list[str]:
    return [line for line in report.summary().splitlines() if line.startswith("note: ")]


def test_a_repository_root_skill_with_assertions_checks_file_objects_crlf_and_no_expectations(tmp_path: Path) -> None:
    # the folder is named after the repository, SKILL.md after the skill; the files are CRLF, one with a BOM. The
    # family is the folder's name: the CLI lists an installed skill by its folder (init's "skills"), not by name.
    skill = _skill(tmp_path / "acme-skill", "acme", crlf=True)
    (skill / "inputs").mkdir()
    (skill / "inputs" / "数据.csv").write_text("a,b\n", encoding="utf-8")
    _evals(skill, {"skill_name": "acme", "evals": [
        {"id": 1, "name": "objects", "prompt": "清理 inputs/数据.csv",
         "files": [{"path": "inputs/数据.csv", "purpose": "源文件"}],
         "assertions": [{"id": "a1", "text": "删除空行", "kind": "content"},
                        {"name": "n", "check": "keeps the header"}]},
        {"id": 2, "prompt": "tidy this", "checks": ["no BOM in the output", "LF line ends"],
         "expectations": ["reports the row count"]},
        {"id": 3, "prompt": "skill-creator's template: prompts first, assertions later", "files": []},
    ]}, bom_crlf=True)
    report = preflight(skill)
    assert report.ok(), [str(d) for d in report.errors]
    suite = report.suite
    assert suite.families == ["acme-skill"] and suite.family_dir("acme-skill") == skill.resolve()
    by_name = {p.name.removeprefix("acme-skill-"): p for p in suite.prompts}
    assert sorted(by_name) == ["1", "2", "3"]
    assert [i.text for i in by_name["1"].test.rubric] == ["删除空行", "keeps the header"]
    assert [i.text for i in by_name["2"].test.rubric] == ["reports the row count", "no BOM in the output",
                                                           "LF line ends"]
    assert [w.dest for w in by_name["1"].test.workspace] == ["inputs/数据.csv"]
    # no statement to grade: it still runs in both arms and votes in the preference, with no must coverage
    assert by_name["3"].test.rubric == [] and by_name["3"].preference_eligible
    notes = _notes(report)
    assert any("SKILL.md names the skill 'acme'; the CLI lists it by its folder, 'acme-skill'" in n for n in notes)
    assert any("1 of 3 evals have no expectations" in n for n in notes)
    assert not report.warnings or all("name" not in d.field for d in report.warnings)  # a descriptive name is known


@pytest.mark.parametrize("data, where", [
    ({"version": "1", "cases": [{"id": "a", "prompt": "p", "assertions": ["x"], "failure_mode": "f"}]}, "'cases'"),
    ([{"id": 1, "prompt": "p"}], "the top-level list"),
    ({"tests": [{"id": "Q1", "query": "你是谁？", "assertions": ["answers in character"]}]}, "'tests'"),
])
def test_an_eval_list_under_another_key_loads_with_a_note(tmp_path: Path, data: object, where: str) -> None:
    skill = _skill(tmp_path / "s", "s")
    _evals(skill, data)
    report = preflight(skill)
    assert report.ok(), [str(d) for d in report.errors]
    assert len(report.suite.prompts) == 1
    assert any(f"the evals are read {'as' if where.startswith('the') else 'under'} {where}" in n
               for n in _notes(report))


@pytest.mark.parametrize("data", [
    {"description": "a rubric", "version": "0.2"},
    {"a": [{"prompt": "x"}], "b": [{"prompt": "y"}]},  # two candidate lists: which one is meant is a guess
    [1, 2],
])
def test_what_is_not_an_eval_set_is_refused_in_one_line(tmp_path: Path, data: object) -> None:
    skill = _skill(tmp_path / "s", "s")
    _evals(skill, data)
    [error] = preflight(skill).errors
    assert error.field == "evals" and error.problem.startswith("no list of evals with a prompt")
    assert '"evals": [' in error.fix


def test_a_scripted_conversation_is_skipped_with_a_warning_not_refused(tmp_path: Path) -> None:
    skill = _skill(tmp_path / "s", "s")
    _evals(skill, {"tests": [{"id": "Q1", "query": "hello", "assertions": ["greets"]},
                             {"id": "Q2", "query_flow": ["remember X", "forget X", "what do you remember?"],
                              "assertions": ["X is gone"]}]})
    report = preflight(skill)
    assert report.ok() and [p.name for p in report.suite.prompts] == ["s-Q1"]
    [warning] = [d for d in report.warnings if d.field == "evals[id=Q2].query_flow"]
    assert "a conversation of 3 turns" in warning.problem


QUERIES = [{"query": "clean this csv", "should_trigger": True}, {"query": "plot a chart", "should_trigger": False}]


@pytest.mark.parametrize("name, data", [
    ("trigger-eval.json", {"skill_name": "s", "queries": QUERIES}),  # skill-creator's --eval-set name, wrapped
    ("trigger_queries.json", {"description": "d", "should_trigger": [{"id": "T1", "query": "clean this csv"}],
                              "should_not_trigger": [{"id": "N1", "query": "plot a chart"}]}),
    ("eval_set.json", QUERIES),  # what skill-creator's review page exports
    ("my-trigger-set.json", QUERIES),  # any other evals/*trigger*.json
])
def test_trigger_sets_under_the_names_and_shapes_people_use(tmp_path: Path, name: str, data: object) -> None:
    skill = _skill(tmp_path / "s", "s")
    _evals(skill, {"skill_name": "s", "evals": [{"id": 1, "prompt": "p", "expectations": ["x"]}]})
    path = _evals(skill, data, name=name)
    report = preflight(skill)
    assert report.ok(), [str(d) for d in report.errors]
    assert "and 2 trigger queries (1 should-trigger, 1 dormancy" in report.summary()
    assert any(n.endswith(f"trigger eval set {path.relative_to(tmp_path)}") or n.endswith(path.name)
               for n in _notes(report))
    kinds = sorted((p.trigger_only, p.dormancy) for p in report.suite.prompts if p.path == path)
    assert kinds == [(False, True), (True, False)]


def test_a_trigger_file_that_is_not_a_trigger_set_is_one_line_naming_the_format(tmp_path: Path) -> None:
    skill = _skill(tmp_path / "s", "s")
    _evals(skill, {"skill_name": "s", "evals": [{"id": 1, "prompt": "p"}]})
    _evals(skill, {"runs": 3}, name="trigger-eval.json")
    [error] = preflight(skill).errors
    assert error.path.endswith("trigger-eval.json") and error.field == "trigger set"
    assert "not a trigger eval set" in error.problem and '"should_trigger": true' in error.fix


def test_a_second_trigger_set_is_named_not_silently_ignored(tmp_path: Path) -> None:
    skill = _skill(tmp_path / "s", "s")
    _evals(skill, {"skill_name": "s", "evals": [{"id": 1, "prompt": "p"}]})
    _evals(skill, QUERIES, name="trigger-eval.json")
    _evals(skill, QUERIES[:1], name="trigger_queries.json")
    report = preflight(skill)
    [warning] = [d for d in report.warnings if d.path.endswith("trigger_queries.json")]
    assert "second trigger eval set beside trigger-eval.json (not read)" in warning.problem
    assert "and 2 trigger queries" in report.summary()


def test_evals_at_the_repository_root_and_skills_under_skills(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _skill(repo / "skills" / "alpha-skill", "alpha")
    _skill(repo / "skills" / "beta", "beta", "Other work. Use when asked for beta.")
    (repo / "evals" / "files").mkdir(parents=True)
    (repo / "evals" / "files" / "in.csv").write_text("a\n", encoding="utf-8")
    evals = {"skill_name": "alpha", "evals": [{"id": 1, "prompt": "clean it", "files": ["evals/files/in.csv"],
                                               "expectations": ["x"]}]}
    _evals(repo, evals)
    report = preflight(repo)
    assert report.ok(), [str(d) for d in report.errors]
    assert report.suite.layout == "skill-creator" and report.suite.families == ["alpha-skill"]
    assert report.suite.family_dir("alpha-skill") == (repo / "skills" / "alpha-skill").resolve()
    [spec] = report.suite.prompts
    assert spec.workspace_source(spec.test.workspace[0]).resolve() == (repo / "evals" / "files" / "in.csv").resolve()
    # no skill_name and two skills: whose evals these are is not guessed
    del evals["skill_name"]
    _evals(repo, evals)
    [error] = preflight(repo).errors
    assert error.field == "skill_name" and "2 skills under skills/ (alpha-skill, beta)" in error.problem


def test_a_folder_that_cannot_name_a_family_is_refused(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    for folder in ("ok", ".hidden"):
        _skill(tree / folder, "dup")  # the same frontmatter name twice: the CLI lists each by its folder
        _evals(tree / folder, {"evals": [{"id": 1, "prompt": "p"}]})
    report = preflight(tree)
    assert [(d.field, d.problem) for d in report.errors] == [("folder", "'.hidden' cannot name a skill family")]
    assert report.suite.families == ["ok"]


@pytest.mark.parametrize("description, says", [
    ("Profile a CSV. Use when the user asks to explore a table.", True),
    ("Runs a review loop. Trigger when writing plans, or when the user says 'deep review'.", True),
    ("Apply the compass to docs. Trigger on requests like write docs.", True),
    ("This skill should be used when creating or troubleshooting video prompts.", True),
    ("Use this skill any time a spreadsheet is the primary input.", True),
    ("Reference for the API. TRIGGER — read before opening the file.", True),
    ("为软件创建开发者白皮书。适用于把技术资料转为文章。", True),
    ("当用户称呼角色名，或管理本地记忆时使用。", True),
    ("長期記憶のスキル。ユーザーがエラーログを貼り付けた時に検索する。", True),
    ("사용자가 보고서를 요청할 때 사용하세요.", True),
    ("Herramienta de informes. Úsala cuando el usuario pida un resumen.", True),
    ("Toolkit for styling artifacts with a theme, with colors and fonts.", False),
    ("The operating system for product decisions: what to build and when to kill it.", False),
    ("把图片整理为可编辑 PSD 图层，支持当前版本的实时预览。", False),
    ("أداة لتلخيص التقارير الطويلة", None),  # Arabic: no cues here, so no verdict
    ("Een hulpmiddel voor het opschonen van bestanden", None),  # Dutch: Latin script, a language without cues
])
def test_says_when_reads_the_ways_and_languages_descriptions_use(description: str, says: bool | None) -> None:
    assert says_when(description) is says


def test_a_description_the_rule_cannot_read_gets_a_note_not_a_warning(tmp_path: Path) -> None:
    skill = _skill(tmp_path / "s", "s", "أداة لتلخيص التقارير الطويلة")
    _evals(skill, {"evals": [{"id": 1, "prompt": "p"}]})
    report = preflight(skill)
    assert not [d for d in report.warnings if d.field == "description"]
    assert any("cannot tell whether the description says when" in n for n in _notes(report))


def test_a_pair_with_no_statements_follows_the_judge_protocol() -> None:
    # an eval with no expectations votes in the pairwise preference: its pair message has an empty rubric
    from skillbench.judge._protocol import pair_user_message, parse_judge_message

    view = parse_judge_message(pair_user_message("write the plan", "plan A", "plan B", [], 7))
    assert view.answers == {"A": "plan A", "B": "plan B"} and view.items == []


def _sample_status() -> tuple[int, int, list[str]]:
    """(folders that load with no error, folders, every error line) over the shared sample."""
    folders = sorted(p.parent.parent for p in require(WILD).glob("*/*/evals/evals.json"))
    errors = []
    loaded = 0
    for folder in folders:
        report = preflight(folder)
        loaded += report.ok()
        errors += [f"{folder.name}: {d.field}: {d.problem}" for d in report.errors]
    return loaded, len(folders), errors


def test_every_folder_of_the_shared_sample_loads_or_names_a_real_defect_and_the_docs_say_how_many() -> None:
    loaded, total, errors = _sample_status()
    # what is refused is a file the folder really lacks, or a SKILL.md whose frontmatter YAML does not parse
    real = re.compile(r"files\[\d+\]: '.+' does not exist|frontmatter: frontmatter is not valid YAML")
    assert all(real.search(e) for e in errors), errors
    stated = re.search(r"(\d+) of (\d+) folders load", DOCS.read_text(encoding="utf-8"))
    assert stated and (int(stated.group(1)), int(stated.group(2))) == (loaded, total), \
        f"docs/skill-creator.md must say '{loaded} of {total} folders load'"


def test_runs_of_an_eval_without_statements_skip_the_rubric_judge_and_still_pair(tmp_path: Path) -> None:
    # a week whose prompt has no rubric items (a skill-creator eval before its assertions): the rubric judge skips
    # its runs with a reason (so the week is not "not graded yet"), and the pairwise preference still compares them
    import shutil

    from skillbench.judge import find_pairs, select_runs
    from skillbench.signals import NO_RUBRIC
    from tests.helpers.shared import TINY_WEEK

    week = tmp_path / "week"
    shutil.copytree(TINY_WEEK / "20261130", week)
    prompt = "csv-garbled-names"
    for spec in week.glob(f"{prompt}-*/test-prompt.json"):
        data = json.loads(spec.read_text(encoding="utf-8"))
        spec.write_text(json.dumps({**data, "rubric": []}), encoding="utf-8")
    runs, skips = select_runs(week)
    assert prompt not in {r.prompt for r in runs}
    skipped = {s.run_id for s in skips if s.reason == NO_RUBRIC}
    assert skipped and all(r.startswith(prompt) for r in skipped)
    assert prompt in {p.treatment.prompt for p in find_pairs(week)}
    # the scorecard's coverage counts them as not graded by design, never as dropped runs
    import pandas as pd

    from skillbench.ledgers import read_manifest, read_scores
    from skillbench.scorecard._compute import _coverage

    skips_frame = pd.DataFrame([{"run_id": s.run_id, "reason": s.reason} for s in skips])
    scores = read_scores(week / "scores.csv")
    scores = scores[scores["prompt"] != prompt]  # the rubric judge never graded them
    cov, dropped = _coverage(read_manifest(week / "manifest.csv"), scores, skips_frame, scores_file=True)
    assert not set(dropped["run_id"]) & skipped
    assert set(cov.loc[cov["reason"].eq(NO_RUBRIC), "run_id"]) == skipped


def test_a_path_object_that_links_out_of_the_skill_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret\n", encoding="utf-8")
    skill = _skill(tmp_path / "s", "s")
    (skill / "inputs").mkdir()
    (skill / "inputs" / "data.txt").symlink_to(secret)
    _evals(skill, {"evals": [{"id": 1, "prompt": "p", "files": [{"path": "inputs/data.txt", "purpose": "input"}]}]})
    report = preflight(skill)
    assert not report.ok() and not report.suite.prompts
    assert any("inputs/data.txt" in str(d) for d in report.errors), [str(d) for d in report.errors]
