"""How deep and how large a spec's JSON or YAML may be: refused in one line before a recursive parser sees it.

``json.loads``, PyYAML's composer and constructor and ``tomllib`` recurse once per level of nesting, so a spec nested
100,000 deep (content under evaluation) ends in a ``RecursionError`` traceback, and YAML's aliases can make a few
lines stand for billions of nodes (every later walk of the value then runs for ever). No real spec nests beyond a
dozen levels: :data:`MAX_NESTING` bounds the depth, :data:`MAX_NODES` what a YAML document's aliases expand to.
Both checks are iterative: one pass over JSON's tokens, one over YAML's parser events (the parser keeps a stack of
its own, it does not recurse).
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

MAX_NESTING = 100  # levels of lists and mappings
MAX_NODES = 1_000_000  # values a YAML document stands for, its aliases expanded
# A JSON string (escapes included: one character at a time, so an unterminated string cannot backtrack) or a bracket.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
# Flow brackets are counted before PyYAML scans them: its scanner looks ahead over a run of '[' in quadratic time.
_FLOW_OPEN, _FLOW_CLOSE = frozenset("[{"), frozenset("]}")
_OPEN = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


class NestingError(ValueError):
    """A document nested deeper than :data:`MAX_NESTING`, or standing for more than :data:`MAX_NODES` values."""


def _too_deep(line: int) -> NestingError:
    return NestingError(f"nested deeper than {MAX_NESTING} levels (at line {line})")


def check_json_nesting(text: str) -> None:
    """Raises :class:`NestingError` when the JSON text's lists and objects nest deeper than :data:`MAX_NESTING`."""
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > MAX_NESTING:
                raise _too_deep(text.count("\n", 0, match.start()) + 1)
        elif token in ("]", "}"):
            depth -= 1


def load_json(text: str) -> Any:
    """``json.loads`` after :func:`check_json_nesting` (its errors: :class:`NestingError`, ``json.JSONDecodeError``)."""
    check_json_nesting(text)
    return json.loads(text)


def check_yaml_nesting(text: str) -> None:
    """Raises :class:`NestingError` when the YAML text nests deeper than :data:`MAX_NESTING` (``yaml.YAMLError`` when
    it is not YAML)."""
    depth = 0
    for char in text:  # quoted brackets count too, hence ten times the bound: a real spec never comes near
        if char in _FLOW_OPEN:
            depth += 1
            if depth > 10 * MAX_NESTING:
                raise NestingError(f"nested deeper than {MAX_NESTING} levels ({10 * MAX_NESTING} open brackets)")
        elif char in _FLOW_CLOSE:
            depth = max(depth - 1, 0)
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, _OPEN):
            depth += 1
            if depth > MAX_NESTING:
                raise _too_deep(event.start_mark.line + 1)
        elif isinstance(event, _CLOSE):
            depth -= 1


def check_node_count(node: yaml.Node) -> None:
    """Raises :class:`NestingError` when a composed YAML node stands for more than :data:`MAX_NODES` values, its
    aliases expanded (a "billion laughs" document). The node's depth is already bounded by
    :func:`check_yaml_nesting`, so the walk's recursion is too."""
    sizes: dict[int, int] = {}

    def size(here: yaml.Node) -> int:
        if id(here) in sizes:
            return sizes[id(here)]
        sizes[id(here)] = 1  # a recursive alias counts once, not for ever
        if isinstance(here, yaml.MappingNode):
            total = 1 + sum(size(k) + size(v) for k, v in here.value)
        elif isinstance(here, yaml.SequenceNode):
            total = 1 + sum(size(v) for v in here.value)
        else:
            total = 1
        sizes[id(here)] = total
        if total > MAX_NODES:
            raise NestingError(f"stands for more than {MAX_NODES} values once its aliases are expanded")
        return total

    size(node)


def load_yaml(text: str) -> Any:
    """One YAML document with the safe loader, after :func:`check_yaml_nesting` and :func:`check_node_count`.

    Raises:
        NestingError: too deep, or too large once expanded.
        yaml.YAMLError: not YAML.
    """
    check_yaml_nesting(text)
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_node_count(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


__all__ = ["MAX_NESTING", "MAX_NODES", "NestingError", "check_json_nesting", "check_node_count",
           "check_yaml_nesting", "load_json", "load_yaml"]
