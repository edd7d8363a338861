"""The objective record's loss test (issue 31): exact whatever reps are missing, the sign test with one run per
arm. Pinned by the data-driven cases in ``tests/data/objective_cases/loss_test.json`` and, independently, by
enumerating every split of each stimulus's pooled runs between the arms."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import pytest

from skillbench.scorecard._objective import objective_loss_test
from skillbench.scorecard._verdicts import sign_test_p

CASES = json.loads((Path(__file__).resolve().parents[1] / "data" / "objective_cases" / "loss_test.json")
                   .read_text(encoding="utf-8"))["cases"]


def _enumerated(stimuli: list[list[int]]) -> float:
    """P(summed rate drop ≥ observed) over every equally likely split of each stimulus's runs (brute force)."""
    known = [s for s in stimuli if s[0] and s[2]]
    drops = []
    for a, ca, b, cb in known:
        runs = [1] * (ca + cb) + [0] * (a + b - ca - cb)
        drops.append([Fraction(ca + cb - sum(runs[i] for i in pick), a) - Fraction(sum(runs[i] for i in pick), b)
                      for pick in itertools.combinations(range(a + b), b)])
    observed = sum(Fraction(ca, a) - Fraction(cb, b) for a, ca, b, cb in known)
    splits = list(itertools.product(*drops))
    return sum(sum(split) >= observed for split in splits) / len(splits)


@pytest.mark.parametrize("case", CASES, ids=[c["why"][:50] for c in CASES])
def test_loss_test_case(case: dict) -> None:
    p, drop = objective_loss_test(*zip(*case["stimuli"], strict=True))
    assert p == pytest.approx(case["p"]) and drop == pytest.approx(case["drop"])
    assert p == pytest.approx(_enumerated(case["stimuli"]))


def test_one_run_per_arm_is_the_sign_test() -> None:
    for wins, losses, ties in itertools.product(range(5), range(5), range(3)):
        stimuli = [[1, 0, 1, 1]] * wins + [[1, 1, 1, 0]] * losses + [[1, 1, 1, 1]] * ties
        if stimuli:
            assert objective_loss_test(*zip(*stimuli, strict=True))[0] == pytest.approx(sign_test_p(losses, wins))


def test_no_stimulus_is_no_loss() -> None:
    p, drop = objective_loss_test([], [], [], [])
    assert p == 1.0 and drop != drop  # NaN


def test_a_week_with_no_known_outcome_has_no_transition() -> None:
    """Every run harness-invalid: no stimulus has a known outcome in either arm, so no transition and no record."""
    import pandas as pd

    from skillbench.scorecard import objective_records, transitions

    none = pd.DataFrame(columns=["skill_family", "prompt", "model", "condition", "dormancy", "n", "c",
                                 "task_pass_rate", "completes"])
    out = transitions(none)
    assert out.empty and {"transition", "no_skill_n", "with_skill_c"} <= set(out.columns)
    assert objective_records(out) == {}
