"""A YAML reader that refuses duplicate mapping keys, naming the file, the line and the key's path.

``yaml.safe_load`` keeps the last of two equal keys without a word, so a stray second ``prompt:`` left by an edit
silently overwrites a stimulus's own prompt (dotnet's eval-quality gate, check 9). :func:`load_strict` composes the
node tree first, walks it for duplicates (carrying the key's path, with a stimulus's ``name`` where one is known)
and constructs the document with PyYAML's safe constructor only when there are none.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from skillbench.suite._nesting import check_node_count, check_yaml_nesting

_MERGE_TAG = "tag:yaml.org,2002:merge"


@dataclass(frozen=True)
class DuplicateKey:
    """One key given twice in a mapping: where (1-based lines), and its path (``stimuli[2] (name).prompt``)."""

    line: int
    first_line: int
    key: str
    where: str  # the path of the mapping holding it ("" at the top level)

    @property
    def field(self) -> str:
        return f"{self.where}.{self.key}" if self.where else self.key


class DuplicateKeyError(ValueError):
    """A YAML file with duplicate mapping keys; :attr:`duplicates` lists every one."""

    def __init__(self, path: Path, duplicates: list[DuplicateKey]):
        self.path, self.duplicates = Path(path), duplicates
        first = duplicates[0]
        super().__init__(f"{path}:{first.line}: duplicate key {first.field!r} (first at line {first.first_line})")


def _item_label(node: yaml.Node, index: int) -> str:
    """``[3]``, or ``[3] (its name)`` for a mapping item with a scalar ``name``."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == "name" and isinstance(value, yaml.ScalarNode):
                return f"[{index}] ({value.value})"
    return f"[{index}]"


def _duplicates(node: yaml.Node, where: str, seen: set[int]) -> Iterator[DuplicateKey]:
    if id(node) in seen:  # an alias: its node was walked where the anchor stands
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        lines: dict[str, int] = {}
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.tag != _MERGE_TAG:
                line = key.start_mark.line + 1
                if key.value in lines:
                    yield DuplicateKey(line, lines[key.value], key.value, where)
                else:
                    lines[key.value] = line
                child = f"{where}.{key.value}" if where else key.value
            else:
                child = where
            yield from _duplicates(value, child, seen)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            yield from _duplicates(item, f"{where}{_item_label(item, i)}", seen)


def load_strict(path: str | Path) -> Any:
    """Read one YAML document, refusing duplicate keys.

    Raises:
        DuplicateKeyError: a mapping gives one key twice (every duplicate is listed).
        NestingError: nested deeper than the suite's bound, or too large once its aliases are expanded.
        yaml.YAMLError: the file is not YAML.
        OSError, UnicodeDecodeError: the file cannot be read as UTF-8 text.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    check_yaml_nesting(text)  # before the composer, which recurses once per level
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_node_count(node)
        dups = list(_duplicates(node, "", set()))
        if dups:
            raise DuplicateKeyError(path, dups)
        return loader.construct_document(node)
    finally:
        loader.dispose()
