"""MkDocs hook: tables generated from code.

A page may hold a marker ``<!-- skillbench-table: MODULE:FUNCTION -->`` on a line of its own; the build replaces it
by the markdown that ``FUNCTION()`` of ``MODULE`` returns, so a table that describes a registry (the check types,
the suite formats, the gate's verdicts, the CLI's options) is built from that registry and never drifts from it.

A marker whose module or function cannot be imported, or whose function does not return a string, fails the build
with one line naming the page and the marker. ``SKILLBENCH_DOCS_ALLOW_MISSING_TABLES=1`` turns that failure into a
visible placeholder; it exists only for writing pages before the function does and is never set by ``make docs``.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

MARKER = re.compile(r"^[ \t]*<!--\s*skillbench-table:\s*(?P<target>\S+)\s*-->[ \t]*$")
FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})")
ALLOW_MISSING = "SKILLBENCH_DOCS_ALLOW_MISSING_TABLES"


class TableError(Exception):
    """A marker whose table could not be built; the message is the whole line the build prints."""


def on_config(config: Any) -> Any:
    # the checkout's own package, not whichever skillbench the environment installed
    root = str(Path(config.config_file_path).resolve().parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    return config


def render_table(target: str) -> str:
    """The markdown ``MODULE:FUNCTION`` returns, or a :class:`TableError` saying what is wrong with ``target``."""
    module_name, sep, function_name = target.partition(":")
    if not sep or not module_name or not function_name:
        raise TableError(f"{target!r} is not MODULE:FUNCTION")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any import failure is the same build error: the marker names no table
        raise TableError(f"cannot import {module_name} ({type(exc).__name__}: {exc})") from exc
    function = getattr(module, function_name, None)
    if not callable(function):
        raise TableError(f"{module_name} has no function {function_name}")
    try:
        table = function()
    except Exception as exc:  # a broken table function fails the build in one line, like a missing one
        raise TableError(f"{target}() raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(table, str):
        raise TableError(f"{target} returned {type(table).__name__}, not a markdown string")
    return table.strip("\n")


def replace_markers(markdown: str, page: str, allow_missing: bool = False) -> str:
    """``markdown`` with every marker replaced by its table; a bad marker raises one line naming ``page``.

    A marker inside a fenced code block is an example of one, shown as written.
    """
    out: list[str] = []
    fence = ""
    for line in markdown.split("\n"):
        opening = FENCE.match(line)
        if opening and (not fence or opening.group("fence").startswith(fence)):
            fence = "" if fence else opening.group("fence")
        match = None if fence else MARKER.match(line)
        if match is None:
            out.append(line)
            continue
        target = match.group("target")
        try:
            out.append(render_table(target))
        except TableError as exc:
            if not allow_missing:
                raise PluginError(f"{page}: <!-- skillbench-table: {target} -->: {exc}") from None
            out.append(f'!!! warning "Table not built"\n    `{target}`: {exc}')
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return replace_markers(markdown, page.file.src_uri, allow_missing=os.environ.get(ALLOW_MISSING) == "1")
