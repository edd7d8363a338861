"""The batched judge (``judge --batch``) on the simulated endpoint's Message Batches routes, with the real SDK.

A batched pass asks what the synchronous pass asks (same verdicts for the same seed, at half the price); a pass
killed while its batch is pending resumes by polling the same batch and submits nothing accepted again; an expired
request is retried once (in a follow-up batch), then its items are ``ungraded``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import anthropic
import pytest
import yaml

from skillbench.judge import JudgeOptions, judge_pairs, judge_run_dir
from skillbench.judge._batch import METADATA_PREFIX, JudgePending, batch_params
from skillbench.judge._batch_store import JUDGE_BATCHES_FILE, BatchStore, BatchStoreError, RequestInfo, custom_id
from skillbench.runtime import PassContext
from skillbench.vocab import UNGRADED
from skillbench.weekly import model_endpoint
from tests.helpers.judge import CLI, run_cli, scores
from tests.helpers.shared import ROOT

KEY = "sk-skillbench-sim"
VERDICT = ["run_id", "item_index", "verdict", "credit", "evidence_quote", "evidence_verified", "samples"]


def _judge(week: Path, ep, **opts):
    options = JudgeOptions(**{"jobs": 3, "max_retries": 1, **opts})
    return judge_run_dir(week, options, PassContext(endpoint=ep, log=lambda m: None))


def _verdicts(week: Path) -> list[tuple[str, ...]]:
    return sorted(tuple(r) for r in scores(week)[VERDICT].itertuples(index=False))


def _server_requests(base_url: str) -> Counter:
    """Every custom_id the endpoint received in a batch, counted (read back through the SDK's list and results)."""
    sdk = anthropic.Anthropic(base_url=base_url, api_key=KEY, max_retries=0)
    seen: Counter = Counter()
    for batch in sdk.messages.batches.list(limit=100):
        assert batch.processing_status == "ended"
        seen.update(r.custom_id for r in sdk.messages.batches.results(batch.id))
    sdk.close()
    return seen


def test_custom_ids_and_the_store(tmp_path: Path) -> None:
    request = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    cid = custom_id("rubric", "m", "run-1", 1, 1, request)
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", cid)
    assert cid == custom_id("rubric", "m", "run-1", 1, 1, dict(request))  # a rerun rebuilds the same id
    others = {custom_id("rubric", "m", "run-1", 1, 2, request), custom_id("pair:ab", "m", "run-1", 1, 1, request),
              custom_id("rubric", "m", "run-1", 1, 1, {**request, "max_tokens": 5})}
    assert cid not in others and len(others) == 3
    store = BatchStore(tmp_path)
    store.add_batch("msgbatch_1", "rubric", "m", {cid: RequestInfo("rubric", "run-1", 1, 1)})
    again = BatchStore(tmp_path)  # what a rerun reads
    assert again.batch_of(cid) == "msgbatch_1" and again.open_batches("rubric") == ["msgbatch_1"]
    assert json.loads((tmp_path / JUDGE_BATCHES_FILE).read_text())["requests"][cid]["run_id"] == "run-1"
    assert again.close(["rubric"]) == ["msgbatch_1"]
    assert BatchStore(tmp_path).batch_of(cid) is None  # a finished pass is not replayed by the next one
    (tmp_path / JUDGE_BATCHES_FILE).write_text("{not json")
    with pytest.raises(BatchStoreError, match=JUDGE_BATCHES_FILE):
        BatchStore(tmp_path)


def test_metadata_is_sent_to_the_simulated_endpoint_only() -> None:
    request = {"system": "s", "messages": [{"role": "user", "content": "x"}], "max_tokens": 5}
    headers = {"X-Skillbench-Role": "judge", "X-Skillbench-Sample": "1", "X-Skillbench-Run-Id": "judge-ab",
               "X-Skillbench-Attempt": "2"}
    assert batch_params("m", request, headers, simulated=False) == {"model": "m", **request}  # the real API
    sim = batch_params("m", request, headers, simulated=True)
    user = sim.pop("metadata")["user_id"]
    assert sim == {"model": "m", **request} and user.startswith(METADATA_PREFIX)
    assert json.loads(user[len(METADATA_PREFIX):]) == headers


def test_batched_pass_writes_the_synchronous_verdicts_at_half_the_price(sim_week: Path, tmp_path: Path) -> None:
    sync_week = Path(shutil.copytree(sim_week, tmp_path / "sync"))
    # One endpoint per pass, both with seed 0: a second identical request to one endpoint is a fresh draw there.
    with model_endpoint("sim") as ep:
        sync = _judge(sync_week, ep)
        pairs_sync = judge_pairs(sync_week, JudgeOptions(), PassContext(endpoint=ep, log=lambda m: None))
    with model_endpoint("sim", profiles={"batches": {"delay_s": 0.05}}) as ep:
        batched = _judge(sim_week, ep, batch=True)
        pairs_batch = judge_pairs(sim_week, JudgeOptions(batch=True), PassContext(endpoint=ep, log=lambda m: None))
        sent = _server_requests(ep.base_url)
    assert batched.graded == sync.graded > 0 and batched.ungraded_items == sync.ungraded_items == 0
    assert _verdicts(sim_week) == _verdicts(sync_week)
    assert list(scores(sim_week).columns) == list(scores(sync_week).columns)
    assert batched.cost_usd == pytest.approx(sync.cost_usd / 2, rel=1e-6)
    assert (sim_week / "pairs.csv").read_text().count("\n") == (sync_week / "pairs.csv").read_text().count("\n")
    assert pairs_batch.outcomes == pairs_sync.outcomes and pairs_batch.errors == pairs_sync.errors == 0
    assert pairs_batch.cost_usd == pytest.approx(pairs_sync.cost_usd / 2, rel=1e-6)
    assert sent and max(sent.values()) == 1  # no request was sent twice
    last = json.loads((sim_week / "judge.json").read_text())["passes"][-1]
    assert last["batch"]["submitted"] > 0 and last["batch"]["reused"] == 0
    pacing = last["batch"]["pacing"]  # the batch routes state no limit here: every call paced, none waited
    assert pacing["paced"] is True and pacing["requests"] >= 4
    assert pacing["rate_limited"] == pacing["waited"] == pacing["waited_s"] == 0
    assert "batch" not in json.loads((sync_week / "judge.json").read_text())["passes"][-1]
    assert json.loads((sim_week / JUDGE_BATCHES_FILE).read_text())["requests"] == {}  # both passes closed


def test_an_expired_request_is_retried_once_then_ungraded(sim_week: Path) -> None:
    with model_endpoint("sim", profiles={"batches": {"delay_s": 0.05, "expire_rate": 1.0}}) as ep:
        report = _judge(sim_week, ep, batch=True, limit=3)
        sent = _server_requests(ep.base_url)
    s = scores(sim_week)
    assert report.graded == 3 and set(s["verdict"]) == {UNGRADED}
    assert sum(sent.values()) == 6 and max(sent.values()) == 1  # two attempts per run, each its own request
    for run_id in s["run_id"].unique():
        reasons = json.loads((sim_week / run_id / "judge.json").read_text())["ungraded"].values()
        assert all("batch request expired; batch request expired" in r for r in reasons)


def test_a_short_wait_stops_pending_and_a_rerun_continues(sim_week: Path) -> None:
    with model_endpoint("sim", profiles={"batches": {"delay_s": 1.5}}) as ep:
        with pytest.raises(JudgePending, match=r"judge pending \(batch ids msgbatch_"):
            _judge(sim_week, ep, batch=True, batch_wait_s=0.2, limit=4)
        assert not (sim_week / "scores.csv").is_file() or scores(sim_week).empty
        report = _judge(sim_week, ep, batch=True, limit=4)
        sent = _server_requests(ep.base_url)
    assert report.graded == 4 and max(sent.values()) == 1
    assert json.loads((sim_week / "judge.json").read_text())["passes"][-1]["batch"]["reused"] == 4


def _serve(profiles: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([*CLI, "sim", "serve", "--profiles", str(profiles)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    assert proc.stdout is not None
    for line in proc.stdout:
        m = re.search(r"Simulated Messages endpoint: (\S+)", line)
        if m:
            return proc, m.group(1)
    raise AssertionError("sim serve printed no URL")


def test_a_killed_pass_resumes_without_resubmitting(sim_week: Path, tmp_path: Path) -> None:
    shipped = yaml.safe_load((ROOT / "skillbench" / "data" / "sim_profiles.yaml").read_text())
    shipped["batches"] = {**(shipped.get("batches") or {}), "delay_s": 3.0}
    profiles = tmp_path / "profiles.yaml"
    profiles.write_text(yaml.safe_dump(shipped))
    server, url = _serve(profiles)  # its own process: it outlives the killed judge
    try:
        argv = ["judge", str(sim_week), "--backend", "sim", "--endpoint", url, "--batch", "--max-retries", "1",
                "--limit", "6"]
        first = subprocess.Popen([*CLI, *argv], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        store = sim_week / JUDGE_BATCHES_FILE
        deadline = time.monotonic() + 30
        while not (store.is_file() and json.loads(store.read_text())["batches"]):
            assert time.monotonic() < deadline and first.poll() is None, "no batch was submitted"
            time.sleep(0.05)
        os.kill(first.pid, signal.SIGKILL)  # while the batch is in_progress (it waits 3 s)
        first.wait()
        accepted = json.loads(store.read_text())
        assert len(accepted["batches"]) == 1 and len(accepted["requests"]) == 6
        assert not (sim_week / "scores.csv").is_file() or scores(sim_week).empty
        proc = run_cli(*argv, timeout=60)
        assert proc.returncode == 0, proc.stderr[-2000:]
        sent = _server_requests(url)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=10)
    assert max(sent.values()) == 1 and set(accepted["requests"]) <= set(sent)  # nothing accepted was sent again
    s = scores(sim_week)
    assert s["run_id"].nunique() == 6 and not s.duplicated(["run_id", "item_index"]).any()  # every item once
    assert json.loads((sim_week / "judge.json").read_text())["passes"][-1]["batch"]["reused"] == 6


def test_weekly_reads_judge_batch_from_the_suite_config_and_stops_pending(sim_week: Path, tmp_path: Path) -> None:
    from skillbench.weekly import StageError
    from skillbench.weekly._stages import StageRuntime, judge_settings, judge_week

    suite = tmp_path / "suite"
    (suite / "test-prompts").mkdir(parents=True)
    (suite / "skillbench.toml").write_text("[judge]\nbatch = true\nbatch_wait_s = 0.2\n")
    run = json.loads((sim_week / "run.json").read_text())
    (sim_week / "run.json").write_text(json.dumps({**run, "suite_dir": str(suite)}))
    assert judge_settings(sim_week).batch is True
    with model_endpoint("sim", profiles={"batches": {"delay_s": 1.0}}) as ep:
        with pytest.raises(StageError, match=r"judge pending \(batch ids msgbatch_\w+"):
            judge_week(sim_week, JudgeOptions(), StageRuntime(backend="sim", endpoint=ep.base_url))
        pending = json.loads((sim_week / JUDGE_BATCHES_FILE).read_text())
        done = judge_week(sim_week, JudgeOptions(), StageRuntime(backend="sim", endpoint=ep.base_url),
                          batch_wait_s=30)  # the rerun continues
        sent = _server_requests(ep.base_url)
    assert set(pending["requests"]) <= set(sent) and max(sent.values()) == 1
    assert done.rubric.ok and done.pairs.errors == 0 and done.rubric.batches["reused"] == len(pending["requests"])
