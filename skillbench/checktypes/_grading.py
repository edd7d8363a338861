"""Helpers the check types share to grade: a short detail, text tests, the file probe's states and glob output.

Each check ends ``passed``, ``failed`` or ``error`` (it could not run: a probe timed out, the sandbox was gone,
the transcript has no result to count) with a short detail that says why. An ``error`` is never a skill loss.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Callable

import regex

from skillbench.checktypes._patterns import PatternTimeout, search
from skillbench.checktypes._registry import FILE_MISSING, FILE_OK, Check, ProbeResult, RunFacts
from skillbench.vocab import CHECK_ERROR, CHECK_FAILED, CHECK_PASSED

DETAIL_CHARS = 200  # a detail is a hint for people, never a dump of the output
Outcome = tuple[str, str]  # status, detail


def short(text: str) -> str:
    """``text`` on one line, at most :data:`DETAIL_CHARS` characters."""
    text = " ".join(text.split())
    return text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 1] + "…"


def holds_value(check: Check, text: str) -> bool:
    """``text`` holds the check's ``value`` as a substring, case-insensitively unless the check sets
    ``case_sensitive: true`` (the dotnet loaders set it to their tool's rule). The one test every ``*_contains``
    grader and its simulated truth share, so the simulated endpoint never records an outcome the grader would
    not give."""
    needle = check.value or ""
    if check.exact_case:
        return needle in text
    return needle.casefold() in text.casefold()


def text_check(kind: str, check: Check, text: str, where: str) -> Outcome:
    """contains / not_contains / matches / not_matches of ``text`` (the answer, or a file's content)."""
    if kind in ("contains", "not_contains"):
        found = holds_value(check, text)
        wanted = kind == "contains"
        if found == wanted:
            return CHECK_PASSED, ""
        verb = "lacks" if wanted else "contains"
        return CHECK_FAILED, short(f"{where} {verb} {check.value!r}")
    try:
        found = search(check.pattern or "", text)
    except (re.error, regex.error) as exc:  # preflight refuses it; a spec edited behind its back never crashes a pass
        return CHECK_ERROR, short(f"invalid pattern {check.pattern!r}: {exc}")
    except PatternTimeout as exc:  # never a verdict: the pattern, not the run, is at fault
        return CHECK_ERROR, short(f"pattern {check.pattern!r} on {where} {exc}")
    wanted = kind == "matches"
    if found == wanted:
        return CHECK_PASSED, ""
    verb = "does not match" if wanted else "matches"
    return CHECK_FAILED, short(f"{where} {verb} {check.pattern!r}")


def glob_files(output: bytes) -> list[tuple[str, bytes]]:
    """A glob probe's output (NUL, path, NUL, content, …) as ``(path, content)`` pairs, in the probe's order."""
    parts = output.split(b"\0")[1:]
    return [(name.decode("utf-8", "replace"), data) for name, data in zip(parts[::2], parts[1::2], strict=False)]


def taken_probe(check: Check, facts: RunFacts) -> ProbeResult | Outcome:
    """The check's probe when it was taken and finished, else the ``error`` outcome that says why not."""
    probe = facts.probes.get(check.check_id)
    if probe is None:
        return CHECK_ERROR, "not probed (the sandbox took no probe for this check)"
    if probe.error:
        return CHECK_ERROR, short(probe.error)
    if probe.timed_out:
        return CHECK_ERROR, f"timeout after {probe.timeout_s:g}s"
    return probe


def probed_files(check: Check, probe: ProbeResult) -> list[tuple[str, str]] | Outcome:
    """The files a content probe (``file`` / ``glob_content``) found, as ``(path, text)``: empty when nothing
    matches, else the ``failed`` outcome of a path that is not a regular file."""
    if probe.file_state == FILE_MISSING:
        return []
    if check.is_glob:
        return [(name, data.decode("utf-8", "replace")) for name, data in glob_files(probe.output)]
    if probe.file_state != FILE_OK:
        return CHECK_FAILED, short(f"{check.path}: not a regular file")
    return [(str(check.path), probe.output.decode("utf-8", "replace"))]


def content_files(check: Check, facts: RunFacts) -> list[tuple[str, str]] | Outcome:
    """The files a ``file_*`` content check read in the run's container, as ``(path, text)`` (at least one), or the
    outcome when there is nothing to read: the probe's own outcome, ``failed`` for no file (a glob: no match) or a
    path that is not a regular file."""
    probe = taken_probe(check, facts)
    if isinstance(probe, tuple):
        return probe
    files = probed_files(check, probe)
    if isinstance(files, tuple):
        return files
    if not files:
        return CHECK_FAILED, short(f"{check.path}: " + ("no file matches" if check.is_glob else "no such file"))
    return files


def none_of_the_files(check: Check, facts: RunFacts, hit: Callable[[str, str], Outcome | None]) -> Outcome:
    """A negated file check (``file_not_contains``, ``file_not_matches``): some file is there (a negated check on
    nothing proves nothing) and ``hit(path, text)`` finds nothing in any of them; else the first hit's outcome."""
    files = content_files(check, facts)
    if isinstance(files, tuple):
        return files
    for name, text in files:
        if (outcome := hit(name, text)) is not None:
            return outcome
    return CHECK_PASSED, short(", ".join(name for name, _ in files)) if check.is_glob else ""


def sim_files(check: Check, files: dict[str, str]) -> list[str]:
    """The texts of the simulated workspace's files a ``file_*`` check's path names (a glob: every match)."""
    if check.is_glob:  # an sh ``case`` pattern: ``*`` also crosses ``/`` (generation.workspace.GLOB_PROBE)
        return [text for rel, text in sorted(files.items()) if fnmatch.fnmatchcase(rel, check.path or "")]
    rel = posixpath.normpath((check.path or "").strip().lstrip("/")).removeprefix("./")
    return [files[rel]] if rel in files else []
