"""One stimulus as a loader reads it: the prompt's fields in skillbench's terms, and where each came from.

Both dotnet formats (:mod:`.skill_validator`, :mod:`.vally`) fill a :class:`Draft`; :mod:`.layout` validates it as
a :class:`~skillbench.suite._format.TestPrompt` and names every defect by the spec's own field
(``stimuli[3] (Find the process…).graders[4].config.command``), never by ours.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillbench.checktypes import timeout_problem
from skillbench.suite.dotnet._unsupported import UNSUPPORTED_FIELDS, unsupported_defects

TaskDefect = tuple[str, str, str, str]  # severity, field, problem, fix
SPEC_NAMES = ("eval.vally.yaml", "eval.yaml")  # never copied into a workspace, shadowed or not
_DURATION = re.compile(r"^\s*(?:(\d+(?:\.\d+)?)h)?\s*(?:(\d+(?:\.\d+)?)m)?\s*(?:(\d+(?:\.\d+)?)s?)?\s*$")


def parse_duration(value: Any) -> float | None:
    """Seconds of ``120``, ``"90s"``, ``"6m"``, ``"1h30m"``; None when it is not a duration a run may wait
    (the timeout rule, :func:`skillbench.checktypes.timeout_problem`: finite, above 0, at most a day)."""
    if isinstance(value, str) and value.strip():
        match = _DURATION.match(value)
        if not match or not any(match.groups()):
            return None
        h, m, s = (float(g) if g else 0.0 for g in match.groups())
        value = h * 3600 + m * 60 + s
    return None if timeout_problem(value) else float(value)


@dataclass(frozen=True)
class EvalContext:
    """Where one eval spec sits: the file, the tree root, and the plugin and skill its folder names."""

    path: Path
    root: Path
    plugin: str
    skill: str
    skip_missing: bool = False  # --skip-missing: a missing fixture is dropped with what uses it, not an error

    @property
    def eval_dir(self) -> Path:
        return self.path.parent

    @property
    def skill_dir(self) -> Path:
        """``ROOT/plugins/<plugin>/skills/<skill>/``, where skill-validator resolves a ``source`` from."""
        return self.root / "plugins" / self.plugin / "skills" / self.skill

    def resolve(self, base: Path, raw: str) -> tuple[str | None, str]:
        """A fixture path as ``(src relative to the eval folder, problem)``; None and why when it leaves the tree."""
        target = Path(os.path.normpath(base / raw))
        root = Path(os.path.normpath(self.root))
        if Path(raw).is_absolute() or not target.is_relative_to(root):
            return None, f"{raw!r} leaves the tree root {root}"
        return os.path.relpath(target, os.path.normpath(self.eval_dir)), ""

    def test_files(self) -> list[str]:
        """Every file of the eval folder but the spec files, relative and sorted (``copy_test_files``)."""
        out = []
        for path in sorted(self.eval_dir.rglob("*")):
            rel = path.relative_to(self.eval_dir).as_posix()
            if path.is_file() and rel not in SPEC_NAMES:
                out.append(rel)
        return out


@dataclass
class Draft:
    """One stimulus, field by field in skillbench's terms, with the spec field each came from."""

    section: str  # "scenarios" or "stimuli"
    index: int
    name: str
    raw: dict[str, Any]
    prompt: Any = None
    rubric: list[Any] = field(default_factory=list)
    expect_activation: Any = True
    workspace: list[dict[str, Any]] = field(default_factory=list)
    setup: list[Any] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)
    timeout: float | None = None
    tags: tuple[str, ...] = ()
    reference_answer: str = ""
    defects: list[TaskDefect] = field(default_factory=list)
    # our field prefix ("checks[2]") -> (the spec's field, our option name -> the spec's)
    origin: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)

    def where(self, sub: str = "") -> str:
        head = f"{self.section}[{self.index}] ({self.name})" if self.name else f"{self.section}[{self.index}]"
        return f"{head}.{sub}" if sub else head

    def error(self, sub: str, problem: str, fix: str) -> None:
        self.defects.append(("error", self.where(sub), problem, fix))

    def warn(self, sub: str, problem: str, fix: str) -> None:
        self.defects.append(("warning", self.where(sub), problem, fix))

    def add(self, kind: str, value: Any, spec_field: str, renames: dict[str, str] | None = None) -> None:
        """Append to ``workspace``/``setup``/``checks``, remembering the spec field it came from."""
        items = getattr(self, kind)
        self.origin[f"{kind}[{len(items)}]"] = (spec_field, renames or {})
        items.append(value)

    def add_commands(self, commands: Any, spec_field: str) -> None:
        """Each of ``commands`` (a list, or one command) as a setup command, named ``<spec_field>[j]``."""
        for j, command in enumerate(commands if isinstance(commands, list) else [commands] if commands else []):
            self.add("setup", command, f"{spec_field}[{j}]")

    def refuse_unsupported(self, holder: dict[str, Any], known: Iterable[str], prefix: str, kind: str,
                           takes: str) -> None:
        """One error per key of ``holder`` the format reads nothing from, with why (:mod:`.unsupported`)."""
        for key, problem, fix in unsupported_defects(holder, known, kind, takes):
            self.error(f"{prefix}{key}", problem, fix)

    def spec_field(self, ours: str) -> str:
        """Our field (``checks[2].pattern``, ``timeout``) as the spec's, labelled with the stimulus."""
        match = re.match(r"^(\w+\[\d+\])(?:\.(\w+))?(.*)$", ours)
        if match and match.group(1) in self.origin:
            spec, renames = self.origin[match.group(1)]
            option = match.group(2)
            mapped = renames.get(option, option) if option else ""
            tail = f".{mapped}" if mapped else ""
            return self.where(spec + tail + match.group(3))
        return self.where(ours)

    def test_fields(self, name: str, plugin: str, skill_url: str) -> dict[str, Any]:
        """The :class:`~skillbench.suite._format.TestPrompt` fields, ready to validate."""
        out: dict[str, Any] = {
            "name": name, "product_area": plugin, "skill_url": skill_url, "prompt": self.prompt,
            "rubric": [{"type": "must", "text": t, "absence": None} if isinstance(t, str) else t for t in self.rubric],
            "expect_activation": self.expect_activation, "workspace": self.workspace, "setup": self.setup,
            "checks": self.checks,
        }
        if self.timeout is not None:
            out["timeout"] = self.timeout
        return out


def string_list(value: Any) -> list[str] | None:
    """A list of strings (a lone string is a list of one), else None."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def add_tool_checks(draft: Draft, holder: dict[str, Any], prefix: str) -> None:
    """``expect_tools`` / ``reject_tools`` / ``max_turns`` / ``max_tokens`` of a scenario or ``constraints``."""
    for key in ("expect_tools", "reject_tools"):
        if key not in holder:
            continue
        tools = string_list(holder[key])
        if not tools:
            draft.error(f"{prefix}{key}", "is not a list of tool names", f"write {key}: [bash, edit]")
            continue
        draft.add("checks", {"type": key, "tools": tools}, f"{prefix}{key}", {"tools": ""})
    if "max_turns" in holder:
        turns = holder["max_turns"]
        if isinstance(turns, bool) or not isinstance(turns, int) or turns < 1:
            draft.error(f"{prefix}max_turns", f"{turns!r} is not a positive whole number", "write max_turns: 10")
        else:
            draft.add("checks", {"type": "max_turns", "turns": turns}, f"{prefix}max_turns", {"turns": ""})
    if "max_tokens" in holder:
        draft.error(f"{prefix}max_tokens", "not supported: " + UNSUPPORTED_FIELDS["constraints.max_tokens"],
                    "remove it (a run's spend is capped by [run].max_budget_usd)")
