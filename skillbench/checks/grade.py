"""Grading a run's deterministic checks: from its transcript, the CLI's exit code and the sandbox's probes.

Each check ends ``passed``, ``failed`` or ``error`` (it could not run: a probe timed out, the sandbox was gone,
the transcript has no result to count) with a short ``detail`` that says why: the exit code, the first pattern
that did not match, the offending tool use, "timeout after Ns". An ``error`` is never a skill loss.

* output checks read :meth:`Transcript.final_answer`; ``*_contains`` compare case-insensitively (as Vally
  does), ``*_matches`` are Python ``re.search`` (inline flags like ``(?i)`` work);
* ``exit_success``: the CLI exited 0 and its result event is not an error; ``output_nonempty``: the final answer
  holds more than whitespace (skill-validator's ``exit_success``);
* ``expect_tools`` / ``reject_tools``: the tool calls that ran (denied attempts netted out), names through the
  alias table of :mod:`skillbench.checks.tools`;
* ``max_turns``: the result's ``num_turns`` (the CLI's own count) ≤ ``turns``;
* workspace checks read a :class:`ProbeResult` the sandbox took in the run's container after the CLI exited
  (``run_command``: the command's exit code; ``file_*``: the file's bytes, or that it is missing;
  ``file_not_exists`` passes on a missing file). A glob ``path`` (``*.cs``) holds for the files it matches:
  ``file_exists`` when one matches, ``file_not_exists`` when none does, ``file_contains``/``file_matches`` when
  one matching file's content does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from skillbench.checks.tools import canonical_tool, tools_used
from skillbench.signals.transcript import Transcript
from skillbench.suite.task import Check
from skillbench.vocab import CHECK_ERROR, CHECK_FAILED, CHECK_PASSED

DETAIL_CHARS = 200  # a detail is a hint for people, never a dump of the output
FILE_MISSING = "missing"  # ProbeResult.file_state: no such path in the workspace
FILE_NOT_REGULAR = "not_regular"  # the path exists but is a folder (or another non-file)
FILE_OK = "ok"


@dataclass(frozen=True)
class ProbeResult:
    """What the sandbox saw for one workspace check, in the run's container after the CLI exited.

    Attributes:
        check_id: the check it was taken for.
        exit_code: ``run_command``'s exit code (None when it did not finish).
        output: a ``file_*`` probe's file content; a ``run_command``'s last output (for the detail).
        file_state: ``ok`` / ``missing`` / ``not_regular`` for ``file_*`` probes, "" for commands.
        timed_out: the probe's own timeout fired.
        timeout_s: that timeout.
        error: why the probe could not be taken at all (sandbox gone, …); "" when it was taken.
    """

    check_id: str
    exit_code: int | None = None
    output: bytes = b""
    file_state: str = ""
    timed_out: bool = False
    timeout_s: float = 0.0
    error: str = ""


@dataclass(frozen=True)
class CheckResult:
    """One row of a run's ``checks.json`` (and of ``checks.csv``, with the run's identity)."""

    check_id: str
    check_type: str
    status: str
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        return asdict(self)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 1] + "…"


def _contains(haystack: str, needle: str) -> bool:
    return needle.casefold() in haystack.casefold()


def _text_check(kind: str, check: Check, text: str, where: str) -> tuple[str, str]:
    """contains / not_contains / matches / not_matches of ``text`` (the answer, or a file's content)."""
    if kind in ("contains", "not_contains"):
        found = _contains(text, check.value or "")
        wanted = kind == "contains"
        if found == wanted:
            return CHECK_PASSED, ""
        verb = "lacks" if wanted else "contains"
        return CHECK_FAILED, _short(f"{where} {verb} {check.value!r}")
    try:
        found = re.search(check.pattern or "", text) is not None
    except re.error as exc:  # preflight refuses it; a spec edited behind its back still never crashes a pass
        return CHECK_ERROR, _short(f"invalid pattern {check.pattern!r}: {exc}")
    wanted = kind == "matches"
    if found == wanted:
        return CHECK_PASSED, ""
    verb = "does not match" if wanted else "matches"
    return CHECK_FAILED, _short(f"{where} {verb} {check.pattern!r}")


def _tool_summary(name: str, args: Mapping[str, object]) -> str:
    """``Bash(rm -rf x)``: a use named with its most telling argument."""
    for key in ("command", "file_path", "path", "url", "pattern", "query", "skill"):
        if isinstance(args.get(key), str):
            return f"{name}({args[key]})"
    return name


def _tools_check(check: Check, transcript: Transcript) -> tuple[str, str]:
    used = tools_used(transcript)
    wanted = [canonical_tool(t) for t in check.tools or []]
    if check.type == "expect_tools":
        missing = [name for name, key in zip(check.tools or [], wanted, strict=True) if key not in used]
        return (CHECK_PASSED, "") if not missing else (CHECK_FAILED, _short("not used: " + ", ".join(missing)))
    for use in transcript.allowed_tool_uses():
        if canonical_tool(use.name) in wanted:
            return CHECK_FAILED, _short("used " + _tool_summary(use.name, use.input))
    return CHECK_PASSED, ""


def glob_files(output: bytes) -> list[tuple[str, bytes]]:
    """A glob probe's output (NUL, path, NUL, content, …) as ``(path, content)`` pairs, in the probe's order."""
    parts = output.split(b"\0")[1:]
    return [(name.decode("utf-8", "replace"), data) for name, data in zip(parts[::2], parts[1::2], strict=False)]


def _glob_check(check: Check, probe: ProbeResult) -> tuple[str, str]:
    """A glob ``file_*`` check of a probe that found at least one matching file."""
    files = glob_files(probe.output)
    names = ", ".join(name for name, _ in files[:5]) + (" …" if len(files) > 5 else "")
    if check.type == "file_not_exists":
        return CHECK_FAILED, _short(f"{check.path} matches {names}")
    if check.type == "file_exists":
        return CHECK_PASSED, _short(names)
    kind = check.type.removeprefix("file_")
    for name, data in files:
        status, _ = _text_check(kind, check, data.decode("utf-8", "replace"), name)
        if status == CHECK_PASSED:
            return CHECK_PASSED, _short(name)
    what = check.value if kind == "contains" else check.pattern
    verb = "contains" if kind == "contains" else "matches"
    return CHECK_FAILED, _short(f"no file matching {check.path} ({names}) {verb} {what!r}")


def _probe_check(check: Check, probe: ProbeResult | None) -> tuple[str, str]:
    if probe is None:
        return CHECK_ERROR, "not probed (the sandbox took no probe for this check)"
    if probe.error:
        return CHECK_ERROR, _short(probe.error)
    if probe.timed_out:
        return CHECK_ERROR, f"timeout after {probe.timeout_s:g}s"
    if check.type == "run_command":
        if probe.exit_code is None:
            return CHECK_ERROR, "the command did not finish"
        if probe.exit_code == check.exit_code_expected:
            return CHECK_PASSED, f"exit {probe.exit_code}"
        tail = probe.output.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        detail = f"exit {probe.exit_code}, expected {check.exit_code_expected}"
        return CHECK_FAILED, _short(detail + (f": {tail[0]}" if tail[0] else ""))
    if probe.file_state == FILE_MISSING:
        if check.type == "file_not_exists":
            return CHECK_PASSED, ""
        return CHECK_FAILED, _short(f"{check.path}: " + ("no file matches" if check.is_glob else "no such file"))
    if check.is_glob:
        return _glob_check(check, probe)
    if check.type == "file_not_exists":
        return CHECK_FAILED, _short(f"{check.path}: exists")
    if check.type == "file_exists":
        return CHECK_PASSED, ""
    if probe.file_state != FILE_OK:
        return CHECK_FAILED, _short(f"{check.path}: not a regular file")
    text = probe.output.decode("utf-8", "replace")
    return _text_check(check.type.removeprefix("file_"), check, text, str(check.path))


def grade_check(check: Check, transcript: Transcript, exit_code: int | None,
                probes: Mapping[str, ProbeResult]) -> CheckResult:
    """Grade one check (see the module docstring for each type's rule)."""
    result = transcript.result
    kind = check.type
    if kind == "output_nonempty":
        answer = transcript.final_answer()
        status, detail = (CHECK_PASSED, "") if answer.strip() else (CHECK_FAILED, "the final answer is empty")
    elif kind.startswith("output_"):
        status, detail = _text_check(kind.removeprefix("output_"), check, transcript.final_answer(), "the answer")
    elif kind == "exit_success":
        if exit_code != 0:
            status, detail = CHECK_FAILED, f"exit {exit_code}"
        elif result is None:
            status, detail = CHECK_FAILED, "exit 0 but no result event"
        elif result.get("is_error"):
            status, detail = CHECK_FAILED, _short(f"exit 0, result is an error ({result.get('subtype')})")
        else:
            status, detail = CHECK_PASSED, "exit 0"
    elif kind in ("expect_tools", "reject_tools"):
        status, detail = _tools_check(check, transcript)
    elif kind == "max_turns":
        turns = (result or {}).get("num_turns")
        if not isinstance(turns, int | float) or isinstance(turns, bool):
            status, detail = CHECK_ERROR, "no num_turns in the result event"
        elif turns <= (check.turns or 0):
            status, detail = CHECK_PASSED, f"{int(turns)} turns"
        else:
            status, detail = CHECK_FAILED, f"{int(turns)} turns > {check.turns}"
    else:
        status, detail = _probe_check(check, probes.get(check.check_id))
    return CheckResult(check.check_id, kind, status, detail)


def grade_checks(checks: Sequence[Check], transcript: Transcript, exit_code: int | None,
                 probes: Mapping[str, ProbeResult] | None = None) -> list[CheckResult]:
    """Grade every check of a run, in the spec's order."""
    return [grade_check(c, transcript, exit_code, probes or {}) for c in checks]
