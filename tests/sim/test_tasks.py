"""The simulated agent on agentic tasks, without Docker or the CLI.

A small stand-in for the CLI's tool loop (:func:`drive`) answers the agent's tool calls on a real folder the way
Claude Code does in dontAsk mode (a tool outside the allow-list is denied; Write and Edit refuse an existing file
not Read first), and an independent grader (:func:`grade`) checks the run as ``checks.csv`` will; every check's
truth row must equal what that grader finds.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import skillbench
from skillbench.checktypes import canonical_tool
from skillbench.ledgers import TruthRow, TruthWriter, parse_truth_csv, truth_csv
from skillbench.ledgers._columns import LEGACY_TRUTH_COLUMNS, TRUTH_COLUMNS
from skillbench.sim import ProfileError, _draws as draws, load_profiles
from skillbench.sim._agent import Agent
from skillbench.sim._check_text import string_for
from skillbench.sim._conversation import parse_request
from skillbench.vocab import CHECK_ITEM
from tests.helpers.sim import forced, make_suite

BUGGY = "import sys\nvalues = [1, 2, 3, 4]\nprint(sum(values) / 3)\nsys.exit(1)\n"
FIXED = "values = [1, 2, 3, 4]\nprint(sum(values) / len(values))\n"
CHECKS: list[dict[str, Any]] = [
    {"type": "output_contains", "value": "the mean is 2.5"},
    {"type": "output_not_contains", "value": "TODO"},
    {"type": "output_matches", "pattern": r"(?i)p\s*=\s*0\.0[0-4]\d"},
    {"type": "output_not_matches", "pattern": r"Traceback \(most recent call last\)"},
    {"type": "output_matches", "pattern": r"^Summary: \d+ rows"},
    {"type": "output_matches", "pattern": r"[^\s]+ done\.$"},
    {"id": "script-runs", "type": "run_command", "command": f"{sys.executable} mean.py"},
    {"type": "file_exists", "path": "NOTES.md"},
    {"type": "file_contains", "path": "mean.py", "value": "len(values)"},
    {"type": "file_matches", "path": "./NOTES.md", "pattern": r"divide by \w+"},
    {"type": "exit_success"},
    {"type": "expect_tools", "tools": ["read", "create"]},
    {"type": "reject_tools", "tools": ["bash"]},
    {"type": "max_turns", "turns": 4},
]
PROMPT = "The script mean.py prints the wrong mean of its values; fix it and tell me the mean."


def _task_suite(root: Path, *, allowed: list[str] | None, solution: bool = True) -> Path:
    suite = make_suite(root)
    (suite / "fixtures").mkdir()
    (suite / "fixtures" / "mean.py").write_text(BUGGY)
    if solution:
        sol = suite / "solutions" / "fix-mean"
        sol.mkdir(parents=True)
        (sol / "mean.py").write_text(FIXED)
        (sol / "NOTES.md").write_text("We divide by len(values) now.\n")
        (sol / "data").mkdir()
        (sol / "data" / "readme.txt").write_text("values 1..4\n")  # the same as the fixture: not rewritten
    data = {"name": "fix-mean", "product_area": "bicycles", "skill_url": "https://skills.example.test/tyre-repair/SKILL.md",
            "prompt": PROMPT, "rubric": [{"type": "must", "text": "Explains that the divisor is the count of values"}],
            "workspace": [{"src": "mean.py", "dest": "mean.py"},
                          {"dest": "data/readme.txt", "content": "values 1..4\n"}],
            "checks": CHECKS}
    if allowed is not None:
        data["allowed_tools"] = allowed
    (suite / "test-prompts" / "fix-mean.json").write_text(json.dumps(data, indent=1))
    return suite


def _workspace(suite: Path, cwd: Path) -> None:
    cwd.mkdir(parents=True)
    shutil.copy(suite / "fixtures" / "mean.py", cwd / "mean.py")
    (cwd / "data").mkdir()
    (cwd / "data" / "readme.txt").write_text("values 1..4\n")


class FakeCli:
    """Claude Code's tool loop in dontAsk mode, on a real folder (only the tools the simulated agent uses)."""

    def __init__(self, cwd: Path, allowed: set[str]):
        self.cwd, self.allowed, self.read = cwd, allowed, set()
        self.user_events = 0

    def run(self, block: dict[str, Any]) -> dict[str, Any]:
        name, inp = block["name"], block["input"]
        self.user_events += 1

        def result(text: str, error: bool = False) -> dict[str, Any]:
            return {"type": "tool_result", "tool_use_id": block["id"], "content": text, "is_error": error}

        if canonical_tool(name) not in self.allowed:
            return result(f"Permission to use {name} has been denied because Claude Code is running in don't ask "
                          "mode.", True)
        path = Path(inp["file_path"])
        assert path.is_relative_to(self.cwd), path  # the agent stays in its workspace
        if name == "Read":
            if not path.is_file():
                return result("<tool_use_error>File does not exist.</tool_use_error>", True)
            self.read.add(path)
            lines = path.read_text().split("\n")
            return result("\n".join(f"{i}\t{line}" for i, line in enumerate(lines, 1)))
        if path.exists() and path not in self.read:
            return result("<tool_use_error>File has not been read yet. Read it first before writing to it."
                          "</tool_use_error>", True)
        if name == "Write":
            new = inp["content"]
        else:  # Edit
            old = path.read_text() if path.exists() else ""
            if inp["old_string"] == "" and path.exists() or inp["old_string"] not in old:
                return result("<tool_use_error>String to replace not found in file.</tool_use_error>", True)
            new = old.replace(inp["old_string"], inp["new_string"], 1) if inp["old_string"] else inp["new_string"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(new)
        self.read.add(path)
        return result(f"The file {path} has been updated successfully.")


def drive(agent: Agent, prof: Any, cli: FakeCli, run_id: str) -> tuple[Any, list[dict[str, Any]]]:
    """Play the CLI's turns until the agent answers; returns the answer reply and the messages."""
    system = f"# Environment\n - Primary working directory: {cli.cwd}\n\nUSD budget: $0/$2; $2 remaining"
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": PROMPT}]},
                                      {"role": "system", "content": system}]
    for _ in range(12):
        reply = agent.reply(parse_request({"model": "claude-sonnet-5-5", "messages": messages}), prof, run_id, 1)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            return reply, messages
        messages.append({"role": "user", "content": [cli.run(b) for b in reply.content if b["type"] == "tool_use"]})
    raise AssertionError("the agent never answered")


def grade(check: Any, answer: str, cli: FakeCli, messages: list[dict[str, Any]]) -> str:
    """What checks.csv will say, from the workspace, the answer and the calls (denials netted out)."""
    denied = {b["tool_use_id"] for m in messages if m["role"] == "user" for b in m["content"]
              if isinstance(b, dict) and b.get("is_error") and "Permission to use" in b.get("content", "")}
    used = {canonical_tool(b["name"]) for m in messages if m["role"] == "assistant" for b in m["content"]
            if b["type"] == "tool_use" and b["id"] not in denied}
    path = cli.cwd / (check.path or "")
    ok = {
        "output_contains": lambda: check.value in answer,
        "output_not_contains": lambda: check.value not in answer,
        "output_matches": lambda: re.search(check.pattern, answer) is not None,
        "output_not_matches": lambda: re.search(check.pattern, answer) is None,
        "run_command": lambda: subprocess.run(check.command, shell=True, cwd=cli.cwd, capture_output=True,
                                              timeout=30).returncode == check.exit_code_expected,
        "file_exists": lambda: path.is_file(),
        "file_contains": lambda: path.is_file() and check.value in path.read_text(),
        "file_matches": lambda: path.is_file() and re.search(check.pattern, path.read_text()) is not None,
        "exit_success": lambda: True,
        "expect_tools": lambda: {canonical_tool(t) for t in check.tools} <= used,
        "reject_tools": lambda: not ({canonical_tool(t) for t in check.tools} & used),
        "max_turns": lambda: 1 + cli.user_events <= check.turns,
    }[check.type]()
    return "passed" if ok else "failed"


def _run(tmp_path: Path, suite_dir: Path, knobs: dict[str, Any], run_id: str, seed: int = 7,
         allowed: set[str] | None = None) -> tuple[Any, FakeCli, list[dict[str, Any]], Any]:
    suite = skillbench.load_suite(suite_dir)
    spec = suite.prompt("fix-mean")
    tools = spec.test.allowed_tools if spec.test.allowed_tools is not None else suite.config.run.allowed_tools
    cli = FakeCli(tmp_path / run_id, allowed or {canonical_tool(t) for t in tools})
    _workspace(suite_dir, cli.cwd)
    prof = load_profiles({"models": {"default": forced(**knobs)}}).agent("claude-sonnet-5-5")
    reply, messages = drive(Agent(suite, seed, "http://127.0.0.1:1/site"), prof, cli, run_id)
    return reply, cli, messages, spec


def _check_truth(reply: Any) -> dict[str, str]:
    return {r.check_id: r.decided for r in reply.truth if r.item_type == CHECK_ITEM}


def _writes(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for m in messages if m["role"] == "assistant" for b in m["content"]
            if b["type"] == "tool_use" and b["name"] in ("Write", "Edit")]


WRITE_TOOLS = ["Read", "Write", "Edit", "Glob", "Grep"]


@pytest.mark.parametrize("allowed", [WRITE_TOOLS, ["Read", "Edit"], None], ids=["write", "edit-only", "suite-list"])
def test_every_check_truth_equals_what_a_grader_finds(tmp_path, allowed):
    """Many runs at p = 0.5 for every knob: each check's truth row is what an independent grader finds."""
    suite_dir = _task_suite(tmp_path / "suite", allowed=allowed)
    knobs = {"read_workspace": 0.5, "solve": {"without": 0.5, "with": 0.5}, "check": {"without": 0.5, "with": 0.5}}
    seen: dict[str, set[str]] = {}
    for n in range(24):
        reply, cli, messages, spec = _run(tmp_path, suite_dir, knobs, f"r{n}")
        truth = _check_truth(reply)
        answer = reply.content[0]["text"]
        assert [r.item_index for r in reply.truth if r.item_type == CHECK_ITEM] == list(range(len(CHECKS)))
        for check in spec.test.checks:
            assert truth[check.check_id] == grade(check, answer, cli, messages), (n, check.check_id, answer)
            seen.setdefault(check.type, set()).add(truth[check.check_id])
    # Every decision really varies (no check type is pinned by accident), except what the run cannot change.
    varying = {t for t, s in seen.items() if s == {"passed", "failed"}}
    if allowed is None:  # the suite's default list has no Write or Edit: never solved, never written
        assert seen["run_command"] == seen["file_exists"] == {"failed"}
    else:
        assert {"run_command", "file_exists", "file_contains", "output_contains", "output_matches",
                "output_not_matches", "max_turns"} <= varying, seen
    assert seen["exit_success"] == {"passed"}


def test_solution_is_written_only_when_the_allow_list_lets_it(tmp_path):
    solve = {"read_workspace": 0.0, "solve": {"without": 1.0, "with": 1.0}}
    denied = _task_suite(tmp_path / "denied", allowed=["Read", "Grep", "Bash"])
    reply, cli, messages, _ = _run(tmp_path, denied, solve, "no-write")
    assert not _writes(messages) and (cli.cwd / "mean.py").read_text() == BUGGY
    assert _check_truth(reply)["script-runs"] == "failed"

    allowed = _task_suite(tmp_path / "allowed", allowed=WRITE_TOOLS)
    reply, cli, messages, _ = _run(tmp_path, allowed, solve, "writes")
    written = sorted(Path(b["input"]["file_path"]).relative_to(cli.cwd).as_posix() for b in _writes(messages))
    assert written == ["NOTES.md", "mean.py"]  # every solution file that differs from the fixture
    assert {b["name"] for b in _writes(messages)} == {"Write"}
    assert (cli.cwd / "mean.py").read_text() == FIXED and _check_truth(reply)["script-runs"] == "passed"

    missing = _task_suite(tmp_path / "nosolution", allowed=WRITE_TOOLS, solution=False)
    reply, cli, messages, _ = _run(tmp_path, missing, solve, "cannot")
    assert not _writes(messages) and _check_truth(reply)["script-runs"] == "failed"

    never = _task_suite(tmp_path / "never", allowed=WRITE_TOOLS)
    reply, _, messages, _ = _run(tmp_path, never, {**solve, "solve": {"without": 0.0, "with": 0.0}}, "declines")
    assert not _writes(messages) and _check_truth(reply)["script-runs"] == "failed"


def test_each_existing_file_is_read_before_it_is_written(tmp_path):
    suite_dir = _task_suite(tmp_path / "suite", allowed=WRITE_TOOLS)
    for read_ws in (0.0, 1.0):
        reply, cli, messages, _ = _run(tmp_path, suite_dir, {"read_workspace": read_ws,
                                                             "solve": {"without": 1.0, "with": 1.0}}, f"rw{read_ws}")
        read_before: set[str] = set()
        for m in messages:
            if m["role"] == "assistant":
                for b in m["content"]:
                    target = Path(b.get("input", {}).get("file_path", "")).name
                    if b["type"] == "tool_use" and b["name"] == "Write" and target == "mean.py":
                        assert b["input"]["file_path"] in read_before, "Write of an existing file before its Read"
                # A Read counts once its result is back (a later message), never within the same one.
                read_before |= {b["input"]["file_path"] for b in m["content"]
                                if b["type"] == "tool_use" and b["name"] == "Read"}
        assert not any(b.get("is_error") for m in messages if m["role"] == "user" for b in m["content"]
                       if isinstance(b, dict))
        assert _check_truth(reply)["script-runs"] == "passed"


def test_a_file_the_setup_made_is_read_after_the_refused_write_then_written(tmp_path):
    """A solution file the fixtures do not list but the workspace has: the first Write is refused, then Read, Write."""
    suite_dir = _task_suite(tmp_path / "suite", allowed=WRITE_TOOLS)
    (suite_dir / "solutions" / "fix-mean" / "setup.cfg").write_text("[mean]\nfixed = 1\n")
    suite = skillbench.load_suite(suite_dir)
    cli = FakeCli(tmp_path / "retry", {canonical_tool(t) for t in WRITE_TOOLS})
    _workspace(suite_dir, cli.cwd)
    (cli.cwd / "setup.cfg").write_text("[mean]\nfixed = 0\n")  # as a setup command would leave it
    prof = load_profiles({"models": {"default": forced(read_workspace=0.0, solve={"without": 1, "with": 1})}}
                         ).agent("claude-sonnet-5-5")
    reply, messages = drive(Agent(suite, 7, "http://127.0.0.1:1/site"), prof, cli, "retry")
    cfg = [b for b in _writes(messages) if b["input"]["file_path"].endswith("setup.cfg")]
    assert len(cfg) == 2 and (cli.cwd / "setup.cfg").read_text() == "[mean]\nfixed = 1\n"
    assert _check_truth(reply)["script-runs"] == "passed"


def test_output_lines_do_not_break_the_answer_and_a_decided_fail_really_fails(tmp_path):
    suite_dir = _task_suite(tmp_path / "suite", allowed=WRITE_TOOLS)
    reply, cli, messages, spec = _run(tmp_path, suite_dir, {"check": {"without": 1.0, "with": 1.0}}, "pass")
    answer = reply.content[0]["text"]
    for c in spec.test.checks:
        if c.type.startswith("output_"):
            assert _check_truth(reply)[c.check_id] == "passed", (c, answer)
    assert "- Keep in mind that the divisor is the count of values." in answer  # the rubric bullet is intact
    assert [r.decided for r in reply.truth if r.item_type == "must"] == ["covered"]
    reply, *_ = _run(tmp_path, suite_dir, {"check": {"without": 0.0, "with": 0.0}}, "fail")
    answer = reply.content[0]["text"]
    assert "TODO" in answer and re.search(CHECKS[3]["pattern"], answer)
    for c in spec.test.checks:
        if c.type.startswith("output_"):
            assert _check_truth(reply)[c.check_id] == "failed", (c, answer)


def test_truth_records_what_happens_when_the_answer_breaks_a_check_anyway(tmp_path):
    """``output_not_contains: "."``: decided to pass, but every answer has a full stop, so truth says failed."""
    suite_dir = _task_suite(tmp_path / "suite", allowed=WRITE_TOOLS)
    path = suite_dir / "test-prompts" / "fix-mean.json"
    data = json.loads(path.read_text())
    data["checks"] = [{"id": "no-dot", "type": "output_not_contains", "value": "."}]
    path.write_text(json.dumps(data))
    reply, *_ = _run(tmp_path, suite_dir, {"check": {"without": 1.0, "with": 1.0}}, "dot")
    assert "." in reply.content[0]["text"] and _check_truth(reply) == {"no-dot": "failed"}


PATTERNS = [r"[^abc]{6}", r"\s\d+.{3}\W", r"(?i)p\s*=\s*0\.0[0-4]\d", r"^Result: \w+$", r"(a|b)\1x", r"[^\s]+ done\.$"]


def test_regex_strings_match_and_are_the_same_in_every_process():
    def gen(seed: int) -> list[str | None]:
        return [string_for(p, lambda n, p=p: draws.rng(seed, "t", p, n)) for p in PATTERNS]

    here = gen(1)
    assert all(s is not None and re.search(p, s) for p, s in zip(PATTERNS, here, strict=True)), here
    assert gen(1) == here and gen(2) != here
    assert all("\n" not in s for s in here if s)  # one line: the answer's bullets stay whole
    code = ("import json; from skillbench.sim import _draws as draws; "
            "from skillbench.sim._check_text import string_for; "
            f"P={PATTERNS!r}; print(json.dumps([string_for(p, lambda n, p=p: draws.rng(1, 't', p, n)) for p in P]))")
    for hash_seed in ("1", "2"):  # rstr's negated classes read a set, whose order follows the hash seed
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={"PYTHONHASHSEED": hash_seed, "PATH": "/usr/bin:/bin"})
        assert json.loads(out.stdout) == here
    assert string_for(r"(?<!x)", lambda n: draws.rng(1, n)) == ""  # an empty match is still a match
    assert string_for(r"a(?=b)", lambda n: draws.rng(1, n)) == "ab"
    assert string_for(r"(?!a)a", lambda n: draws.rng(1, n)) is None  # unsatisfiable: no line, truth says failed


def test_task_profile_knobs_are_validated():
    prof = load_profiles({"models": {"sonnet": {"read_workspace": 0.3, "solve": {"without": 0.1, "with": 0.9},
                                                "check": {"without": 0.2, "with": 0.4}}}}).agent("sonnet")
    assert (prof.read_workspace, prof.solve.at(0.5), prof.check.at(1.0)) == (0.3, pytest.approx(0.5), 0.4)
    shipped = load_profiles()
    assert all(m.solve.with_ > m.solve.without and m.check.with_ > m.check.without for m in shipped.models.values())
    for bad, field in [({"solve": {"without": 1.5, "with": 1}}, "solve"), ({"check": 0.5}, "check"),
                       ({"read_workspace": -0.1}, "read_workspace"), ({"solve": {"without": 0.1}}, "solve"),
                       ({"solve_rate": 0.1}, "solve_rate")]:
        with pytest.raises(ProfileError, match=field):
            load_profiles({"models": {"haiku": bad}})


def test_truth_file_of_an_older_pass_still_loads(tmp_path):
    """A truth.csv written before ``check_id`` keeps its rows (read as rubric rows) on resume."""
    old = tmp_path / "truth.csv"
    rows = "r1,1,m,p,none,0,0,must,covered\nr1,1,m,p,none,0,1,avoid,omitted\n"
    old.write_text(",".join(LEGACY_TRUTH_COLUMNS) + "\n" + rows)
    writer = TruthWriter(old)
    assert [r.check_id for r in writer.rows()] == ["", ""]
    writer.record([TruthRow("r1", 1, "m", "p", "none", 0, 0, CHECK_ITEM, "passed", "script-runs"),
                   TruthRow("r0", 1, "m", "p", "none", 0, 0, "must", "omitted")])
    lines = old.read_text().splitlines()
    assert lines[0] == ",".join(TRUTH_COLUMNS) and TRUTH_COLUMNS[-1] == "check_id"
    assert lines[1:] == ["r0,1,m,p,none,0,0,must,omitted,", "r1,1,m,p,none,0,0,must,covered,",
                         "r1,1,m,p,none,0,1,avoid,omitted,", "r1,1,m,p,none,0,0,check,passed,script-runs"]
    assert parse_truth_csv(old.read_text()) == writer.rows() == parse_truth_csv(truth_csv(writer.rows()))
    assert parse_truth_csv(",".join(LEGACY_TRUTH_COLUMNS) + "\nr1,1,m,p,none,0,0,must,covered\n")[0].check_id == ""
