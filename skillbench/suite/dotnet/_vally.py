"""The Vally format (``eval.yaml`` / ``eval.vally.yaml`` with ``stimuli:``), as dotnet/skills writes it.

Top level: ``name``, ``description``, ``version``, ``type``, ``tags``, ``defaults`` (``timeout`` a duration such
as ``6m``, ``runs`` the suite's reps unless ``--reps`` is given), a root ``environment`` (merged into every
stimulus first), ``stimuli``. Each stimulus becomes one :class:`~.stimulus.Draft`: ``environment.files`` (``src``
relative to the eval folder, ``dest``) and ``environment.commands`` are the workspace and setup; ``graders``
(options under ``config:``) are checks, each read as the check type whose record lists its name
(:attr:`CheckKind.vally`; ``negate: true`` turns a ``file-*`` grader into its ``file-not-*`` form, ``tool-calls``
with plain names becomes ``expect_tools`` / ``reject_tools``; a ``*-contains`` check compares by Vally's case rule,
:attr:`CheckKind.dotnet_case`, or by the ``case_sensitive`` its config gives), but the ``prompt`` grader is the
rubric judge itself; the rubric's strings are ``must`` items; ``constraints`` carry tool and turn checks;
``golden_trajectory.inline`` (ATIF) gives the simulated endpoint its reference answer. Every other field or grader
Vally defines is refused in one line with why (:mod:`.unsupported`), as Vally's own lint refuses a key it does not
know.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from skillbench.checktypes import check_kind, check_kinds
from skillbench.suite.dotnet._authoring import constraint_defects, grader_config_defects, top_level_defects
from skillbench.suite.dotnet._stimulus import (
    Draft,
    EvalContext,
    TaskDefect,
    add_tool_checks,
    parse_duration,
    string_list,
)
from skillbench.suite.dotnet._unsupported import UNSUPPORTED_GRADERS, unsupported_defects

# grader type -> (our check type, {config key: our option}), from the check types' records; "prompt" is the rubric
# judge (no check)
GRADERS: dict[str, tuple[str, dict[str, str]]] = {
    grader: (kind.name, dict(config)) for kind in check_kinds() for grader, config in kind.vally.items()}
JUDGE_GRADER = "prompt"
TOOL_CALLS = "tool-calls"  # read as expect_tools / reject_tools checks (one grader, up to two checks)
TOOL_NAME = re.compile(r"^[A-Za-z_][\w-]*$")  # a plain tool name: no regex, so the alias table can compare it
NEGATABLE = frozenset({"file-exists", "file-contains", "file-matches"})  # Vally's graders that take negate: true
STIMULUS_KEYS = frozenset({"name", "prompt", "tags", "environment", "graders", "rubric", "constraints",
                           "expect_activation", "golden_trajectory", "timeout", "expect_tools", "reject_tools",
                           "max_turns", "max_tokens"})
TOP_KEYS = frozenset({"name", "description", "version", "type", "defaults", "tags", "stimuli", "config",
                      "environment"})
ROOT_ENVIRONMENT = "environment (the eval's root)"  # how a stimulus names the files and commands it merged from it


def tag_strings(tags: Any) -> tuple[str, ...]:
    """``{risk: high}`` → ``("risk=high",)``; a list of strings is kept as it is."""
    if isinstance(tags, dict):
        return tuple(f"{k}={v}" for k, v in tags.items())
    if isinstance(tags, list):
        return tuple(str(t) for t in tags)
    return ()


def reference_answer(trajectory: dict[str, Any]) -> str:
    """The agent messages of an inline ATIF trajectory, joined: the simulated endpoint's reference answer."""
    steps = trajectory.get("steps") if isinstance(trajectory, dict) else None
    messages = [s.get("message") for s in steps or [] if isinstance(s, dict) and s.get("source") == "agent"]
    return "\n\n".join(m for m in messages if isinstance(m, str))


def _environment(draft: Draft, ctx: EvalContext, env: Any, field: str = "environment", base: int = 0) -> None:
    """``env``'s files and commands into ``draft``, named ``field``; a file whose ``dest`` one of the first
    ``base`` workspace entries (the eval's root environment, laid down first) also writes replaces it there."""
    if not isinstance(env, dict):
        draft.error(field, "is not a mapping", "give environment: files / commands")
        return
    files = env.get("files") or []
    for j, entry in enumerate(files if isinstance(files, list) else [None]):
        where = f"{field}.files[{j}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("src"), str) or not isinstance(entry.get("dest"),
                                                                                                   str):
            draft.error(where, "needs 'src' and 'dest'", "write - src: fixtures/a.txt / dest: logs/a.txt")
            continue
        src, problem = ctx.resolve(ctx.eval_dir, entry["src"])
        if src is None:
            draft.error(f"{where}.src", problem, "name a file inside the tree (relative to the eval folder)")
            continue
        if not (ctx.eval_dir / src).exists() and not ctx.skip_missing:
            draft.error(f"{where}.src", f"{entry['src']!r} is named by the spec but the tree does not hold it",
                        "add the file (a data-only copy leaves code out: see its PROVENANCE), or fix the path")
        shadowed = next((k for k, w in enumerate(draft.workspace[:base]) if w.get("dest") == entry["dest"]), None)
        if shadowed is None:
            draft.add("workspace", {"dest": entry["dest"], "src": src}, where)
        else:  # the stimulus's environment is merged over the root's: its file wins
            draft.workspace[shadowed] = {"dest": entry["dest"], "src": src}
            draft.origin[f"workspace[{shadowed}]"] = (where, {})
        draft.refuse_unsupported(entry, ("src", "dest"), f"{where}.", "environment.files", "a file takes src, dest")
    draft.add_commands(env.get("commands"), f"{field}.commands")
    draft.refuse_unsupported(env, ("files", "commands"), f"{field}.", "environment",
                             "environment takes files, commands")


def _negated(kind: str, config: Any) -> str | None:
    """The grader a ``negate: true`` config turns ``kind`` into (``file-exists`` → ``file-not-exists``); ``kind``
    itself without one; None for a negate that is not true or false, or on a grader that has no negation."""
    negate = config.get("negate", False) if isinstance(config, dict) else False
    if negate is False:
        return kind
    if negate is True and kind in NEGATABLE:
        return kind.replace("file-", "file-not-", 1)
    return None


def _run_command(check: dict[str, Any], config: dict[str, Any]) -> tuple[str, str, str] | None:
    """run-command's ``args`` (joined, shell-quoted, onto ``command``: the same argv without Vally's exec) and
    its duration ``timeout``; ``(key, problem, fix)`` for a bad one."""
    args = config.get("args")
    if args is not None:
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            return "args", f"{args!r} is not a list of strings", "write args: [validate.js, --strict]"
        check["command"] = shlex.join([str(check.get("command", "")), *args])
    if isinstance(check.get("timeout"), str):
        seconds = parse_duration(check["timeout"])
        if seconds is None:
            return "timeout", f"{check['timeout']!r} is not a duration (above 0, at most a day)", "write 30s or 2m"
        check["timeout"] = seconds
    return None


def _tool_calls(draft: Draft, where: str, config: Any) -> None:
    """Vally's ``tool-calls`` in the form a tool-name check can keep: ``required`` / ``disallowed`` lists of plain
    tool names (or ``{name: …}``) → ``expect_tools`` / ``reject_tools``. A regex name, an argument filter or
    ``sequence`` is one error each: Copilot's tool names and arguments are not Claude Code's."""
    if not isinstance(config, dict) or not ({"required", "disallowed"} & set(config)):
        draft.error(f"{where}.config", "tool-calls needs required or disallowed", "add required: [bash]")
        return
    draft.refuse_unsupported(config, ("required", "disallowed"), f"{where}.config.", "tool-calls",
                             "tool-calls is read with required, disallowed (plain tool names)")
    for key, ours in (("required", "expect_tools"), ("disallowed", "reject_tools")):
        if key not in config:
            continue
        entries = config[key] if isinstance(config[key], list) else [None]
        names = [e.get("name") if isinstance(e, dict) and set(e) == {"name"} else e for e in entries]
        bad = next((j for j, n in enumerate(names) if not isinstance(n, str) or not TOOL_NAME.match(n)), None)
        if bad is not None or not names:
            draft.error(f"{where}.config.{key}" + (f"[{bad}]" if bad is not None else ""),
                        "not supported: only plain tool names are read (a regex, an argument filter, min_count, "
                        "final or a step means Copilot's tools and steps, not Claude Code's)",
                        f"write {key}: [bash, edit] (Claude Code names or the alias table's)")
            continue
        draft.add("checks", {"type": ours, "tools": names}, f"{where}.config.{key}", {"tools": ""})


def _graders(draft: Draft, graders: Any) -> None:
    if not isinstance(graders, list):
        draft.error("graders", "is not a list", "list graders as - type: output-matches / config: {pattern: …}")
        return
    for j, raw in enumerate(graders):
        where = f"graders[{j}]"
        kind = raw.get("type") if isinstance(raw, dict) else None
        if kind == JUDGE_GRADER:
            continue  # the rubric judge: the stimulus's rubric is judged blind, no check
        if kind == TOOL_CALLS:
            _tool_calls(draft, where, raw.get("config"))
            draft.refuse_unsupported(raw, ("type", "config"), f"{where}.", "grader", "a grader takes type, config")
            continue
        if isinstance(kind, str) and kind in UNSUPPORTED_GRADERS:
            draft.error(f"{where}.type", f"grader {kind!r} is not supported: {UNSUPPORTED_GRADERS[kind]}",
                        "remove it, or use one of: " + ", ".join([*GRADERS, TOOL_CALLS, JUDGE_GRADER]))
            continue
        if kind not in GRADERS:
            draft.error(f"{where}.type", f"unknown grader type {kind!r}",
                        "use one of: " + ", ".join([*GRADERS, TOOL_CALLS, JUDGE_GRADER]))
            continue
        problems = grader_config_defects(kind, raw)
        for sub, problem, fix in problems:
            draft.error(f"{where}{sub}", problem, fix)
        if problems:
            continue
        config = raw.get("config") or {}
        read_as = _negated(kind, config)
        if read_as is None:
            if kind in NEGATABLE:
                draft.error(f"{where}.config.negate", f"{config.get('negate')!r} is not true or false",
                            "write negate: true, or remove it")
            else:
                draft.error(f"{where}.config.negate", f"{kind} has no negate option (only "
                            f"{', '.join(sorted(NEGATABLE))} have)", "remove it, or use the grader's -not- form")
            continue
        ours, options = GRADERS[read_as]
        check: dict[str, Any] = {"type": ours}
        known = [*options, *(("negate",) if kind in NEGATABLE else ()), *(("args",) if kind == "run-command" else ())]
        for key, value in config.items():
            if key in options:
                check[options[key]] = value
        if (case := check_kind(ours).dotnet_case) is not None:  # Vally's own rule unless its config names one
            check.setdefault("case_sensitive", case)
        takes = f"{kind} takes " + (", ".join(known) or "no config")
        draft.refuse_unsupported(config, known, f"{where}.config.", kind, takes)
        if kind == "run-command" and (bad := _run_command(check, config)):
            draft.error(f"{where}.config.{bad[0]}", bad[1], bad[2])
            continue
        draft.refuse_unsupported(raw, ("type", "config"), f"{where}.", "grader", "a grader takes type, config")
        draft.add("checks", check, f"{where}.config", {v: k for k, v in options.items()})


def load_stimuli(data: dict[str, Any], ctx: EvalContext) -> tuple[list[Draft], list[TaskDefect], dict[str, Any]]:
    """Every stimulus of a Vally spec as a draft, the file's own defects, and its eval-level fields."""
    defects: list[TaskDefect] = list(top_level_defects(data))
    for key, problem, fix in unsupported_defects(data, TOP_KEYS, "eval", "an eval takes " + ", ".join(sorted(
            TOP_KEYS))):
        defects.append(("error", key, problem, fix))
    defaults = data.get("defaults", data.get("config"))  # config: the deprecated alias, when it stands alone
    defaults = defaults if isinstance(defaults, dict) else {}
    default_timeout = None
    if "timeout" in defaults:
        default_timeout = parse_duration(defaults["timeout"])
        if default_timeout is None:
            defects.append(("error", "defaults.timeout", f"{defaults['timeout']!r} is not a duration (above 0, at "
                            "most a day)", "write e.g. 6m, 90s or 1h"))
    runs = defaults.get("runs")
    if runs is not None and (isinstance(runs, bool) or not isinstance(runs, int) or runs < 1):
        defects.append(("error", "defaults.runs", f"{runs!r} is not a positive whole number", "write runs: 3"))
        runs = None
    for key, problem, fix in unsupported_defects(defaults, ("timeout", "runs"), "defaults", "defaults take timeout, "
                                                 "runs; set the rest in skillbench.toml or on the command line"):
        defects.append(("error", f"defaults.{key}", problem, fix))
    meta = {"name": data.get("name"), "description": data.get("description"), "type": data.get("type"),
            "tags": tag_strings(data.get("tags")), "runs": runs}
    root_env = data.get("environment")
    if root_env is not None:
        root = Draft("stimuli", 0, "", {})
        _environment(root, ctx, root_env)
        defects += [(severity, where.removeprefix("stimuli[0]."), problem, fix)
                    for severity, where, problem, fix in root.defects]
    stimuli = data.get("stimuli")
    if not isinstance(stimuli, list) or not stimuli:
        return [], [*defects, ("error", "stimuli", "is not a non-empty list", "list the stimuli")], meta
    drafts = []
    for i, raw in enumerate(stimuli):
        if not isinstance(raw, dict):
            defects.append(("error", f"stimuli[{i}]", "is not a mapping", "give it name, prompt, rubric"))
            continue
        name = raw.get("name") if isinstance(raw.get("name"), str) else ""
        draft = Draft("stimuli", i, name, raw, prompt=raw.get("prompt"),
                      expect_activation=raw.get("expect_activation", True), timeout=default_timeout,
                      tags=(*meta["tags"], *tag_strings(raw.get("tags"))))
        rubric = string_list(raw.get("rubric", []))
        if rubric is None:
            draft.error("rubric", "is not a list of strings", "write each rubric item as one string")
        draft.rubric = rubric or []
        if root_env is not None:  # Vally merges the root environment into every stimulus, before its own
            before = len(draft.defects)
            _environment(draft, ctx, root_env, ROOT_ENVIRONMENT)
            del draft.defects[before:]  # reported once, for the file, above
        if "environment" in raw:
            _environment(draft, ctx, raw["environment"], base=len(draft.workspace))
        _graders(draft, raw.get("graders") or [])
        add_tool_checks(draft, raw, "")  # the older spelling, beside the stimulus's other fields
        constraints = raw.get("constraints") or {}
        if isinstance(constraints, dict):
            add_tool_checks(draft, constraints, "constraints.")
            for sub, severity, problem, fix in constraint_defects(constraints, draft.expect_activation):
                draft.defects.append((severity, draft.where(f"constraints.{sub}"), problem, fix))
        else:
            draft.error("constraints", "is not a mapping", "give constraints: reject_tools / expect_tools")
        if "timeout" in raw:
            draft.timeout = parse_duration(raw["timeout"])
            if draft.timeout is None:
                draft.error("timeout", f"{raw['timeout']!r} is not a duration (above 0, at most a day)",
                            "write e.g. 6m, 90s or 1h")
        golden = raw.get("golden_trajectory")
        if isinstance(golden, dict):
            draft.reference_answer = reference_answer(golden.get("inline") or {})
            draft.refuse_unsupported(golden, ("inline",), "golden_trajectory.", "golden_trajectory",
                                     "only an inline ATIF trajectory is read: inline it, or drop it")
        draft.refuse_unsupported(raw, STIMULUS_KEYS, "", "stimulus", "a stimulus takes " + ", ".join(sorted(
            STIMULUS_KEYS)))
        drafts.append(draft)
    return drafts, defects, meta
