"""The endpoint relay of a sealed container: a Unix socket on the host, forwarded to the endpoint on loopback.

A sealed container (``network_mode=\"none\"``) reaches the simulated endpoint only through this relay: one
:class:`EndpointRelay` per run listens on a Unix socket in a private folder (bind-mounted read-only into the
container) and forwards each connection to the endpoint's loopback ``host:port``. Folders of a killed pass carry
their owner's PID and are removed by the next pass (:func:`remove_stale_relays`).
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import tempfile
import threading
from contextlib import suppress
from pathlib import Path
from urllib.parse import urlsplit

RELAY_SOCKET = "ep.sock"  # short: a Unix socket path must fit in 107 bytes, folder included
MAX_SOCKET_PATH = 107  # sun_path is 108 bytes on Linux, with its terminating NUL


RELAY_FOLDER_PREFIX = "skillbench-relay-"  # + the owner's PID + a random part, in the temporary folder


def sealed_address(base_url: str) -> tuple[str, int]:
    """The IPv4 loopback ``(host, port)`` a sealed container serves the endpoint on (the endpoint's own).

    Raises:
        SandboxFailure: the endpoint is not at an IPv4 loopback literal with a port.
    """
    from skillbench.generation.sandbox import SandboxFailure  # sandbox imports this module

    parts = urlsplit(base_url)
    host = parts.hostname or ""
    try:
        ok = ipaddress.ip_address(host).version == 4 and ipaddress.ip_address(host).is_loopback
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        ok, port = False, 0
    if not ok:
        raise SandboxFailure(f"{base_url}: a sealed container reaches a simulated endpoint at an IPv4 loopback "
                             "address — use http://127.0.0.1:PORT")
    return host, port


def _proc_net_tcp_key(host: str, port: int) -> str:
    """How ``/proc/net/tcp`` writes ``host:port`` (little-endian hex), e.g. ``0100007F:1F90``."""
    return f"{socket.inet_aton(host)[::-1].hex().upper()}:{port:04X}"


class EndpointRelay:
    """The host half of a sealed container's network: a Unix socket whose connections go to the endpoint.

    It listens on ``<folder>/ep.sock`` in a private temporary folder (the folder the container mounts
    read-only) and forwards each connection, byte for byte, to the endpoint's loopback ``host:port``. It
    serves one container and is stopped with it: :meth:`stop` closes every connection, joins every thread
    and removes the folder.
    """

    def __init__(self, host: str, port: int, *, root: str | Path | None = None):
        self.host, self.port = host, port
        # the owner's PID in the name: a generate killed with -9 cannot stop its relays; the next one removes them
        self.folder = Path(tempfile.mkdtemp(prefix=f"{RELAY_FOLDER_PREFIX}{os.getpid()}-", dir=root))
        self.folder.chmod(0o755)  # the container's runner user must reach the socket inside
        self.socket_path = self.folder / RELAY_SOCKET
        if len(os.fsencode(self.socket_path)) > MAX_SOCKET_PATH:
            shutil.rmtree(self.folder, ignore_errors=True)
            from skillbench.generation.sandbox import SandboxFailure  # sandbox imports this module

            raise SandboxFailure(f"{self.socket_path}: a Unix socket path must fit in {MAX_SOCKET_PATH} bytes — "
                                 "set TMPDIR to a shorter folder (e.g. /tmp) for the sealed-network relay")
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._listener.bind(str(self.socket_path))
            self.socket_path.chmod(0o666)  # connect() needs write permission; the runner is not root
            self._listener.listen(64)
        except OSError:
            self._listener.close()
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        self._listener.settimeout(0.1)  # accept() wakes to notice stop()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._accept, name=f"skillbench-relay-{port}", daemon=True)
        self.connections = 0  # how many connections it relayed (for tests and logs)

    def start(self) -> EndpointRelay:
        self._acceptor.start()
        return self

    def __enter__(self) -> EndpointRelay:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                inner, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            inner.settimeout(None)
            thread = threading.Thread(target=self._relay, args=(inner,), name=f"skillbench-relay-{self.port}-conn",
                                      daemon=True)
            with self._lock:
                self.connections += 1
                self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            thread.start()

    def _track(self, *socks: socket.socket) -> bool:
        with self._lock:
            if self._stopping.is_set():
                return False
            self._open.update(socks)
            return True

    def _relay(self, inner: socket.socket) -> None:
        outer = None
        try:
            try:
                outer = socket.create_connection((self.host, self.port), timeout=10)
            except OSError:
                return  # the container sees its connection close, as it would for a dead endpoint
            outer.settimeout(None)
            outer.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if not self._track(inner, outer):
                return
            back = threading.Thread(target=_pump, args=(outer, inner), name=f"skillbench-relay-{self.port}-back",
                                    daemon=True)
            back.start()
            _pump(inner, outer)
            back.join()
        finally:
            with self._lock:
                self._open.difference_update(s for s in (inner, outer) if s is not None)
            for s in (inner, outer):
                if s is not None:
                    s.close()

    def stop(self) -> None:
        """Stop accepting, cut every open connection, join every thread, remove the socket's folder."""
        with self._lock:
            self._stopping.set()
            open_now = list(self._open)
        if self._acceptor.is_alive():
            self._acceptor.join(timeout=5)
        self._listener.close()
        for s in open_now:
            with suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout=5)
        shutil.rmtree(self.folder, ignore_errors=True)


def remove_stale_relays(root: str | Path | None = None) -> int:
    """Remove relay folders whose owner process is gone (a generate killed with -9); returns how many.

    A folder whose owner still runs is never touched, so concurrent passes keep their relays.
    """
    removed = 0
    for folder in Path(root or tempfile.gettempdir()).glob(f"{RELAY_FOLDER_PREFIX}*"):
        pid = folder.name.removeprefix(RELAY_FOLDER_PREFIX).split("-", 1)[0]
        if not pid.isdigit() or not folder.is_dir():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # the owner is alive
        except ProcessLookupError:
            pass
        except PermissionError:  # alive, and another user's
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    return removed


def _pump(src: socket.socket, dst: socket.socket) -> None:
    """Copy ``src`` to ``dst`` until end of stream, then pass the end on (half-close)."""
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with suppress(OSError):
            dst.shutdown(socket.SHUT_WR)
