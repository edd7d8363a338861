"""dotnet's authoring gate (``eng/eval-quality``), as preflight defects: the structural mistakes that make an eval
measure less than it seems while it still parses.

Duplicate YAML keys are refused by :mod:`.yaml_strict`; a fixture or grader script the spec names but the tree
lacks, by the loaders; the rest is here: a grader that needs options but has ``config: {}``/``config: null`` (it
enforces nothing), a deprecated top-level ``config:`` beside ``defaults:``, a dormancy guard that rejects every
skill (``reject_skills: ["*"]`` makes the skilled arm the baseline), duplicate stimulus names (ambiguous pairing
slots), and the underpowered eval (fewer than 5 preference-eligible stimuli: no record can pass the sign test) —
a warning, listed as instrument debt.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from skillbench.suite.dotnet._stimulus import Draft, TaskDefect
from skillbench.suite.dotnet._unsupported import UNSUPPORTED_FIELDS, unsupported_defects

# grader type -> the config key it cannot do without (graders absent here, such as prompt and exit-success, need none)
GRADER_REQUIRED: dict[str, str] = {
    "output-matches": "pattern", "output-not-matches": "pattern", "output-contains": "substring",
    "output-not-contains": "substring", "run-command": "command", "file-exists": "path", "file-not-exists": "path",
    "file-contains": "path", "file-not-contains": "path", "file-matches": "path", "file-not-matches": "path",
    "turn-count": "max", "tool-call-count": "max",
}
INSTRUMENT_DEBT = "instrument debt"
# the constraint keys read elsewhere (tool and turn checks; max_tokens and reject_skills refused with their reason)
CONSTRAINT_KEYS = frozenset({"reject_tools", "expect_tools", "max_turns", "max_tokens", "reject_skills"})


def grader_config_defects(kind: str, raw: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(sub-field, problem, fix)`` for a grader whose options are absent, empty or lack the required key."""
    need = GRADER_REQUIRED.get(kind)
    if need is None:
        return []
    config = raw.get("config")
    if not config:
        shown = "absent" if "config" not in raw else f"{config!r}".replace("None", "null")
        return [(".config", f"{kind} has config {shown}: it enforces nothing",
                 f"put its {need} under config: (an indentation slip often moves it to the next grader)")]
    if not isinstance(config, dict):
        return [(".config", f"{config!r} is not a mapping", f"write config: {{{need}: …}}")]
    value = config.get(need)
    if value is None or (isinstance(value, str) and not value.strip()):
        return [(f".config.{need}", f"{kind} needs a non-empty {need}", f"add {need}: under config:")]
    return []


def top_level_defects(data: dict[str, Any]) -> list[TaskDefect]:
    """The deprecated ``config:`` block beside ``defaults:`` (Vally refuses the spec; dotnet's CI reads it as a
    transient failure), or alone (a warning: it is read as ``defaults``)."""
    if "config" not in data:
        return []
    if "defaults" in data:
        return [("error", "config", "the deprecated 'config' block stands beside 'defaults' (Vally refuses the spec)",
                 "move every setting into one defaults: block and delete config:")]
    return [("warning", "config", "'config' is a deprecated alias of 'defaults' (read as defaults)",
             "rename config: to defaults:")]


def constraint_defects(constraints: dict[str, Any], expect_activation: Any) -> list[tuple[str, str, str, str]]:
    """``(sub-field, severity, problem, fix)`` of a stimulus's constraints that are not tool or turn checks."""
    out: list[tuple[str, str, str, str]] = []
    if "reject_skills" in constraints:
        skills = constraints["reject_skills"]
        if isinstance(skills, list) and "*" in skills:
            guard = "a dormancy guard" if expect_activation is False else "a stimulus"
            out.append(("reject_skills", "error", f"{guard} rejects every skill (reject_skills: ['*']): the skilled "
                        "arm becomes the baseline and the contract measures nothing",
                        "delete reject_skills; expect_activation: false alone is the dormancy contract"))
        else:
            out.append(("reject_skills", "error", "not supported: " + UNSUPPORTED_FIELDS["constraints.reject_skills"],
                        "remove it"))
    for key, problem, fix in unsupported_defects(constraints, CONSTRAINT_KEYS, "constraints",
                                                 "constraints take expect_tools, reject_tools, max_turns"):
        out.append((key, "error", problem, fix))
    return out


def duplicate_name_defects(drafts: list[Draft]) -> list[TaskDefect]:
    """Two stimuli of one eval with one name: Vally pairs arms by (stimulus name, trial), so the slots collide."""
    counts = Counter(d.name for d in drafts if d.name)
    out: list[TaskDefect] = []
    seen: set[str] = set()
    for draft in drafts:
        if not draft.name:
            out.append(("error", draft.where("name"), "is missing", "give every stimulus a unique name"))
        elif counts[draft.name] > 1 and draft.name in seen:
            first = next(d for d in drafts if d.name == draft.name)
            out.append(("error", draft.where("name"), f"duplicate stimulus name (also {first.where()})",
                        "give every stimulus of the eval its own name"))
        seen.add(draft.name)
    return out


def underpowered_defect(eligible: int, total: int, minimum: int) -> TaskDefect | None:
    """The underpowered-eval warning (instrument debt), or None when the eval has enough eligible stimuli."""
    if eligible >= minimum:
        return None
    return ("warning", "stimuli", f"underpowered ({INSTRUMENT_DEBT}): {eligible} preference-eligible of {total} "
            f"stimuli; the paired sign test cannot pass below {minimum}",
            f"add preference-eligible stimuli (not expect_activation: false) until there are {minimum}")
