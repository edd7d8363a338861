"""skill-creator's two eval files as prompt fields: ``evals/evals.json`` and a trigger eval set.

``evals.json`` is ``{"skill_name", "evals": [{"id", "prompt", "expected_output", "files", "expectations"}]}``
(skill-creator's ``references/schemas.md``); a trigger eval set is a JSON list of ``{"query", "should_trigger"}``
(what its ``run_eval.py --eval-set`` reads). Each reader returns :class:`Item` drafts (the
:class:`~skillbench.suite._format.TestPrompt` fields, less the suite's) and ``(severity, field, problem, fix)``
defects whose field names the eval by its id (``evals[id=3].files[0]``) or the query by its position.

What authors write around that schema is read as they mean it (skill-creator's own SKILL.md and the public folders
that use it are the source of these variants):

* the statements to grade under any of :data:`STATEMENT_KEYS` — ``expectations`` (schemas.md), ``assertions``
  (what skill-creator's SKILL.md calls them) or ``checks`` —, each a string or an object whose text is under
  :data:`STATEMENT_TEXT_KEYS` (``text``: the shape of schemas.md's ``grading.json``; ``check``);
* none at all: skill-creator's template says to write the prompts first and the assertions later. Such an eval
  still runs and votes in the pairwise preference; it has no must coverage (the caller notes it);
* ``files`` entries as strings or ``{"path", …}`` objects;
* the eval list under another top-level key (``{"cases": […]}``) or as the top level itself, when it is the one
  list of objects that carry a prompt; a prompt under ``query`` (the trigger set's word for it);
* a trigger set wrapped as ``{"queries": […]}``, or split as ``{"should_trigger": […], "should_not_trigger": […]}``.
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
EVALS_KEY = "evals"
PROMPT_KEYS = ("prompt", "query")  # evals.json's word, then the trigger set's
# Where an eval's statements to grade are written: schemas.md's name, skill-creator SKILL.md's, and the public
# folders' third (read together: an eval that uses two of them has both lists graded).
STATEMENT_KEYS = ("expectations", "assertions", "checks")
STATEMENT_TEXT_KEYS = ("text", "check")  # a statement object's text: grading.json's field, then the folders' other
FILE_PATH_KEY = "path"  # a ``files`` object's path ({"path", "purpose"})
# An eval's descriptive name: skill-creator asks for one ("Give each eval a descriptive name"; eval_metadata.json's
# eval_name). Known, so never "unknown"; the id names the prompt.
NAME_KEYS = ("name", "eval_name")
EVAL_KEYS = ("id", *PROMPT_KEYS, "expected_output", "files", *STATEMENT_KEYS, *NAME_KEYS)
QUERY_KEYS = ("query", "should_trigger")
QUERY_LIST_KEY = "queries"  # {"skill_name", "queries": [...]}
SPLIT_KEYS = ("should_trigger", "should_not_trigger")  # {"should_trigger": [...], "should_not_trigger": [...]}
EVALS_SHAPE = '{"skill_name": …, "evals": [{"id": 1, "prompt": …, "expectations": […]}]}'
TRIGGER_SHAPE = '[{"query": …, "should_trigger": true}, …]'


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


@dataclass
class EvalSet:
    """What :func:`read_evals` read: the evals that load, their defects, and counts for the report's notes."""

    items: list[Item] = field(default_factory=list)
    defects: list[ItemDefect] = field(default_factory=list)
    total: int = 0  # evals in the file, broken ones included
    list_key: str = EVALS_KEY  # where the list was: "evals", another key, or "" for a top-level list
    ungraded: list[str] = field(default_factory=list)  # where of each loaded eval with no statement to grade


def read_json(path: Path) -> Any:
    """The file's JSON value (a UTF-8 byte-order mark and CRLF line ends are fine).

    Raises:
        EvalFileError: unreadable, not UTF-8, or not JSON (the syntax error's line and column named).
    """
    try:
        return load_json(path.read_text(encoding="utf-8-sig"))
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
        return "is not a path (a non-empty string, or an object with a 'path')"
    pure = PurePosixPath(rel)
    if pure.is_absolute() or "\\" in rel or any(p == ".." for p in pure.parts):
        return f"{rel!r} is not a plain path inside the skill folder"
    if not (skill_dir / rel).exists():
        return f"{rel!r} does not exist (relative to the skill folder {os.path.relpath(skill_dir)})"
    return ""


def _is_prompted(raw: Any) -> bool:
    return isinstance(raw, dict) and any(isinstance(raw.get(k), str) for k in PROMPT_KEYS)


def eval_list(data: Any) -> tuple[str, list[Any]] | None:
    """Where the evals are and the list: ``evals``; else the top level when it is a list of objects with a
    prompt; else the one top-level list whose objects carry a prompt (``{"cases": […]}``). None: no eval list."""
    if isinstance(data, dict) and isinstance(data.get(EVALS_KEY), list):
        return EVALS_KEY, data[EVALS_KEY]
    if isinstance(data, list):
        return ("", data) if data and any(_is_prompted(x) for x in data) else None
    if not isinstance(data, dict):
        return None
    lists = [(k, v) for k, v in data.items() if isinstance(v, list) and v and any(_is_prompted(x) for x in v)]
    return lists[0] if len(lists) == 1 else None


def _statements(raw: dict[str, Any], where: str, out: list[ItemDefect]) -> list[str]:
    """The eval's statements to grade, from every key of :data:`STATEMENT_KEYS` it uses (defects into ``out``)."""
    texts: list[str] = []
    seen: dict[str, str] = {}
    for key in STATEMENT_KEYS:
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, list):
            out.append(("error", f"{where}.{key}", "not a list", "list the verifiable statements as strings"))
            continue
        for j, entry in enumerate(value):
            spot = f"{where}.{key}[{j}]"
            text = entry
            if isinstance(entry, dict):
                text = next((entry[k] for k in STATEMENT_TEXT_KEYS if isinstance(entry.get(k), str)), None)
                if text is None:
                    out.append(("error", spot, f"an object without {' or '.join(map(repr, STATEMENT_TEXT_KEYS))}",
                                "write the statement as a string, or as {\"text\": …}"))
                    continue
            norm = " ".join(text.split()).casefold() if isinstance(text, str) else ""
            if not norm:
                out.append(("error", spot, "is not a non-empty statement", "write the statement, or delete it"))
            elif norm in seen:
                out.append(("error", spot, f"duplicates {seen[norm]}", "delete one or make them different statements"))
            else:
                seen[norm] = f"{key}[{j}]"
                texts.append(text)
    return texts


def _files(raw: dict[str, Any], where: str, skill_dir: Path, skip_missing: bool,
           out: list[ItemDefect]) -> list[str]:
    files = raw.get("files") or []
    if not isinstance(files, list):
        out.append(("error", f"{where}.files", "not a list", "list the input files, relative to the skill root"))
        return []
    kept = []
    for j, entry in enumerate(files):
        rel = entry.get(FILE_PATH_KEY) if isinstance(entry, dict) else entry
        problem = _file_problem(skill_dir, rel)
        if not problem:
            kept.append(rel)
        elif skip_missing and problem.endswith(f"{os.path.relpath(skill_dir)})"):
            out.append(("warning", f"{where}.files[{j}]", f"dropped (--skip-missing): {problem}",
                        "add the file to run the eval with it"))
        else:
            out.append(("error", f"{where}.files[{j}]", problem, "add the file, or fix the path"))
    return kept


def _turns(raw: dict[str, Any]) -> tuple[str, int] | None:
    """A field holding a conversation (a list of two or more strings) where the prompt should be."""
    return next(((k, len(v)) for k, v in raw.items() if isinstance(v, list) and len(v) > 1
                 and all(isinstance(t, str) for t in v) and k not in STATEMENT_KEYS and k != "files"), None)


def read_evals(data: Any, skill_dir: Path, *, skip_missing: bool = False) -> EvalSet:
    """The evals of a parsed ``evals.json`` and its defects; an eval with an error is left out.

    ``skill_dir`` is the folder ``files`` are relative to (the one that holds ``evals/``). With ``skip_missing`` a
    ``files`` entry that does not exist is dropped with a warning instead (as ``--skip-missing`` does for every
    format), so the eval still runs without it. Fields the schema does not define are named once per file (a
    warning), however many evals carry them.
    """
    found = eval_list(data)
    if found is None:
        keys = f" (its keys: {', '.join(map(str, data))})" if isinstance(data, dict) and data else ""
        return EvalSet(defects=[("error", EVALS_KEY, f"no list of evals with a prompt at the top level{keys}",
                                 f"write {EVALS_SHAPE}")])
    list_key, evals = found
    got = EvalSet(total=len(evals), list_key=list_key)
    out = got.defects
    unknown: dict[str, int] = {}
    first: dict[str, int] = {}
    for i, raw in enumerate(evals):
        if not isinstance(raw, dict):
            out.append(("error", f"{EVALS_KEY}[{i}]", "is not an object", "write {\"id\": …, \"prompt\": …}"))
            continue
        rid = raw.get("id")
        bad_id = isinstance(rid, bool) or not isinstance(rid, (int, str)) or (isinstance(rid, str) and not rid.strip())
        where = f"{EVALS_KEY}[{i}]" if bad_id else f"{EVALS_KEY}[id={rid}]"
        errors = len(out)
        if bad_id:
            out.append(("error", f"{where}.id", "missing required field" if rid is None else f"{rid!r} is not an "
                        "id", "give each eval a unique integer id"))
        elif str(rid) in first:
            out.append(("error", f"{where}.id", f"duplicate id {rid!r} (also {EVALS_KEY}[{first[str(rid)]}])",
                        "give each eval a unique integer id"))
        else:
            first[str(rid)] = i
        prompt_key = next((k for k in PROMPT_KEYS if k in raw), PROMPT_KEYS[0])
        if prompt_key not in raw and (turns := _turns(raw)):
            # one run replays one request: a scripted conversation cannot be asked as one prompt
            out.append(("warning", f"{where}.{turns[0]}", f"a conversation of {turns[1]} turns, not one prompt: "
                        "the eval is skipped", "write the request as one \"prompt\" to run it"))
            continue
        if problem := _prompt_problem(raw.get(prompt_key)):
            out.append(("error", f"{where}.{prompt_key}", problem, "write the task the user asks for"))
        expected = raw.get("expected_output", "")
        if not isinstance(expected, str):
            out.append(("error", f"{where}.expected_output", "not a string", "describe the expected result"))
        statements = _statements(raw, where, out)
        kept = _files(raw, where, skill_dir, skip_missing, out)
        for key in set(raw) - set(EVAL_KEYS):
            unknown[key] = unknown.get(key, 0) + 1
        if any(d[0] == "error" for d in out[errors:]):
            continue
        if not statements:
            got.ungraded.append(where)
        got.items.append(Item(str(rid), where, raw[prompt_key], statements, kept, expected))
    for key, n in sorted(unknown.items()):
        out.append(("warning", f"{EVALS_KEY}[].{key}", f"unknown field in {n} of {len(evals)} evals (not read)",
                    "see skill-creator's references/schemas.md for the fields skillbench reads"))
    if not evals:
        out.append(("error", EVALS_KEY, "is empty", "add at least one eval"))
    return got


def skill_name_defects(data: Any, names: tuple[str, ...]) -> list[ItemDefect]:
    """``skill_name`` beside the eval list: missing, or none of ``names`` (the skill's folder, its frontmatter name);
    warnings. No names: the skill did not load, nothing to compare."""
    if not isinstance(data, dict) or not names:
        return []
    name = data.get("skill_name")
    if not isinstance(name, str) or not name.strip():
        return [("warning", "skill_name", "missing", f"set \"skill_name\": \"{names[-1]}\"")]
    if name not in names:
        return [("warning", "skill_name", f"{name!r} is neither the skill's folder nor its frontmatter name "
                 f"({' / '.join(map(repr, dict.fromkeys(names)))})", f"set \"skill_name\": \"{names[-1]}\"")]
    return []


def query_key(query: str, should_trigger: bool) -> str:
    """``trigger-<8 hex>`` / ``dormant-<8 hex>`` of the query's text: stable when the set is reordered."""
    digest = hashlib.sha256(" ".join(query.split()).encode()).hexdigest()[:8]
    return f"{'trigger' if should_trigger else 'dormant'}-{digest}"


def query_list(data: Any) -> list[Any] | None:
    """A trigger set's queries as ``{"query", "should_trigger"}`` objects: the top-level list, the list under
    ``queries``, or the two lists under ``should_trigger`` / ``should_not_trigger`` (each query takes its list's
    side unless it says otherwise). None: none of these shapes."""
    if isinstance(data, list):
        return data
    if not isinstance(data, dict):
        return None
    if isinstance(data.get(QUERY_LIST_KEY), list):
        return data[QUERY_LIST_KEY]
    sides = [data.get(k) for k in SPLIT_KEYS]
    if not all(isinstance(side, list) for side in sides):
        return None
    return [{"should_trigger": should, **q} if isinstance(q, dict) else q
            for should, side in zip((True, False), sides, strict=True) for q in side]


def read_trigger_set(data: Any) -> tuple[list[Item], list[ItemDefect]]:
    """The queries of a parsed trigger eval set and its defects; a query with an error is left out."""
    queries = query_list(data)
    if queries is None:
        return [], [("error", "trigger set", "not a trigger eval set (a list of queries at the top level, under "
                     f"\"{QUERY_LIST_KEY}\", or under \"{SPLIT_KEYS[0]}\" and \"{SPLIT_KEYS[1]}\")",
                     f"write {TRIGGER_SHAPE}")]
    out: list[ItemDefect] = []
    items: list[Item] = []
    first: dict[str, int] = {}
    unknown: dict[str, int] = {}
    for i, raw in enumerate(queries):
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
        for key in set(raw) - set(QUERY_KEYS):
            unknown[key] = unknown.get(key, 0) + 1
        if any(d[0] == "error" for d in out[errors:]):
            continue
        items.append(Item(query_key(query, should), where, query, should_trigger=should))
    for key, n in sorted(unknown.items()):
        out.append(("warning", f"[].{key}", f"unknown field in {n} of {len(queries)} queries (not read)",
                    "keep query and should_trigger"))
    return items, out
