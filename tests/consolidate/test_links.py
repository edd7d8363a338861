"""A leg holds no symbolic link where the merge reads or copies (no Docker, no CLI): its ledgers and run folders
hold none, and a link in ``_versions/`` or ``_placebo/`` stays inside its own entry."""

from __future__ import annotations

from pathlib import Path

from skillbench.consolidate._leg_ledgers import link_problems


def test_links_in_a_leg(tmp_path):
    leg = tmp_path / "leg"
    (leg / "run-1").mkdir(parents=True)
    (leg / "run-1" / "metadata.json").write_text("{}")
    (leg / "truth.csv").write_text("run_id\n")
    entry = leg / "_versions" / "abc123" / "skills" / "tyre"
    entry.mkdir(parents=True)
    (entry / "SKILL.md").write_text("# Tyre\n")
    (entry / "README.md").symlink_to("SKILL.md")  # a repository's own link, inside its entry: kept
    assert link_problems(leg, ["run-1"], ["truth.csv", "checks.csv"], ["_versions", "_placebo"]) == []

    host = tmp_path / "host.txt"
    host.write_text("secret\n")
    (entry / "leak.md").symlink_to(host)
    (leg / "run-1" / "stderr.txt").symlink_to(host)
    (leg / "checks.csv").symlink_to(host)
    (found,) = link_problems(leg, ["run-1"], ["truth.csv", "checks.csv"], ["_versions", "_placebo"])
    assert found.startswith("holds 3 symbolic link(s)")
    for name in ("checks.csv", "run-1/stderr.txt", "_versions/abc123/skills/tyre/leak.md"):
        assert name in found


def test_a_run_folder_that_is_a_link_is_named(tmp_path):
    leg = tmp_path / "leg"
    leg.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    Path(leg / "run-1").symlink_to(elsewhere)
    (found,) = link_problems(leg, ["run-1"], [])
    assert "(run-1)" in found
