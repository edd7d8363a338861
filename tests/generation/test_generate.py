"""Generation with the real CLI, the simulated endpoint and real containers (or the local sandbox).

The matrix is the tiny suite's two lift prompts × 2 models × 3 conditions × 2 reps = 24 runs per sandbox.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from skillbench.generation import (
    CliCall,
    GenerateOptions,
    PlanError,
    RelayPlan,
    choose_sandbox,
    cli_args,
    cli_env,
    docker_available,
    finished_runs,
    generate,
    make_plan,
    write_plan,
)
from skillbench.generation._image import RUNNER_HOME
from skillbench.generation._run import move_partials_aside
from skillbench.ledgers._columns import MANIFEST_COLUMNS, QDRANT_MANIFEST_COLUMNS
from skillbench.runtime import PassContext
from skillbench.signals import activation_signals, parse_transcript_text, read_transcript, run_signals
from skillbench.suite import load_suite
from skillbench.weekly import model_endpoint
from tests.helpers.relay import offline_plan
from tests.helpers.shared import IN_CI, SHARED, TINY_SUITE, require
from tests.helpers.sim import connect_targets, forced, require_cli, write_profiles

MODELS = ["sonnet", "haiku"]
CONDITIONS = ["no-skill", "with-skill", "plugin"]


def require_docker() -> None:
    if not docker_available():
        if IN_CI:
            pytest.fail("CI must have a Docker engine: `make setup` starts dockerd")
        pytest.skip("no Docker engine answers (run `make setup` as root to start dockerd)")


@pytest.fixture(scope="module")
def matrix_suite(tmp_path_factory) -> Path:
    """The tiny suite without its dormancy prompt: exactly 2 prompts × 2 models × 3 conditions × 2 reps."""
    root = tmp_path_factory.mktemp("suite") / "evals"
    shutil.copytree(TINY_SUITE, root)
    (root / "test-prompts" / "dormancy-dates-sql-interval.json").unlink()
    return root


def _opts(out_dir: Path, **kw) -> GenerateOptions:
    base = dict(run_key="gt", out_dir=out_dir, models=MODELS, conditions=CONDITIONS, reps=2, jobs=3, seed=7,
                timeout_s=180)
    return GenerateOptions(**{**base, **kw})


def _endpoint(suite_dir: Path, profiles: Path | None = None, seed: int = 7):
    return lambda: model_endpoint("sim", suite_dir=suite_dir, seed=seed, profiles=profiles)


def _generate_cli(suite: Path, out_dir: Path, *extra: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "skillbench.cli", "generate", str(suite), "--run-key", "gt", "--out-dir", str(out_dir),
           "--backend", "sim", "--seed", "7", "--jobs", "3", "--timeout", "180", *extra]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


@pytest.fixture(scope="module", params=["docker", "local"])
def week(request, matrix_suite, tmp_path_factory) -> tuple[str, Path]:
    """A generated week; the docker one is killed with SIGKILL mid-matrix and resumed."""
    require_cli()
    sandbox = request.param
    if sandbox == "docker":
        require_docker()
    out_dir = tmp_path_factory.mktemp(f"week-{sandbox}") / "gt"
    if sandbox == "docker":
        proc = _generate_cli(matrix_suite, out_dir, "--sandbox", "docker")
        deadline = time.time() + 240
        while time.time() < deadline and len(finished_runs(out_dir) if out_dir.exists() else ()) < 6:
            time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGKILL)  # kill -9 of the generator, mid-matrix
        proc.wait()
        assert 0 < len(finished_runs(out_dir)) < 24, "the kill must land mid-matrix"
    proc = _generate_cli(matrix_suite, out_dir, "--sandbox", sandbox)
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err.decode()[-3000:]
    return sandbox, out_dir


def test_week_is_complete_and_reconciled(week):
    _, out_dir = week
    plan = pd.read_csv(out_dir / "plan.csv")
    manifest = pd.read_csv(out_dir / "manifest.csv")
    recon = json.loads((out_dir / "reconciliation.json").read_text())
    assert len(plan) == 24
    assert recon["complete"] and recon["expected"] == recon["observed"] == recon["written"] == 24
    assert sorted(manifest.run_id) == sorted(plan.run_id), "every planned run exactly once"
    assert list(manifest.columns) == list(MANIFEST_COLUMNS)
    assert list(manifest.columns[:23]) == list(QDRANT_MANIFEST_COLUMNS)
    assert (manifest.signals_ok == 1).all()
    assert (manifest.exit_code == 0).all()
    assert set(manifest.endpoint) == {"simulated"}


def test_resume_after_kill_left_no_duplicates(week):
    sandbox, out_dir = week
    dirs = [p.name for p in out_dir.iterdir() if p.is_dir() and not p.name.startswith("_")]
    assert sorted(dirs) == sorted(pd.read_csv(out_dir / "plan.csv").run_id)
    if sandbox == "docker":
        import docker

        left = docker.from_env().containers.list(all=True, filters={"label": f"skillbench.out_dir={out_dir}"})
        assert not left, "no container of this week is left behind"


def test_skill_listed_only_where_installed(week):
    sandbox, out_dir = week
    manifest = pd.read_csv(out_dir / "manifest.csv")
    assert set(manifest.sandbox) == {sandbox}
    for row in manifest.itertuples():
        assert row.skill_available == int(row.condition != "no-skill"), row.run_id
        init = read_transcript(out_dir / row.run_id / "transcript.jsonl").init
        families = {"csv-io", "dates"} & set(init["skills"])
        expected = {"no-skill": set(), "with-skill": {row.skill_family}, "plugin": {"csv-io", "dates"}}
        assert families == expected[row.condition], row.run_id


def test_activation_agrees_with_truth(week):
    _, out_dir = week
    manifest = pd.read_csv(out_dir / "manifest.csv").set_index("run_id")
    truth = pd.read_csv(out_dir / "truth.csv")
    final = truth.sort_values("attempt").groupby("run_id").last()
    assert set(final.index) == set(manifest.index)
    routes = final.activation_route.reindex(manifest.index)
    pd.testing.assert_series_equal(manifest.skill_activation, routes, check_names=False)
    assert (manifest.skill_activation != "none").any() and (manifest.skill_activation == "none").any()


def test_metadata_records_sandbox_and_never_the_key(week):
    sandbox, out_dir = week
    for meta_path in out_dir.glob("*/metadata.json"):
        meta = json.loads(meta_path.read_text())
        assert meta["sandbox"] == sandbox and meta["endpoint"] == "simulated"
        assert meta["site_base"].startswith("http://127.0.0.1:")
        assert (sandbox == "docker") == bool(meta["image_id"])
    for path in out_dir.rglob("*"):
        if path.is_file():
            assert b"sk-skillbench-sim" not in path.read_bytes(), path


def test_plan_order_is_shuffled_with_recorded_seed(matrix_suite):
    suite = load_suite(matrix_suite)
    a = make_plan(suite, "k", models=MODELS, conditions=CONDITIONS, reps=2, seed=1)
    b = make_plan(suite, "k", models=MODELS, conditions=CONDITIONS, reps=2, seed=1)
    c = make_plan(suite, "k", models=MODELS, conditions=CONDITIONS, reps=2, seed=2)
    assert a.equals(b) and not a.run_id.equals(c.run_id)
    first_half = a.head(12)
    assert first_half.condition.nunique() == 3, "arms interleave"
    assert a.run_id.iloc[0].endswith("-k") and "-r" in a.run_id.iloc[0]


def test_dormancy_runs_only_in_skilled_arms():
    suite = load_suite(TINY_SUITE)
    plan = make_plan(suite, "k", models=["haiku"], conditions=CONDITIONS, reps=1, seed=0)
    dormant = plan[plan.dormancy == 1]
    assert set(dormant.condition) == {"with-skill", "plugin"}
    assert "heldout-csv-slow" not in set(plan.prompt)
    assert set(plan.columns) >= {"run_id", "skill_leaf", "order"}


def test_changed_plan_is_refused(tmp_path):
    suite = load_suite(TINY_SUITE)
    write_plan(make_plan(suite, "k", models=["haiku"], conditions=CONDITIONS, reps=1, seed=0), tmp_path)
    with pytest.raises(PlanError, match="plan.csv"):
        write_plan(make_plan(suite, "k", models=["haiku"], conditions=CONDITIONS, reps=2, seed=0), tmp_path)


def test_dry_run_writes_plan_only(tmp_path, capsys):
    from skillbench.cli import main

    out = tmp_path / "dry"
    assert main(["generate", str(TINY_SUITE), "--run-key", "dry", "--out-dir", str(out), "--backend", "sim",
                 "--dry-run"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["plan.csv", "run.json"]
    assert "--permission-mode dontAsk" in capsys.readouterr().err


def test_partial_run_dirs_are_moved_aside(tmp_path):
    (tmp_path / ".tmp-a-run").mkdir()
    (tmp_path / "b-run").mkdir()
    (tmp_path / "b-run" / "transcript.jsonl").write_text('{"type":"system","subtype":"init"}\n')
    (tmp_path / "notes").mkdir()  # not a run of this plan: never touched
    moved = move_partials_aside(tmp_path, done=set(), planned={"a-run", "b-run"})
    assert sorted(moved) == ["a-run", "b-run"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["_aside", "notes"]


def test_aside_keeps_the_latest_failed_attempt_of_a_run_never_one_per_resume(tmp_path):
    """A run whose setup fails at every resume would add its captured output again at every pass."""
    for week in range(3):
        (tmp_path / "b-run").mkdir()
        (tmp_path / "b-run" / "stderr.txt").write_text(f"setup failed, pass {week}\n")
        (tmp_path / "b-run.x").mkdir(exist_ok=True)  # another run whose id starts alike: never touched
        move_partials_aside(tmp_path, done={"b-run.x"}, planned={"b-run", "b-run.x"})
    kept = sorted((tmp_path / "_aside").iterdir())
    assert len(kept) == 1 and (kept[0] / "stderr.txt").read_text() == "setup failed, pass 2\n"
    assert (tmp_path / "b-run.x").is_dir()


def _one_run(tmp_path, suite_dir: Path, profiles: Path, *, reps: int = 1, conditions=("with-skill",),
             timeout: float = 120, extra_env=None):
    sandbox, model = "local", "haiku"
    suite = load_suite(suite_dir)
    suite.prompts = [p for p in suite.prompts if p.name == "dates-day-month-swapped"]
    opts = _opts(tmp_path / "w", models=[model], conditions=list(conditions), reps=reps, jobs=1, sandbox=sandbox,
                 timeout_s=timeout, extra_env=extra_env or {})
    report = generate(suite, opts, PassContext(endpoint=_endpoint(suite_dir, profiles), log=lambda m: None))
    return report, opts.out_dir


def test_forced_budget_crossing_is_flagged(tmp_path):
    require_cli()
    profiles = write_profiles(tmp_path / "p.yaml", {"haiku": forced(budget_cross=1.0)})
    report, out_dir = _one_run(tmp_path, TINY_SUITE, profiles)
    row = pd.read_csv(out_dir / "manifest.csv").iloc[0]
    assert report["complete"]
    assert row.budget_hit == 1 and row.result_subtype == "error_max_budget_usd" and row.is_error == 1
    assert row.total_cost_usd > 2.0


def test_stall_is_retried_once_and_recorded(tmp_path):
    require_cli()
    run_id = "dates-day-month-swapped-haiku-with-skill-r1-gt"
    faults = [{"kind": "stall", "header": f"X-Skillbench-Run-Id: {run_id}", "attempts": [1]}]
    profiles = write_profiles(tmp_path / "p.yaml", {"haiku": forced()}, faults=faults)
    # The stalled attempt waits out the whole timeout: 5 s, where a healthy local run takes about 1 s (measured
    # on two loaded cores), so the retry still finishes with room to spare.
    report, out_dir = _one_run(tmp_path, TINY_SUITE, profiles, timeout=5)
    meta = json.loads((out_dir / run_id / "metadata.json").read_text())
    assert [a["attempt"] for a in meta["attempts"]] == [1, 2]
    assert meta["attempts"][0]["retry_reason"] == "timeout" and meta["attempts"][1]["retry_reason"] is None
    assert (out_dir / run_id / "attempt-1.transcript.jsonl").exists()
    retries = json.loads((out_dir / "retries.json").read_text())
    assert [r["run_id"] for r in retries["retried_runs"]] == [run_id]
    assert report["complete"]
    assert pd.read_csv(out_dir / "manifest.csv").attempts.tolist() == [2]


def test_four_failing_groups_fail_the_leg_closed(tmp_path):
    require_cli()
    faults = [{"kind": "server_error", "rate": 1.0}]
    profiles = write_profiles(tmp_path / "p.yaml", {"haiku": forced()}, faults=faults)
    report, out_dir = _one_run(tmp_path, TINY_SUITE, profiles, reps=5, conditions=("no-skill",),
                               extra_env={"CLAUDE_CODE_MAX_RETRIES": "0"})
    assert report["stopped_legs"] == ["haiku|no-skill"]
    assert not report["accounted"] and not report["complete"]
    # the 4 runs that ended in an API error after their retry are missing too (run state api_error), not complete
    assert len(report["not_started"]) == 1 and len(report["missing"]) == 5 and report["observed"] == 0
    from skillbench.signals import run_state

    assert sorted(run_state(out_dir / r) for r in set(report["missing"]) - set(report["not_started"])) == \
        ["api_error"] * 4
    retries = json.loads((out_dir / "retries.json").read_text())
    assert retries["legs"]["haiku|no-skill"] == {"retried": 4, "stopped": True}

    # the outage is over: the same run key reruns the failed runs (moved aside, never overwritten) and heals
    healthy = write_profiles(tmp_path / "ok.yaml", {"haiku": forced()})
    suite = load_suite(TINY_SUITE)
    suite.prompts = [p for p in suite.prompts if p.name == "dates-day-month-swapped"]
    opts = _opts(out_dir, models=["haiku"], conditions=["no-skill"], reps=5, jobs=1, sandbox="local",
                 extra_env={"CLAUDE_CODE_MAX_RETRIES": "0"})
    healed = generate(suite, opts, PassContext(endpoint=_endpoint(TINY_SUITE, healthy), log=lambda m: None))
    assert healed["complete"] and not healed["stopped_legs"]
    assert (pd.read_csv(out_dir / "manifest.csv").is_error == 0).all()
    assert len(list((out_dir / "_aside").iterdir())) == 4
    assert len(json.loads((out_dir / "retries.json").read_text())["retried_runs"]) == 4


def test_strace_sealed_container_connects_only_to_the_endpoint(tmp_path):
    """strace inside a sealed container: every connect() of the CLI (and its tools) goes to the endpoint's
    127.0.0.1:PORT (served by the relay) or a local Unix socket, and the full run succeeds through the relay."""
    require_cli()
    require_docker()
    profiles = write_profiles(tmp_path / "p.yaml", {"sonnet": forced(self_serve=1.0, web_search=1.0)})
    suite = load_suite(TINY_SUITE)
    spec = suite.prompt("csv-garbled-names")
    with model_endpoint("sim", suite_dir=TINY_SUITE, profiles=profiles, truth=tmp_path / "truth.csv") as ep:
        sandbox = choose_sandbox("docker", ep, tmp_path, log=lambda m: None)  # what generate uses for this endpoint
        assert sandbox.network == "sealed"
        # the CLI under strace; the log follows the transcript on stdout
        sandbox.prefix = ["sh", "-c", 'strace -f -e trace=connect -o /tmp/s.log "$@"; echo ==STRACE==; cat /tmp/s.log',
                          "sh"]
        call = CliCall(prompt=spec.test.prompt, model="sonnet", run_id="strace-run")
        env = cli_env(call, base_url=ep.base_url, api_key=ep.api_key, home=RUNNER_HOME, tmpdir="/tmp")
        argv = cli_args(call, suite.config.run)
        result = sandbox.run(argv, env, [], 120, "strace-run", relay=RelayPlan.for_run(ep, "strace-run", 1))
    transcript, _, strace = result.stdout.decode().partition("==STRACE==")
    final = parse_transcript_text(transcript).result
    assert final and final["subtype"] == "success" and not final.get("is_error"), transcript[-2000:]
    targets = [t for t in connect_targets(strace) if t != "unix"]
    assert targets, strace[-2000:]
    port = ep.base_url.rsplit(":", 1)[1]
    assert all(t == f"127.0.0.1:{port}" for t in targets), targets
    assert any('"name":"Bash"' in line.replace(" ", "") for line in transcript.splitlines()), "the self-serve curl ran"
    assert any('"name":"WebSearch"' in line.replace(" ", "") for line in transcript.splitlines()), "web search ran"


def _linked_family(root: Path) -> tuple[Path, Path]:
    """A skills root with family ``fam`` holding a link inside it and a secret file outside it."""
    secret = root / "host-secret.txt"
    secret.write_text("host secret\n")
    fam = root / "skills" / "fam"
    (fam / "ref").mkdir(parents=True)
    (fam / "SKILL.md").write_text("---\nname: fam\ndescription: d\n---\nbody\n")
    (fam / "ref" / "notes.md").write_text("notes\n")
    (fam / "alias.md").symlink_to("ref/notes.md")  # stays inside: copied as a link
    (fam / "ref" / "abs.md").symlink_to(fam / "SKILL.md")  # absolute, inside: copied as a relative link
    return fam, secret


def test_local_sandbox_never_follows_a_skill_link_out_of_its_family(tmp_path):
    """A symlink that leaves the family refuses the run, naming the link; links inside stay links."""
    from skillbench.generation import LocalSandbox, SandboxFailure

    fam, secret = _linked_family(tmp_path)
    (fam / "leak.md").symlink_to(secret)
    sandbox = LocalSandbox(Path("/bin/true"), root=tmp_path)
    with pytest.raises(SandboxFailure) as err:
        sandbox.run(["claude"], {"HOME": "/home/runner"}, [fam], 10, "r", relay=offline_plan())
    message = str(err.value)
    assert "fam/leak.md" in message and str(secret) in message and len(message.splitlines()) == 1
    assert not list(tmp_path.glob("skillbench-run-*")), "nothing left of the refused run"

    from skillbench.generation import SkillLinkError, install_skills, skills_tar

    with pytest.raises(SkillLinkError, match="fam/leak.md"):  # the docker sandbox's tar follows the same rule
        skills_tar([fam], 1000)
    with pytest.raises(SkillLinkError, match="fam/leak.md"):
        install_skills([fam], tmp_path / "other-home")
    assert not (tmp_path / "other-home").exists(), "refused before anything is copied"
    (fam / "leak.md").unlink()
    (fam / "ref" / "up").symlink_to("../..")  # a linked folder that leaves the family
    with pytest.raises(SkillLinkError, match="fam/ref/up"):
        skills_tar([fam], 1000)
    (fam / "ref" / "up").unlink()

    home = tmp_path / "home"
    install_skills([fam], home)
    copy = home / ".claude" / "skills" / "fam"
    assert os.readlink(copy / "alias.md") == "ref/notes.md" and (copy / "alias.md").read_text() == "notes\n"
    assert os.readlink(copy / "ref" / "abs.md") == "../SKILL.md"
    assert (copy / "ref" / "abs.md").resolve() == (copy / "SKILL.md").resolve()


def test_docker_skills_tar_keeps_links_inside_the_family(tmp_path):
    import io
    import tarfile

    from skillbench.generation import skills_tar

    fam, secret = _linked_family(tmp_path)
    with tarfile.open(fileobj=io.BytesIO(skills_tar([fam], 1000))) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert members[".claude/skills/fam/alias.md"].issym()
        assert members[".claude/skills/fam/alias.md"].linkname == "ref/notes.md"
        assert members[".claude/skills/fam/ref/abs.md"].linkname == "../SKILL.md"
        assert tar.extractfile(".claude/skills/fam/SKILL.md").read().startswith(b"---")
        assert {m.uid for m in members.values()} == {1000}
        assert all(b"host secret" not in (tar.extractfile(m).read() if m.isfile() else b"") for m in members.values())


REFERENCE = SHARED / "reference" / "claude-code" / "transcripts"


@pytest.mark.parametrize(
    ("name", "activation", "reached", "denials"),
    [("01_plain_answer", "none", 0, 0), ("02_skill_tool_activation", "skill_tool", 1, 0),
     ("03_read_SKILL_md_activation", "file_read", 1, 0), ("04_permission_denial_write_dontAsk", "none", 0, 1),
     ("05_budget_exceeded_error_max_budget_usd", "none", 0, 0)],
)
def test_signals_on_reference_transcripts(tmp_path, name, activation, reached, denials):
    """Transcripts the real CLI 2.1.328 wrote (../shared/reference), read through run_signals."""
    source = require(REFERENCE / f"{name}.jsonl")
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    shutil.copy(source, run_dir / "transcript.jsonl")
    meta = {"run_id": "r", "prompt": "p", "skill_family": "qdrant-fusion", "skill_leaf": "qdrant-fusion/SKILL.md",
            "model": "opus", "condition": "with-skill", "rep": 1, "exit_code": 0,
            "suite_site_base": "https://skills.qdrant.tech"}
    (run_dir / "metadata.json").write_text(json.dumps(meta))
    row = run_signals(run_dir)
    assert (row["skill_activation"], row["reached_leaf"], row["denials"]) == (activation, reached, denials)
    assert row["skill_available"] == 1 and row["signals_ok"] == 1 and row["cli_version"] == "2.1.328"
    budget = name.startswith("05")
    assert row["budget_hit"] == int(budget) and row["is_error"] == int(budget)


def test_denied_fetch_is_not_a_reach(tmp_path):
    url = "https://skills.qdrant.tech/qdrant-fusion/SKILL.md"
    lines = [
        {"type": "system", "subtype": "init", "skills": []},
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t1", "name": "WebFetch",
                                                       "input": {"url": url}}]}},
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t2", "name": "Bash",
                                                       "input": {"command": f"curl -s '{url}'"}}]}},
        {"type": "result", "permission_denials": [{"tool_use_id": "t1"}], "subtype": "success"},
    ]
    t = parse_transcript_text("\n".join(json.dumps(x) for x in lines))
    sig = activation_signals(t, "qdrant-fusion", "qdrant-fusion/SKILL.md", ["https://skills.qdrant.tech/"])
    assert sig == {"skill_activation": "web_fetch", "reached_leaf": 1, "fetched_site": 1, "fetched_count": 1}


def test_generate_refuses_a_broken_suite(tmp_path, capsys):
    from skillbench.cli import main

    broken = tmp_path / "evals"
    shutil.copytree(TINY_SUITE, broken)
    (broken / "test-prompts" / "csv-garbled-names.json").write_text("{")
    assert main(["generate", str(broken), "--run-key", "x", "--backend", "sim", "--dry-run"]) == 1
    err = capsys.readouterr().err
    assert "csv-garbled-names.json: json: syntax error" in err and len(err.strip().splitlines()) == 1
    assert not (broken / "weekly").exists()



def test_max_total_usd_caps_and_says_so(tmp_path):
    """Once finished runs cost the cap, no run starts; the runs it held back are listed, never silent."""
    require_cli()
    profiles = write_profiles(tmp_path / "p.yaml", {"haiku": forced()})
    suite = load_suite(TINY_SUITE)
    suite.prompts = [p for p in suite.prompts if p.name == "dates-day-month-swapped"]
    opts = _opts(tmp_path / "w", models=["haiku"], conditions=["no-skill"], reps=3, jobs=1, sandbox="local",
                 max_total_usd=1e-9)
    report = generate(suite, opts, PassContext(endpoint=_endpoint(TINY_SUITE, profiles), log=lambda m: None))
    assert report["observed"] == 1 and len(report["capped"]) == 2
    assert report["accounted"] and not report["complete"]
    assert sorted(report["missing"]) == report["capped"]
    again = generate(suite, opts, PassContext(endpoint=_endpoint(TINY_SUITE, profiles), log=lambda m: None))
    assert again["observed"] == 1 and len(again["capped"]) == 2, "the cap is per week, not per call"


def test_dead_endpoint_is_one_clear_line(tmp_path, capsys):
    from skillbench.cli import main

    out = tmp_path / "dead"
    assert main(["generate", str(TINY_SUITE), "--run-key", "dead", "--out-dir", str(out), "--endpoint",
                 "http://127.0.0.1:9"]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("skillbench generate:")]
    assert len(err) == 1 and "http://127.0.0.1:9" in err[0]
    assert sorted(p.name for p in out.iterdir()) == ["plan.csv", "run.json"], "nothing half-written"


@pytest.mark.parametrize(("content", "field"), [('{"run_id": "r1"', "cannot be read as JSON"),
                                                 ('{"run_id": "r1"}', "prompt: missing field")])
def test_signals_on_broken_metadata_is_one_line(tmp_path, capsys, content, field):
    from skillbench.cli import main

    (tmp_path / "r1").mkdir()
    (tmp_path / "r1" / "metadata.json").write_text(content)
    assert main(["signals", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "r1/metadata.json" in err[0] and field in err[0]
    assert not (tmp_path / "manifest.csv").exists()


# -- one pass per week, fail-closed ledgers, run part of a suite ------------------------------------------------


def _tiny_cli(out_dir: Path, *extra: str, env: dict[str, str] | None = None,
              suite: Path = TINY_SUITE) -> subprocess.Popen:
    """``skillbench generate`` of the tiny suite, haiku × with-skill (3 runs per rep), local sandbox."""
    cmd = [sys.executable, "-m", "skillbench.cli", "generate", str(suite), "--run-key", "k", "--out-dir",
           str(out_dir), "--backend", "sim", "--models", "haiku", "--conditions", "with-skill", "--sandbox", "local",
           "--timeout", "120", *extra]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, **(env or {})})


def test_two_generates_on_one_key_the_second_refuses_at_once(tmp_path):
    """The second pass touches nothing of the first: no folder moved aside, no ``.tmp-`` left, a clean week."""
    require_cli()
    out_dir = tmp_path / "k"
    # every model response waits 0.5 s, so the first pass is surely still running when the second has started
    slow = write_profiles(tmp_path / "p.yaml", {"haiku": forced()},
                          faults=[{"kind": "slow_first_byte", "delay_s": 0.5, "role": "agent"}])
    with model_endpoint("sim", suite_dir=TINY_SUITE, profiles=slow) as ep:
        _two_generates(out_dir, "--reps", "2", "--endpoint", ep.base_url)
    recon = json.loads((out_dir / "reconciliation.json").read_text())
    assert recon["complete"] and recon["observed"] == recon["written"] == 6
    assert not [p.name for p in out_dir.iterdir() if p.name.startswith((".tmp-", "_aside", ".skillbench"))]


def _two_generates(out_dir: Path, *args: str) -> None:
    from skillbench.ledgers import read_holder

    first = _tiny_cli(out_dir, *args)
    deadline = time.time() + 120
    while read_holder(out_dir).get("pid") != first.pid:
        assert first.poll() is None and time.time() < deadline, first.communicate()
        time.sleep(0.05)
    while not any(p.name.startswith(".tmp-") for p in out_dir.iterdir()):  # a run of the first pass is in flight
        assert first.poll() is None and time.time() < deadline, first.communicate()
        time.sleep(0.05)
    second = _tiny_cli(out_dir, *args)
    out, err = second.communicate(timeout=60)
    assert first.poll() is None, "the second pass returned while the first still ran"
    assert second.returncode == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"PID {first.pid}" in lines[0] and "skillbench generate" in lines[0], lines
    _, first_err = first.communicate(timeout=600)
    assert first.returncode == 0, first_err[-3000:]


KILL_SCRIPT = """
import sys
from pathlib import Path
from skillbench.generation import GenerateOptions, generate
from skillbench.runtime import PassContext
from skillbench.weekly import model_endpoint
from skillbench.suite import load_suite

suite_dir, out_dir, profiles = sys.argv[1:4]
suite = load_suite(suite_dir)
suite.prompts = [p for p in suite.prompts if p.name == "dates-day-month-swapped"]
opts = GenerateOptions(run_key="kr", out_dir=Path(out_dir), models=["haiku"], conditions=["no-skill", "with-skill",
                       "plugin"], reps=2, jobs=1, sandbox="local", timeout_s=120,
                       extra_env={"CLAUDE_CODE_MAX_RETRIES": "0"})
ctx = PassContext(endpoint=lambda: model_endpoint("sim", suite_dir=suite_dir, profiles=profiles), log=lambda m: None)
report = generate(suite, opts, ctx)
sys.exit(0 if report["complete"] else 1)
"""


def _retried_in_folders(out_dir: Path) -> set[str]:
    return {json.loads(m.read_text())["run_id"] for m in out_dir.glob("*/metadata.json")
            if len(json.loads(m.read_text())["attempts"]) == 2}


def test_retries_json_is_written_as_retries_happen_and_survives_kill_9(tmp_path):
    """Every first attempt fails (an API error): after a kill -9 mid-pass, retries.json lists every retried run
    the run folders show, and after the resume every run's retry."""
    require_cli()
    profiles = write_profiles(tmp_path / "p.yaml", {"haiku": forced()},
                              faults=[{"kind": "server_error", "attempts": [1]}])
    out_dir = tmp_path / "kr"
    argv = [sys.executable, "-c", KILL_SCRIPT, str(TINY_SUITE), str(out_dir), str(profiles)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 300
    while len(finished_runs(out_dir) if out_dir.exists() else ()) < 2:
        assert proc.poll() is None and time.time() < deadline, proc.communicate()
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # kill -9 of the generator, mid-pass
    proc.wait()
    assert len(finished_runs(out_dir)) < 6, "the kill must land mid-pass"
    retried = {r["run_id"] for r in json.loads((out_dir / "retries.json").read_text())["retried_runs"]}
    in_folders = _retried_in_folders(out_dir)
    assert len(in_folders) >= 2 and in_folders <= retried, "retries.json never under-counts the run folders"

    assert subprocess.run(argv, capture_output=True, timeout=600).returncode == 0
    final = json.loads((out_dir / "retries.json").read_text())
    assert _retried_in_folders(out_dir) == set(pd.read_csv(out_dir / "plan.csv").run_id)
    assert {r["run_id"] for r in final["retried_runs"]} == _retried_in_folders(out_dir)
    assert all(leg == {"retried": 2, "stopped": False} for leg in final["legs"].values()), final["legs"]


def test_a_sandbox_failure_mid_pass_writes_the_ledgers_and_one_error_line(tmp_path):
    """The sandbox's CLI vanishes after the first run: the pass stops, the failed run is recorded as
    ``sandbox_failure``, manifest and reconciliation are written (incomplete), and the error is a line of its
    own after the closed progress bar. The next pass heals the week."""
    from skillbench.signals import run_state

    claude = require_cli()
    wrapper = tmp_path / "bin" / "claude"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nrm -f "$0"\nexec {claude} "$@"\n')  # runs once, then is gone
    wrapper.chmod(0o755)
    out_dir = tmp_path / "k"
    proc = _tiny_cli(out_dir, "--reps", "1", "--jobs", "1", env={"SKILLBENCH_CLAUDE": str(wrapper)})
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 1, err[-3000:]
    failed = [line for line in err.split("\n") if "sandbox failed" in line]
    assert len(failed) == 1 and failed[0].startswith("skillbench generate: run "), err[-3000:]
    assert "local sandbox failed" in failed[0] and "reconciliation.json" in failed[0]
    recon = json.loads((out_dir / "reconciliation.json").read_text())
    assert not recon["accounted"] and not recon["complete"] and "sandbox failed" in recon["sandbox_failure"]
    assert recon["observed"] == 1 and len(recon["missing"]) == 2
    manifest = pd.read_csv(out_dir / "manifest.csv")
    states = {r: run_state(out_dir / r) for r in manifest.run_id}
    assert sorted(states.values()) == ["finished", "sandbox_failure"]
    assert not [p for p in out_dir.iterdir() if p.name.startswith(".tmp-")]

    healed = _tiny_cli(out_dir, "--reps", "1", "--jobs", "1")
    out, err = healed.communicate(timeout=600)
    assert healed.returncode == 0, err[-3000:]
    assert json.loads((out_dir / "reconciliation.json").read_text())["complete"]
    assert len(list((out_dir / "_aside").iterdir())) == 1, "the failed run's folder is kept, moved aside"


def test_a_partial_pass_runs_the_selection_and_ends_with_one_summary_line(tmp_path):
    """``--families``/``--prompts`` and ``--limit``: plan.csv keeps every planned run, the rest is ``limited``
    (the selection is recorded), and stdout is one summary line and the reconciliation's path."""
    require_cli()
    out_dir = tmp_path / "k"
    proc = _tiny_cli(out_dir, "--reps", "1", "--families", "dates", "--limit", "1")
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    assert out.splitlines() == ["generate k: 3 planned, 1 finished, 2 limited, 0 missing — incomplete (every run "
                                "accounted for)", str(out_dir / "reconciliation.json")]
    plan = pd.read_csv(out_dir / "plan.csv")
    assert len(plan) == 3 and set(plan.prompt) == {"dates-day-month-swapped", "csv-garbled-names",
                                                   "dormancy-dates-sql-interval"}
    done = finished_runs(out_dir)
    assert len(done) == 1 and plan.set_index("run_id").loc[next(iter(done)), "skill_family"] == "dates"
    recon = json.loads((out_dir / "reconciliation.json").read_text())
    assert recon["limited"] == sorted(set(plan.run_id) - done) and recon["missing"] == [], \
        "a limited run is kept for later, never also listed as missing"
    assert recon["families"] == {"csv-io": "limited", "dates": "limited"}  # --limit 1 left one of dates' runs too
    assert recon["selection"] == {"prompts": [], "families": ["dates"]} and recon["accounted"]
    assert json.loads((out_dir / "run.json").read_text())["selection"] == {"prompts": [], "families": ["dates"]}

    proc = _tiny_cli(out_dir, "--reps", "1", "--prompts", "csv-garbled-names")
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    assert out.splitlines()[0] == "generate k: 3 planned, 2 finished, 1 limited, 0 missing — incomplete (every run " \
                                  "accounted for)"
    csv_run = plan.loc[plan.prompt == "csv-garbled-names", "run_id"].item()
    assert finished_runs(out_dir) == done | {csv_run}

    proc = _tiny_cli(out_dir, "--reps", "1")
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0 and out.splitlines()[0] == "generate k: 3 planned, 3 finished, 0 missing — complete"
    assert "selection" not in json.loads((out_dir / "run.json").read_text())
