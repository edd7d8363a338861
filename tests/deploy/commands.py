"""The command lines a deployment file asks someone (or a machine) to run, and the flags they use.

Contract: :func:`commands_in` reads one file under ``deploy/`` and returns every ``skillbench …`` and ``dask
scheduler|worker …`` command it holds — in YAML string values (workflow ``run:`` steps, a container's ``args``),
in Markdown fenced blocks and inline code spans, in systemd ``ExecStart=`` lines, and in inline code spans of any
comment — as :class:`Command` (the program, its words up to the first flag, its flags with the literal value that
follows each). Shell is read loosely on purpose: backslash continuations are joined, ``${{ … }}`` expressions and
``$VAR``/``$(…)`` stand for a value, ``${VAR:+--flag $VAR}`` is read as its inner words, and a command ends at the
first pipe, list operator, redirection, parenthesis or comment.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import yaml

VARIABLE = "$X"  # what a GitHub expression stands for: a value the test cannot know
_EXPRESSION = re.compile(r"\$\{\{.*?\}\}")
_ALTERNATE = re.compile(r"\$\{\w+:\+([^}]*)\}")  # ${VAR:+words}: the words, when VAR is set
_CONTINUATION = re.compile(r"\\\n\s*")
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
_INLINE = re.compile(r"`([^`\n]+)`")
# skillbench anywhere a command can start (after a path, a quote, an operator); dask only as `dask scheduler|worker`,
# so `--executor dask` is read as a value
_START = re.compile(r"(?:^|(?<=[\s;&|(`'\"/=]))(skillbench|dask(?=[ \t]+(?:scheduler|worker)\b))[ \t]+(?=\S)", re.M)
_STOP = {"|", "||", "&", "&&", ";", ";;", "(", ")", ">", ">>", "<", "<<", "2>", "2>&1"}


@dataclass
class Command:
    """One command line: ``program`` (skillbench or dask), the words before the first flag, the flags used."""

    program: str
    words: list[str]
    flags: list[tuple[str, str | None]] = field(default_factory=list)  # (--flag, the literal value after it)
    source: str = ""  # file:where, for messages

    def __str__(self) -> str:
        return " ".join([self.program, *self.words, *(f for f, _ in self.flags)]) + f"  ({self.source})"


def _tokens(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote in prose: split on blanks instead
        return text.split()


def _command(program: str, tail: str, source: str) -> Command:
    words: list[str] = []
    flags: list[tuple[str, str | None]] = []
    tokens = _tokens(tail)
    for i, token in enumerate(tokens):
        if token in _STOP or token.startswith("#"):
            break
        if token.startswith("-") and len(token) > 1 and not token.startswith("-$"):
            name, _, value = token.partition("=")
            if not value:
                following = tokens[i + 1] if i + 1 < len(tokens) else None
                value = following if following and not following.startswith("-") and following not in _STOP \
                    else None
            flags.append((name, value))
        elif not flags:
            words.append(token)
    return Command(program, words, flags, source)


def commands_in_text(text: str, source: str) -> list[Command]:
    """Every command in a piece of shell (or prose holding shell), read as the module docstring says."""
    text = _CONTINUATION.sub(" ", _EXPRESSION.sub(VARIABLE, text))
    text = _ALTERNATE.sub(r"\1", text)
    found = []
    for line in text.splitlines():
        for match in _START.finditer(line):
            found.append(_command(match.group(1), line[match.end():], source))
    return found


def _strings(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for value in node.values() for s in _strings(value)]
    if isinstance(node, list):
        return [s for item in node for s in _strings(item)]
    return []


def commands_in(path: Path) -> list[Command]:
    """Every command of one deployment file (see the module docstring for where they are looked for)."""
    text = path.read_text(encoding="utf-8")
    pieces: list[tuple[str, str]] = [(m.group(1), "inline code") for m in _INLINE.finditer(text)]
    if path.suffix in (".yml", ".yaml"):
        pieces += [(s, "YAML value") for doc in yaml.safe_load_all(text) for s in _strings(doc)]
    elif path.suffix == ".md":
        pieces += [(block, "code block") for block in _FENCE.findall(text)]
    elif path.suffix == ".service":
        pieces += [(line.partition("=")[2], "ExecStart") for line in text.splitlines()
                   if line.startswith("ExecStart")]
    return [c for piece, where in pieces for c in commands_in_text(piece, f"{path.name}: {where}")]
