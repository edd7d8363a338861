"""``file_not_matches``: a file is at ``path`` and ``re.search(pattern)`` finds nothing in it (Vally's
``file-not-matches``, or ``file-matches`` with ``negate: true``).

Its rule is :mod:`~skillbench.checktypes.kinds._file_not_contains`'s with a pattern for the value: the path (a glob
too) must match at least one file, else the check fails (a negated check on nothing proves nothing), and it fails
on the first matching file the pattern matches. A pattern that runs past its time limit is an ``error``: the
pattern, not the run, is at fault.
"""

from __future__ import annotations

from skillbench.checktypes._grading import Outcome, none_of_the_files, sim_files, text_check
from skillbench.checktypes._patterns import search
from skillbench.checktypes._registry import Check, CheckKind, ProbeRequest, RunFacts, SimRun, register
from skillbench.vocab import CHECK_PASSED


def _probe(check: Check) -> ProbeRequest:
    return ProbeRequest("glob_content" if check.is_glob else "file", check.path or "")


def _grade(check: Check, facts: RunFacts) -> Outcome:
    def hit(name: str, text: str) -> Outcome | None:
        status, detail = text_check("not_matches", check, text, name)
        return None if status == CHECK_PASSED else (status, detail)

    return none_of_the_files(check, facts, hit)


def _simulate(check: Check, run: SimRun, _answer: str, _crossed: bool) -> bool:
    texts = sim_files(check, run.final_files())
    return bool(texts) and not any(search(check.pattern or "", text) for text in texts)


register(CheckKind(
    "file_not_matches", ("path", "pattern"), "a file is at `path` and `re.search(pattern)` finds nothing in it (a "
    "glob: some file matches and the pattern matches none of them)", _grade, _simulate, probe=_probe,
    vally={"file-not-matches": {"path": "path", "pattern": "pattern"}}))
