"""skill-creator's two eval files as prompt fields: ``evals/evals.json`` and a trigger eval set.

``evals.json`` is ``{"skill_name", "evals": [{"id", "prompt", "expected_output", "files", "expectations"}]}``
(skill-creator's ``references/schemas.md``); a trigger eval set is a JSON list of ``{"query", "should_trigger"}``
(what its ``run_eval.py --eval-set`` reads). Each reader returns :class:`Item` drafts (the
:class:`~skillbench.suite._format.TestPrompt` fields, less the suite's) and ``(severity, field, problem, fix)``
defects whose field names the eval by its id (``evals[id=3].files[0]``) or the query by its position.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from skillbench.suite._defects import MAX_PROMPT_BYTES
from skillbench.suite._nesting import NestingError, load_json

ItemDefect = tuple[str, str, str, str]  # severity, field, problem, fix
EVAL_KEYS = ("id", "prompt", "expected_output", "files", "expectations")
QUERY_KEYS = ("query", "should_trigger")


class EvalFileError(ValueError):
    """A file that is not JSON (or not UTF-8): one defect for the whole file."""

    def __init__(self, problem: str, fix: str):
        super().__init__(problem)
        self.problem, self.fix = problem, fix


@dataclass
class Item:
    """One eval or trigger query, read: its name suffix, prompt fields and where its defects point."""

    key: str  # the name's suffix after the skill: the eval's id, or trigger-/dormant-<hash of the query>
    where: str  # "evals[id=3]" or "trigger[2]"
    prompt: str
    expectations: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # relative to the skill root, as written
    expected_output: str = ""
    should_trigger: bool | None = None  # None: an eval of evals.json


def read_json(path: Path) -> Any:
    """The file's JSON value.

    Raises:
        EvalFileError: unreadable, not UTF-8, or not JSON (the syntax error's line and column named).
    """
    try:
        return load_json(path.read_text(encoding="utf-8"))
    except NestingError as exc:
        raise EvalFileError(str(exc), "flatten the file (an eval set nests a few levels, never a hundred)") from None
    except json.JSONDecodeError as exc:
        raise EvalFileError(f"not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
                            "fix the JSON (`python -m json.tool FILE` shows the spot)") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalFileError(f"cannot be read ({exc})", "make it a UTF-8 JSON file") from exc


def _prompt_problem(value: Any) -> str:
    if not isinstance(value, str):
        return "missing required field" if value is None else f"not a string ({type(value).__name__})"
    if not value.strip():
        return "is empty"
    if len(value.encode("utf-8", "surrogatepass")) > MAX_PROMPT_BYTES:
        return f"longer than {MAX_PROMPT_BYTES} bytes (one command-line argument)"
    return ""


def _file_problem(skill_dir: Path, rel: Any) -> str:
    """Why a ``files`` entry cannot be copied into the workspace ('' when it can)."""
    if not isinstance(rel, str) or not rel.strip():
        return "is not a path (a non-empty string)"
    pure = PurePosixPath(rel)
    if pure.is_absolute() or "\\" in rel or any(p == ".." for p in pure.parts):
        return f"{rel!r} is not a plain path inside the skill folder"
    if not (skill_dir / rel).exists():
        return f"{rel!r} does not exist (relative to the skill folder {os.path.relpath(skill_dir)})"
    return ""


def read_evals(data: Any, skill_dir: Path, *, skip_missing: bool = False) -> tuple[list[Item], list[ItemDefect]]:
    """The evals of a parsed ``evals.json`` and its defects; an eval with an error is left out.

    With ``skip_missing`` a ``files`` entry that does not exist is dropped with a warning instead (as
    ``--skip-missing`` does for every format), so the eval still runs without it.
    """
    out: list[ItemDefect] = []
    if not isinstance(data, dict) or not isinstance(data.get("evals"), list):
        return [], [("error", "evals", "no 'evals' list at the top level",
                     "write {\"skill_name\": …, \"evals\": [{\"id\": 1, \"prompt\": …, \"expectations\": […]}]}")]
    name = data.get("skill_name")
    if not isinstance(name, str) or not name.strip():
        out.append(("warning", "skill_name", "missing", f"set \"skill_name\": \"{skill_dir.name}\""))
    elif name != skill_dir.name:
        out.append(("warning", "skill_name", f"{name!r} differs from the skill folder {skill_dir.name!r}",
                    f"set \"skill_name\": \"{skill_dir.name}\" (the skill's frontmatter name)"))
    items: list[Item] = []
    first: dict[str, int] = {}
    for i, raw in enumerate(data["evals"]):
        if not isinstance(raw, dict):
            out.append(("error", f"evals[{i}]", "is not an object", "write {\"id\": …, \"prompt\": …}"))
            continue
        rid = raw.get("id")
        bad_id = isinstance(rid, bool) or not isinstance(rid, (int, str)) or (isinstance(rid, str) and not rid.strip())
        where = f"evals[{i}]" if bad_id else f"evals[id={rid}]"
        errors = len(out)
        if bad_id:
            out.append(("error", f"{where}.id", "missing required field" if rid is None else f"{rid!r} is not an "
                        "id", "give each eval a unique integer id"))
        elif str(rid) in first:
            out.append(("error", f"{where}.id", f"duplicate id {rid!r} (also evals[{first[str(rid)]}])",
                        "give each eval a unique integer id"))
        else:
            first[str(rid)] = i
        if problem := _prompt_problem(raw.get("prompt")):
            out.append(("error", f"{where}.prompt", problem, "write the task the user asks for"))
        expected = raw.get("expected_output", "")
        if not isinstance(expected, str):
            out.append(("error", f"{where}.expected_output", "not a string", "describe the expected result"))
        expectations = raw.get("expectations")
        if not isinstance(expectations, list) or not expectations:
            out.append(("error", f"{where}.expectations", "missing or empty: the judge has nothing to grade",
                        "list the verifiable statements as strings"))
            expectations = []
        seen: dict[str, int] = {}
        for j, text in enumerate(expectations):
            key = " ".join(text.split()).casefold() if isinstance(text, str) else ""
            if not key:
                out.append(("error", f"{where}.expectations[{j}]", "is not a non-empty string",
                            "write the statement, or delete it"))
            elif key in seen:
                out.append(("error", f"{where}.expectations[{j}]", f"duplicates expectations[{seen[key]}]",
                            "delete one or make them different statements"))
            else:
                seen[key] = j
        files = raw.get("files") or []
        if not isinstance(files, list):
            out.append(("error", f"{where}.files", "not a list", "list the input files, relative to the skill root"))
            files = []
        kept = []
        for j, rel in enumerate(files):
            problem = _file_problem(skill_dir, rel)
            if not problem:
                kept.append(rel)
            elif skip_missing and problem.endswith(f"{os.path.relpath(skill_dir)})"):
                out.append(("warning", f"{where}.files[{j}]", f"dropped (--skip-missing): {problem}",
                            "add the file to run the eval with it"))
            else:
                out.append(("error", f"{where}.files[{j}]", problem, "add the file, or fix the path"))
        for key in sorted(set(raw) - set(EVAL_KEYS)):
            out.append(("warning", f"{where}.{key}", "unknown field (not read)", "see skill-creator's schemas.md"))
        if any(d[0] == "error" for d in out[errors:]):
            continue
        items.append(Item(str(rid), where, raw["prompt"], list(expectations), kept, expected))
    if not data["evals"]:
        out.append(("error", "evals", "is empty", "add at least one eval"))
    return items, out


def query_key(query: str, should_trigger: bool) -> str:
    """``trigger-<8 hex>`` / ``dormant-<8 hex>`` of the query's text: stable when the set is reordered."""
    digest = hashlib.sha256(" ".join(query.split()).encode()).hexdigest()[:8]
    return f"{'trigger' if should_trigger else 'dormant'}-{digest}"


def read_trigger_set(data: Any) -> tuple[list[Item], list[ItemDefect]]:
    """The queries of a parsed trigger eval set and its defects; a query with an error is left out."""
    if not isinstance(data, list):
        return [], [("error", "trigger set", "the top level is not a list",
                     "write [{\"query\": …, \"should_trigger\": true}, …]")]
    out: list[ItemDefect] = []
    items: list[Item] = []
    first: dict[str, int] = {}
    for i, raw in enumerate(data):
        where = f"[{i}]"
        if not isinstance(raw, dict):
            out.append(("error", where, "is not an object", "write {\"query\": …, \"should_trigger\": …}"))
            continue
        errors = len(out)
        query, should = raw.get("query"), raw.get("should_trigger")
        if problem := _prompt_problem(query):
            out.append(("error", f"{where}.query", problem, "write the user's request"))
        else:
            norm = " ".join(query.split()).casefold()
            if norm in first:
                out.append(("error", f"{where}.query", f"duplicates [{first[norm]}]", "delete one of them"))
            else:
                first[norm] = i
        if not isinstance(should, bool):
            out.append(("error", f"{where}.should_trigger", "missing required field" if should is None else
                        "not true or false", "say whether the skill should trigger: true or false"))
        for key in sorted(set(raw) - set(QUERY_KEYS)):
            out.append(("warning", f"{where}.{key}", "unknown field (not read)", "keep query and should_trigger"))
        if any(d[0] == "error" for d in out[errors:]):
            continue
        items.append(Item(query_key(query, should), where, query, should_trigger=should))
    return items, out
