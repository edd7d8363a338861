"""The Vally format (``eval.yaml`` / ``eval.vally.yaml`` with ``stimuli:``), as dotnet/skills writes it.

Top level: ``name``, ``description``, ``type``, ``tags``, ``defaults`` (``timeout`` a duration such as ``6m``,
``runs`` the suite's reps unless ``--reps`` is given), ``stimuli``. Each stimulus becomes one
:class:`~.stimulus.Draft`: ``environment.files`` (``src`` relative to the eval folder, ``dest``) and
``environment.commands`` are the workspace and setup; ``graders`` (options under ``config:``) are checks, but the
``prompt`` grader is the rubric judge itself; the rubric's strings are ``must`` items; ``constraints`` carry tool
and turn checks; ``golden_trajectory.inline`` (ATIF) gives the simulated endpoint its reference answer.
"""

from __future__ import annotations

from typing import Any

from skillbench.checktypes import check_kinds
from skillbench.suite.dotnet._authoring import constraint_defects, grader_config_defects, top_level_defects
from skillbench.suite.dotnet._stimulus import (
    Draft,
    EvalContext,
    TaskDefect,
    add_tool_checks,
    parse_duration,
    string_list,
)

# grader type -> (our check type, {config key: our option}), from the check types' records; "prompt" is the rubric
# judge (no check)
GRADERS: dict[str, tuple[str, dict[str, str]]] = {
    grader: (kind.name, dict(config)) for kind in check_kinds() for grader, config in kind.vally.items()}
JUDGE_GRADER = "prompt"
STIMULUS_KEYS = frozenset({"name", "prompt", "tags", "environment", "graders", "rubric", "constraints",
                           "expect_activation", "golden_trajectory", "timeout", "expect_tools", "reject_tools",
                           "max_turns", "max_tokens"})
TOP_KEYS = frozenset({"name", "description", "type", "defaults", "tags", "stimuli", "config"})


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


def _environment(draft: Draft, ctx: EvalContext, env: Any) -> None:
    if not isinstance(env, dict):
        draft.error("environment", "is not a mapping", "give environment: files / commands")
        return
    files = env.get("files") or []
    for j, entry in enumerate(files if isinstance(files, list) else [None]):
        where = f"environment.files[{j}]"
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
        draft.add("workspace", {"dest": entry["dest"], "src": src}, where)
        for key in sorted(set(entry) - {"src", "dest"}):
            draft.warn(f"{where}.{key}", "not supported: ignored", "remove it (a file takes src and dest)")
    draft.add_commands(env.get("commands"), "environment.commands")
    draft.warn_unsupported(env, ("files", "commands"), "environment.", "environment takes files, commands")


def _graders(draft: Draft, graders: Any) -> None:
    if not isinstance(graders, list):
        draft.error("graders", "is not a list", "list graders as - type: output-matches / config: {pattern: …}")
        return
    for j, raw in enumerate(graders):
        where = f"graders[{j}]"
        kind = raw.get("type") if isinstance(raw, dict) else None
        if kind == JUDGE_GRADER:
            continue  # the rubric judge: the stimulus's rubric is judged blind, no check
        if kind not in GRADERS:
            draft.warn(f"{where}.type", f"grader type {kind!r} is not supported: it is not graded",
                       "use one of: " + ", ".join([*GRADERS, JUDGE_GRADER]))
            continue
        problems = grader_config_defects(kind, raw)
        for sub, problem, fix in problems:
            draft.error(f"{where}{sub}", problem, fix)
        if problems:
            continue
        ours, options = GRADERS[kind]
        config = raw.get("config") or {}
        check: dict[str, Any] = {"type": ours}
        for key, value in config.items():
            if key in options:
                check[options[key]] = value
            else:
                draft.warn(f"{where}.config.{key}", f"not an option of {kind}: ignored", "remove it")
        draft.warn_unsupported(raw, ("type", "config"), f"{where}.")
        draft.add("checks", check, f"{where}.config", {v: k for k, v in options.items()})


def load_stimuli(data: dict[str, Any], ctx: EvalContext) -> tuple[list[Draft], list[TaskDefect], dict[str, Any]]:
    """Every stimulus of a Vally spec as a draft, the file's own defects, and its eval-level fields."""
    defects: list[TaskDefect] = list(top_level_defects(data))
    for key in sorted(set(data) - TOP_KEYS):
        defects.append(("warning", key, "not a Vally eval field: ignored", "remove it"))
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
    for key in sorted(set(defaults) - {"timeout", "runs"}):
        defects.append(("warning", f"defaults.{key}", "not supported: ignored", "remove it, or set it in skillbench's "
                        "config ([run] in skillbench.toml) or on the command line"))
    meta = {"name": data.get("name"), "description": data.get("description"), "type": data.get("type"),
            "tags": tag_strings(data.get("tags")), "runs": runs}
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
        if "environment" in raw:
            _environment(draft, ctx, raw["environment"])
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
            for key in sorted(set(golden) - {"inline"}):
                draft.warn(f"golden_trajectory.{key}", "not supported: ignored (only an inline ATIF trajectory is "
                           "read)", "inline the trajectory, or drop it")
        for key in sorted(set(raw) - STIMULUS_KEYS):
            draft.warn(key, "not a Vally stimulus field: ignored", "remove it, or fix its name")
        drafts.append(draft)
    return drafts, defects, meta
