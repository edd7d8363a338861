"""Arm labels and the (treatment, control) pair every downstream stage compares.

A condition label is an arm of :mod:`skillbench.vocab` (``no-skill``, ``with-skill``, ``plugin``, and the opt-in
``placebo`` and ``aa``), optionally followed by ``@REF``, a git ref of the suite's repository: ``with-skill@main``
installs the prompt's family as it is at ``main`` (a **version arm**, :mod:`skillbench.suite._versions`).
``no-skill`` installs nothing, so it never takes a ref. ``aa`` is a second no-skill arm (no-skill vs aa is the
harness's noise floor); ``placebo`` installs the family's placebo (:mod:`skillbench.suite._placebo`: the real
frontmatter over a same-length neutral body), which is no version of the skill, so neither takes a ref.

The signals, judge, pairwise judge and scorecard compare one :class:`ArmPair`: the lift is treatment − control,
the rubric judge grades both arms (and the reference arm, which keeps a comparison's lift readable against no
skill at all), the pairwise judge puts the treatment answer against the control answer, and the preference gate
counts the treatment's wins. A weekly run compares ``with-skill`` with ``no-skill`` (:data:`DEFAULT_PAIR`);
``skillbench compare`` records ``with-skill@HEAD`` against ``with-skill@BASE`` in the week's ``run.json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skillbench.vocab import CONDITIONS, NO_SKILL, PLACEBO, SKILLED_ARMS, WITH_SKILL

REF_SEPARATOR = "@"


class ConditionError(ValueError):
    """A condition label that is not an arm (with an optional ``@REF``)."""


def arm_kind(condition: str) -> str:
    """The arm of a label: ``with-skill@main`` → ``with-skill``; a plain arm is its own kind."""
    return str(condition).split(REF_SEPARATOR, 1)[0]


def arm_ref(condition: str) -> str:
    """The git ref a version arm names (``with-skill@origin/main`` → ``origin/main``), ``""`` for a plain arm."""
    parts = str(condition).split(REF_SEPARATOR, 1)
    return parts[1] if len(parts) == 2 else ""


def version_arm(kind: str, ref: str) -> str:
    """``with-skill`` and ``main`` → ``with-skill@main``."""
    return f"{kind}{REF_SEPARATOR}{ref}"


def is_skilled(condition: str) -> bool:
    """True for an arm in which a skill is installed (``with-skill``, ``plugin``, and their version arms)."""
    return arm_kind(condition) in SKILLED_ARMS


def lists_skill(condition: str) -> bool:
    """True for an arm whose runs must list the prompt's family: the skilled arms, and ``placebo``, whose
    stand-in is listed under the family's name (a placebo run without it measures nothing, as a skilled one).

    ``placebo`` is not :func:`is_skilled`: its dormancy runs would measure the real description's false triggers,
    which the with-skill arm measures already, and it has no version to pin with ``@REF``.
    """
    return is_skilled(condition) or arm_kind(condition) == PLACEBO


def is_with_skill(condition: str) -> bool:
    """True for ``with-skill`` and every ``with-skill@REF``: the prompt's own family installed."""
    return arm_kind(condition) == WITH_SKILL


def check_condition(label: str) -> str:
    """The label, or :class:`ConditionError` with one line saying what is allowed.

    Raises:
        ConditionError: an unknown arm, an empty ref, or ``no-skill@REF`` (nothing is installed to version).
    """
    kind, ref = arm_kind(label), arm_ref(label)
    allowed = f"one of {', '.join(CONDITIONS)}, or with-skill@REF / plugin@REF for a git ref of the suite"
    if kind not in CONDITIONS:
        raise ConditionError(f"unknown condition {label!r} ({allowed})")
    if REF_SEPARATOR in label and not ref.strip():
        raise ConditionError(f"condition {label!r} names no ref after '@' ({allowed})")
    if ref and kind not in SKILLED_ARMS:
        what = "installs nothing" if kind == NO_SKILL else "is not a version of the skill"
        raise ConditionError(f"condition {label!r}: {kind} {what}, so it has no version ({allowed})")
    if ref and (ref != ref.strip() or ref.startswith("-")):
        raise ConditionError(f"condition {label!r}: the ref must not start with '-' or carry spaces")
    return label


@dataclass(frozen=True)
class ArmPair:
    """The two arms a week compares, and the reference arm shown beside them.

    Attributes:
        treatment: the arm whose gain is measured (the gate counts its wins).
        control: the arm it is measured against (lift = treatment − control).
        reference: an arm graded and shown beside the pair but never part of the lift (``""``: none);
            a comparison of two versions keeps ``no-skill`` here.
    """

    treatment: str = WITH_SKILL
    control: str = NO_SKILL
    reference: str = ""

    def __post_init__(self) -> None:
        for label in (self.treatment, self.control, *([self.reference] if self.reference else [])):
            check_condition(label)
        if self.treatment == self.control:
            raise ConditionError(f"treatment and control are the same arm ({self.treatment!r})")

    @property
    def lift_arms(self) -> tuple[str, str]:
        """``(control, treatment)``: the order of the lift's columns (qdrant's no-skill, with-skill)."""
        return (self.control, self.treatment)

    @property
    def graded_arms(self) -> tuple[str, ...]:
        """The arms the rubric judge grades: the pair, then the reference arm."""
        return self.lift_arms + ((self.reference,) if self.reference and self.reference not in self.lift_arms
                                 else ())

    @property
    def is_default(self) -> bool:
        """True for the weekly comparison, with-skill against no-skill."""
        return (self.treatment, self.control) == (WITH_SKILL, NO_SKILL)

    @property
    def label(self) -> str:
        """``with-skill@HEAD vs with-skill@main``: how reports name the comparison."""
        return f"{self.treatment} vs {self.control}"

    def as_json(self) -> dict[str, str]:
        """The ``arms`` entry of ``run.json``."""
        return {"treatment": self.treatment, "control": self.control, "reference": self.reference}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> ArmPair:
        """The pair ``run.json`` records, or :data:`DEFAULT_PAIR` for a week that records none."""
        if not data:
            return DEFAULT_PAIR
        return cls(treatment=str(data.get("treatment") or WITH_SKILL), control=str(data.get("control") or NO_SKILL),
                   reference=str(data.get("reference") or ""))


DEFAULT_PAIR = ArmPair()
