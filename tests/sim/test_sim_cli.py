"""The simulated endpoint driving the real Claude Code CLI: every assertion reads the CLI's own stream-json.

All scenario runs start together against one endpoint inside a loopback-only network namespace (when the
machine allows it), then each test checks its run. Behaviour is forced through a test profile file with
probabilities of 0 and 1; faults are injected per run with the ``X-Skillbench-Fault`` header the CLI
forwards, or per model through the profile file.
"""

from __future__ import annotations

import csv
import io
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from skillbench.sim import SimServer
from skillbench.sim._answers import answer_lines
from skillbench.sim._claims import line_matches
from tests.helpers.sim import (
    PROMPTS,
    CliOptions,
    CliRun,
    LoopbackNet,
    connect_targets,
    forced,
    make_suite,
    require_cli,
    run_cli,
    write_profiles,
)

pytestmark = pytest.mark.cli

WAX = PROMPTS["chain-wax"]["prompt"]
TYRE = PROMPTS["tyre-flat"]["prompt"]
RETRY_ENV = {"CLAUDE_CODE_MAX_RETRIES": "1"}


def _profiles(path: Path) -> Path:
    skill = forced(trigger=1.0, trigger_floor=1.0, follow_link=1.0)
    return write_profiles(
        path,
        {
            "sim-plain": forced(),
            "sim-skill": skill,
            "haiku": skill,  # claude-haiku-4-5: the CLI's legacy request layout
            "sim-read": forced(file_read=1.0, follow_link=1.0),
            "sim-curl": forced(self_serve=1.0),
            "sim-deny": forced(deny_rate=1.0),
            "sim-budget": forced(budget_cross=1.0),
            "sim-search": forced(web_search=1.0),
            "sim-recover": forced(),
        },
        faults=[{"kind": "overloaded", "model": "sim-recover", "limit": 1}],
    )


def _scenarios(suite: Path) -> dict[str, CliOptions]:
    chain = [suite / "skills" / "chain-care"]
    base = CliOptions(prompt=TYRE, model="sim-plain")
    runs = {
        "plain": base,
        "skill": CliOptions(prompt=WAX, model="sim-skill", families=chain),
        "skill-legacy": CliOptions(prompt=WAX, model="claude-haiku-4-5", families=chain),
        "read": CliOptions(prompt=WAX, model="sim-read", families=chain),
        "curl": CliOptions(prompt=WAX, model="sim-curl", strace=True),
        "deny": CliOptions(prompt=TYRE, model="sim-deny", attempt=2),
        "budget": CliOptions(prompt=TYRE, model="sim-budget", budget=0.5),
        "search": CliOptions(prompt=TYRE, model="sim-search"),
        "recover": CliOptions(prompt=TYRE, model="sim-recover", env=RETRY_ENV),
        "stall": replace(base, headers={"X-Skillbench-Fault": "stall"}, timeout=8),
        "slow-timeout": replace(base, headers={"X-Skillbench-Fault": "slow_first_byte"},
                                env={**RETRY_ENV, "API_TIMEOUT_MS": "1000"}),
    }
    for kind in ("rate_limit", "server_error", "overloaded", "slow_first_byte", "truncated", "malformed",
                 "stream_error"):
        runs[kind] = replace(base, headers={"X-Skillbench-Fault": kind}, env=RETRY_ENV)
    return {name: replace(opts, run_id=f"{name}-run") for name, opts in runs.items()}


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory):
    """One endpoint in a loopback-only namespace, and every scenario's finished CLI run."""
    require_cli()
    root = tmp_path_factory.mktemp("simcli")
    suite = make_suite(root / "suite")
    profiles = _profiles(root / "profiles.yaml")
    with LoopbackNet() as net:
        server = net.call(lambda: SimServer(suite, profiles=profiles, seed=11, truth=root / "truth.csv"))
        with server:
            scenarios = _scenarios(suite)
            # Longest first, so the stall and the retrying runs overlap the quick ones.
            order = sorted(scenarios, key=lambda n: -scenarios[n].timeout if n == "stall" else 0)
            with ThreadPoolExecutor(max_workers=4) as pool:
                futures = {n: pool.submit(run_cli, scenarios[n], server.base_url, root, net.prefix) for n in order}
                runs = {n: f.result() for n, f in futures.items()}
            truth = list(csv.DictReader(io.StringIO((root / "truth.csv").read_text())))
            yield {"runs": runs, "server": server, "net": net, "truth": truth, "suite": suite}


def _ok(run: CliRun) -> dict:
    res = run.result
    assert res is not None, run.summary()
    assert run.returncode == 0 and res["is_error"] is False and res["subtype"] == "success", run.summary()
    return res


def _truth(sim, run_id: str) -> list[dict]:
    return [r for r in sim["truth"] if r["run_id"] == run_id]


def test_plain_answer(sim):
    run = sim["runs"]["plain"]
    res = _ok(run)
    texts = [b["text"] for b in run.blocks("assistant") if b.get("type") == "text"]
    assert texts and res["result"] == texts[-1]
    assert res["num_turns"] == 1 and not run.tool_uses()
    assert res["total_cost_usd"] > 0 and res["usage"]["input_tokens"] > 1000  # sized from the request
    # The forced profile covers every must and commits the avoid: each is a plain line of the answer.
    lines = answer_lines(res["result"])
    for kind, text in PROMPTS["tyre-flat"]["rubric"]:
        assert any(line_matches(line, text) for line in lines) == (kind != "bonus"), text
    rows = _truth(sim, "plain-run")
    assert [r["decided"] for r in rows] == ["covered", "covered", "covered", "omitted", "violated"]
    assert {r["activation_route"] for r in rows} == {"none"} and {r["skill_in_context"] for r in rows} == {"0"}


def test_skill_listed_in_init_only_when_installed(sim):
    assert "chain-care" in sim["runs"]["skill"].init["skills"]
    assert "chain-care" in sim["runs"]["skill-legacy"].init["skills"]
    assert "chain-care" not in sim["runs"]["plain"].init["skills"]
    assert "chain-care" not in sim["runs"]["curl"].init["skills"]


@pytest.mark.parametrize("name", ["skill", "skill-legacy"])
def test_skill_tool_activation(sim, name):
    run = sim["runs"][name]
    res = _ok(run)
    assert [u["input"] for u in run.tool_uses("Skill")] == [{"skill": "chain-care"}]
    synthetic = [e for e in run.events if e.get("type") == "user" and e.get("isSynthetic")]
    body = synthetic[0]["message"]["content"][0]["text"]
    assert body.startswith("Base directory for this skill: ") and "# Chain care" in body
    # Then the hub's link to the sub-skill is followed with Read.
    reads = [u["input"]["file_path"] for u in run.tool_uses("Read")]
    assert len(reads) == 1 and reads[0].endswith("/.claude/skills/chain-care/waxing/SKILL.md")
    assert res["num_turns"] == 4  # 1 + Skill result + synthetic body + Read result
    rows = _truth(sim, f"{name}-run")
    assert {(r["activation_route"], r["skill_in_context"]) for r in rows} == {("skill_tool", "1")}
    assert [r["decided"] for r in rows] == ["covered", "covered", "covered", "covered", "omitted"]
    assert rows[0]["model"] == ("claude-haiku-4-5" if name == "skill-legacy" else "sim-skill")


def test_read_of_skill_md_activation(sim):
    run = sim["runs"]["read"]
    _ok(run)
    assert not run.tool_uses("Skill")
    reads = [u["input"]["file_path"] for u in run.tool_uses("Read")]
    assert reads[0].endswith("/.claude/skills/chain-care/SKILL.md")
    assert reads[1].endswith("/.claude/skills/chain-care/waxing/SKILL.md")
    results = [e["tool_use_result"] for e in run.events if e.get("type") == "user" and "tool_use_result" in e]
    assert results[0]["file"]["filePath"] == reads[0] and "name: chain-care" in results[0]["file"]["content"]
    assert {(r["activation_route"], r["skill_in_context"]) for r in _truth(sim, "read-run")} == {("file_read", "1")}


def test_self_serve_curl_of_the_site(sim):
    run = sim["runs"]["curl"]
    _ok(run)
    site = sim["server"].site_base
    (bash,) = run.tool_uses("Bash")
    assert bash["input"]["command"] == f"curl -s {site}/chain-care/waxing/SKILL.md"
    results = [b for b in run.blocks("user") if b.get("type") == "tool_result"]
    assert "Strip the factory grease" in str(results[0]["content"])  # the site served the skill file
    rows = _truth(sim, "curl-run")
    assert {(r["activation_route"], r["skill_in_context"]) for r in rows} == {("web_fetch", "1")}


def test_permission_denial(sim):
    run = sim["runs"]["deny"]
    res = _ok(run)
    (denial,) = res["permission_denials"]
    assert denial["tool_name"] == "Write" and denial["tool_input"]["file_path"].endswith("analysis-notes.md")
    assert res["result"]  # the loop went on to an answer


def test_budget_crossing(sim):
    run = sim["runs"]["budget"]
    res = run.result
    assert res is not None, run.summary()
    assert res["subtype"] == "error_max_budget_usd" and res["is_error"] is True, run.summary()
    assert res["terminal_reason"] == "budget_exhausted" and "result" not in res
    assert res["total_cost_usd"] > 0.5 and run.returncode == 1


def test_web_search_subrequest(sim):
    run = sim["runs"]["search"]
    res = _ok(run)
    (search,) = run.tool_uses("WebSearch")
    results = [b for b in run.blocks("user") if b.get("type") == "tool_result"]
    assert "https://example.org/articles/" in str(results[0]["content"])
    assert sum(m["webSearchRequests"] for m in res["modelUsage"].values()) == 1
    assert search["input"]["query"]


@pytest.mark.parametrize("kind,status,text", [
    ("rate_limit", 429, "Request rejected (429)"),
    ("server_error", 500, "API Error: 500"),
    ("overloaded", 529, "API Error: 529"),
])
def test_http_error_faults(sim, kind, status, text):
    run = sim["runs"][kind]
    retries = [e for e in run.events if e.get("subtype") == "api_retry"]
    assert [e["error_status"] for e in retries] == [status], run.summary()
    res = run.result
    assert res["is_error"] is True and res["terminal_reason"] == "api_error" and res["api_error_status"] == status
    assert text in res["result"] and run.returncode == 1
    assert not _truth(sim, f"{kind}-run")  # no answer was delivered, so no truth


def test_overload_then_recovery_per_model_fault(sim):
    run = sim["runs"]["recover"]
    res = _ok(run)
    assert [e["error_status"] for e in run.events if e.get("subtype") == "api_retry"] == [529]
    assert res["result"] and len(_truth(sim, "recover-run")) == 5


def test_slow_first_byte(sim):
    ok, late = sim["runs"]["slow_first_byte"], sim["runs"]["slow-timeout"]
    res = _ok(ok)
    assert res["duration_api_ms"] >= 1900  # the 2 s wait before the first byte
    res = late.result  # the same wait beyond API_TIMEOUT_MS: retried, then the CLI gives up
    assert res["is_error"] is True and "timed out" in res["result"].lower(), late.summary()


def test_stream_faults(sim):
    trunc, bad, err = sim["runs"]["truncated"], sim["runs"]["malformed"], sim["runs"]["stream_error"]
    assert trunc.result["is_error"] is True and "Connection" in trunc.result["result"], trunc.summary()
    assert bad.result["is_error"] is True and "JSON" in bad.result["result"], bad.summary()
    # An SSE error event mid-stream: the CLI falls back to a non-streaming request, which succeeds.
    _ok(err)
    recs = [r for r in sim["server"].received if r["run_id"] == "stream_error-run"]
    assert any(r["stream"] for r in recs) and not recs[-1]["stream"]


def test_stalled_stream_needs_an_external_timeout(sim):
    run = sim["runs"]["stall"]
    assert run.timed_out and run.result is None
    assert [e["type"] for e in run.events] == ["system"]  # only init: partial text is not emitted


def test_run_id_and_attempt_headers_received(sim):
    received = [r for r in sim["server"].received if r["role"] == "agent"]
    by_run = {}
    for rec in received:
        by_run.setdefault(rec["run_id"], set()).add(rec["attempt"])
    for name, run in sim["runs"].items():
        expected = "2" if name == "deny" else "1"
        assert by_run.get(run.run_id) == {expected}, (name, by_run.get(run.run_id))
    assert all(r["run_id"] for r in received)  # every request carried the run id


def test_only_loopback_connections(sim):
    run, net = sim["runs"]["curl"], sim["net"]
    assert run.strace or net.available, "neither strace nor a loopback-only namespace guarded the runs"
    if net.available:  # the CLI ran where nothing but loopback exists
        assert net.interfaces() == ["lo"]
    if run.strace:  # and every connect() of the CLI and its children went to the endpoint
        port = sim["server"].port
        inet = [t for t in connect_targets(run.strace) if t != "unix"]
        assert f"127.0.0.1:{port}" in inet, run.strace[:2000]  # the API calls and the curl of the site
        assert set(inet) == {f"127.0.0.1:{port}"}, inet


def test_truth_file_is_sorted_and_complete(sim):
    rows = sim["truth"]
    # Rubric rows, then check rows (a non-empty check_id), each by position: truth.row_key's order.
    keys = [(r["run_id"], int(r["attempt"]), bool(r["check_id"]), int(r["item_index"]), r["check_id"]) for r in rows]
    assert keys == sorted(keys) and len(keys) == len(set(keys))
    answered = {n for n, r in sim["runs"].items() if r.result and r.result.get("result")
                and not r.result["is_error"]}
    assert {r["run_id"] for r in rows} >= {f"{n}-run" for n in answered}


# -- determinism ------------------------------------------------------------------------------------------


def test_same_seed_same_run_ids_same_truth_at_any_concurrency(tmp_path):
    require_cli()
    suite = make_suite(tmp_path / "suite")
    chain, tyre = suite / "skills" / "chain-care", suite / "skills" / "tyre-repair"
    runs = [
        CliOptions(prompt=WAX, model="sonnet", run_id="chain-wax-sonnet-with-skill-r1-det", families=[chain]),
        CliOptions(prompt=WAX, model="haiku", run_id="chain-wax-haiku-no-skill-r1-det"),
        CliOptions(prompt=TYRE, model="haiku", run_id="tyre-flat-haiku-plugin-r1-det", families=[chain, tyre]),
    ]
    files = []
    with LoopbackNet() as net:
        for jobs in (1, 3):
            truth = tmp_path / f"truth-{jobs}.csv"
            server = net.call(lambda t=truth: SimServer(suite, seed=5, truth=t))  # the shipped profiles
            with server, ThreadPoolExecutor(max_workers=jobs) as pool:
                url = server.base_url
                done = list(pool.map(lambda o, u=url: run_cli(o, u, tmp_path, net.prefix), runs))
            for run in done:
                assert run.result is not None, run.summary()
            files.append(truth.read_bytes())
    assert files[0] == files[1]
    rows = list(csv.DictReader(io.StringIO(files[0].decode())))
    assert len(rows) == 15 and {r["run_id"] for r in rows} == {o.run_id for o in runs}

