"""``file_not_contains``: the file at ``path`` is there and does not hold ``value`` (dotnet's skill-validator).

Its rule is skill-validator's (``AssertionEvaluator.EvalFileNotContains``): the path (a glob too) must match at
least one file, else the check fails, and it fails on the first matching file whose content holds the value. The
value is compared by the same rule as :mod:`~skillbench.checktypes.kinds._files` compares ``file_contains``
(case-insensitive unless ``case_sensitive: true``), so the two are each other's negation on one file;
skill-validator and Vally compare both case-sensitively, and the dotnet loaders set ``case_sensitive`` so. A file
the probe cannot read as a regular file fails, as one that is missing does.
"""

from __future__ import annotations

from skillbench.checktypes._grading import Outcome, holds_value, none_of_the_files, short, sim_files
from skillbench.checktypes._registry import Check, CheckKind, ProbeRequest, RunFacts, SimRun, register
from skillbench.vocab import CHECK_FAILED


def _probe(check: Check) -> ProbeRequest:
    return ProbeRequest("glob_content" if check.is_glob else "file", check.path or "")


def _grade(check: Check, facts: RunFacts) -> Outcome:
    return none_of_the_files(check, facts, lambda name, text: (CHECK_FAILED, short(f"{name} contains {check.value!r}"))
                             if holds_value(check, text) else None)


def _simulate(check: Check, run: SimRun, _answer: str, _crossed: bool) -> bool:
    texts = sim_files(check, run.final_files())
    return bool(texts) and not any(holds_value(check, text) for text in texts)


register(CheckKind(
    "file_not_contains", ("path", "value"), "a file is at `path` and does not hold `value`, case-insensitive unless "
    "`case_sensitive` (a glob: some file matches and none of them holds it)", _grade, _simulate,
    accepts=("case_sensitive",), probe=_probe, dotnet=("file_not_contains",),
    vally={"file-not-contains": {"path": "path", "value": "value"}}, dotnet_case=True))
