"""The one slug rule: run ids, condition labels and stimulus ids as safe folder names, short ids, the mapping file."""

from __future__ import annotations

import csv
import json
import re
import shutil

import pandas as pd
import pytest

from skillbench.generation import make_plan, run_id
from skillbench.ledgers import SLUGS_FILE, is_safe, original_name, read_slugs, record_slugs, short_id, slug
from skillbench.suite import load_suite
from tests.helpers.shared import QDRANT, TINY_SUITE, TINY_WEEK, require

SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
UNSAFE = ["Microsoft.Extensions.Logging sample", "with-skill@origin/main", "a b", "a/b", "../../etc", ".hidden",
          "_aside", "-flag", "x..y", "ünïcode name", "tab\there", "", "a" * 300, "con:sole", "a\\b"]


@pytest.mark.parametrize("name", ["csv-garbled-names-haiku-no-skill-r1-20261130", "qdrant-clients-sdk",
                                  "dotnet.tests_v2", "20260808T073023Z", "with-skill"])
def test_a_safe_name_is_its_own_slug(name):
    assert is_safe(name) and slug(name) == name


@pytest.mark.parametrize("name", UNSAFE)
def test_an_unsafe_name_maps_to_a_safe_folder_name(name):
    s = slug(name)
    assert SAFE.match(s) and ".." not in s and len(s) <= 200, s
    assert s != name and slug(name) == s, "deterministic"
    assert is_safe(s) and slug(s) == s, "a slug is its own slug"


def test_names_that_clean_up_alike_get_different_slugs():
    names = ["a b", "a/b", "a@b", "a-b"]  # the last is safe: it stays itself
    slugs = [slug(n) for n in names]
    assert len(set(slugs)) == len(names)
    assert slugs[-1] == "a-b" and all(s.startswith("a-b-") for s in slugs[:3])
    assert slug("with-skill@origin/main").startswith("with-skill-origin-main-")


def test_a_short_id_fits_a_custom_id_and_maps_back(tmp_path):
    name = "Microsoft.Extensions.Logging sample-claude-sonnet-4-5[1m]-with-skill@origin/main-r3-20261130"
    sid = short_id(name)
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", sid) and short_id(name) == sid
    assert short_id(name + "x") != sid
    record_slugs(tmp_path, short=[name])
    assert original_name(tmp_path, sid) == name


def test_the_mapping_file_records_only_changed_names(tmp_path):
    record_slugs(tmp_path, ["plain-name", "also.plain"])
    assert not (tmp_path / SLUGS_FILE).exists(), "a week of ordinary names has no slugs.json"
    mapped = record_slugs(tmp_path, ["plain-name", "a b", "with-skill@origin/main"])
    data = json.loads((tmp_path / SLUGS_FILE).read_text())
    assert data["slugs"] == {mapped["a b"]: "a b", mapped["with-skill@origin/main"]: "with-skill@origin/main"}
    assert original_name(tmp_path, mapped["a b"]) == "a b" and original_name(tmp_path, "plain-name") == "plain-name"
    record_slugs(tmp_path, ["a b"])  # recording again changes nothing
    assert read_slugs(tmp_path) == data


def test_a_recorded_slug_never_names_two_names(tmp_path):
    record_slugs(tmp_path, ["a b"])
    data = read_slugs(tmp_path)
    key = next(iter(data["slugs"]))
    data["slugs"][key] = "someone else"
    (tmp_path / SLUGS_FILE).write_text(json.dumps(data))
    with pytest.raises(ValueError, match="already names 'someone else'"):
        record_slugs(tmp_path, ["a b"])


def test_run_ids_go_through_the_rule_and_ordinary_ids_are_unchanged():
    assert run_id("p q", "sonnet", "with-skill@origin/main", 1, "k") == \
        slug("p q-sonnet-with-skill@origin/main-r1-k")
    # the committed tiny week: today's plan gives its run ids byte for byte
    week = TINY_WEEK / "20261130"
    committed = pd.read_csv(week / "plan.csv", dtype=str)
    run = json.loads((week / "run.json").read_text())
    plan = make_plan(load_suite(TINY_SUITE), "20261130", models=run["models"], conditions=run["conditions"],
                     reps=run["reps"], seed=run["seed"])
    assert list(plan.run_id) == list(committed.run_id)
    folders = {p.name for p in week.iterdir() if p.is_dir()}
    assert set(committed.run_id) <= folders and all(slug(name) == name for name in folders)


def test_qdrants_published_run_ids_are_their_own_slugs():
    manifest = require(QDRANT / "evals" / "weekly" / "20260808" / "manifest.csv")
    with open(manifest, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows
    for row in rows:
        assert slug(row["run_id"]) == row["run_id"]
        for name in (row["prompt"], row["condition"], row["skill_family"]):
            assert slug(name) == name


def test_generate_records_the_mapping_of_an_unsafe_prompt_name(tmp_path, capsys):
    """A stimulus named like a dotnet test ("Logging sample.v2") runs under a safe folder name, mapped back."""
    from skillbench.cli import main

    suite = tmp_path / "suite"
    shutil.copytree(TINY_SUITE, suite)
    source = suite / "test-prompts" / "dates-day-month-swapped.json"
    spec = json.loads(source.read_text())
    spec["name"] = "Dates sample.v2"
    source.unlink()
    (suite / "test-prompts" / "Dates sample.v2.json").write_text(json.dumps(spec))
    out = tmp_path / "w"
    assert main(["generate", str(suite), "--run-key", "k1", "--out-dir", str(out), "--backend", "sim",
                 "--models", "haiku", "--conditions", "with-skill", "--reps", "1", "--dry-run"]) == 0
    plan = pd.read_csv(out / "plan.csv", dtype=str)
    row = plan[plan.prompt == "Dates sample.v2"].iloc[0]
    assert row.run_id == slug("Dates sample.v2-haiku-with-skill-r1-k1") and SAFE.match(row.run_id)
    assert original_name(out, row.run_id) == "Dates sample.v2-haiku-with-skill-r1-k1"
    others = plan[plan.prompt != "Dates sample.v2"]
    assert all(r == f"{p}-haiku-with-skill-r1-k1" for r, p in zip(others.run_id, others.prompt, strict=True))
