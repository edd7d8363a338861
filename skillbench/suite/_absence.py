"""Absence items: must items whose requirement is that something is *not* in the answer.

About a fifth of dotnet/skills' rubric strings assert an absence ("Did NOT attempt to download symbols",
"Avoided unnecessary machine-wide runtime changes"). Graded as an ordinary must, such an item cannot be met with
evidence: there is no sentence of the answer that proves something is missing, so a careful judge marks it
``missing`` and a careless one quotes something unrelated. skillbench therefore grades an absence item like an
avoid item — the judge hunts for the violation and must quote it — and records it as the must it is: ``clean``
earns the must's credit (``met``), ``violated`` is ``missing`` with the violation's quote as evidence
(:mod:`skillbench.judge._rubric`).

**The detection rule** (:func:`asserts_absence`) reads the item's *main requirement* and says it is an absence
when that requirement is a negation of what the answer or agent does:

1. A leading subject naming the answer is dropped ("The response did not …" reads as "did not …"), and so is a
   leading concession ("May suggest X, but does NOT frame it as Y" reads as "does NOT frame it as Y").
2. The requirement then starts with a negation word of :data:`NEGATION_LEADS` ("does not", "did NOT", "never",
   "avoids", "refrains from", "makes no", …), case-insensitive; or it says the skill or workflow *stayed
   dormant* (:data:`DORMANT`); or it is a trivial lead followed by ``without attempting/trying to …``
   (:data:`WITHOUT_ACTION`: "Provides guidance without attempting to execute commands").
3. Not an absence after all when the negated clause is followed by a clause that *states a positive action*
   (" — correctly identified it as CoreCLR", "; uses real packages"): that half can be quoted, so the item is
   graded as the must it is (:data:`POSITIVE_TAIL`).

Everything else is not an absence: a positive requirement with a negative tail ("Uses ML.NET — does NOT use an
LLM"), a statement *about* a negation ("Recognized that the frames do NOT have BuildId metadata"), a warning or
a recommendation. Those can be met with a quote.

**Where the rule applies** (:func:`graded_as_absence`): an item's own ``absence`` (true/false in a skillbench
prompt file) always wins. Otherwise (``absence`` is None) the rule decides only for *imported* rubric strings —
dotnet's skill-validator and Vally specs and skill-creator's ``evals.json`` expectations, which have no way to
mark an item — and never for skillbench's own
JSON prompt files (qdrant's format). The layout that loaded a prompt records which it is
(:attr:`~skillbench.suite._layouts.Layout.absence_rule`, copied to :attr:`PromptSpec.absence_rule
<skillbench.suite._format.PromptSpec>`). qdrant's rubrics are written for positive grading (their absence-like
wishes are ``avoid`` items), qdrant's ledgers must reproduce unchanged, and a silent change of how an existing
suite's items are graded would move a lift between weeks; so our format opts in per item with
``"absence": true``. Only must items are ever graded by absence.

The rule is a pure function of the text, so the same item is decided the same way by the judge, the simulated
agent and the simulated judge.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from skillbench.suite._format import RubricItem, TestPrompt

# The words that open a negated requirement (matched at the start of the main requirement, case-insensitive).
NEGATION_LEADS: tuple[str, ...] = (
    "does not", "doesn't", "did not", "didn't", "do not", "don't", "should not", "must not", "will not",
    "never", "avoids", "avoided", "avoid", "refrains from", "refrained from", "makes no", "made no",
    "contains no", "includes no", "has no", "neither",
)
# The skill or workflow stayed dormant: nothing in the answer may apply it.
DORMANT = re.compile(r"\b(?:stayed|stays|remained|remains|stay|remain)\s+dormant\b", re.I)
# A trivial lead followed by a refrained action: the action's absence is the requirement.
WITHOUT_ACTION = re.compile(r"\bwithout\s+(?:attempting|trying|actually\s+attempting)\s+to\b", re.I)
# A leading subject that names the answer (dropped before the negation is looked for).
_SUBJECT = re.compile(r"^(?:the\s+(?:response|answer|agent|model|assistant|output|reply)\s+)", re.I)
# A leading concession: "May …, but <requirement>".
_CONCESSION = re.compile(r"^may\b[^,]*,\s*but\s+", re.I)
_LEAD = re.compile(r"^(?:" + "|".join(re.escape(w) for w in NEGATION_LEADS) + r")\b", re.I)
# After a negated clause: a separator, then a clause that opens with a third-person or past-tense verb of the
# answer ("correctly identified …", "uses …") — a positive, quotable half.
POSITIVE_TAIL = re.compile(
    r"(?:\s[—–-]\s|;\s*|,\s*(?:and|but)\s+|\.\s+)(?:(?:correctly|instead|explicitly|clearly|rather)\s+)?"
    r"(?P<verb>[a-z]+(?:s|ed))\b", re.I)
# Words ending in s/ed that do not open an answer's action.
_NOT_VERBS = frozenset({"this", "its", "is", "was", "has", "as", "thus", "does", "his", "us", "yes", "less",
                        "unless", "needed", "based", "used", "required", "expected"})


def _main_requirement(text: str) -> str:
    """The text with whitespace collapsed and a leading subject or concession dropped (rule step 1)."""
    text = " ".join(text.split()).strip(" .")
    text = _SUBJECT.sub("", text)
    return _CONCESSION.sub("", text)


def _positive_tail(rest: str) -> bool:
    """True when a clause after the negated one states a positive action (rule step 3)."""
    return any(m.group("verb").lower() not in _NOT_VERBS for m in POSITIVE_TAIL.finditer(rest))


def asserts_absence(text: str) -> bool:
    """True when a rubric string's main requirement is that something is absent (the module's rule).

    Args:
        text: the rubric string as written.

    Returns:
        True for "Did NOT attempt to download symbols", "Avoided false alarms", "The target collection
        workflow stayed dormant", "Provides guidance without attempting to execute commands"; False for
        "Uses ML.NET — does NOT use an LLM", "Did NOT assume Mono — correctly identified it as CoreCLR" and
        "Recognized that the frames do NOT have BuildId metadata".
    """
    main = _main_requirement(text)
    if m := _LEAD.match(main):
        return not _positive_tail(main[m.end():])
    return bool(DORMANT.search(main) or WITHOUT_ACTION.search(main))


def graded_as_absence(item: RubricItem, *, rule: bool = False) -> bool:
    """True when ``item`` is graded by absence (the judge hunts for its violation).

    Args:
        item: a rubric item; its ``absence`` (true/false) always wins.
        rule: whether the detection rule decides an item whose ``absence`` is None — true for rubric strings
            imported from dotnet's formats, false for skillbench's own prompt files (see the module docstring).

    Returns:
        False for every bonus and avoid item; for a must, ``item.absence`` when set, else the rule when it
        applies.
    """
    if item.type != "must":
        return False
    if item.absence is not None:
        return item.absence
    return rule and asserts_absence(item.text)


def absence_indexes(rubric: Iterable[RubricItem], *, rule: bool = False) -> frozenset[int]:
    """The 0-based indexes of the items of ``rubric`` that are graded by absence."""
    return frozenset(i for i, item in enumerate(rubric) if graded_as_absence(item, rule=rule))


def resolve_absence(test: TestPrompt, *, rule: bool) -> TestPrompt:
    """A copy of ``test`` whose every must item states its grading (``absence`` true or false, never None).

    Write this copy wherever a prompt leaves its suite (a run folder's ``test-prompt.json``): the judge reads
    that copy and honours explicit values only, so the decision made here — with the rule for an imported
    spec — is the one graded, whoever reads the run later.
    """
    items = [item.model_copy(update={"absence": graded_as_absence(item, rule=rule)}) if item.type == "must"
             else item for item in test.rubric]
    return test.model_copy(update={"rubric": items})
