"""A simulated run's container is sealed: no network but a relay to the endpoint, enforced by the sandbox.

The container has ``network_mode="none"`` (only its own loopback); the endpoint is reached through a Unix
socket mounted read-only from the host and served inside on the endpoint's own ``127.0.0.1:PORT``. These tests
look at the container from outside (``docker inspect``) and from inside (a process that tries to leave).
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from skillbench.generation import Endpoint, Relay, RelayPlan, choose_sandbox
from skillbench.generation._relay import RELAY_FOLDER_PREFIX, RELAY_SOCKET, RelayError, remove_stale_relays
from skillbench.generation._sandbox import LABEL, LOCAL_NOT_SEALED, LocalSandbox
from skillbench.sim import Serving, SimServer
from skillbench.weekly import model_endpoint
from tests.generation.test_generate import require_docker
from tests.helpers.shared import TINY_SUITE
from tests.helpers.sim import require_cli

_HELLO = '{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}'
UNROUTABLE = "10.255.255.1"  # never reached: with no route the connect fails before any packet exists


def _host_addresses() -> list[str]:
    """This machine's own non-loopback IPv4 addresses (connecting to them from the host stays on this host)."""
    try:
        out = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True, timeout=10).stdout
    except OSError:
        return []
    found = [line.split()[3].split("/")[0] for line in out.splitlines() if len(line.split()) > 3]
    return [a for a in found if not ipaddress.ip_address(a).is_loopback]


def _prefix(script: str) -> list[str]:
    """A command run before (instead of) the CLI inside the container; ``"$@"`` is the CLI's command."""
    return ["sh", "-c", script, "probe"]


def _sealed(ep, out_dir: Path, script: str):
    sandbox = choose_sandbox("docker", ep, out_dir, log=lambda m: None)
    sandbox.prefix = _prefix(script)
    return sandbox


@pytest.fixture
def relay_root():
    """A short folder for the relays' Unix sockets: pytest's tmp_path (deeper still under xdist's ``popen-gwN``)
    can pass the socket's 107-byte limit, which the relay refuses by design (the test below)."""
    folder = Path(tempfile.mkdtemp(prefix="sbr-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def sim(tmp_path):
    require_cli()
    require_docker()
    with model_endpoint("sim", suite_dir=TINY_SUITE) as ep:
        yield ep


def test_sealed_container_cannot_reach_a_non_loopback_address(sim, tmp_path):
    """From inside: the endpoint answers through the relay at once; every other address is unreachable."""
    port = sim.base_url.rsplit(":", 1)[1]
    targets = [*_host_addresses(), UNROUTABLE]
    # Refuse to try any address unless the namespace has loopback only, so a broken seal sends nothing out.
    script = f"""
        curl -sS --max-time 10 -o /dev/null -w 'endpoint=%{{http_code}}\\n' {sim.base_url}/skillbench/info
        echo "interfaces=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ,)"
        if [ "$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ')" != lo ]; then echo NOT-SEALED; exit 3; fi
        for addr in {' '.join(targets)}; do
          strace -e trace=connect curl -sS --max-time 5 "http://$addr:{port}/" 2>&1 | grep -E '^connect|ENETUNREACH'
          echo "curl=$addr:$?"
        done
    """
    result = _sealed(sim, tmp_path, script).run(["claude"], {"HOME": "/home/runner"}, [], 120, "leave",
                                                relay=RelayPlan.for_run(sim, "leave", 1))
    out = result.stdout.decode() + result.stderr.decode()
    assert "endpoint=403" in out, out  # the relay answered at once, and refused the simulation's info route
    assert "interfaces=lo," in out and "NOT-SEALED" not in out, out
    for addr in targets:
        connects = [line for line in out.splitlines() if line.startswith("connect(") and f'"{addr}"' in line]
        assert connects, (addr, out)
        assert all("= -1 ENETUNREACH" in line for line in connects), connects


def test_sealed_run_container_has_network_mode_none_and_a_read_only_relay(sim, tmp_path):
    """``docker inspect`` of the run's container while it runs: NetworkMode none, the socket folder read-only."""
    import docker

    sandbox = _sealed(sim, tmp_path, "sleep 3")
    seen: dict = {}

    def inspect() -> None:
        client = docker.from_env()
        deadline = time.time() + 60
        while time.time() < deadline and not seen:
            # by the week's label: the container was made (and labelled) before its run, as generate makes them
            try:  # a spare container removed between the list and its inspect: look again
                listed = client.containers.list(filters={"label": f"{LABEL}={tmp_path.resolve()}"})
            except docker.errors.NotFound:
                listed = []
            for c in listed:
                seen.update(c.attrs)
            time.sleep(0.1)

    watcher = threading.Thread(target=inspect)
    watcher.start()
    result = sandbox.run(["claude"], {"HOME": "/home/runner"}, [], 60, "inspect-me",
                         relay=RelayPlan.for_run(sim, "inspect-me", 1))
    watcher.join()
    sandbox.close()
    assert result.exit_code == 0 and seen, result.stderr
    assert seen["HostConfig"]["NetworkMode"] == "none"
    assert seen["NetworkSettings"]["Networks"].keys() == {"none"}
    (mount,) = seen["Mounts"]
    assert mount["Destination"] == "/run/skillbench" and mount["RW"] is False
    assert not Path(mount["Source"]).exists(), "the relay's folder is removed with the container"
    left = docker.from_env().containers.list(all=True, filters={"label": f"{LABEL}={tmp_path.resolve()}"})
    assert not left, "no container is left behind"
    assert not [t for t in threading.enumerate() if t.name.startswith("skillbench-relay")], "no relay thread left"


def test_a_real_endpoint_s_container_is_sealed_too(tmp_path):
    """With a real endpoint (here a local stand-in the harness takes for one) the container has no network either:
    the CLI is given the relay's address on the container's own loopback and the run's token, never the key."""
    require_cli()
    require_docker()
    with SimServer(TINY_SUITE, serving=Serving(api_key="sk-stand-in-key")) as server:
        real = Endpoint(base_url=server.base_url, api_key="sk-stand-in-key", kind="real")
        sandbox = choose_sandbox("docker", real, tmp_path, log=lambda m: None)
        assert sandbox.network == "sealed"
        sandbox.prefix = _prefix('env | grep ^ANTHROPIC_; '
                                 'curl -sS -o /dev/null -w "code=%{http_code}\\n" "$ANTHROPIC_BASE_URL/v1/messages" '
                                 '-H "x-api-key: $ANTHROPIC_API_KEY" -H "content-type: application/json" '
                                 f"-d '{_HELLO}'")
        plan = RelayPlan.for_run(real, "real-run", 1)
        result = sandbox.run(["claude"], {"HOME": "/home/runner"}, [], 60, "real-run", relay=plan)
    out = result.stdout.decode()
    assert "code=200" in out, (out, result.stderr)
    assert "sk-stand-in-key" not in out and plan.token in out
    assert f"ANTHROPIC_BASE_URL={plan.inside}" in out and plan.inside.startswith("http://127.0.0.1:")
    assert [ex["status"] for ex in result.exchanges] == [200]
    assert server.received[-1]["run_id"] == "real-run"


def test_local_sandbox_says_it_cannot_seal(tmp_path):
    require_cli()
    lines: list[str] = []
    with model_endpoint("sim", suite_dir=TINY_SUITE) as ep:
        sandbox = choose_sandbox("local", ep, tmp_path, log=lines.append)
    assert isinstance(sandbox, LocalSandbox) and sandbox.network == "unsealed"
    assert [line for line in lines if "no container isolation" in line and LOCAL_NOT_SEALED in line]


def test_relay_serves_its_socket_and_leaves_nothing(relay_root):
    """The host half on its own: a Unix socket whose requests reach the endpoint through the relay's gate."""
    with SimServer(TINY_SUITE) as server:
        ep = Endpoint(base_url=server.base_url, api_key="sk-skillbench-sim", kind="simulated",
                      site_base=server.site_base)
        family = sorted(server.suite.families)[0]
        relay = Relay(RelayPlan.for_run(ep, "r", 1), root=relay_root).start()
        try:
            assert oct(relay.socket_path.stat().st_mode & 0o777) == "0o666"
            answers = []
            for path in (f"/site/{family}/SKILL.md", f"/site/{family}/SKILL.md", "/skillbench/info"):
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                    conn.connect(str(relay.socket_path))
                    conn.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
                    data = b""
                    while chunk := conn.recv(65536):
                        data += chunk
                answers.append(data.split(b"\r\n", 1)[0])
            held = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # an idle connection stop() must cut
            held.connect(str(relay.socket_path))
            time.sleep(0.2)
        finally:
            relay.stop()
        assert [a.split()[1] for a in answers] == [b"200", b"200", b"403"]
        assert relay.connections == 3
        assert held.recv(1) == b"", "stop() closes open connections"
        held.close()
        assert not relay.folder.exists()
        assert not [t for t in threading.enumerate() if t.name.startswith("skillbench-relay")]


def test_relays_of_a_killed_generate_are_removed_and_live_ones_kept(relay_root):
    """A generate killed with -9 cannot stop its relays; the next pass removes their folders, never a live one's."""
    gone = subprocess.Popen(["true"])
    gone.wait()  # its PID now names no process
    stale = relay_root / f"{RELAY_FOLDER_PREFIX}{gone.pid}-abc"
    stale.mkdir()
    (stale / RELAY_SOCKET).touch()
    with SimServer() as server:
        ep = Endpoint(base_url=server.base_url, api_key="sk-skillbench-sim", kind="simulated")
        live = Relay(RelayPlan.for_run(ep, "r", 1), root=relay_root).start()
        try:
            assert live.folder.name.startswith(f"{RELAY_FOLDER_PREFIX}{os.getpid()}-")
            assert remove_stale_relays(relay_root) == 1
            assert not stale.exists() and live.socket_path.exists()
        finally:
            live.stop()


def test_a_relay_folder_too_deep_for_a_unix_socket_is_one_clear_line(tmp_path):
    """A Unix socket path has 107 bytes: a long TMPDIR is named with the fix, not an OSError, and nothing is left."""
    deep = tmp_path / ("d" * 90)
    deep.mkdir()
    ep = Endpoint(base_url="http://127.0.0.1:9", api_key="k", kind="simulated")
    with pytest.raises(RelayError, match="must fit in 107 bytes .* set TMPDIR"):
        Relay(RelayPlan.for_run(ep, "r", 1), root=deep)
    assert list(deep.iterdir()) == []
