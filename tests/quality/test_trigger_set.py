"""The trigger set: its sides, the seeded stratified 60/40 split, the one-line refusal, and description edits."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillbench.quality.rewriter import read_payload, rewrite_payload, rewrite_request
from skillbench.quality.trigger_runs import with_description
from skillbench.quality.trigger_set import TEST, TRAIN, TriggerSetError, build_trigger_set
from skillbench.sim.rewrite import rewrite
from skillbench.suite.load import load_suite

ROOT = Path(__file__).resolve().parents[2]
EVALS, TINY = ROOT / "evals", ROOT / "tests" / "data" / "tiny-suite"


def test_bundled_family_splits_60_40_per_side_with_the_seed() -> None:
    suite = load_suite(EVALS)
    tset = build_trigger_set(suite, "time-series-pandas", seed=0)
    # 6 scored prompts + 1 held-out + 4 trigger-evals queries = 11 should; as many should-not (balanced)
    assert tset.counts() == {"train_should": 7, "train_should_not": 7, "test_should": 4, "test_should_not": 4}
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
    assert "1 should-trigger" in message and "test split of 0" in message and "--trigger-set" in message


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
    assert read_payload(body)["missed"] == missed and body["tool_choice"]["name"] == "propose_description"
    proposed = rewrite(read_payload(body))
    assert proposed.startswith("Notes on pandas. Use when: '") and "Do not use for: '" in proposed
    assert rewrite(read_payload(body)) == proposed  # deterministic
    assert rewrite({**read_payload(body), "missed": [], "false_triggers": []}) == "Notes on pandas."
