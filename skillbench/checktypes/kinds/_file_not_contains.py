"""``file_not_contains``: the file at ``path`` is there and does not hold ``value`` (dotnet's skill-validator).

Its rule is skill-validator's (``AssertionEvaluator.EvalFileNotContains``): the path (a glob too) must match at
least one file, else the check fails, and it fails on the first matching file whose content holds the value. The
value is compared by the same rule as :mod:`~skillbench.checktypes.kinds._files` compares ``file_contains``
(case-insensitive unless ``case_sensitive: true``), so the two are each other's negation on one file;
skill-validator and Vally compare both case-sensitively, and the dotnet loaders set ``case_sensitive`` so. A file
the probe cannot read as a regular file fails, as one that is missing does.
"""

from __future__ import annotations

from skillbench.checktypes._grading import Outcome, holds_value, probed_files, short, sim_files, taken_probe
from skillbench.checktypes._registry import FILE_MISSING, Check, CheckKind, ProbeRequest, RunFacts, SimRun, register
from skillbench.vocab import CHECK_FAILED, CHECK_PASSED


def _probe(check: Check) -> ProbeRequest:
    return ProbeRequest("glob_content" if check.is_glob else "file", check.path or "")


def _grade(check: Check, facts: RunFacts) -> Outcome:
    probe = taken_probe(check, facts)
    if isinstance(probe, tuple):
        return probe
    if probe.file_state == FILE_MISSING:
        return CHECK_FAILED, short(f"{check.path}: " + ("no file matches" if check.is_glob else "no such file"))
    files = probed_files(check, probe)
    if isinstance(files, tuple):
        return files
    if not files:
        return CHECK_FAILED, short(f"{check.path}: no file matches")
    for name, text in files:
        if holds_value(check, text):
            return CHECK_FAILED, short(f"{name} contains {check.value!r}")
    return CHECK_PASSED, short(", ".join(name for name, _ in files)) if check.is_glob else ""


def _simulate(check: Check, run: SimRun, _answer: str, _crossed: bool) -> bool:
    texts = sim_files(check, run.final_files())
    return bool(texts) and not any(holds_value(check, text) for text in texts)


register(CheckKind(
    "file_not_contains", ("path", "value"), "a file is at `path` and does not hold `value`, case-insensitive unless "
    "`case_sensitive` (a glob: some file matches and none of them holds it)", _grade, _simulate,
    accepts=("case_sensitive",), probe=_probe, dotnet=("file_not_contains",),
    vally={"file-not-contains": {"path": "path", "value": "value"}}, dotnet_case=True))
