"""The endpoint is probed before the first run, and its kind comes from the endpoint, never from the flag."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pandas as pd
import pytest

from skillbench.generation import BackendError
from skillbench.sim import SimServer
from skillbench.weekly import model_endpoint
from skillbench.wire import SIM_API_KEY
from tests.helpers.shared import TINY_SUITE
from tests.helpers.sim import forced, require_cli, write_profiles

SECRET = "sk-ant-probe-test-secret-0123456789"


def _dead_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _NotFound(BaseHTTPRequestHandler):
    """A live server that is not a simulation: 404 for everything, and it records what it was sent."""

    seen: list[dict[str, str]] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        type(self).seen.append(dict(self.headers.items()))
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def real_like():
    """A plain HTTP server on loopback standing in for a real endpoint that answers (any status is alive)."""
    _NotFound.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def keyed(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def test_dead_endpoint_with_the_real_backend_fails_at_once_naming_the_url(keyed):
    url = f"http://127.0.0.1:{_dead_port()}"
    with pytest.raises(BackendError) as err:
        with model_endpoint("anthropic", endpoint=url, probe_timeout=2):
            pytest.fail("a dead endpoint must not be handed to the runs")
    message = str(err.value)
    assert url in message and "does not answer" in message and "--endpoint" in message
    assert len(message.splitlines()) == 1


def test_dead_base_url_from_the_environment_names_it(keyed, monkeypatch):
    url = f"http://127.0.0.1:{_dead_port()}"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    with pytest.raises(BackendError, match="ANTHROPIC_BASE_URL") as err:
        with model_endpoint("anthropic", probe_timeout=2):
            pass
    assert url in str(err.value)


def test_endpoint_that_accepts_but_never_answers_is_dead(keyed):
    """A listening socket that never accepts: the connection opens, no HTTP answer comes; the probe gives up."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with pytest.raises(BackendError, match="no answer within 1 s") as err:
            with model_endpoint("anthropic", endpoint=url, probe_timeout=1):
                pass
    assert url in str(err.value)


def test_dead_sim_endpoint_is_one_line(keyed):
    url = f"http://127.0.0.1:{_dead_port()}"
    with pytest.raises(BackendError, match="sim serve") as err:
        with model_endpoint("sim", endpoint=url, probe_timeout=2):
            pass
    assert url in str(err.value) and len(str(err.value).splitlines()) == 1


def test_live_endpoint_that_is_not_simulated_is_real_and_probed_without_the_key(keyed, real_like):
    with model_endpoint("anthropic", endpoint=real_like, probe_timeout=2) as ep:
        assert ep.kind == "real" and ep.base_url == real_like and ep.api_key == SECRET
        assert ep.site_base is None and ep.fetch_truth(["r1"]) == []
        assert SECRET not in repr(ep)
    assert len(_NotFound.seen) == 1, "probed once"
    sent = json.dumps(_NotFound.seen)
    assert SECRET not in sent and "x-api-key" not in sent.lower() and "authorization" not in sent.lower()


def test_simulated_endpoint_is_simulated_whatever_the_flag(keyed, tmp_path, capsys):
    with SimServer(TINY_SUITE, truth=tmp_path / "t.csv") as server:
        with model_endpoint("anthropic", endpoint=server.base_url, probe_timeout=2) as ep:
            assert ep.kind == "simulated" and ep.simulated
            assert ep.api_key == SIM_API_KEY, "the real key is never sent to a simulated endpoint"
            assert ep.site_base == server.site_base and ep.truth == (tmp_path / "t.csv").resolve()
            assert ep.fetch_truth(["never-ran"]) == []
    notice = [line for line in capsys.readouterr().err.splitlines() if server.base_url in line]
    assert len(notice) == 1 and "simulated" in notice[0] and "not sent" in notice[0]


def test_simulated_base_url_needs_no_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with SimServer(TINY_SUITE) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        with model_endpoint("anthropic", probe_timeout=2) as ep:
            assert ep.kind == "simulated" and ep.api_key == SIM_API_KEY


def test_real_endpoint_still_needs_a_key(monkeypatch, real_like):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(BackendError, match="ANTHROPIC_API_KEY"):
        with model_endpoint("anthropic", endpoint=real_like, probe_timeout=2):
            pass
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with pytest.raises(BackendError, match="ANTHROPIC_API_KEY"):  # the default API: refused before any probe
        with model_endpoint("anthropic"):
            pass


def test_generate_with_anthropic_flag_against_a_sim_records_simulated(tmp_path):
    """``skillbench generate --backend anthropic --endpoint <sim serve>``: runs are simulated, the key never leaves."""
    require_cli()
    profiles = write_profiles(tmp_path / "p.yaml", {"haiku": forced()})
    out = tmp_path / "w"
    with SimServer(TINY_SUITE, profiles=profiles, seed=3) as server:
        cmd = [sys.executable, "-m", "skillbench.cli", "generate", str(TINY_SUITE), "--run-key", "probe",
               "--out-dir", str(out), "--backend", "anthropic", "--endpoint", server.base_url, "--models", "haiku",
               "--conditions", "no-skill", "--reps", "1", "--sandbox", "local", "--timeout", "120"]
        env = {**os.environ, "ANTHROPIC_API_KEY": SECRET}
        env.pop("ANTHROPIC_BASE_URL", None)
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        received = list(server.received)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "says it is a simulated endpoint" in proc.stderr
    manifest = pd.read_csv(out / "manifest.csv")
    assert len(manifest) >= 1 and set(manifest.endpoint) == {"simulated"}
    for meta in out.glob("*/metadata.json"):
        assert json.loads(meta.read_text())["endpoint"] == "simulated"
    assert (out / "truth.csv").exists(), "the simulation's truth is fetched as for --backend sim"
    for path in Path(out).rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert received and all(r["sim_key"] for r in received), "every request carried the simulation's key"
