"""The trigger set: its sides, the seeded stratified 60/40 split (held-out side rounded up), generated near-misses,
the one-line refusal, and description edits."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillbench.quality import with_description
from skillbench.quality._rewriter import read_rewrite_payload, rewrite_payload, rewrite_request
from skillbench.quality._trigger_set import (
    GENERATED,
    TEST,
    TRAIN,
    TriggerSetError,
    build_trigger_set,
    check_splittable,
    held_out_size,
)
from skillbench.sim._rewrite import rewrite
from skillbench.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]
EVALS, TINY = ROOT / "evals", ROOT / "tests" / "data" / "tiny-suite"


def test_bundled_family_splits_60_40_per_side_with_the_seed() -> None:
    suite = load_suite(EVALS)
    tset = build_trigger_set(suite, "time-series-pandas", seed=0)
    # 6 scored prompts + 5 held-out + 4 trigger-evals queries = 15 should; as many should-not (balanced);
    # ceil(0.4 × 15) = 6 held out per side
    assert tset.counts() == {"train_should": 9, "train_should_not": 9, "test_should": 6, "test_should_not": 6,
                             "train_generated": 0, "test_generated": 0}
    sources = {q.source.split(":")[0] for q in tset.queries if not q.should_trigger}
    assert {"dormancy", "trigger-eval"} <= sources
    again = build_trigger_set(suite, "time-series-pandas", seed=0)
    assert [(q.id, q.split) for q in again.queries] == [(q.id, q.split) for q in tset.queries]
    other = build_trigger_set(suite, "time-series-pandas", seed=1)
    assert {q.id: q.split for q in other.queries} != {q.id: q.split for q in tset.queries}
    assert {q.split for q in tset.queries} == {TRAIN, TEST}


def test_a_family_with_too_few_queries_is_refused_in_one_line_naming_counts_and_fix() -> None:
    suite = load_suite(TINY)
    with pytest.raises(TriggerSetError) as err:
        build_trigger_set(suite, "dates")
    message = str(err.value)
    assert "\n" not in message
    assert "1 should-trigger" in message and "test split of 1" in message and "--trigger-set" in message
    assert "8 per side, the test side rounded up" in message


def _extra(tmp_path: Path, should: int, should_not: int) -> Path:
    """A --trigger-set file for tiny-suite's ``dates`` with ``should`` + ``should_not`` more queries."""
    items = [{"query": f"parse the day-first dates of invoice batch {i} without swapping day and month",
              "should_trigger": True} for i in range(should)]
    items += [{"query": f"draw a bar chart of the weekly sales of store {i}", "should_trigger": False}
              for i in range(should_not)]
    path = tmp_path / "extra.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def test_the_held_out_side_is_rounded_up_so_eight_split_four_four_and_seven_are_refused(tmp_path: Path) -> None:
    assert [held_out_size(n) for n in (1, 2, 5, 7, 8, 10, 15)] == [1, 1, 2, 3, 4, 4, 6]  # ceil(0.4 n), no float drift
    suite = load_suite(TINY)
    # dates: 1 prompt + 7 queries = 8 should; 3 suite should-not + 5 queries = 8
    tset = build_trigger_set(suite, "dates", seed=0, extra=_extra(tmp_path, 7, 5))
    assert tset.counts() == {"train_should": 4, "train_should_not": 4, "test_should": 4, "test_should_not": 4,
                             "train_generated": 0, "test_generated": 0}
    with pytest.raises(TriggerSetError, match="7 should-trigger and 8 should-not give a test split of 3 and 4"):
        build_trigger_set(suite, "dates", seed=0, extra=_extra(tmp_path, 6, 5))


def test_generated_near_misses_are_labelled_their_own_stratum_and_never_duplicate_a_suite_query() -> None:
    suite = load_suite(EVALS)
    base = build_trigger_set(suite, "time-series-pandas", seed=0)
    known = base.part(TRAIN, False)[0].text
    made = ["Is my A/B test significant? Our project also involves resample and weekly.",
            "Pandas is slow? Our project also involves rolling and day.",
            "How do I run a regression? Our project also involves missing and series.",
            "How many users do I need? Our project also involves average and lag.",
            f"  {known.upper()} "]  # already in the set (case and spacing aside): dropped
    tset = build_trigger_set(suite, "time-series-pandas", seed=0, generated=made)
    generated = [q for q in tset.queries if q.source == GENERATED]
    assert sorted(q.text for q in generated) == sorted(made[:4]) and not any(q.should_trigger for q in generated)
    counts = tset.counts()
    assert (counts["train_generated"], counts["test_generated"]) == (2, 2)  # ceil(0.4 × 4) held out
    suite_side = {(q.id, q.split) for q in base.queries}
    assert suite_side == {(q.id, q.split) for q in tset.queries if q.source != GENERATED}  # the rest unchanged
    assert tset.as_json()["near_misses_requested"] == 5 and tset.as_json()["test_rounding"] == "ceil"
    with pytest.raises(TriggerSetError, match="too few queries"):
        check_splittable(load_suite(TINY), "dates", near_misses=4)


def test_an_unknown_family_is_refused() -> None:
    with pytest.raises(TriggerSetError, match="not a skill family"):
        build_trigger_set(load_suite(TINY), "nope")


def test_with_description_changes_only_the_description(tmp_path: Path) -> None:
    text = (TINY / "skills" / "csv-io" / "SKILL.md").read_text(encoding="utf-8")
    new = with_description(text, "It's \"quoted\": Use when x.")
    old_lines, new_lines = text.splitlines(), new.splitlines()
    changed = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    assert changed == [2] and new_lines[2] == 'description: "It\'s \\"quoted\\": Use when x."'
    folded = "---\nname: a\ndescription: >\n  two\n  lines\nallowed-tools: []\n---\nbody\n"
    assert with_description(folded, "one") == "---\nname: a\ndescription: \"one\"\nallowed-tools: []\n---\nbody\n"


def test_the_rewriter_request_holds_train_failures_only_and_the_sim_reads_nothing_else(tmp_path: Path) -> None:
    suite_dir = Path(shutil.copytree(EVALS, tmp_path / "evals", ignore=shutil.ignore_patterns("weekly")))
    tset = build_trigger_set(load_suite(suite_dir), "time-series-pandas", seed=0)
    missed = [q.text for q in tset.part(TRAIN, True)][:2]
    false = [q.text for q in tset.part(TRAIN, False)][:1]
    body = rewrite_request(rewrite_payload("time-series-pandas", "Notes on pandas.", missed, false))
    text = body["messages"][0]["content"]
    assert all(q.text not in text for q in tset.part(TEST))
    assert read_rewrite_payload(body)["missed"] == missed and body["tool_choice"]["name"] == "propose_description"
    proposed = rewrite(read_rewrite_payload(body))
    assert proposed.startswith("Notes on pandas. Use when: '") and "Do not use for: '" in proposed
    assert rewrite(read_rewrite_payload(body)) == proposed  # deterministic
    assert rewrite({**read_rewrite_payload(body), "missed": [], "false_triggers": []}) == "Notes on pandas."
