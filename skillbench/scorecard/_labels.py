"""How the scorecard and the figures name the week's two arms in headings, column labels and legends.

A weekly run keeps the words its pages always had (``with-skill − no-skill``, ``no→with``), byte for byte; any
other pair (a ``skillbench compare`` week) is named by its labels (``with-skill@HEAD − with-skill@main``), so a
comparison's page never reads as a with-skill vs no-skill week.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from skillbench.arms import DEFAULT_PAIR, ArmPair, arm_kind
from skillbench.vocab import CONDITIONS


@dataclass(frozen=True)
class ArmNames:
    """The words for one pair.

    Attributes:
        lift: the lift's direction, ``with-skill − no-skill``.
        arrow: a column going from the control to the treatment, ``no→with``.
        treatment: the treatment arm as a label names it, ``with-skill``.
        control: the control arm, ``no-skill``.
        versus: ``with-skill vs no-skill``.
        is_default: the weekly pair (its fixed wording is used).
    """

    lift: str
    arrow: str
    treatment: str
    control: str
    versus: str
    is_default: bool


def arm_names(pair: ArmPair = DEFAULT_PAIR) -> ArmNames:
    """The names of ``pair``: the weekly wording for the default pair, else the arms' own labels."""
    if pair.is_default:
        return ArmNames("with-skill − no-skill", "no→with", pair.treatment, pair.control, pair.label, True)
    return ArmNames(f"{pair.treatment} − {pair.control}", f"{pair.control}→{pair.treatment}", pair.treatment,
                    pair.control, pair.label, False)


def arm_order(conditions: Iterable[str], pair: ArmPair = DEFAULT_PAIR) -> list[str]:
    """The conditions of a week in the order tables list them: by arm (no-skill, with-skill, plugin), and within
    one arm the control, then the treatment, then any other version. Labels of no known arm are left out.

    A weekly week's order is :data:`~skillbench.vocab.CONDITIONS`' order.
    """
    def key(label: str) -> tuple[int, int, str]:
        within = 0 if label == pair.control else 1 if label == pair.treatment else 2
        return CONDITIONS.index(arm_kind(label)), within, label

    return sorted({str(c) for c in conditions if arm_kind(str(c)) in CONDITIONS}, key=key)
