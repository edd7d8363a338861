"""The simulated endpoint's parts without the CLI: profiles, claims, truth, faults, routes, backend, command."""

from __future__ import annotations

import io
import json
import os
import random
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from contextlib import redirect_stderr
from pathlib import Path

import pytest

import skillbench
from skillbench.generation import BackendError, is_loopback_host, require_loopback, resolve_backend
from skillbench.ledgers import TruthRow, TruthWriter
from skillbench.ledgers._columns import TRUTH_COLUMNS
from skillbench.sim import (
    FaultSpec,
    ProfileError,
    SimServer,
    _draws as draws,
    _usage as usage,
    load_profiles,
    parse_fault_option,
)
from skillbench.sim._agent import Agent
from skillbench.sim._answers import compose
from skillbench.sim._claims import claim, line_matches
from skillbench.sim._conversation import parse_request
from skillbench.sim._faults import FaultPlan
from skillbench.sim._judge import grade
from skillbench.weekly import model_endpoint
from skillbench.wire import SIM_API_KEY
from tests.helpers.shared import ROOT
from tests.helpers.sim import PROMPTS, make_suite


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory) -> Path:
    return make_suite(tmp_path_factory.mktemp("suite"))


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers={"x-api-key": SIM_API_KEY}),
                                    timeout=5) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _post(url: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "application/json", "x-api-key": SIM_API_KEY,
                                          **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _cli_like_body(prompt: str, *, listing: str = "", model: str = "claude-sonnet-5-5") -> dict:
    """A request shaped like the CLI's new layout: reminder + prompt, then a system-role message."""
    system_text = ("# Environment\n - Primary working directory: /work/run1\n\nYou have a persistent memory at "
                   "`/home/u1/.claude/projects/-work-run1/memory/`. It exists.\n\n"
                   f"The following skills are available for use with the Skill tool:\n\n{listing}\n"
                   "USD budget: $0/$2; $2 remaining")
    reminder = {"type": "text", "text": "<system-reminder>\nx\n</system-reminder>"}
    return {"model": model, "max_tokens": 1000, "stream": False,
            "messages": [{"role": "user", "content": [reminder, {"type": "text", "text": prompt}]},
                         {"role": "system", "content": system_text}]}


# -- profiles -------------------------------------------------------------------------------------------


def test_shipped_profiles_pick_by_model_name_and_haiku_gains_most():
    prof = load_profiles()
    assert prof.agent("claude-haiku-4-5-20251001") is prof.models["haiku"]
    assert prof.agent("claude-sonnet-5-5") is prof.models["sonnet"]
    assert prof.agent("claude-opus-5-5") is prof.models["opus"]
    assert prof.agent("my-fake-model") is prof.models["default"]

    def gain(name: str) -> float:
        p = prof.models[name]
        return p.must.with_ - p.must.without

    assert gain("haiku") > gain("sonnet") > gain("opus") > 0
    assert prof.faults == []


def test_profile_errors(tmp_path):
    bad = tmp_path / "p.yaml"
    bad.write_text("models:\n  sonnet:\n    trigger: 2\n")
    with pytest.raises(ProfileError, match="trigger"):
        load_profiles(bad)
    bad.write_text("models: [\n")
    with pytest.raises(ProfileError, match="YAML"):
        load_profiles(bad)
    with pytest.raises(ProfileError):
        load_profiles(tmp_path / "missing.yaml")
    assert parse_fault_option("overloaded=0.25") == FaultSpec(kind="overloaded", rate=0.25)
    assert parse_fault_option("rate-limit").kind == "rate_limit"
    with pytest.raises(ProfileError):
        parse_fault_option("explode")


def test_simulated_lift_is_larger_for_haiku(suite_dir):
    """Over many runs, with-skill coverage of musts minus without-skill coverage: haiku's gap is larger."""
    suite = skillbench.load_suite(suite_dir)
    prof = load_profiles()
    agent = Agent(suite, 1, "http://127.0.0.1:1/site")
    spec = suite.prompt("chain-wax")
    musts = [i for i, it in enumerate(spec.test.rubric) if it.type == "must"]

    def rate(model: str, share: float) -> float:
        hits = 0
        for r in range(400):
            decided = agent.decide(spec, prof.agent(model), f"r{r}-{model}-{share}", share)
            hits += sum(decided[i] == "covered" for i in musts)
        return hits / (400 * len(musts))

    haiku = rate("haiku", 1.0) - rate("haiku", 0.0)
    sonnet = rate("sonnet", 1.0) - rate("sonnet", 0.0)
    assert haiku > sonnet > 0


# -- claims and answers -----------------------------------------------------------------------------------


def test_claim_sentences_state_the_item():
    cases = {
        "Recommends RRF as the default fusion": "I recommend RRF as the default fusion.",
        "Explains that wax needs a dry chain": "Keep in mind that wax needs a dry chain.",
        "Uses robust standard errors": "Use robust standard errors.",
        "Applies a log transform first": "Apply a log transform first.",
        "Warns against dropping rows silently": "Be careful: dropping rows silently.",
        "Does not check the residuals": "There is no need to check the residuals.",
        "A worked example with numbers": "A worked example with numbers.",
    }
    for item, sentence in cases.items():
        assert claim(item).sentence == sentence
        assert line_matches(sentence, item)


def _suites() -> list[Path]:
    return [p for p in (ROOT / "evals",) if (p / "test-prompts").is_dir()]


@pytest.mark.parametrize("which", ["test-suite", "bundled"])
def test_judge_recognises_exactly_the_stated_items(suite_dir, which):
    """For any subset of items the agent states, the simulated judge finds exactly that subset."""
    if which == "bundled" and not _suites():
        pytest.skip("the bundled demo suite is not there")
    suite = skillbench.load_suite(suite_dir if which == "test-suite" else _suites()[0])
    rnd = random.Random(4)
    for spec in suite.prompts:
        items = [(it.type, it.text) for it in spec.test.rubric]
        for _ in range(25):
            stated = [i for i in range(len(items)) if rnd.random() < 0.5]
            answer = compose(items, stated, rnd, rnd.choice([0.0, 1.0, 2.0]))
            found = [g.item for g in grade(answer, [(i, k, t) for i, (k, t) in enumerate(items)]) if g.found]
            assert found == stated, (spec.name, stated, found, answer)


# -- request parsing, draws, usage ------------------------------------------------------------------------


def test_parse_request_reads_both_layouts():
    listing = "- chain-care: Use when waxing a chain.\n- other: Something else."
    conv = parse_request(_cli_like_body("How do I wax?", listing=listing))
    assert conv.prompt == "How do I wax?" and conv.turn == 0
    assert conv.listing == {"chain-care": "Use when waxing a chain.", "other": "Something else."}
    assert conv.config_dir == "/home/u1/.claude" and conv.cwd == "/work/run1"
    legacy = {"model": "claude-haiku-4-5", "messages": [
        {"role": "user", "content": [
            {"type": "text", "text": f"<system-reminder>\nThe following skills are available for use with the "
                                     f"Skill tool:\n\n{listing}\n</system-reminder>"},
            {"type": "text", "text": "How do I wax?"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Skill",
                                           "input": {"skill": "chain-care"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "Launching skill: chain-care"},
            {"type": "text", "text": "Base directory for this skill: /h/.claude/skills/chain-care\n\n# Body"}]}]}
    conv = parse_request(legacy)
    assert conv.prompt == "How do I wax?" and conv.turn == 1 and "chain-care" in conv.listing
    assert conv.calls[0].result == "Launching skill: chain-care" and not conv.calls[0].is_error
    assert conv.skill_bases == ["/h/.claude/skills/chain-care"]


def test_draws_are_keyed_not_global():
    assert draws.uniform(1, "a", 2) == draws.uniform(1, "a", 2) != draws.uniform(2, "a", 2)
    assert draws.adjust(1.0, -5) == 1.0 and draws.adjust(0.0, 5) == 0.0
    assert 0.5 < draws.adjust(0.5, 1.0) < 1.0


def test_budget_crossing_usage_costs_more_than_what_is_left():
    left = usage.budget_left(["USD budget: $0/$2; $2 remaining", "USD budget: $0.25/$2; $1.75 remaining"])
    assert left == pytest.approx(1.75)
    for model in ("claude-haiku-5-5", "claude-sonnet-5-5", "claude-opus-5-5", "my-fake-model"):
        n_in = usage.crossing_input_tokens(model, left, 100)
        assert usage.cost(model, n_in, 100) > left * 1.4


# -- truth ------------------------------------------------------------------------------------------------


def _rows(run: str, attempt: int = 1) -> list[TruthRow]:
    return [TruthRow(run, attempt, "claude-sonnet-5-5", "p", "none", 0, i, "must", "covered") for i in range(3)]


def test_truth_file_is_identical_whatever_the_order(tmp_path):
    batches = [_rows("b"), _rows("a"), _rows("a", 2), _rows("c")]
    one, two = TruthWriter(tmp_path / "1.csv"), TruthWriter(tmp_path / "2.csv")
    for batch in batches:
        one.record(batch)
    for batch in reversed(batches):
        two.record(batch)
    two.record(_rows("b"))  # a retried answer replaces its rows
    assert (tmp_path / "1.csv").read_bytes() == (tmp_path / "2.csv").read_bytes()
    text = (tmp_path / "1.csv").read_text()
    assert text.splitlines()[0] == ",".join(TRUTH_COLUMNS) and len(text.splitlines()) == 13
    # A restarted endpoint keeps the rows already written (a resumed run key).
    again = TruthWriter(tmp_path / "1.csv")
    again.record(_rows("d"))
    assert len(again.rows()) == 15


# -- faults -----------------------------------------------------------------------------------------------


def test_fault_plan_filters_limits_and_headers():
    plan = FaultPlan(0, [FaultSpec(kind="overloaded", model="haiku", limit=2),
                         FaultSpec(kind="stall", attempts=[1], header="X-Test: yes")])

    def pick(model="claude-haiku-4-5", attempt=1, counter=0, headers=None, run="r"):
        got = plan.choose(model=model, role="agent", headers=headers or {}, run_id=run, attempt=attempt,
                          counter=counter)
        return got[1].kind if got else None

    assert [pick(counter=n) for n in range(4)] == ["overloaded", "overloaded", None, None]  # limit per run
    assert pick(run="r2") == "overloaded"  # another run has its own limit
    assert pick(model="claude-sonnet-5-5") is None
    assert pick(model="claude-sonnet-5-5", headers={"X-Test": "yes"}) == "stall"
    assert pick(model="claude-sonnet-5-5", headers={"X-Test": "yes"}, attempt=2) is None  # a retry is spared
    assert pick(model="claude-sonnet-5-5", headers={"X-Skillbench-Fault": "server_error"}) == "server_error"
    half = FaultPlan(5, [FaultSpec(kind="server_error", rate=0.5)])
    hits = [half.choose(model="m", role="agent", headers={}, run_id=f"r{i}", attempt=1, counter=0)
            for i in range(400)]
    assert 150 < sum(h is not None for h in hits) < 250


# -- routes -----------------------------------------------------------------------------------------------


def test_routes_info_site_and_errors(suite_dir):
    with SimServer(suite_dir) as server:
        status, body = _get(f"{server.base_url}/skillbench/info")
        info = json.loads(body)
        assert status == 200 and info["kind"] == "simulated" and info["site_base"] == server.site_base
        status, body = _get(f"{server.site_base}/chain-care/waxing/SKILL.md")
        assert status == 200 and body.decode().startswith("---\nname: chain-waxing")
        assert _get(f"{server.site_base}/%2e%2e/skillbench.toml")[0] == 404  # nothing outside the skills tree
        assert _get(f"{server.site_base}/chain-care/nope.md")[0] == 404
        status, err = _post(f"{server.base_url}/v1/messages", b"{not json")
        assert status == 400 and err["type"] == "error" and err["error"]["type"] == "invalid_request_error"
        status, err = _post(f"{server.base_url}/v1/other", b"{}")
        assert status == 404 and err["error"]["type"] == "not_found_error"


def test_non_streaming_answers_generic_and_suite_prompts(suite_dir, tmp_path):
    truth = tmp_path / "truth.csv"
    profiles = {"models": {"default": {"trigger": 0, "file_read": 0, "self_serve": 0, "web_search": 0,
                                       "deny_rate": 0}}}
    with SimServer(suite_dir, profiles=profiles, truth=truth) as server:
        url = f"{server.base_url}/v1/messages?beta=true"
        status, msg = _post(url, json.dumps(_cli_like_body("What is a good name for a cat?")).encode())
        assert status == 200 and msg["stop_reason"] == "end_turn" and msg["content"][0]["text"]
        assert not truth.exists()  # no rubric, no truth
        headers = {"X-Skillbench-Run-Id": "r1", "X-Skillbench-Attempt": "3"}
        status, msg = _post(url, json.dumps(_cli_like_body(PROMPTS["tyre-flat"]["prompt"])).encode(), headers)
        assert status == 200 and msg["usage"]["input_tokens"] > 10
        lines = truth.read_text().splitlines()
        assert len(lines) == 6 and lines[1].startswith("r1,3,claude-sonnet-5-5,tyre-flat,none,0,0,must,")
        # No request chooses a file the server writes: a forged truth header is ignored (issue: sealed network).
        forged = tmp_path / "forged.csv"
        _post(url, json.dumps(_cli_like_body(PROMPTS["chain-wax"]["prompt"])).encode(),
              {"X-Skillbench-Run-Id": "r2", "X-Skillbench-Truth": str(forged)})
        assert not forged.exists() and "r2,1," in truth.read_text()
        # The harness reads its runs' rows back over the read-only truth route.
        status, raw = _get(f"{server.base_url}/skillbench/truth?run_id=r2")
        served = raw.decode().splitlines()
        assert served[0].startswith("run_id,attempt,") and served[1:] and all(r.startswith("r2,1,") for r in served[1:])
        # The WebSearch server-tool sub-request.
        body = {"model": "claude-sonnet-5-5", "max_tokens": 100,
                "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 8}],
                "messages": [{"role": "user", "content": "Perform a web search for the query: chain wax"}]}
        status, msg = _post(url, json.dumps(body).encode())
        kinds = [b["type"] for b in msg["content"]]
        assert kinds == ["text", "server_tool_use", "web_search_tool_result", "text"]
        assert msg["usage"]["server_tool_use"] == {"web_search_requests": 1}


def test_http_faults_in_the_api_error_shape(suite_dir):
    with SimServer(suite_dir, faults=["rate_limit"]) as server:
        req = urllib.request.Request(f"{server.base_url}/v1/messages", method="POST",
                                     data=json.dumps(_cli_like_body("hi")).encode(),
                                     headers={"x-api-key": SIM_API_KEY})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=5)
        assert err.value.code == 429 and err.value.headers["retry-after"] == "1"
        assert json.loads(err.value.read())["error"]["type"] == "rate_limit_error"


# -- backend ----------------------------------------------------------------------------------------------


def test_resolve_backend():
    err = io.StringIO()
    with redirect_stderr(err):
        assert resolve_backend(None, environ={}) == "sim"
    assert "simulated" in err.getvalue() and len(err.getvalue().strip().splitlines()) == 1
    assert resolve_backend(None, environ={"ANTHROPIC_API_KEY": "k"}) == "anthropic"
    assert resolve_backend("sim", environ={"ANTHROPIC_API_KEY": "k"}) == "sim"
    with pytest.raises(BackendError):
        resolve_backend("openai")


def test_model_endpoint_sim_started_and_discovered(suite_dir, tmp_path, monkeypatch):
    with model_endpoint("sim", suite_dir=suite_dir, truth=tmp_path / "t.csv") as ep:
        assert ep.kind == "simulated" and ep.api_key == SIM_API_KEY and ep.site_base == f"{ep.base_url}/site"
        assert ep.base_url.startswith("http://127.0.0.1:")
        with model_endpoint("sim", endpoint=ep.base_url) as found:
            assert found.site_base == ep.site_base and found.truth == (tmp_path / "t.csv").resolve()
            assert found.api_key == ep.api_key
        assert ep.fetch_truth(["never-ran"]) == []
        url = ep.base_url
    monkeypatch.setenv("SKILLBENCH_SIM_KEY", "sk-another-key")  # a simulation of another key, found by the same rule
    with model_endpoint("sim", suite_dir=suite_dir) as ep:
        assert ep.api_key == "sk-another-key"
        with model_endpoint("sim", endpoint=ep.base_url) as found:
            assert found.api_key == "sk-another-key" and found.fetch_truth(["never-ran"]) == []
    with pytest.raises(BackendError, match="not a running simulated endpoint"):
        with model_endpoint("sim", endpoint=url):
            pass
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(BackendError, match="ANTHROPIC_API_KEY"):
        with model_endpoint("anthropic"):
            pass


# -- the command ------------------------------------------------------------------------------------------


def test_sim_serve_command(suite_dir, tmp_path):
    truth = tmp_path / "t.csv"
    proc = subprocess.Popen([sys.executable, "-m", "skillbench.cli", "sim", "serve", "--suite", str(suite_dir),
                             "--truth", str(truth), "--seed", "3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        first = proc.stdout.readline()
        assert first.startswith("Simulated Messages endpoint: http://127.0.0.1:"), first + proc.stderr.read()
        url = first.split(": ", 1)[1].strip()
        info = json.loads(_get(f"{url}/skillbench/info")[1])
        assert info["seed"] == 3 and info["truth"] == str(truth.resolve())
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True),
                                                ("localhost", True), ("0.0.0.0", False), ("192.0.2.2", False),
                                                ("10.0.0.1", False), ("", False)])
def test_simulated_endpoints_are_loopback_only(host, loopback):
    assert is_loopback_host(host) is loopback
    url = f"http://[{host}]:8000" if ":" in host else f"http://{host}:8000"
    if loopback:
        require_loopback(url)
    else:
        with pytest.raises(BackendError, match="loopback"):
            require_loopback(url)
