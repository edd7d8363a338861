"""No request chooses a file the simulated endpoint writes: a forged ``X-Skillbench-Truth`` header naming an
absolute ``*.csv`` path, sent to a running ``skillbench sim serve`` process (from this host, and from inside a
sealed container of a simulated run), writes no file; the endpoint keeps truth itself and serves it read-only."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillbench.generation import RelayPlan, choose_sandbox
from skillbench.weekly import model_endpoint
from skillbench.wire import SIM_API_KEY
from tests.generation.test_generate import require_docker
from tests.helpers.shared import TINY_SUITE
from tests.helpers.sim import require_cli

PROMPT = json.loads((TINY_SUITE / "test-prompts" / "csv-garbled-names.json").read_text(encoding="utf-8"))["prompt"]
TRUTH_HEADER = "X-Skillbench-Truth"


def _body() -> dict:
    return {"model": "claude-sonnet-5-5", "max_tokens": 500, "stream": False,
            "messages": [{"role": "user", "content": [{"type": "text", "text": PROMPT}]}]}


@pytest.fixture
def served(tmp_path) -> Iterator[tuple[str, Path]]:
    """A ``skillbench sim serve`` process of the tiny suite (its own truth file chosen by the operator)."""
    truth = tmp_path / "served-truth.csv"
    proc = subprocess.Popen([sys.executable, "-m", "skillbench.cli", "sim", "serve", "--suite", str(TINY_SUITE),
                             "--truth", str(truth)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        first = proc.stdout.readline()
        assert first.startswith("Simulated Messages endpoint: http://127.0.0.1:"), first + proc.stderr.read()
        yield first.split(": ", 1)[1].strip(), truth
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)


def _served_rows(url: str, run_id: str) -> list[str]:
    request = urllib.request.Request(f"{url}/skillbench/truth?run_id={run_id}", headers={"x-api-key": SIM_API_KEY})
    with urllib.request.urlopen(request, timeout=10) as resp:
        return resp.read().decode().splitlines()[1:]


def test_forged_truth_header_over_http_writes_no_file(served, tmp_path):
    url, truth = served
    forged = tmp_path / "forged.csv"
    req = urllib.request.Request(f"{url}/v1/messages", data=json.dumps(_body()).encode(), method="POST", headers={
        "Content-Type": "application/json", "X-Skillbench-Run-Id": "forger", TRUTH_HEADER: str(forged),
        "x-api-key": SIM_API_KEY})
    with urllib.request.urlopen(req, timeout=30) as resp:
        assert resp.status == 200 and json.loads(resp.read())["content"]
    assert not forged.exists(), "a request named a file and the server wrote it"
    rows = _served_rows(url, "forger")
    assert rows and all(r.startswith("forger,1,") for r in rows), "the request was answered with truth"
    assert "forger,1," in truth.read_text(), "truth goes only where the operator said"


def test_forged_truth_header_from_inside_a_sealed_container_writes_no_file(served, tmp_path):
    """A process in a container of a simulated run reaches the endpoint (through the relay) and forges the header."""
    require_cli()
    require_docker()
    url, _ = served
    forged = tmp_path / "from-container.csv"
    with model_endpoint("sim", endpoint=url) as ep:
        sandbox = choose_sandbox("docker", ep, tmp_path, log=lambda m: None)
        assert sandbox.network == "sealed"
        body = json.dumps(_body()).replace("'", "'\\''")
        sandbox.prefix = ["sh", "-c", (
            f"curl -sS --max-time 30 -o /dev/null -w 'status=%{{http_code}}\\n' -H 'Content-Type: application/json' "
            f"-H \"x-api-key: $ANTHROPIC_API_KEY\" "
            f"-H 'X-Skillbench-Run-Id: container-forger' -H '{TRUTH_HEADER}: {forged}' -d '{body}' {url}/v1/messages"
        ), "probe"]
        result = sandbox.run(["claude"], {"HOME": "/home/runner"}, [], 60, "forger",
                             relay=RelayPlan.for_run(ep, "forger-run", 1))
    assert b"status=200" in result.stdout, result.stdout + result.stderr
    assert not _served_rows(url, "container-forger"), "the relay replaced the identity the container sent"
    assert _served_rows(url, "forger-run"), "the request reached the endpoint as the run's own and was answered"
    assert not forged.exists()
