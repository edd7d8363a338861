"""``skillbench compare`` end to end: a temporary git repository holding the bundled suite at two commits.

Commit A is the bundled ``time-series-pandas`` family; commit B edits its SKILL.md (a new description and a marker
line in its body). The simulated endpoint is told, by a profile keyed on the description's hash
(:mod:`skillbench.sim._versions`), that A's version is worth nothing (gain 0) and B's the full default gain, so the
true direction is known: B is better. Every run is a real Claude Code CLI in a fresh Docker container.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pandas as pd
import pytest

from skillbench.cli import main
from skillbench.compare import shipped_schema
from skillbench.sim import SimServer, skill_version_key
from skillbench.suite import tree_hash
from tests.generation.test_generate import require_docker
from tests.helpers.git import commit_all, git
from tests.helpers.sim import forced, require_cli, write_profiles

FAMILY = "time-series-pandas"
OTHER = "pandas-performance"
BUNDLED = Path(__file__).resolve().parents[2] / "evals"
B_MARKER = "VERSION-B-MARKER: prefer asfreq before rolling."
B_DESCRIPTION = ("Use when a pandas time series needs resampling, rolling windows, lags, time zones or as-of joins "
                 "(revised edition).")


def edit_family(skill_md: Path) -> None:
    text = skill_md.read_text(encoding="utf-8")
    head, body = text.split("\n---\n", 1)
    lines = [f"description: {json.dumps(B_DESCRIPTION)}" if ln.startswith("description:") else ln
             for ln in head.splitlines()]
    skill_md.write_text("\n".join(lines) + "\n---\n" + body.rstrip() + f"\n\n{B_MARKER}\n", encoding="utf-8")


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> dict:
    """The repository (commits A then B), the suite folder inside it, and the sim profile file."""
    root = tmp_path_factory.mktemp("compare-repo")
    suite = root / "evals"  # a suite below the repository's top: paths are held relative to the repository
    shutil.copytree(BUNDLED, suite, ignore=shutil.ignore_patterns("weekly", "compare"))
    # The family's dormancy prompt would trigger under the forced profile below (it always triggers a listed
    # skill); the activation contract has its own tests, this file tests versions.
    (suite / "test-prompts" / f"dormancy-{FAMILY.replace('-pandas', '')}-cron-schedule.json").unlink()
    git(root, "init", "-q")
    a = commit_all(root, "A: the bundled family")
    a_key = skill_version_key(suite / "skills" / FAMILY / "SKILL.md")
    a_tree = tree_hash([suite / "skills" / FAMILY])
    edit_family(suite / "skills" / FAMILY / "SKILL.md")
    (root / "README.md").write_text("not part of the suite\n", encoding="utf-8")
    b = commit_all(root, "B: the family edited")
    b_key = skill_version_key(suite / "skills" / FAMILY / "SKILL.md")
    assert a_key != b_key
    # Every outcome decided (probabilities 0 and 1, a judge that never errs): the run ids carry the commits, which
    # differ on every test run, so any randomness left would make the verdict a draw of the day.
    profile = forced(trigger=1.0, trigger_floor=1.0, follow_link=1.0, must={"without": 0.0, "with": 1.0})
    judge = {"flip_rate": 0.0, "fabricated_quote_rate": 0.0, "position_bias": 0.0}
    # B is scripted as tuned to the test: the full gain on the scored prompts, none on the held-out ones (the
    # scored runs are unchanged by it: gain 1 is the default), so --generalization must flag it.
    profiles = write_profiles(root / "profiles.yaml", {"default": profile}, judges={"default": judge},
                              skill_versions={a_key: {"gain": 0.0}, b_key: {"gain": 1.0, "heldout_gain": 0.0}})
    return {"root": root, "suite": suite, "a": a, "b": b, "a_tree": a_tree,
            "b_tree": tree_hash([suite / "skills" / FAMILY]), "profiles": profiles}


def run_compare(repo: dict, *args: str, capsys=None) -> tuple[int, str, str]:
    with SimServer(repo["suite"], profiles=repo["profiles"], seed=11) as server:
        code = main(["compare", str(repo["suite"]), "--models", "haiku", "--reps", "1", "--jobs", "3",
                     "--backend", "sim", "--endpoint", server.base_url, "--seed", "11", *args])
    out = capsys.readouterr() if capsys is not None else None
    return code, out.out if out else "", out.err if out else ""


@pytest.fixture(scope="module")
def forward(repo, tmp_path_factory) -> dict:
    """``compare --base A`` (head: the clean working tree at B)."""
    require_cli()
    require_docker()
    with SimServer(repo["suite"], profiles=repo["profiles"], seed=11) as server:
        code = main(["compare", str(repo["suite"]), "--base", "HEAD~1", "--models", "haiku", "--reps", "1",
                     "--jobs", "3", "--backend", "sim", "--endpoint", server.base_url, "--seed", "11",
                     "--fail-on", "no-improvement"])
    run_dir = repo["suite"] / "compare" / f"compare-{repo['a'][:12]}-{repo['b'][:12]}"
    return {"code": code, "run_dir": run_dir}


def test_compare_plans_only_the_changed_family_and_finds_the_known_improvement(repo, forward):
    run_dir = forward["run_dir"]
    plan = pd.read_csv(run_dir / "plan.csv")
    assert set(plan["skill_family"]) == {FAMILY}
    assert set(plan["condition"]) == {"no-skill", "with-skill@HEAD~1", "with-skill@HEAD"}
    run = json.loads((run_dir / "run.json").read_text())
    assert run["arms"] == {"treatment": "with-skill@HEAD", "control": "with-skill@HEAD~1", "reference": "no-skill"}
    assert run["versions"]["with-skill@HEAD~1"]["commit"] == repo["a"]
    assert run["versions"]["with-skill@HEAD"]["commit"] == repo["b"]
    results = json.loads((run_dir / "results.json").read_text())
    jsonschema.validate(results, shipped_schema())
    assert results["changes"]["families"] == [FAMILY] and "README.md" not in results["changes"]["files"]
    [verdict] = results["verdicts"]
    assert verdict["state"] == "VALID_PASS" and verdict["finding"] == "improvement", verdict
    assert verdict["wins"] > verdict["losses"] and verdict["must_lift"] > 0
    assert forward["code"] == 0  # --fail-on no-improvement, and it improved
    text = (run_dir / "compare.md").read_text()
    assert text.index("## Verdicts") < text.index("## Measurement health") < text.index("## What changed")
    assert "IMPROVEMENT" in text and "every version-arm run came from its declared commit" in text
    assert not (repo["suite"] / "weekly").exists() and not list(run_dir.parent.glob("*history*"))


def test_each_arm_installs_its_commits_files_inside_the_container(repo, forward):
    run_dir = forward["run_dir"]
    manifest = pd.read_csv(run_dir / "manifest.csv", dtype=str, keep_default_na=False)
    base = manifest[manifest["condition"].eq("with-skill@HEAD~1")]
    head = manifest[manifest["condition"].eq("with-skill@HEAD")]
    assert set(base["skills_commit"]) == {repo["a"]} and set(head["skills_commit"]) == {repo["b"]}
    assert set(base["skills_tree"]) == {repo["a_tree"]} and set(head["skills_tree"]) == {repo["b_tree"]}
    assert set(base["skills_ref"]) == {"HEAD~1"} and set(manifest[manifest["condition"].eq("no-skill")]
                                                          ["skills_commit"]) == {""}

    def skill_text(run_id: str) -> str:
        """What the CLI inside the container loaded: the Skill tool's result in the run's transcript."""
        events = [json.loads(line) for line in (run_dir / run_id / "transcript.jsonl").read_text().splitlines()]
        return json.dumps([e for e in events if e.get("type") == "user"])

    loaded = lambda frame: frame[frame["skill_activation"].eq("skill_tool")]["run_id"]  # noqa: E731
    assert len(loaded(base)) and len(loaded(head))
    assert all("VERSION-B-MARKER" not in skill_text(r) for r in loaded(base))
    assert all("VERSION-B-MARKER" in skill_text(r) for r in loaded(head))


def test_reversed_comparison_is_a_report_only_preference_loss(repo, forward, tmp_path, capsys):
    """--head A (a materialized commit, not the working tree) against --base B: the edit undone is worse."""
    common = ["--models", "haiku", "--reps", "1", "--jobs", "3", "--backend", "sim", "--seed", "11",
              "--out-dir", str(tmp_path / "rev")]
    with SimServer(repo["suite"], profiles=repo["profiles"], seed=11) as server:
        code = main(["compare", str(repo["suite"]), "--base", repo["b"], "--head", repo["a"][:12], *common,
                     "--endpoint", server.base_url, "--fail-on", "no-improvement"])
        assert code == 1  # not an improvement
        capsys.readouterr()
        # Resumed, nothing to rerun: the other --fail-on reads the same verdicts.
        code = main(["compare", str(repo["suite"]), "--base", repo["b"], "--head", repo["a"][:12], *common,
                     "--endpoint", server.base_url, "--fail-on", "regression"])
    assert code == 0  # a preference loss is report-only; without checks nothing is a VALID_REGRESSION
    assert capsys.readouterr().out.strip() == str(tmp_path / "rev" / "compare.md")
    results = json.loads((tmp_path / "rev" / "results.json").read_text())
    jsonschema.validate(results, shipped_schema())
    [verdict] = results["verdicts"]
    assert verdict["finding"] == "preference loss (report only)" and verdict["losses"] > verdict["wins"], verdict
    assert results["head"]["commit"] == repo["a"] and results["base"]["commit"] == repo["b"]
    manifest = pd.read_csv(tmp_path / "rev" / "manifest.csv", dtype=str, keep_default_na=False)
    assert set(manifest.loc[manifest["condition"].eq(f"with-skill@{repo['a'][:12]}"), "skills_tree"]) == {
        repo["a_tree"]}


def test_a_run_from_another_commit_makes_the_record_invalid(repo, forward, tmp_path, capsys):
    """dotnet's exact-commit rule: a run folder whose skills came from another commit invalidates the verdict."""
    copy = tmp_path / "tampered"
    shutil.copytree(forward["run_dir"], copy)
    meta_path = next(p for p in copy.glob("*/metadata.json") if json.loads(p.read_text())["condition"]
                     == "with-skill@HEAD")
    meta = json.loads(meta_path.read_text())
    meta["skills_commit"] = "0" * 40
    meta_path.write_text(json.dumps(meta))
    code, out, err = run_compare(repo, "--base", "HEAD~1", "--out-dir", str(copy), "--fail-on", "regression",
                                 capsys=capsys)
    assert code == 1, err
    [verdict] = json.loads((copy / "results.json").read_text())["verdicts"]
    assert verdict["verdict"] == "INVALID_INCONCLUSIVE (commit_mismatch)"
    assert meta["run_id"] in json.loads((copy / "results.json").read_text())["health"]["commit_mismatches"]
    assert "run(s) from another commit than declared" in (copy / "compare.md").read_text()


def test_the_report_notebook_executes_on_the_comparison(repo, forward, capsys):
    code, out, err = run_compare(repo, "--base", "HEAD~1", "--report", capsys=capsys)
    assert code == 0, err
    html = forward["run_dir"] / "compare_versions.html"
    assert html.is_file() and str(html) in err
    nb = json.loads((forward["run_dir"] / "compare_versions.ipynb").read_text())
    outputs = json.dumps([c.get("outputs", []) for c in nb["cells"]])
    assert "improvement" in outputs and FAMILY in outputs and "Traceback" not in outputs
    # the page's prompts and families open the comparison's run pages, written beside it
    assert (forward["run_dir"] / "runs" / "index.html").is_file() and 'href="runs/' in html.read_text()


def test_generalization_runs_the_held_out_prompts_apart_and_flags_the_head_tuned_to_the_test(repo, forward, capsys):
    """The forward comparison again with --generalization (its scored week resumes: nothing reruns): the held-out
    prompts run in _heldout/, the scored files and verdicts stay byte-identical, the gap is shown, B (scripted to
    help only the scored prompts) is flagged, and the use is recorded."""
    run_dir = forward["run_dir"]
    before = {name: (run_dir / name).read_bytes() for name in ("scores.csv", "pairs.csv", "manifest.csv")}
    verdicts = json.loads((run_dir / "results.json").read_text())["verdicts"]
    args = ["--base", "HEAD~1", "--generalization", "--sandbox", "local"]  # only the held-out runs are new
    code, _, err = run_compare(repo, *args, capsys=capsys)
    assert code == 0, err
    assert {name: (run_dir / name).read_bytes() for name in before} == before
    results = json.loads((run_dir / "results.json").read_text())
    jsonschema.validate(results, shipped_schema())
    assert results["verdicts"] == verdicts
    held = run_dir / "_heldout"
    plan = pd.read_csv(held / "plan.csv")
    heldout = sorted(p.stem for p in (repo["suite"] / "test-prompts").glob("heldout-*.json")
                     if f"/{FAMILY}/" in json.loads(p.read_text())["skill_url"])
    assert sorted(set(plan["prompt"])) == heldout and len(heldout) >= 5
    assert set(plan["condition"]) == {"with-skill@HEAD~1", "with-skill@HEAD"}  # the pair the lift compares
    assert not set(pd.read_csv(run_dir / "plan.csv")["prompt"]) & set(heldout)
    [record] = results["generalization"]["records"]
    assert record["n_heldout"] == len(heldout) and record["scored_lift"] > 0 and record["heldout_lift"] == 0
    assert record["flagged"] and record["reading"] == "may be tuned to the test"
    g = results["generalization"]
    assert g["complete"] and g["runs"].startswith(f"expected {2 * len(heldout)} · written {2 * len(heldout)}")
    assert "may be tuned to the test" in (run_dir / "compare.md").read_text()
    uses = pd.read_csv(repo["suite"] / "heldout-uses.csv", dtype=str)  # a rerun adds none: test_generalization.py
    assert sorted(uses["prompt"]) == heldout and set(uses["head_commit"]) == {repo["b"]}

