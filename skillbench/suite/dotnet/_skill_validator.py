"""The skill-validator format (dotnet/skills ``eng/skill-validator``): ``scenarios:`` of one ``eval.yaml``.

Each scenario becomes one :class:`~.stimulus.Draft`: ``setup.copy_test_files`` copies every file of the eval folder
but the spec, then ``setup.files`` (``path`` + ``source`` resolved from the skill's folder
``plugins/<plugin>/skills/<skill>/``, or inline ``content``) are laid over it; ``setup.commands`` are setup;
``assertions`` are checks, each read as the check type whose record lists its name (:attr:`CheckKind.dotnet`:
``exit_success`` means "produced non-empty output", ``output_nonempty``; ``output_matches`` patterns are
case-insensitive, as skill-validator matches them; ``file_contains`` / ``file_not_contains`` values compare
case-sensitively and ``output_contains`` / ``output_not_contains`` ones case-insensitively, as
``AssertionEvaluator`` compares them: :attr:`CheckKind.dotnet_case` written into ``case_sensitive``); the
rubric's strings are ``must`` items; ``expect_tools``/``reject_tools``/``max_turns`` are checks; ``timeout`` is
seconds. ``max_tokens``, the one field of its schema skillbench does not read, is an error saying why
(:mod:`.unsupported`); a key outside the schema is a warning, as skill-validator itself ignores it.
"""

from __future__ import annotations

from typing import Any

from skillbench.checktypes import check_kind, check_kinds, timeout_problem
from skillbench.suite._containment import dest_problem
from skillbench.suite.dotnet._stimulus import Draft, EvalContext, TaskDefect, add_tool_checks, string_list

# assertion type -> our check type, from the records (kept in registration order for the "use one of" hint)
ASSERTIONS: dict[str, str] = {name: kind.name for kind in check_kinds() for name in kind.dotnet}
IGNORE_CASE = "(?i)"  # Python's inline flag for skill-validator's case-insensitive output_matches
_TEXT_OPTIONS = ("value", "pattern")  # the README allows either key for a type that takes one of them
SCENARIO_KEYS = frozenset({"name", "prompt", "setup", "assertions", "rubric", "expect_tools", "reject_tools",
                           "max_turns", "max_tokens", "timeout", "expect_activation"})


def _files(draft: Draft, ctx: EvalContext, setup: dict[str, Any]) -> None:
    copied: dict[str, int] = {}
    if setup.get("copy_test_files") is True:
        for rel in ctx.test_files():
            if dest_problem(rel):  # the eval folder's own .claude/: never written into the CLI's project folder
                draft.warn("setup.copy_test_files", f"{rel!r} is not copied: {dest_problem(rel)}",
                           "move it out of .claude/ if the task needs it (the CLI never loads it from there)")
                continue
            copied[rel] = len(draft.workspace)
            draft.add("workspace", {"dest": rel, "src": rel}, "setup.copy_test_files", {"dest": "", "src": ""})
    elif "copy_test_files" in setup and setup["copy_test_files"] is not False:
        draft.error("setup.copy_test_files", f"{setup['copy_test_files']!r} is not true or false",
                    "write copy_test_files: true")
    files = setup.get("files") or []
    if not isinstance(files, list):
        draft.error("setup.files", "is not a list", "list entries of path + source (or content)")
        return
    for j, entry in enumerate(files):
        where = f"setup.files[{j}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            draft.error(where, "needs a 'path' (and a 'source' or 'content')", "write - path: x.txt / content: …")
            continue
        _ignored(draft, entry, ("path", "source", "content"), f"{where}.", "a file takes path, source, content")
        item: dict[str, Any] = {"dest": entry["path"]}
        if isinstance(entry.get("source"), str) and "content" not in entry:
            src, problem = ctx.resolve(ctx.skill_dir, entry["source"])
            if src is None:
                draft.error(f"{where}.source", problem, "name a file inside the tree (relative to the skill folder)")
                continue
            if not (ctx.eval_dir / src).exists() and not ctx.skip_missing:
                draft.error(f"{where}.source", f"fixture {entry['source']!r} is not in the tree (resolved from the "
                            f"skill folder {ctx.skill_dir})", "add the file, or fix the path")
            item["src"] = src
        elif isinstance(entry.get("content"), str):
            if "source" in entry:  # skill-validator writes the content and never reads the source (AgentRunner)
                draft.warn(f"{where}.source", "ignored: content is given too, and content wins (as in "
                           "skill-validator)", "remove the source, or the content")
            item["content"] = entry["content"]
        else:
            draft.error(where, "needs exactly one of 'source' and 'content' (text)",
                        "give the file's source or content")
            continue
        if entry["path"] in copied:  # files are applied after copy_test_files: this one wins
            idx = copied.pop(entry["path"])
            draft.workspace[idx] = item
            draft.origin[f"workspace[{idx}]"] = (where, {"dest": "path", "src": "source"})
            continue
        draft.add("workspace", item, where, {"dest": "path", "src": "source"})
    draft.add_commands(setup.get("commands"), "setup.commands")
    _ignored(draft, setup, ("files", "copy_test_files", "commands"), "setup.",
             "setup takes files, copy_test_files, commands")


def _ignored(draft: Draft, holder: dict[str, Any], known: tuple[str, ...], prefix: str, takes: str) -> None:
    """A warning per key outside skill-validator's schema: it ignores them too (IgnoreUnmatchedProperties), so
    they are no field of its that skillbench leaves out (those are errors: :mod:`.unsupported`)."""
    for key in sorted(set(holder) - set(known), key=str):
        draft.warn(f"{prefix}{key}", "not a skill-validator field: ignored (skill-validator ignores it too)",
                   f"remove it, or fix its name ({takes})")


def _assertions(draft: Draft, assertions: Any) -> None:
    if not isinstance(assertions, list):
        draft.error("assertions", "is not a list", "list assertions as - type: output_contains / value: …")
        return
    for j, raw in enumerate(assertions):
        where = f"assertions[{j}]"
        kind = raw.get("type") if isinstance(raw, dict) else None
        if kind not in ASSERTIONS:
            draft.error(f"{where}.type", f"unknown assertion type {kind!r}", "use one of: " + ", ".join(ASSERTIONS))
            continue
        ours = check_kind(ASSERTIONS[kind])
        check: dict[str, Any] = {"type": ours.name}
        text = [o for o in ours.needs if o in _TEXT_OPTIONS]
        for option in ours.needs:
            value = raw.get(option)
            if value is None and text == [option] and "path" not in ours.needs:
                value = raw.get(_TEXT_OPTIONS[option == "value"])
            check[option] = value
        check = {k: v for k, v in check.items() if v is not None}
        if ours.dotnet_case is not None:  # graded by skill-validator's own case rule, not our format's default
            check["case_sensitive"] = ours.dotnet_case
        if isinstance(check.get("pattern"), str) and not check["pattern"].startswith(IGNORE_CASE):
            # skill-validator matches output with RegexOptions.IgnoreCase (AssertionEvaluator.EvalOutputMatches)
            check["pattern"] = IGNORE_CASE + check["pattern"]
        _ignored(draft, raw, ("type", "value", "pattern", "path"), f"{where}.",
                 "an assertion takes type, path, value, pattern")
        draft.add("checks", check, where)


def load_scenarios(data: dict[str, Any], ctx: EvalContext) -> tuple[list[Draft], list[TaskDefect]]:
    """Every scenario of a skill-validator spec as a draft, and the file's own defects."""
    defects: list[TaskDefect] = []
    for key in sorted(set(data) - {"scenarios"}):
        defects.append(("warning", key, "not a skill-validator field: ignored", "remove it"))
    scenarios = data.get("scenarios")
    if not isinstance(scenarios, list) or not scenarios:
        return [], [*defects, ("error", "scenarios", "is not a non-empty list", "list the scenarios")]
    drafts = []
    for i, raw in enumerate(scenarios):
        if not isinstance(raw, dict):
            defects.append(("error", f"scenarios[{i}]", "is not a mapping", "give it name, prompt, rubric"))
            continue
        name = raw.get("name") if isinstance(raw.get("name"), str) else ""
        draft = Draft("scenarios", i, name, raw, prompt=raw.get("prompt"),
                      expect_activation=raw.get("expect_activation", True))
        rubric = string_list(raw.get("rubric", []))
        if rubric is None:
            draft.error("rubric", "is not a list of strings", "write each rubric item as one string")
        draft.rubric = rubric or []
        setup = raw.get("setup") or {}
        if isinstance(setup, dict):
            _files(draft, ctx, setup)
        else:
            draft.error("setup", "is not a mapping", "give setup: files / copy_test_files / commands")
        _assertions(draft, raw.get("assertions") or [])
        add_tool_checks(draft, raw, "")
        if "timeout" in raw:
            value = raw["timeout"]
            if problem := timeout_problem(value):
                draft.error("timeout", problem, "write timeout: 120 (seconds, at most a day)")
            else:
                draft.timeout = float(value)
        _ignored(draft, raw, tuple(SCENARIO_KEYS), "", "a scenario takes " + ", ".join(sorted(SCENARIO_KEYS)))
        drafts.append(draft)
    return drafts, defects
