"""Adaptive concurrency under the simulated endpoint's rate limit: a real generation matrix and a judge pass.

The generation matrix (the sim helpers' two-prompt suite, haiku, 2 conditions × 4 reps = 16 runs of one request
each) runs at ``--jobs 6`` with the real CLI (Docker when the engine answers, else the local sandbox) against an
endpoint that admits 90 requests a minute from a bucket of one second's refill. Its relays forward at once
(``paced=False``, as for an endpoint that states no limit), so this is the AIMD fallback: six CLIs at once ask for
more than that, the CLI retries each 429 (its retries capped), and generation reads those retries from each run's
stream-json when the run ends and lowers concurrency. Pacing before the 429 (the default) is
``tests/generation/test_pacing.py`` and ``benchmarks/limiter.py``; the judge here is paced, as it always is.
The stated share (:data:`MAX_429_SHARE`) has room for the
first runs, which start before any signal can arrive (measured: 16–24 % of requests; a fixed pool: see
``benchmarks/limiter.py``). Also here: the CLI's retry events as the limiter reads them, on transcripts our own
fixture writes in the CLI's shape.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from skillbench.generation import GenerateOptions, SandboxResult, docker_available, generate
from skillbench.generation._retries import note_rate_limits
from skillbench.ledgers import read_manifest
from skillbench.limiter import AdaptiveLimiter
from skillbench.runtime import PassContext
from skillbench.signals._manifest import rate_limit_retries, was_rate_limited
from skillbench.suite import load_suite
from skillbench.weekly import model_endpoint
from tests.helpers.sim import forced, make_suite, require_cli, write_profiles

JOBS = 6
RUNS = 16
# Of all requests the week made. A pool that never backs off approaches CLI_RETRIES / (CLI_RETRIES + 1) ≈ 0.83 (each
# run spending its retries on the empty bucket); the limiter must keep the week well below that. The first JOBS runs
# start before any signal can reach it (the CLI's events are read when a run ends), so on a fast machine they meet
# the bucket together: measured 16–50 % over CI runs.
MAX_429_SHARE = 2 / 3
RATE = {"requests_per_minute": 90, "burst_s": 1}  # 1.5 in the bucket and a second: six CLIs at once want more
# 4 in the bucket, 4 a second: six judge workers at once ask for more than that; the endpoint's budget paces them
JUDGE_RATE = {"requests_per_minute": 240, "burst_s": 1}
CLI_RETRIES = "5"  # the CLI's backoff (0.6 … 9 s, about 18 s in all) outlasts a wait for the bucket


def _event(**fields) -> dict:
    return {"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 5, "retry_delay_ms": 600,
            "session_id": "s", "uuid": "u", **fields}


def _transcript(*events: dict, is_error: bool = False) -> bytes:
    init = {"type": "system", "subtype": "init", "model": "claude-haiku-4-5", "skills": []}
    result = {"type": "result", "subtype": "success", "is_error": is_error, "num_turns": 1, "total_cost_usd": 0.001,
              **({"terminal_reason": "api_error", "api_error_status": 429} if is_error else {})}
    return "".join(json.dumps(e) + "\n" for e in (init, *events, result)).encode()


@pytest.mark.parametrize(("events", "expected"), [
    ([_event(error_status=429, error="rate_limit")], 1),
    ([_event(error_status=529, error="overloaded"), _event(attempt=2, error_status=429, error="rate_limit")], 2),
    ([_event(error_status=500, error="server_error"), _event(error_status=None, error="unknown")], 0),
    ([{"type": "system", "subtype": "init"}], 0),
])
def test_the_cli_retry_events_that_are_rate_limits(events: list[dict], expected: int, tmp_path: Path) -> None:
    text = _transcript(*events)
    parsed = [json.loads(line) for line in text.decode().splitlines()]
    assert len(rate_limit_retries(parsed)) == expected
    limiter = AdaptiveLimiter(4)
    attempt: dict = {"retry_reason": None}
    with limiter.slot() as s1, limiter.slot(), limiter.slot(), limiter.slot():
        seen = note_rate_limits(limiter, s1, SandboxResult(0, False, text, b"", 0.0, 1.0), attempt)
    assert seen == expected and attempt.get("rate_limit_retries") == (expected or None)
    assert limiter.limit == (2 if expected else 4)
    (tmp_path / "transcript.jsonl").write_bytes(_transcript())
    (tmp_path / "attempt-1.transcript.jsonl").write_bytes(text)  # a retried first attempt counts too
    assert was_rate_limited(tmp_path) == bool(expected)


@pytest.fixture(scope="module")
def limited_week(tmp_path_factory) -> tuple[Path, list[str]]:
    require_cli()
    root = tmp_path_factory.mktemp("ratelimit")
    suite_dir = make_suite(root / "suite")
    profiles = write_profiles(root / "profiles.yaml", {"default": forced()}, rate_limit=RATE)
    suite = load_suite(suite_dir)
    out = root / "week"
    opts = GenerateOptions(run_key="rl", out_dir=out, models=["haiku"], conditions=["no-skill", "with-skill"],
                           reps=RUNS // 4, jobs=JOBS, seed=3, timeout_s=120,
                           sandbox="docker" if docker_available() else "local", paced=False,
                           extra_env={"CLAUDE_CODE_MAX_RETRIES": CLI_RETRIES})
    lines: list[str] = []
    report = generate(suite, opts, PassContext(endpoint=lambda: model_endpoint("sim", suite_dir=suite, seed=3,
                                                                           profiles=profiles), log=lines.append))
    assert report["complete"], report
    return out, lines


def _requests(week: Path) -> tuple[int, int]:
    """(429s, answered requests) the week's CLI processes saw, from their transcripts: each ``api_retry`` of a
    rate limit was one 429, an API-error result one more, and each distinct assistant message one answer."""
    limited = answered = 0
    for path in week.glob("*/*transcript.jsonl"):
        events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        limited += len(rate_limit_retries(events))
        limited += sum(1 for e in events if e.get("type") == "result" and e.get("api_error_status") == 429)
        answered += len({(e.get("message") or {}).get("id") for e in events if e.get("type") == "assistant"
                         and (e.get("message") or {}).get("model") != "<synthetic>"})
    return limited, answered


def test_a_rate_limited_matrix_completes_and_concurrency_drops(limited_week) -> None:
    week, lines = limited_week
    plan = pd.read_csv(week / "plan.csv")
    manifest = read_manifest(week / "manifest.csv")
    assert len(plan) == RUNS and sorted(manifest["run_id"]) == sorted(plan["run_id"])  # the same runs
    assert manifest["run_state"].eq("finished").all(), manifest[["run_id", "run_state", "terminal_reason"]]
    retries = json.loads((week / "retries.json").read_text())
    section = retries["concurrency"]
    assert section["ceiling"] == JOBS and section["floor"] == 1 and section["min_reached"] < JOBS
    assert section["changes"] and all({"time", "from", "to", "reason"} <= set(c) for c in section["changes"])
    assert section["changes"][0]["from"] == JOBS and section["changes"][0]["to"] < JOBS
    assert any("concurrency 6 →" in line for line in lines)  # each change is logged
    flagged = set(manifest.loc[manifest["rate_limited"].astype(str).isin({"1", "True"}), "run_id"])
    assert flagged and flagged == set(section["rate_limited_runs"])
    assert flagged == {r for r in plan["run_id"] if was_rate_limited(week / r)}
    limited, answered = _requests(week)
    assert answered >= RUNS and limited / (limited + answered) < MAX_429_SHARE, (limited, answered)


def test_the_judge_under_the_rate_limit_is_paced_and_completes(limited_week, capfd) -> None:
    from skillbench.judge import JudgeOptions, judge_run_dir
    from skillbench.limiter import endpoint_budget

    week, _ = limited_week
    with model_endpoint("sim", profiles={"rate_limit": JUDGE_RATE}) as ep:
        report = judge_run_dir(week, JudgeOptions(jobs=JOBS, max_retries=4),
                               PassContext(endpoint=ep, log=lambda m: None))
        budget = endpoint_budget(ep.base_url, ep.api_key).summary()
    assert report.ok and report.graded == RUNS and report.ungraded_items == 0
    # every call waited its turn in the endpoint's budget: none met an empty bucket, so the limiter never cut
    assert budget["requests"] >= RUNS and budget["paced"] > 0 and budget["rate_limited"] == 0, budget
    err = capfd.readouterr().err
    assert "concurrency" not in err and "HTTP 429" not in err
    # the scorecard says how many runs were rate-limited (a week without any says nothing new)
    from tests.helpers.scorecard import page_section, score_week

    _, md = score_week(week)
    flagged = read_manifest(week / "manifest.csv")["rate_limited"].astype(str).isin({"1", "True"}).sum()
    assert f"- rate-limited runs (the CLI retried a 429 or 529; see retries.json): {flagged} of {RUNS}" \
        in page_section(md, "## Cost & time")
