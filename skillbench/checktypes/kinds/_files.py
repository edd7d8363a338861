"""Checks on a file the agent was to write (or must not leave), read in the run's container after it finished.

A ``path`` holding ``*``, ``?`` or ``[`` is a glob over the workspace's files (an sh ``case`` pattern, so ``*``
also crosses ``/``): ``file_exists`` holds when one file matches, ``file_not_exists`` when none does,
``file_contains`` / ``file_matches`` when one matching file's content does. ``file_contains`` compares
case-insensitively unless the check sets ``case_sensitive: true`` (as dotnet's skill-validator and Vally compare a
file: the dotnet loaders set it); the simulated agent's truth applies the same rule to the files its run leaves
(solution files it wrote, else the fixtures).
"""

from __future__ import annotations

from skillbench.checktypes._grading import (
    Outcome,
    content_files,
    glob_files,
    holds_value,
    short,
    sim_files,
    taken_probe,
    text_check,
)
from skillbench.checktypes._patterns import search
from skillbench.checktypes._registry import FILE_MISSING, Check, CheckKind, ProbeRequest, RunFacts, SimRun, register
from skillbench.vocab import CHECK_FAILED, CHECK_PASSED


def _names_probe(check: Check) -> ProbeRequest:
    return ProbeRequest("glob_names" if check.is_glob else "file", check.path or "")


def _content_probe(check: Check) -> ProbeRequest:
    return ProbeRequest("glob_content" if check.is_glob else "file", check.path or "")


def _listed(output: bytes) -> str:
    files = glob_files(output)
    return ", ".join(name for name, _ in files[:5]) + (" …" if len(files) > 5 else "")


def _grade_exists(check: Check, facts: RunFacts) -> Outcome:
    probe = taken_probe(check, facts)
    if isinstance(probe, tuple):
        return probe
    wanted = check.type == "file_exists"
    if probe.file_state == FILE_MISSING:
        if not wanted:
            return CHECK_PASSED, ""
        return CHECK_FAILED, short(f"{check.path}: " + ("no file matches" if check.is_glob else "no such file"))
    if check.is_glob:
        names = _listed(probe.output)
        return (CHECK_PASSED, short(names)) if wanted else (CHECK_FAILED, short(f"{check.path} matches {names}"))
    return (CHECK_PASSED, "") if wanted else (CHECK_FAILED, short(f"{check.path}: exists"))


def _grade_content(check: Check, facts: RunFacts) -> Outcome:
    files = content_files(check, facts)
    if isinstance(files, tuple):
        return files
    kind = check.type.removeprefix("file_")
    if not check.is_glob:
        return text_check(kind, check, files[0][1], files[0][0])
    for name, text in files:
        if text_check(kind, check, text, name)[0] == CHECK_PASSED:
            return CHECK_PASSED, short(name)
    what, verb = (check.value, "contains") if kind == "contains" else (check.pattern, "matches")
    names = ", ".join(name for name, _ in files[:5]) + (" …" if len(files) > 5 else "")
    return CHECK_FAILED, short(f"no file matching {check.path} ({names}) {verb} {what!r}")


def _simulate(check: Check, run: SimRun, _answer: str, _crossed: bool) -> bool:
    contents = sim_files(check, run.final_files())
    if check.type == "file_not_exists":
        return not contents
    if check.type == "file_exists":
        return bool(contents)
    if check.type == "file_contains":  # by the check's case rule, as the grader compares
        return any(holds_value(check, text) for text in contents)
    return any(search(check.pattern or "", text) for text in contents)


register(CheckKind(
    "file_exists", ("path",), "a file is at `path` (a glob: some file matches)", _grade_exists, _simulate,
    probe=_names_probe, dotnet=("file_exists",), vally={"file-exists": {"path": "path"}}))
register(CheckKind(
    "file_not_exists", ("path",), "nothing is at `path` (a glob: no file matches)", _grade_exists, _simulate,
    probe=_names_probe, dotnet=("file_not_exists",), vally={"file-not-exists": {"path": "path"}}))
register(CheckKind(
    "file_contains", ("path", "value"), "the file at `path` holds `value`, case-insensitive unless `case_sensitive` "
    "(a glob: some matching file does)", _grade_content, _simulate, accepts=("case_sensitive",),
    probe=_content_probe, dotnet=("file_contains",), vally={"file-contains": {"path": "path", "value": "value"}},
    dotnet_case=True))
register(CheckKind(
    "file_matches", ("path", "pattern"), "`re.search(pattern)` matches the file at `path` (a glob: some "
    "matching file)", _grade_content, _simulate, probe=_content_probe,
    vally={"file-matches": {"path": "path", "pattern": "pattern"}}))
