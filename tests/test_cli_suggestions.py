"""An error message only ever suggests a flag the command that prints it accepts.

Three checks, which together cover every command:

* every command is classified: it reads a suite (and then takes the whole suite argument group,
  :data:`skillbench.commands.SUITE_FLAGS`), or it does not (with the reason) — a new command cannot slip by;
* every flag a message of the suite package suggests is one of the suite flags (so any suite reader accepts it);
* each suite reader, run on a real defect (a qdrant-shaped repository without a site base), prints a message that
  suggests flags, and every flag it suggests is in its own parser (a flag inside a quoted ```skillbench X …```
  belongs to X's parser). This is the check that fails for "compare suggests --site-base but does not accept it".
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import pytest

from skillbench.cli import build_parser, main
from skillbench.commands import SUITE_FLAGS
from tests.suite.test_qdrant_repo import FAMILIES, qdrant_repo

ROOT = Path(__file__).resolve().parents[1]
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
QUOTED_COMMAND = re.compile(r"`skillbench ([a-z][a-z-]*(?: [a-z][a-z-]*)?)([^`]*)`")

# Commands that read a suite, and the arguments that make each one read a suite without a site base (SUITE is the
# suite folder). None: the command reads the suite in a notebook chain, too slow to run here; its parser is still
# checked for the whole group.
SUITE_READERS: dict[str, list[str] | None] = {
    "validate": ["validate", "SUITE"],
    "generate": ["generate", "SUITE", "--run-key", "k1", "--backend", "sim", "--dry-run"],
    "compare": ["compare", "SUITE", "--base", "HEAD", "--backend", "sim"],
    "lint-skills": ["lint-skills", "SUITE", "--out", "OUT"],
    "optimize-description": ["optimize-description", FAMILIES[0], "--suite", "SUITE", "--backend", "sim"],
    "demo-history": ["demo-history", "--suite", "SUITE", "--weeks", "1"],
    "sim serve": ["sim", "serve", "--suite", "SUITE"],
    "weekly": None,
}
# Commands that read a week's run directory (or nothing of a suite), not a suite: they take no suite flag.
NOT_SUITE_READERS = {
    "signals": "rewrites a week's manifest from its run folders",
    "consolidate": "merges CI legs' run directories",
    "judge": "grades a week's runs from its run directory",
    "judge-pairs": "judges a week's pairs from its run directory",
    "calibrate": "reads a week's verdicts and labels",
    "labels export": "exports a week's verdicts", "labels merge": "merges label sheets",
    "judge-study": "compares judges on a week's runs",
    "scorecard": "reads a week's ledgers",
    "surfaces": "reads only a suite's skillbench.toml ([[api]]) and caches what it declares",
    "identifiers": "checks a week's answers (--suite only locates the skillbench.toml that declares [[api]])",
    "run-pages": "reads a week's ledgers and run folders",
    "sentinel build": "reads a week's verdicts (--suite only locates the gold set folder)",
    "sentinel check": "reads a week's verdicts (--suite only locates the gold set folder)",
    "image build": "builds the runner image", "image show": "shows the runner image",
    "worker check": "checks a Dask worker",
}
# Commands that read only a suite's skillbench.toml, never its prompts: of the suite group they take --config alone,
# meaning what it means there (a skillbench.toml read instead of the suite folder's own).
CONFIG_ONLY = {"surfaces": {"--config"}, "identifiers": {"--config"}}
# Flags a message of the suite package names that are not the suite group's, and why that is right.
SUITE_PACKAGE_EXCEPTIONS = {
    "--setting-sources": "names the agent CLI's own flag in a statement, suggests nothing",
    "--allow-dirty": "suggested when a version arm meets a dirty tree: generate and compare (checked below)",
    "--trigger-set": "validate's flag, named in the skill-creator layout's row of the docs' table (no message)",
    "--strict": "an argument of the eval's own command in a Vally spec's example (args: [validate.js, --strict])",
    "--eval-set": "skill-creator's run_eval.py flag, naming where its trigger sets come from",
    "--unshallow": "git's own flag (git fetch --unshallow), for a shallow clone's rubric-ownership line",
}


def _parsers() -> dict[str, argparse.ArgumentParser]:
    """Every leaf command's parser by its name ("sim serve" for a nested action)."""
    out: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, prefix: str) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            out[prefix] = parser
        for action in subs:
            for name, child in action.choices.items():
                walk(child, f"{prefix} {name}".strip())

    walk(build_parser(), "")
    return out


PARSERS = _parsers()


def _accepts(command: str) -> set[str]:
    return {o for a in PARSERS[command]._actions for o in a.option_strings}


def _suggested(output: str, command: str) -> dict[str, set[str]]:
    """Each flag the output names, under the command whose parser must take it."""
    by: dict[str, set[str]] = {}
    for match in QUOTED_COMMAND.finditer(output):
        named = match.group(1) if match.group(1) in PARSERS else match.group(1).split()[0]
        by.setdefault(named, set()).update(FLAG.findall(match.group(2)))
    by.setdefault(command, set()).update(FLAG.findall(QUOTED_COMMAND.sub("", output)))
    return by


def _messages(path: Path) -> list[str]:
    """The string literals of a module that can reach a user: not docstrings, not argparse help texts."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            skip.add(id(body[0].value))
        if isinstance(node, ast.Call):
            skip.update(id(c) for k in node.keywords if k.arg in ("help", "description") for c in ast.walk(k.value))
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and id(node) not in skip:
            texts.append("".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            texts.append(node.value)
    return [t for t in texts if " " in t.strip()]  # prose: a bare "--flag" is an argv item, not a message


def test_every_command_is_classified():
    assert set(SUITE_READERS) | set(NOT_SUITE_READERS) == set(PARSERS)
    assert not set(SUITE_READERS) & set(NOT_SUITE_READERS)


@pytest.mark.parametrize("command", sorted(SUITE_READERS))
def test_every_suite_reader_takes_the_whole_suite_group(command):
    assert set(SUITE_FLAGS) <= _accepts(command), f"{command} lacks {sorted(set(SUITE_FLAGS) - _accepts(command))}"


@pytest.mark.parametrize("command", sorted(NOT_SUITE_READERS))
def test_a_command_that_reads_no_suite_takes_no_suite_flag(command):
    assert not (set(SUITE_FLAGS) - CONFIG_ONLY.get(command, set())) & _accepts(command)


def test_the_suite_package_suggests_only_suite_flags():
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "skillbench" / "suite").rglob("*.py")):
        for text in _messages(path):
            for flag in FLAG.findall(text):
                found.setdefault(flag, []).append(f"{path.relative_to(ROOT)}: {text[:80]!r}")
    stray = {f: where for f, where in found.items() if f not in SUITE_FLAGS and f not in SUITE_PACKAGE_EXCEPTIONS}
    assert not stray, f"suite messages suggest flags outside the suite group: {stray}"
    for command in ("generate", "compare"):
        assert "--allow-dirty" in _accepts(command)


@pytest.fixture(scope="module")
def no_site_base(tmp_path_factory) -> Path:
    """A qdrant-shaped repository that commits no config: its suite reads only with a site base."""
    return qdrant_repo(tmp_path_factory.mktemp("qdrant"))


@pytest.mark.parametrize("command", sorted(c for c, argv in SUITE_READERS.items() if argv))
def test_a_suite_readers_message_suggests_only_flags_it_accepts(command, no_site_base, tmp_path, capsys):
    argv = [str(no_site_base) if a == "SUITE" else str(tmp_path / "out") if a == "OUT" else a
            for a in SUITE_READERS[command] or []]
    code = main(argv)
    output = "\n".join(capsys.readouterr())
    if command != "lint-skills":  # lint-skills lints what it can read and reports no suite defect
        assert code != 0 and "--site-base" in output, output
    for named, flags in _suggested(output, command).items():
        stray = flags - _accepts(named)
        assert not stray, f"`skillbench {command}` suggests {sorted(stray)}, which {named} does not take: {output}"


def test_a_command_modules_own_messages_suggest_only_flags_its_commands_take():
    """The usage lines each command module prints itself (``--week X: not a folder``, ``rerun with --fresh``): a
    module that registers several commands (judge, judge-pairs, calibrate) is held to the flags of all of them."""
    modules: dict[str, set[str]] = {}
    for name, parser in PARSERS.items():
        modules.setdefault(parser.get_default("func").__module__, set()).add(name)
    stray = []
    for module, commands in sorted(modules.items()):
        accepted = set().union(*(_accepts(c) for c in commands))
        for text in _messages(ROOT / (module.replace(".", "/") + ".py")):
            stray += [f"{module}: {flag} in {text[:60]!r}" for flag in FLAG.findall(QUOTED_COMMAND.sub("", text))
                      if flag not in accepted]
    assert not stray
