"""dotnet's authoring gate as preflight: each defect class in a broken temp spec, one line naming file, stimulus and
field. The trees are written here (tmp_path); no shared data is needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillbench.suite import preflight
from skillbench.suite.dotnet import parse_duration

SKILL = "---\nname: demo-skill\ndescription: Reads logs. Use when a build fails.\n---\n# Demo\n"


def _stimulus(i: int, **extra: str) -> str:
    body = "".join(f"    {k}: {v}\n" for k, v in extra.items())
    return (f"  - name: Stimulus {i}\n    prompt: Explain build failure number {i}.\n"
            f"    graders:\n      - type: output-matches\n        config:\n          pattern: fail{i}\n"
            f"      - type: prompt\n{body}    rubric:\n      - Names the failing step {i}\n")


def _tree(tmp_path: Path, spec: str, name: str = "eval.yaml") -> Path:
    root = tmp_path / "tree"
    skill = root / "plugins/demo/skills/demo-skill"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    folder = root / "tests/demo/demo-skill"
    folder.mkdir(parents=True)
    (folder / name).write_text(spec)
    return root


def _good(n: int = 5, **extra: str) -> str:
    return "name: demo-skill\ntype: capability\nstimuli:\n" + "".join(_stimulus(i, **extra) for i in range(n))


def _lines(report) -> list[str]:
    return [str(d) for d in report.errors]


def test_a_clean_tree_passes(tmp_path):
    report = preflight(_tree(tmp_path, _good()))
    assert report.errors == [] and report.warnings == []
    assert len(report.suite.prompts) == 5


def test_duplicate_key_names_file_line_stimulus_and_key(tmp_path):
    spec = _good().replace("    prompt: Explain build failure number 2.\n",
                           "    prompt: Explain build failure number 2.\n    prompt: stray tail\n")
    report = preflight(_tree(tmp_path, spec))
    [line] = _lines(report)
    assert "eval.yaml:" in line and "stimuli[2] (Stimulus 2).prompt" in line and "duplicate key 'prompt'" in line
    assert report.suite.prompts == []  # the file is refused whole


@pytest.mark.parametrize("config", ["{}", "null", ""])
def test_grader_with_empty_config(tmp_path, config):
    spec = _good().replace("        config:\n          pattern: fail3\n", f"        config: {config}\n")
    [line] = _lines(preflight(_tree(tmp_path, spec)))
    assert "stimuli[3] (Stimulus 3).graders[0].config" in line and "enforces nothing" in line


def test_graders_that_need_no_config_are_fine(tmp_path):
    spec = _good().replace("      - type: prompt\n", "      - type: prompt\n      - type: exit-success\n")
    assert preflight(_tree(tmp_path, spec)).errors == []


def test_deprecated_config_beside_defaults(tmp_path):
    spec = "config:\n  timeout: 5m\ndefaults:\n  runs: 3\n" + _good()
    [line] = _lines(preflight(_tree(tmp_path, spec)))
    assert "eval.yaml: config:" in line and "defaults" in line


def test_missing_fixture_and_grader_script_are_named(tmp_path):
    env = "\n      files:\n        - src: fixtures/log.txt\n          dest: logs/log.txt\n" \
          "        - src: check.py\n          dest: .eval/check.py"
    spec = _good(environment=env)
    spec = spec.replace("    environment: \n", "    environment:\n")
    lines = _lines(preflight(_tree(tmp_path, spec)))
    assert any("stimuli[0] (Stimulus 0).environment.files[0].src" in x and "fixtures/log.txt" in x for x in lines)
    assert any("stimuli[0] (Stimulus 0).environment.files[1].src" in x and "check.py" in x for x in lines)


def test_skill_validator_source_leaving_the_tree_is_refused(tmp_path):
    spec = ("scenarios:\n  - name: One\n    prompt: Go.\n    setup:\n      files:\n"
            "        - path: a.txt\n          source: ../../../../../../etc/passwd\n"
            "    rubric:\n      - Does it\n")
    [line] = _lines(preflight(_tree(tmp_path, spec)))
    assert "scenarios[0] (One).setup.files[0].source" in line and "leaves the tree root" in line


def test_dormancy_guard_rejecting_every_skill(tmp_path):
    spec = _good().replace("  - name: Stimulus 4\n", "  - name: Stimulus 4\n    expect_activation: false\n"
                           "    constraints:\n      reject_skills: ['*']\n")
    lines = _lines(preflight(_tree(tmp_path, spec)))
    assert any("stimuli[4] (Stimulus 4).constraints.reject_skills" in x and "dormancy guard" in x for x in lines)


def test_duplicate_stimulus_names(tmp_path):
    spec = _good().replace("name: Stimulus 3", "name: Stimulus 1")
    lines = _lines(preflight(_tree(tmp_path, spec)))
    assert any("stimuli[3] (Stimulus 1).name" in x and "duplicate stimulus name" in x for x in lines)


@pytest.mark.parametrize(("text", "what"), [("stimuli: [unclosed\n", "unreadable spec"),
                                            ("- just a list\n", "not a mapping"),
                                            ("name: x\n", "neither stimuli")])
def test_unreadable_spec(tmp_path, text, what):
    [line] = _lines(preflight(_tree(tmp_path, text)))
    assert "eval.yaml" in line and what in line


def test_underpowered_eval_is_instrument_debt(tmp_path):
    spec = _good(4)
    report = preflight(_tree(tmp_path, spec))
    assert report.errors == []
    [warning] = [str(d) for d in report.warnings]
    assert "eval.yaml: stimuli: underpowered (instrument debt): 4 preference-eligible of 4" in warning


def _one_error(tmp_path, spec: str):
    [defect] = preflight(_tree(tmp_path, spec)).errors
    assert "\n" not in str(defect)
    return defect


@pytest.mark.parametrize(("extra", "field", "why"), [
    ({"constraints": "\n      max_tokens: 5000"}, "stimuli[0] (Stimulus 0).constraints.max_tokens", "cap tokens"),
    ({"constraints": "\n      reject_skills: [other]"}, "stimuli[0] (Stimulus 0).constraints.reject_skills",
     "measures activation itself"),
    ({"constraints": "\n      max_wall: 3"}, "stimuli[0] (Stimulus 0).constraints.max_wall", "take expect_tools"),
    ({"frobnicate": "1"}, "stimuli[0] (Stimulus 0).frobnicate", "a stimulus takes "),
], ids=["max_tokens", "reject_skills", "unknown-constraint", "unknown-field"])
def test_an_unsupported_vally_field_is_one_error_naming_it(tmp_path, extra, field, why):
    spec = _good().replace(_stimulus(0), _stimulus(0, **extra).replace("    constraints: \n", "    constraints:\n"))
    defect = _one_error(tmp_path, spec)
    assert defect.path.endswith("eval.yaml") and defect.field == field
    assert "not supported" in defect.problem and why in defect.problem + defect.fix


def _with_grader(grader: str) -> str:
    return _good().replace("      - type: prompt\n    rubric:\n      - Names the failing step 0\n",
                           f"      - type: prompt\n{grader}    rubric:\n      - Names the failing step 0\n")


@pytest.mark.parametrize(("grader", "field", "words"), [
    ("      - type: pairwise\n", "graders[2].type", "judge already compares"),
    ("      - type: program\n        config:\n          program: python\n", "graders[2].type",
     "inside the run's container"),
    ("      - type: token-budget\n        config:\n          max: 5000\n", "graders[2].type", "cap tokens"),
    ("      - type: output-containz\n", "graders[2].type", "unknown grader type"),
    ("      - type: run-command\n        config:\n          command: make\n          sub_path: src\n",
     "graders[2].config.sub_path", "cd DIR"),
    ("      - type: file-exists\n        config:\n          path: a.txt\n          negate: maybe\n",
     "graders[2].config.negate", "not true or false"),
    ("      - type: output-matches\n        config:\n          pattern: x\n          negate: true\n",
     "graders[2].config.negate", "output-matches has no negate option"),
    ("      - type: file-contains\n        config:\n          path: a.cs\n          value: x\n"
     "          case_sensitive: false\n", "graders[2].config.case_sensitive", "file-contains takes path, value"),
], ids=["pairwise", "program", "token-budget", "typo", "run-command-sub_path", "bad-negate", "negate-elsewhere",
        "case-on-file-contains"])
def test_an_unsupported_grader_or_option_is_one_error_naming_it(tmp_path, grader, field, words):
    defect = _one_error(tmp_path, _with_grader(grader))
    assert defect.field == f"stimuli[0] (Stimulus 0).{field}"
    assert words in defect.problem + " " + defect.fix


@pytest.mark.parametrize(("grader", "check"), [
    ("      - type: file-exists\n        config:\n          path: '*.cs'\n          negate: true\n",
     {"type": "file_not_exists", "path": "*.cs"}),
    ("      - type: file-matches\n        config:\n          path: a.cs\n          pattern: 'null!'\n"
     "          negate: true\n", {"type": "file_not_matches", "path": "a.cs", "pattern": "null!"}),
    ("      - type: file-not-contains\n        config:\n          path: a.cs\n          value: x\n",
     {"type": "file_not_contains", "path": "a.cs", "value": "x", "case_sensitive": True}),
    ("      - type: file-contains\n        config:\n          path: a.cs\n          value: x\n          negate: true\n",
     {"type": "file_not_contains", "path": "a.cs", "value": "x", "case_sensitive": True}),
    ("      - type: file-contains\n        config:\n          path: a.cs\n          value: x\n",
     {"type": "file_contains", "path": "a.cs", "value": "x", "case_sensitive": True}),
    ("      - type: output-contains\n        config:\n          substring: Done\n",
     {"type": "output_contains", "value": "Done", "case_sensitive": False}),
    ("      - type: output-not-contains\n        config:\n          substring: Error\n          case_sensitive: true\n",
     {"type": "output_not_contains", "value": "Error", "case_sensitive": True}),
    ("      - type: turn-count\n        config:\n          max: 12\n", {"type": "max_turns", "turns": 12}),
    ("      - type: tool-call-count\n        config:\n          max: 0\n", {"type": "max_tool_calls", "calls": 0}),
    ("      - type: completed\n", {"type": "completed"}),
    ("      - type: exit-success\n", {"type": "output_nonempty"}),
    ("      - type: run-command\n        config:\n          command: grep\n          args: [-q, 'a b', notes.txt]\n"
     "          timeout: 2m\n", {"type": "run_command", "command": "grep -q 'a b' notes.txt", "timeout": 120.0}),
], ids=["file-exists-negate", "file-matches-negate", "file-not-contains", "file-contains-negate", "file-contains",
        "output-contains", "output-not-contains-case", "turn-count", "tool-call-count", "completed", "exit-success",
        "run-command-args"])
def test_vally_graders_read_as_check_types(tmp_path, grader, check):
    report = preflight(_tree(tmp_path, _with_grader(grader)))
    assert report.errors == [], [str(d) for d in report.errors]
    prompt = next(p for p in report.suite.prompts if p.stimulus == "Stimulus 0")
    [got] = [c for c in prompt.test.checks if c.type != "output_matches"]
    assert got.model_dump(exclude_none=True) == check


def test_vally_file_shadows_the_old_spec(tmp_path):
    root = _tree(tmp_path, _good(), name="eval.vally.yaml")
    (root / "tests/demo/demo-skill/eval.yaml").write_text("scenarios:\n  - name: old\n")
    report = preflight(root)
    assert report.errors == [] and len(report.suite.prompts) == 5
    [warning] = report.warnings
    assert warning.path.endswith("eval.yaml") and "shadowed by eval.vally.yaml" in warning.problem


@pytest.mark.parametrize(("raw", "seconds"), [("6m", 360), ("90s", 90), ("1h30m", 5400), (120, 120), ("x", None)])
def test_durations(raw, seconds):
    assert parse_duration(raw) == seconds


def test_skill_validator_max_tokens_is_an_error_and_a_key_outside_its_schema_a_warning(tmp_path):
    """max_tokens is in skill-validator's schema and not read here: an error; a key outside the schema is ignored
    by skill-validator itself (IgnoreUnmatchedProperties), so it stays a warning."""
    spec = ("scenarios:\n  - name: One\n    prompt: Go.\n    max_tokens: 4000\n    retries: 2\n"
            "    assertions:\n      - type: output_contains\n        value: done\n        weight: 2\n"
            "    rubric:\n      - Does it\n")
    report = preflight(_tree(tmp_path, spec))
    [error] = report.errors
    assert error.field == "scenarios[0] (One).max_tokens" and "cap tokens" in error.problem
    fields = {d.field for d in report.warnings if "skill-validator ignores it too" in d.problem}
    assert fields == {"scenarios[0] (One).retries", "scenarios[0] (One).assertions[0].weight"}


@pytest.mark.parametrize(("grader", "field", "words"), [
    ("      - type: tool-call-count\n        config:\n          max: -1\n", "config.max", "greater than or equal to 0"),
    ("      - type: turn-count\n        config:\n          max: ten\n", "config.max", "valid integer"),
    ("      - type: file-not-matches\n        config:\n          path: ../../etc/passwd\n          pattern: x\n",
     "config.path", "leaves the workspace"),
    ("      - type: file-matches\n        config:\n          path: a.cs\n          pattern: '(a+)+$'\n"
     "          negate: true\n", "config.pattern", "catastrophic backtracking"),
    ("      - type: run-command\n        config:\n          command: make\n          timeout: forever\n",
     "config.timeout", "not a duration"),
    ("      - type: run-command\n        config:\n          command: make\n          args: make\n", "config.args",
     "not a list of strings"),
    ("      - type: output-contains\n        config:\n          substring: x\n          case_sensitive: 'yes'\n",
     "config.case_sensitive", "valid boolean"),
], ids=["negative-max", "text-max", "path-escape", "pathological-pattern", "bad-duration", "args-not-list",
        "case-not-bool"])
def test_a_bad_grader_value_is_one_error_naming_its_field(tmp_path, grader, field, words):
    defect = _one_error(tmp_path, _with_grader(grader))
    assert defect.field == f"stimuli[0] (Stimulus 0).graders[2].{field}" and words in defect.problem


def test_the_root_environment_is_merged_into_every_stimulus(tmp_path):
    """Vally's root ``environment`` comes first in every stimulus; a stimulus's file with the same dest wins; a
    defect in it is one line for the file, not one per stimulus."""
    env = "\n      files:\n        - src: fixtures/own.txt\n          dest: notes.txt"
    root = ("environment:\n  files:\n    - src: fixtures/shared.txt\n      dest: notes.txt\n"
            "    - src: fixtures/extra.txt\n      dest: extra.txt\n  commands:\n    - touch ready\n")
    spec = root + _good().replace(_stimulus(0), _stimulus(0, environment=env).replace("environment: \n",
                                                                                      "environment:\n"))
    tree = _tree(tmp_path, spec)
    fixtures = tree / "tests/demo/demo-skill/fixtures"
    fixtures.mkdir()
    for name in ("shared.txt", "own.txt", "extra.txt"):
        (fixtures / name).write_text(name)
    report = preflight(tree)
    assert report.errors == [], [str(d) for d in report.errors]
    by_name = {p.stimulus: p.test for p in report.suite.prompts}
    assert [(w.dest, w.src) for w in by_name["Stimulus 0"].workspace] == [("notes.txt", "fixtures/own.txt"),
                                                                           ("extra.txt", "fixtures/extra.txt")]
    assert [(w.dest, w.src) for w in by_name["Stimulus 3"].workspace] == [("notes.txt", "fixtures/shared.txt"),
                                                                           ("extra.txt", "fixtures/extra.txt")]
    assert by_name["Stimulus 3"].setup == ["touch ready"]
    (fixtures / "extra.txt").unlink()
    [line] = preflight(tree).errors
    assert line.field == "environment.files[1].src" and "extra.txt" in line.problem


def test_tool_calls_with_plain_names_reads_as_tool_checks(tmp_path):
    grader = ("      - type: tool-calls\n        config:\n          required: [bash, {name: create}]\n"
              "          disallowed: [web_fetch]\n")
    report = preflight(_tree(tmp_path, _with_grader(grader)))
    assert report.errors == [], [str(d) for d in report.errors]
    prompt = next(p for p in report.suite.prompts if p.stimulus == "Stimulus 0")
    got = [c.model_dump(exclude_none=True) for c in prompt.test.checks if c.type != "output_matches"]
    assert got == [{"type": "expect_tools", "tools": ["bash", "create"]},
                   {"type": "reject_tools", "tools": ["web_fetch"]}]


@pytest.mark.parametrize(("config", "field"), [
    ("          required: ['^bash$']\n", "config.required[0]"),
    ("          required: [{name: bash, command: npm test}]\n", "config.required[0]"),
    ("          required: [bash]\n          sequence: [view, create]\n", "config.sequence"),
    ("          nothing: 1\n", "config"),
], ids=["regex", "argument-filter", "sequence", "neither"])
def test_tool_calls_beyond_plain_names_is_one_error(tmp_path, config, field):
    defect = _one_error(tmp_path, _with_grader(f"      - type: tool-calls\n        config:\n{config}"))
    assert defect.field == f"stimuli[0] (Stimulus 0).graders[2].{field}"


def test_a_root_environment_file_leaving_the_tree_is_one_error(tmp_path):
    root = "environment:\n  files:\n    - src: ../../../../../../etc/passwd\n      dest: notes.txt\n"
    [line] = _lines(preflight(_tree(tmp_path, root + _good())))
    assert "eval.yaml: environment.files[0].src" in line and "leaves the tree root" in line


def test_a_program_the_sandbox_lacks_is_a_warning_before_any_run(tmp_path):
    """dotnet's binlog evals build in setup; a build grader runs dotnet: valid specs (no error), but preflight
    says up front that setup cannot start here and that the check will end 'could not run'."""
    spec = ("scenarios:\n  - name: One\n    prompt: Go.\n    setup:\n      commands:\n"
            "        - dotnet build App.sln -bl:build.binlog\n        - ls\n    rubric:\n      - Does it\n")
    report = preflight(_tree(tmp_path, spec))
    assert report.errors == []
    [warning] = [d for d in report.warnings if "sandbox image" in d.problem]
    assert warning.field == "scenarios[0] (One).setup.commands[0]" and "never starts" in warning.problem
    grader = "      - type: run-command\n        config:\n          command: dotnet test -warnaserror\n"
    report = preflight(_tree(tmp_path / "v", _with_grader(grader)))
    assert report.errors == []
    [warning] = [d for d in report.warnings if "sandbox image" in d.problem]
    assert warning.field == "stimuli[0] (Stimulus 0).graders[2].config.command" and "could not run" in warning.problem


def test_skill_validator_content_wins_over_source_as_in_skill_validator(tmp_path):
    spec = ("scenarios:\n  - name: One\n    prompt: Go.\n    setup:\n      files:\n        - path: a.txt\n"
            "          source: nowhere.txt\n          content: hello\n    rubric:\n      - Does it\n")
    report = preflight(_tree(tmp_path, spec))
    assert report.errors == []
    [warning] = [d for d in report.warnings if d.field.endswith("setup.files[0].source")]
    assert "content wins" in warning.problem
    [prompt] = report.suite.prompts
    assert [(w.dest, w.content) for w in prompt.test.workspace] == [("a.txt", "hello")]


def test_skill_validator_output_matches_is_case_insensitive_as_in_skill_validator(tmp_path):
    spec = ("scenarios:\n  - name: One\n    prompt: Go.\n    assertions:\n      - type: output_matches\n"
            "        pattern: 'build (failed|error)'\n      - type: output_not_matches\n        pattern: '(?i)panic'\n"
            "    rubric:\n      - Does it\n")
    [prompt] = preflight(_tree(tmp_path, spec)).suite.prompts
    assert [c.pattern for c in prompt.test.checks] == ["(?i)build (failed|error)", "(?i)panic"]


def test_skill_validator_assertions_get_skill_validators_case_rule(tmp_path):
    """AssertionEvaluator compares a file's content with string.Contains (case-sensitive) and the answer with
    OrdinalIgnoreCase: each check says so in case_sensitive, so it is graded (and simulated) by that rule."""
    spec = ("scenarios:\n  - name: One\n    prompt: Go.\n    assertions:\n"
            "      - type: file_contains\n        path: a.cs\n        value: Nullable\n"
            "      - type: file_not_contains\n        path: '*.cs'\n        value: null!\n"
            "      - type: output_contains\n        value: Done\n"
            "      - type: output_not_contains\n        value: Error\n"
            "      - type: output_matches\n        pattern: ok\n"
            "    rubric:\n      - Does it\n")
    report = preflight(_tree(tmp_path, spec))
    assert report.errors == [], [str(d) for d in report.errors]
    [prompt] = report.suite.prompts
    assert [(c.type, c.case_sensitive) for c in prompt.test.checks] == [
        ("file_contains", True), ("file_not_contains", True), ("output_contains", False),
        ("output_not_contains", False), ("output_matches", None)]
