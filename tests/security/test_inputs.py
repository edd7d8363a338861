"""Strict input types: a hostile spec's values are refused in one line, never misread, never hang or crash validate.

The attacks: ``timeout: true`` read as 1 s; ``Infinity``/``NaN``/``1e12`` timeouts that kill the watchdog thread with
``OverflowError``; a catastrophic regular expression (``(a+)+$``) that holds grading or validate for hours; input
nested 100,000 deep that ends ``validate`` in a ``RecursionError`` traceback (JSON prompts, YAML specs, evals.json,
SKILL.md frontmatter, skillbench.toml); a YAML "billion laughs". Each case is one row of a table: the input, and the
words its one refusal line holds. Each runs the real ``skillbench validate`` (or ``generate``) entry point.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from skillbench.checktypes import Check, _patterns
from skillbench.checktypes._grading import text_check
from skillbench.cli import main
from skillbench.vocab import CHECK_ERROR
from tests.helpers.sim import SITE, make_suite

DEEP = 100_000
SKILL_MD = "---\nname: {name}\ndescription: Fixes things. Use when something is broken.\n---\nBody.\n"


def _validate(target: Path, capsys) -> tuple[int, list[str]]:
    """``skillbench validate TARGET``: the exit code and every line it printed (no traceback may escape)."""
    try:
        code = main(["validate", str(target)])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "Traceback" not in text and "RecursionError" not in text, text[-2000:]
    return code, text.splitlines()


def _refused_once(target: Path, capsys, *needles: str) -> str:
    code, lines = _validate(target, capsys)
    hits = [line for line in lines if all(n in line for n in needles)]
    assert code == 1 and len(hits) == 1, lines[-20:]
    return hits[0]


def _qdrant(root: Path, **fields) -> Path:
    make_suite(root)
    data = {"name": "t", "product_area": "p", "skill_url": f"{SITE}/tyre-repair/SKILL.md", "prompt": "q",
            "rubric": [{"type": "must", "text": "x"}], **fields}
    (root / "test-prompts" / "t.json").write_text(json.dumps(data))  # Infinity and NaN as JSON writes them
    return root


# -- types and timeouts ----------------------------------------------------------------------------------------------
QDRANT_VALUES = [
    # (fields of the prompt, field named, words of the refusal)
    ({"timeout": True}, "timeout", "True is not a number of seconds"),
    ({"timeout": "90"}, "timeout", "'90' is not a number of seconds"),
    ({"timeout": float("inf")}, "timeout", "inf is not a finite number of seconds"),
    ({"timeout": float("nan")}, "timeout", "nan is not a finite number of seconds"),
    ({"timeout": 1e12}, "timeout", "is more than 86400 seconds"),
    ({"timeout": -1}, "timeout", "is not above 0 seconds"),
    ({"timeout": 0}, "timeout", "is not above 0 seconds"),
    ({"checks": [{"type": "run_command", "command": "true", "timeout": True}]}, "checks[0].timeout",
     "True is not a number of seconds"),
    ({"checks": [{"type": "run_command", "command": "true", "timeout": 1e12}]}, "checks[0].timeout",
     "is more than 86400 seconds"),
    ({"workspace": [{"dest": "a.sh", "content": "x", "executable": 1}]}, "workspace[0].executable",
     "valid boolean"),
    ({"expect_activation": 0}, "expect_activation", "valid boolean"),
]


@pytest.mark.parametrize(("fields", "field", "needle"), QDRANT_VALUES, ids=[f"{r[1]}={r[0]}"[:40] for r in
                                                                           QDRANT_VALUES])
def test_a_prompt_value_of_the_wrong_type_is_refused_in_one_line(tmp_path, capsys, fields, field, needle):
    suite = _qdrant(tmp_path / "suite", **fields)
    line = _refused_once(suite, capsys, "t.json", f": {field}:", needle)
    assert "\n" not in line


def _dotnet(root: Path, scenario: dict | None = None, vally: str | None = None) -> Path:
    (root / "plugins" / "p" / "skills" / "s").mkdir(parents=True)
    (root / "plugins" / "p" / "skills" / "s" / "SKILL.md").write_text(SKILL_MD.format(name="s"))
    (root / "tests" / "p" / "s").mkdir(parents=True)
    if vally is not None:
        (root / "tests" / "p" / "s" / "eval.vally.yaml").write_text(vally)
    else:
        body = {"name": "one", "prompt": "fix it", "rubric": ["says why"], **(scenario or {})}
        (root / "tests" / "p" / "s" / "eval.yaml").write_text(json.dumps({"scenarios": [body]}))  # JSON is YAML
    return root


VALLY = "name: s\n{defaults}stimuli:\n  - name: one\n    prompt: fix it\n    rubric: [says why]\n{extra}"
DOTNET_VALUES = [
    # (scenario fields, or a Vally spec; field named; words of the refusal)
    ({"timeout": True}, None, "scenarios[0] (one).timeout", "True is not a number of seconds"),
    ({"timeout": 1e12}, None, "scenarios[0] (one).timeout", "is more than 86400 seconds"),
    (None, VALLY.format(defaults="", extra="    timeout: .inf\n"), "stimuli[0] (one).timeout", "is not a duration"),
    (None, VALLY.format(defaults="", extra="    timeout: 100000h\n"), "stimuli[0] (one).timeout",
     "is not a duration (above 0, at most a day)"),
    (None, VALLY.format(defaults="defaults:\n  timeout: .nan\n", extra=""), "defaults.timeout", "is not a duration"),
    (None, VALLY.format(defaults="", extra="    timeout: true\n"), "stimuli[0] (one).timeout", "is not a duration"),
]


@pytest.mark.parametrize(("scenario", "vally", "field", "needle"), DOTNET_VALUES,
                         ids=[f"{r[2]}-{i}" for i, r in enumerate(DOTNET_VALUES)])
def test_a_dotnet_timeout_follows_the_same_rule(tmp_path, capsys, scenario, vally, field, needle):
    tree = _dotnet(tmp_path / "tree", scenario, vally)
    _refused_once(tree, capsys, "eval", field, needle)


@pytest.mark.parametrize(("value", "needle"), [
    ("inf", "is not a finite number of seconds"), ("nan", "is not a finite number of seconds"),
    ("1e12", "is more than 86400 seconds"), ("true", "'true' is not a number of seconds"),
])
def test_generate_timeout_is_the_specs_rule(tmp_path, capsys, value, needle):
    suite = _qdrant(tmp_path / "suite")
    with pytest.raises(SystemExit) as exit_:
        main(["generate", str(suite), "--run-key", "k", "--backend", "sim", "--timeout", value])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and needle in err[-1] and "--timeout" in err[-1]
    assert not (suite / "weekly").exists(), "nothing written"


def test_a_config_value_of_the_wrong_type_is_refused(tmp_path, capsys):
    suite = make_suite(tmp_path / "suite")
    with (suite / "skillbench.toml").open("a") as fh:
        fh.write("[run]\nreps = true\n")
    _refused_once(suite, capsys, "skillbench.toml", "run.reps", "valid integer")


# -- regular expressions ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(a|aa)+$", r"(\w+\s?)+$", r"(x+x+)+y"])
def test_a_catastrophic_pattern_is_refused_by_validate_quickly(tmp_path, capsys, pattern):
    suite = _qdrant(tmp_path / "suite", checks=[{"type": "output_matches", "pattern": pattern}])
    started = time.monotonic()
    _refused_once(suite, capsys, "t.json", "checks[0].pattern", "pathological", "catastrophic backtracking")
    assert time.monotonic() - started < 60  # a trial is bounded; re.search on it would run for hours


@pytest.mark.parametrize(("pattern", "needle"), [
    (r"(?:(?:(?:a{1000}){1000}){1000}){1000}", "counted repeats expand to more than 100000 items"),
    ("(" * 500 + "a" + ")" * 500, "its groups nest too deeply"),
    (r"x{1000}{1000}", "multiple repeat"),
])
def test_a_pattern_that_would_compile_for_hours_is_refused_at_once(tmp_path, capsys, pattern, needle):
    """The engine expands counted repeats when it compiles (uninterruptibly): measured on re's parse first."""
    suite = _qdrant(tmp_path / "suite", checks=[{"type": "output_matches", "pattern": pattern}])
    started = time.monotonic()
    _refused_once(suite, capsys, "t.json", "checks[0].pattern", needle)
    assert time.monotonic() - started < 30
    status, detail = text_check("matches", Check(type="output_matches", pattern=pattern), "aaa", "the answer")
    assert status == CHECK_ERROR and detail.startswith("invalid pattern")  # grading refuses to compile it too


def test_real_looking_patterns_pass(tmp_path, capsys):
    """Nested repeats that cannot match the same text twice are fine: a static rule would have refused them."""
    patterns = [r"(?i)kubectl\s+exec(?:\s+-\w+)*\s+pod", r"(?im)^\s*(?:[$>]\s*)?(?:dotnet-dump\s+collect)\b",
                r"(?is)(?=.*/proc/4242/maps)(?=.*libcoreclr\\?\.so)", r"(?i)(IsCapped|capped).*(v2\.0)|(v2\.0).*(cap)"]
    suite = _qdrant(tmp_path / "suite", checks=[{"type": "output_matches", "pattern": p} for p in patterns])
    code, lines = _validate(suite, capsys)
    assert not [line for line in lines if ".pattern:" in line], lines


def test_grading_a_catastrophic_pattern_ends_in_an_error_not_a_hang(monkeypatch):
    """A pattern edited behind validate's back: the search is cut at its limit and the check is an error."""
    monkeypatch.setattr(_patterns, "SEARCH_TIMEOUT_S", 0.5)
    check = Check(type="output_matches", pattern=r"(a|aa)+$")
    started = time.monotonic()
    status, detail = text_check("matches", check, "a" * 5000 + "!", "the answer")
    assert status == CHECK_ERROR and "catastrophic backtracking" in detail
    assert time.monotonic() - started < 5


# -- nesting -----------------------------------------------------------------------------------------------------------
def _deep_json() -> str:
    return "[" * DEEP + "]" * DEEP


def _skill_creator(root: Path, evals_text: str, frontmatter: str = "") -> Path:
    skill = root / "myskill"
    (skill / "evals").mkdir(parents=True)
    head = frontmatter or "name: myskill\ndescription: Fixes things. Use when something is broken."
    (skill / "SKILL.md").write_text(f"---\n{head}\n---\nBody.\n")
    (skill / "evals" / "evals.json").write_text(evals_text)
    return skill


def _nested_cases(tmp_path: Path) -> list[tuple[Path, tuple[str, ...]]]:
    deep = _deep_json()
    prompt = json.dumps({"name": "t", "product_area": "p", "skill_url": f"{SITE}/tyre-repair/SKILL.md",
                         "prompt": "q", "rubric": [{"type": "must", "text": "x"}], "x": "@"}).replace('"@"', deep)
    qdrant = make_suite(tmp_path / "qdrant")
    (qdrant / "test-prompts" / "t.json").write_text(prompt)
    evals = json.dumps({"skill_name": "myskill", "evals": "@"}).replace('"@"', deep)
    flow_yaml = _dotnet(tmp_path / "flow", vally="stimuli: " + deep + "\n")
    block_yaml = _dotnet(tmp_path / "block", vally="".join("  " * i + "a:\n" for i in range(300)) + "  " * 300
                         + "b: 1\n")
    frontmatter = _skill_creator(tmp_path / "front", json.dumps({"skill_name": "myskill", "evals": []}),
                                 "name: myskill\ndescription: " + "[" * DEEP + "]" * DEEP)
    toml = make_suite(tmp_path / "toml")
    (toml / "skillbench.toml").write_text("x = " + "[" * DEEP + "]" * DEEP + "\n")
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8))
    return [
        (qdrant, ("t.json", "json", "nested deeper than 100 levels")),
        (_skill_creator(tmp_path / "evals", evals), ("evals.json", "json", "nested deeper than 100 levels")),
        (flow_yaml, ("eval.vally.yaml", "yaml", "nested deeper than 100 levels")),
        (block_yaml, ("eval.vally.yaml", "yaml", "nested deeper than 100 levels")),
        (frontmatter, ("SKILL.md", "frontmatter", "nested deeper than 100 levels")),
        (toml, ("skillbench.toml", "nested too deeply")),
        (_dotnet(tmp_path / "laughs", vally=laughs), ("eval.vally.yaml", "yaml", "once its aliases are expanded")),
    ]


CASE_IDS = ["qdrant-json", "evals-json", "yaml-flow", "yaml-block", "frontmatter", "toml", "yaml-billion-laughs"]


@pytest.mark.parametrize("case", range(len(CASE_IDS)), ids=CASE_IDS)
def test_input_nested_100000_deep_is_one_line_not_a_traceback(tmp_path, capsys, case):
    target, needles = _nested_cases(tmp_path)[case]
    started = time.monotonic()
    _refused_once(target, capsys, *needles)
    assert time.monotonic() - started < 30
