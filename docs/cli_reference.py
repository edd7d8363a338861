"""The CLI reference, built from the argparse parser the ``skillbench`` command itself uses.

``commands_reference()`` is called by the docs hook for the marker on ``docs/cli.md``: one section per (sub)command
with its usage line, its description and a table of its arguments, in the words of their ``help=`` strings, so the
reference lists exactly the flags the command accepts.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

from skillbench.cli import build_parser


def _sub_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def leaf_commands(parser: argparse.ArgumentParser | None = None, prefix: str = ""
                  ) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``("generate", parser)``, ``("image build", parser)``, …: every command a user types, in the CLI's order."""
    parser = parser or build_parser()
    for name, sub in _sub_parsers(parser).items():
        if _sub_parsers(sub):
            yield from leaf_commands(sub, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", sub


def _cell(text: str) -> str:
    return re.sub(r"\s+", " ", text).replace("|", "\\|").strip()


def _argument(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return f"`{names}`"
    if action.choices is not None:
        metavar = "{" + ",".join(map(str, action.choices)) + "}"
    else:
        metavar = action.metavar or action.dest.upper()
    if action.nargs in ("+", "*"):
        metavar += " …"
    return f"`{names} {metavar}`"


def _help(action: argparse.Action) -> str:
    text = action.help or ""
    if "%(default)" in text:
        text = text % {"default": action.default}
    return _cell(text)


def command_section(name: str, parser: argparse.ArgumentParser) -> str:
    rows = [(_argument(a), _help(a)) for a in parser._actions
            if a.help != argparse.SUPPRESS and not isinstance(a, argparse._HelpAction)]
    usage = re.sub(r"\s+", " ", parser.format_usage().removeprefix("usage: ")).strip()
    lines = [f"### skillbench {name}", "", "```text", usage, "```", ""]
    if parser.description:
        lines += [_cell(parser.description), ""]
    if rows:
        lines += ["| argument | meaning |", "| --- | --- |"]
        lines += [f"| {argument} | {meaning} |" for argument, meaning in rows]
        lines.append("")
    return "\n".join(lines)


def commands_reference() -> str:
    """Every command's usage, description and arguments, as markdown sections."""
    return "\n".join(command_section(name, parser) for name, parser in leaf_commands())
