"""The docs' field table of the check types, built from their records (:mod:`skillbench.checktypes`)."""

from __future__ import annotations

from typing import Any

from skillbench.checktypes import Check, CheckKind, check_kinds

_PROBES = {None: "none: graded from the transcript", "command": "the command's exit code",
           "file": "the file's bytes (or that it is missing)"}
_HEADER = ("type", "options", "passes when", "workspace probe", "dotnet names")


def _json_type(schema: dict[str, Any]) -> str:
    """``string`` / ``integer`` / ``number`` / ``list of string`` (and its bound) from a field's JSON schema."""
    if "anyOf" in schema:
        parts = [s for s in schema["anyOf"] if s.get("type") != "null"]
        return " or ".join(_json_type(s) for s in parts)
    if schema.get("type") == "array":
        return "list of " + _json_type(schema.get("items", {}))
    bound = next((f" {op} {schema[k]}" for k, op in (("exclusiveMinimum", ">"), ("minimum", "≥")) if k in schema), "")
    return str(schema.get("type", "any")) + bound


def _options(kind: CheckKind) -> str:
    props = Check.model_json_schema()["properties"]
    need = [f"`{o}` ({_json_type(props[o])})" for o in kind.needs]
    also = [f"`{o}` ({_json_type(props[o])}, optional)" for o in kind.accepts]
    return ", ".join(need + also) or "—"


def _probe(kind: CheckKind) -> str:
    if kind.probe is None:
        return _PROBES[None]
    plain, glob = kind.probe(Check(type=kind.name, path="a")), kind.probe(Check(type=kind.name, path="*"))
    if plain.kind == "command":
        return _PROBES["command"]
    listed = "names" if glob.kind == "glob_names" else "names and bytes"
    return f"{_PROBES[plain.kind]}; a glob: the {listed} of the files it matches"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def check_types_table() -> str:
    """The markdown table of every check type: options with their types, what passes, its probe, dotnet's names.

    Rows are sorted by type name (so ``file_*`` and ``output_*`` sit together), not by the order modules register.
    """
    rows = [_HEADER, ("---",) * len(_HEADER)]
    for kind in sorted(check_kinds(), key=lambda k: k.name):
        dotnet = [f"`{n}` (skill-validator)" for n in kind.dotnet] + [f"`{n}` (Vally)" for n in kind.vally]
        rows.append((f"`{kind.name}`", _options(kind), kind.passes, _probe(kind), ", ".join(dotnet) or "—"))
    return "\n".join("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows) + "\n"
