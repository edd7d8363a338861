"""The absence detection rule (skillbench.suite._absence): data-driven cases, the per-item override, where the rule
applies, and the rule over every rubric string of the shared dotnet and qdrant specs (read at test time)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from skillbench.suite import RubricItem, TestPrompt
from skillbench.suite._absence import absence_indexes, asserts_absence, graded_as_absence, resolve_absence
from tests.helpers.shared import DATA_DIR, DOTNET, QDRANT, ROOT, require

CASES = json.loads((DATA_DIR / "absence_cases" / "rule.json").read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["text"][:40] or "empty" for c in CASES])
def test_rule_cases(case: dict) -> None:
    assert asserts_absence(case["text"]) is case["absence"], case["why"]


def test_every_case_says_why() -> None:
    assert all(c["why"].strip() for c in CASES)
    assert {c["absence"] for c in CASES} == {True, False}


@pytest.mark.parametrize(("item", "rule", "expected", "why"), [
    (RubricItem(type="must", text="Did NOT download symbols"), True, True, "imported: the rule decides"),
    (RubricItem(type="must", text="Did NOT download symbols"), False, False, "our format: the rule is off"),
    (RubricItem(type="must", text="Did NOT download symbols", absence=False), True, False, "false overrides the rule"),
    (RubricItem(type="must", text="Keeps secrets out of logs", absence=True), False, True, "true opts in"),
    (RubricItem(type="avoid", text="Does not cite a source"), True, False, "only musts are graded by absence"),
    (RubricItem(type="bonus", text="Never blocks", absence=True), True, False, "a bonus is never an absence"),
])
def test_the_override_wins_and_only_musts_count(item: RubricItem, rule: bool, expected: bool, why: str) -> None:
    assert graded_as_absence(item, rule=rule) is expected, why


def test_rule_applies_to_imported_specs_only() -> None:
    """The layout that loaded a prompt records whether the rule grades it: dotnet's specs yes, our JSON files no."""
    from skillbench.suite import preflight

    dotnet = preflight(require(DOTNET / "snapshot-1b8f2aa")).suite.prompts
    assert dotnet and all(p.absence_rule for p in dotnet)
    ours = preflight(ROOT / "evals").suite.prompts
    assert ours and not any(p.absence_rule for p in ours)


def test_resolve_absence_makes_every_must_explicit_and_survives_json() -> None:
    test = TestPrompt(name="p", product_area="a", skill_url="https://x/f/SKILL.md", prompt="q", rubric=[
        RubricItem(type="must", text="Did NOT download symbols"),
        RubricItem(type="must", text="Names the build id"),
        RubricItem(type="must", text="Never retries", absence=False),
        RubricItem(type="avoid", text="Does not cite"),
    ])
    resolved = resolve_absence(test, rule=True)
    assert [i.absence for i in resolved.rubric] == [True, False, False, None]
    assert test.rubric[0].absence is None  # a copy: the suite's prompt is unchanged
    again = TestPrompt.model_validate_json(resolved.model_dump_json())
    assert absence_indexes(again.rubric) == frozenset({0}), "the judge reads explicit values with the rule off"
    assert again.rubric_sha() == test.rubric_sha(), "the rubric's identity does not change"


def _dotnet_rubric_strings() -> list[tuple[str, str]]:
    out = []
    for path in sorted(require(DOTNET).rglob("eval*.yaml")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        for stimulus in spec.get("scenarios") or spec.get("stimuli") or []:
            out += [(str(path.relative_to(DOTNET)), t) for t in stimulus.get("rubric") or [] if isinstance(t, str)]
    return out


def test_the_rule_flags_about_a_fifth_of_dotnets_rubric_strings() -> None:
    strings = _dotnet_rubric_strings()
    flagged = [(f, t) for f, t in strings if asserts_absence(t)]
    share = len(flagged) / len(strings)
    listing = "\n".join(f"  {f}: {t}" for f, t in flagged)
    assert len(strings) > 300, f"expected the whole shared tree, read {len(strings)} strings"
    # The "about a fifth" counts every negation; the rule leaves out the compound items whose positive
    # half can be quoted ("Uses X — does NOT use Y"), so it lands a little lower.
    assert 0.12 <= share <= 0.25, f"flagged {len(flagged)} of {len(strings)} ({share:.1%}):\n{listing}"
    # Every flagged string reads as a negated requirement of the answer (what a reviewer checks in the list).
    for _, text in flagged:
        low = text.lower()
        assert any(w in low for w in ("not", "never", "avoid", "dormant", "without")), f"{text}\n{listing}"


def _qdrant_musts() -> list[RubricItem]:
    items = []
    for path in sorted(require(QDRANT).rglob("test-prompts/*.json")):
        items += [i for i in TestPrompt.model_validate_json(path.read_bytes()).rubric if i.type == "must"]
    return items


def test_qdrant_prompts_get_no_absence_item_by_default() -> None:
    items = _qdrant_musts()
    assert items
    assert not absence_indexes(items), "our format: the rule is off unless an item says absence: true"
    flagged = [i.text for i in items if asserts_absence(i.text)]
    # Were the rule on, it would flag only genuine absences (a leading negation), and at most a couple.
    assert len(flagged) <= 2, flagged
    assert all(t.lower().startswith(("don't", "does not", "do not", "never", "avoid")) for t in flagged), flagged


def test_the_bundled_suites_musts_are_never_flagged() -> None:
    root = Path(__file__).resolve().parents[2]
    texts = [i.text for p in sorted((root / "evals").rglob("test-prompts/*.json"))
             for i in TestPrompt.model_validate_json(p.read_bytes()).rubric if i.type == "must"]
    assert texts and not [t for t in texts if asserts_absence(t)]
